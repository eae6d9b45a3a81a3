// Ed25519 signature verification (RFC 8032 §5.1.7, RFC 9421 §3.3.6) as an injected function:
// WebCrypto where the platform has it, @noble/ed25519 as the portable fallback.
import * as ed from '@noble/ed25519';

/**
 * Verifies an Ed25519 signature over raw message bytes (no pre-hash). Returns false, never
 * throws, for a wrong signature or an unusable key.
 */
export type Ed25519Verify = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => Promise<boolean> | boolean;

// The RFC 9421 B.1.4 test key: a known-good key to probe WebCrypto support with.
const PROBE_KEY = new Uint8Array([
  0x26, 0xb4, 0x0b, 0x8f, 0x93, 0xff, 0xf3, 0xd8, 0x97, 0x11, 0x2f, 0x7e, 0xbc, 0x58, 0x2b, 0x23, 0x2d, 0xbd, 0x72, 0x51, 0x7d, 0x08, 0x2f,
  0xe8, 0x3c, 0xfb, 0x30, 0xdd, 0xce, 0x43, 0xd1, 0xbb,
]);

/**
 * Ed25519 through WebCrypto (`crypto.subtle`, Node ≥ 20, Workers, Deno, recent browsers).
 * Imported CryptoKeys are cached per key object, so keep key bytes stable (the verifier does).
 * @example
 * const verify = webCryptoEd25519();
 * await verify(publicKey, base, signature); // true | false
 */
export function webCryptoEd25519(): Ed25519Verify {
  const imported = new WeakMap<Uint8Array, Promise<CryptoKey | undefined>>();
  const importKey = (raw: Uint8Array): Promise<CryptoKey | undefined> => {
    let key = imported.get(raw);
    if (key === undefined) {
      key = crypto.subtle.importKey('raw', raw as Uint8Array<ArrayBuffer>, { name: 'Ed25519' }, false, ['verify']).then(
        (k) => k,
        () => undefined,
      );
      imported.set(raw, key);
    }
    return key;
  };
  return async (publicKey, message, signature) => {
    const key = await importKey(publicKey);
    if (key === undefined) return false;
    try {
      return await crypto.subtle.verify({ name: 'Ed25519' }, key, signature as Uint8Array<ArrayBuffer>, message as Uint8Array<ArrayBuffer>);
    } catch {
      return false;
    }
  };
}

/**
 * Ed25519 through @noble/ed25519 (pure JavaScript; its async path hashes with
 * `crypto.subtle` SHA-512). Strict RFC 8032 verification (`zip215: false`), like OpenSSL.
 * @example
 * const verify = nobleEd25519();
 */
export function nobleEd25519(): Ed25519Verify {
  return async (publicKey, message, signature) => {
    try {
      return await ed.verifyAsync(signature, message, publicKey, { zip215: false });
    } catch {
      return false;
    }
  };
}

/** Whether this platform's WebCrypto implements Ed25519. */
export async function webCryptoSupportsEd25519(): Promise<boolean> {
  try {
    if (globalThis.crypto?.subtle === undefined) return false;
    await crypto.subtle.importKey('raw', PROBE_KEY, { name: 'Ed25519' }, false, ['verify']);
    return true;
  } catch {
    return false;
  }
}

/**
 * The default Ed25519: WebCrypto when it supports Ed25519, else @noble/ed25519; probed once,
 * on first use.
 */
export function defaultEd25519(): Ed25519Verify {
  let chosen: Ed25519Verify | undefined;
  let choosing: Promise<Ed25519Verify> | undefined;
  return async (publicKey, message, signature) => {
    if (chosen === undefined) {
      choosing ??= webCryptoSupportsEd25519().then((yes) => (chosen = yes ? webCryptoEd25519() : nobleEd25519()));
      await choosing;
    }
    return chosen!(publicKey, message, signature);
  };
}
