// Access tokens: 256-bit random values shown once, stored only as SHA-256 hashes and compared in
// constant time, using Web Crypto so the core runs on any platform.

/** A function from a token to its hex SHA-256 hash; injected where a faster native hash exists. */
export type TokenHasher = (token: string) => string | Promise<string>;

/** The prefix every agentwarden token carries, so secret scanners and humans can recognise one. */
export const TOKEN_PREFIX = 'aw_';

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * A new access token: `aw_` + base64url of 32 random bytes (256 bits from the platform CSPRNG).
 * @example
 * generateToken(); // 'aw_q3X...' (46 characters)
 */
export function generateToken(): string {
  return TOKEN_PREFIX + base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/** A random identifier with a readable prefix, e.g. `prj_...` (96 random bits). */
export function generateId(prefix: string): string {
  return `${prefix}_${base64url(crypto.getRandomValues(new Uint8Array(12)))}`;
}

/** Hex SHA-256 of a token through Web Crypto. Tokens carry 256 bits of entropy, so a fast unsalted hash is enough. */
export async function sha256Hex(token: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token)));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/**
 * Compares two strings in time that depends only on their lengths, never on where they differ,
 * so response timing reveals nothing about a stored hash.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}
