// Ed25519 verification through node:crypto (OpenSSL), the fastest option on Node: synchronous,
// no thread-pool hop, KeyObjects cached per key.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { Ed25519Verify } from '../../index.js';

// RFC 8410 §4: SubjectPublicKeyInfo DER prefix of an Ed25519 public key (OID 1.3.101.112).
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * Ed25519 for the Web Bot Auth verifier through node:crypto. KeyObjects are cached per key
 * object, so pass stable key bytes (the verifier does).
 * @example
 * const verifier = webBotAuthVerifier({ fetchDirectory, verifyEd25519: nodeEd25519() });
 */
export function nodeEd25519(): Ed25519Verify {
  const keys = new WeakMap<Uint8Array, KeyObject | null>();
  return (publicKey, message, signature) => {
    let key = keys.get(publicKey);
    if (key === undefined) {
      try {
        key = publicKey.length === 32 ? createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' }) : null;
      } catch {
        key = null;
      }
      keys.set(publicKey, key);
    }
    if (key === null) return false;
    try {
      return verify(null, message, key, signature);
    } catch {
      return false;
    }
  };
}
