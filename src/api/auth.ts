// Bearer-token authentication (RFC 6750): reading the Authorization header, telling apart why a
// request carries no usable token, and the WWW-Authenticate challenge sent with every 401.
import { headerValue } from './request-headers.js';
import type { ApiHeaderValue } from './types.js';

/** Why a request could not be authenticated; closed so the 401 detail can name the exact fault. */
export type AuthFailure = 'missing' | 'misspelled-header' | 'wrong-scheme' | 'malformed' | 'unknown-token';

/** The token a request presents, or why it presents none. */
export type BearerResult = { readonly ok: true; readonly token: string } | { readonly ok: false; readonly reason: AuthFailure; readonly header?: string };

// RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Levenshtein distance, bounded: returns `limit + 1` as soon as the distance must exceed `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      current.push(value);
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length]!;
}

/** A header name that looks like a misspelled Authorization (`Autorization`, `Authorisation`). */
function misspelledAuthorization(headers: Readonly<Record<string, ApiHeaderValue>>): string | undefined {
  for (const key of Object.keys(headers)) {
    const lower = key.toLowerCase();
    if (lower !== 'authorization' && editDistance(lower, 'authorization', 3) <= 3) return key;
  }
  return undefined;
}

/** Reads the bearer token of a request (RFC 6750 §2.1); the scheme name is case-insensitive (RFC 9110 §11.1). */
export function readBearer(headers: Readonly<Record<string, ApiHeaderValue>>): BearerResult {
  const value = headerValue(headers, 'authorization');
  if (value === undefined) {
    const header = misspelledAuthorization(headers);
    return header === undefined ? { ok: false, reason: 'missing' } : { ok: false, reason: 'misspelled-header', header };
  }
  const trimmed = value.trim();
  const space = trimmed.indexOf(' ');
  const scheme = space === -1 ? trimmed : trimmed.slice(0, space);
  if (scheme.toLowerCase() !== 'bearer') return { ok: false, reason: 'wrong-scheme' };
  const token = space === -1 ? '' : trimmed.slice(space + 1).trim();
  if (!B64TOKEN.test(token)) return { ok: false, reason: 'malformed' };
  return { ok: true, token };
}

/** The 401 detail for each failure: specific enough to fix a client, never echoing a token. */
export function authFailureDetail(result: { reason: AuthFailure; header?: string }): string {
  switch (result.reason) {
    case 'missing':
      return 'Send the project access token as "Authorization: Bearer <token>".';
    case 'misspelled-header':
      return `No Authorization header, but a header named ${JSON.stringify(result.header)}: did you mean "Authorization: Bearer <token>"?`;
    case 'wrong-scheme':
      return 'The Authorization header must use the Bearer scheme: "Authorization: Bearer <token>".';
    case 'malformed':
      return 'The bearer token is empty or contains characters a token cannot have.';
    case 'unknown-token':
      return 'The access token is not valid: it is unknown or has been revoked.';
  }
}

/** The WWW-Authenticate value of a 401 (RFC 6750 §3): `invalid_token` only when a token was presented. */
export function bearerChallenge(reason: AuthFailure): string {
  return reason === 'unknown-token' || reason === 'malformed' ? 'Bearer realm="agentwarden", error="invalid_token"' : 'Bearer realm="agentwarden"';
}
