// JSON Web Keys: RFC 7638 thumbprints (RFC 8037 App. A.3 for Ed25519) and Ed25519 public keys
// read from JWKs, with WebCrypto SHA-256 (the same on every runtime).
import { base64UrlDecode, base64UrlEncode } from './base64.js';

/** An Ed25519 public key from a directory or the configuration, with its RFC 7638 thumbprint. */
export interface Ed25519PublicKey {
  /** The base64url RFC 7638 SHA-256 thumbprint: the `keyid` Web Bot Auth signatures carry. */
  readonly thumbprint: string;
  /** The 32 raw public key bytes (RFC 8032 §5.1.5). */
  readonly raw: Uint8Array;
  /** JWK `nbf` / `exp` in seconds, honoured when present. */
  readonly notBefore?: number;
  readonly expiresAt?: number;
}

const encoder = new TextEncoder();

function member(jwk: Record<string, unknown>, name: string): string | undefined {
  const value = jwk[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The RFC 7638 §3 thumbprint input: the required members only, in lexicographic order, no
 * whitespace. Undefined for a key type without a defined member set or a missing member.
 */
export function thumbprintInput(jwk: unknown): string | undefined {
  if (typeof jwk !== 'object' || jwk === null) return undefined;
  const key = jwk as Record<string, unknown>;
  const kty = member(key, 'kty');
  const names = kty === 'OKP' ? ['crv', 'kty', 'x'] : kty === 'EC' ? ['crv', 'kty', 'x', 'y'] : kty === 'RSA' ? ['e', 'kty', 'n'] : undefined;
  if (names === undefined) return undefined;
  const parts: string[] = [];
  for (const name of names) {
    const value = member(key, name);
    if (value === undefined) return undefined;
    parts.push(`${JSON.stringify(name)}:${JSON.stringify(value)}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * Computes the RFC 7638 JWK SHA-256 thumbprint, base64url without padding.
 * @throws {TypeError} when the JWK lacks the members its key type requires.
 * @example
 * await jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: 'JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs' });
 * // 'poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U'
 */
export async function jwkThumbprint(jwk: unknown): Promise<string> {
  const input = thumbprintInput(jwk);
  if (input === undefined) throw new TypeError('jwk must be an OKP, EC or RSA JSON Web Key with its required members');
  const digest = await crypto.subtle.digest('SHA-256', encoder.encode(input));
  return base64UrlEncode(new Uint8Array(digest));
}

/** The 32 raw bytes of an Ed25519 JWK (`kty: OKP`, `crv: Ed25519`), or undefined for any other key. */
export function ed25519RawKey(jwk: unknown): Uint8Array | undefined {
  if (typeof jwk !== 'object' || jwk === null) return undefined;
  const key = jwk as Record<string, unknown>;
  if (key.kty !== 'OKP' || key.crv !== 'Ed25519') return undefined;
  const x = member(key, 'x');
  const raw = x === undefined ? undefined : base64UrlDecode(x);
  return raw?.length === 32 ? raw : undefined;
}

/** Reads an Ed25519 JWK into a key with its thumbprint; undefined for non-Ed25519 or broken keys. */
export async function ed25519KeyFromJwk(jwk: unknown): Promise<Ed25519PublicKey | undefined> {
  const raw = ed25519RawKey(jwk);
  if (raw === undefined) return undefined;
  const key = jwk as Record<string, unknown>;
  const thumbprint = await jwkThumbprint(jwk);
  const nbf = typeof key.nbf === 'number' ? key.nbf : undefined;
  const exp = typeof key.exp === 'number' ? key.exp : undefined;
  return { thumbprint, raw, ...(nbf !== undefined && { notBefore: nbf }), ...(exp !== undefined && { expiresAt: exp }) };
}

/** Whether a key may be used at `nowSeconds` under its JWK `nbf` / `exp` (RFC 7519 §4.1.4-5 semantics). */
export function keyUsableAt(key: Ed25519PublicKey, nowSeconds: number): boolean {
  if (key.notBefore !== undefined && nowSeconds < key.notBefore) return false;
  if (key.expiresAt !== undefined && nowSeconds >= key.expiresAt) return false;
  return true;
}

// RFC 9421 Appendix B.1.4's example key (test-key-ed25519): its private half is published with it.
const PUBLISHED_TEST_KEYS = new Set(['JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs']);

/**
 * Whether a JWK is a published example key (RFC 9421 B.1.4's Ed25519 key), which anyone can sign
 * with: verifiers should refuse it outside test suites (RFC 9421 §7.2.8, web-bot-auth's guidance).
 */
export function isPublishedTestKey(jwk: unknown): boolean {
  const x = (jwk as { x?: unknown } | null)?.x;
  return typeof x === 'string' && PUBLISHED_TEST_KEYS.has(x);
}
