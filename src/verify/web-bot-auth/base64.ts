// Base64 and base64url codecs over Uint8Array with Web-standard APIs only (no Node-only types in the core).

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Encodes bytes as base64url without padding (RFC 4648 §5), as JWK thumbprints use. */
export function base64UrlEncode(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Decodes unpadded base64url (RFC 4648 §5; RFC 7515 §2 forbids padding in JOSE); undefined when malformed. */
export function base64UrlDecode(text: string): Uint8Array | undefined {
  if (!BASE64URL.test(text) || text.length % 4 === 1) return undefined;
  return base64Decode(text.replace(/-/g, '+').replace(/_/g, '/'));
}

/** Decodes standard base64, padded or not; undefined when malformed. */
export function base64Decode(text: string): Uint8Array | undefined {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return undefined;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Encodes bytes as padded standard base64 (RFC 4648 §4), as structured-field byte sequences use. */
export function base64Encode(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}
