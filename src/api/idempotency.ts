// The Idempotency-Key request header (draft-ietf-httpapi-idempotency-key-header-07): reading and
// checking a key, the fingerprint of a request body, and one request at a time per key here.
import { headerProblem } from './problem.js';
import type { ApiResponse } from './types.js';

/** The longest key accepted: a UUID, ULID or 32 random bytes in base64 fit many times over. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

// Letters, digits and the marks of UUIDs, ULIDs, base64 and base64url: a key is copied into
// stores and logs as it is, so nothing that needs quoting or escaping there.
const KEY = /^[A-Za-z0-9._~:+/=-]+$/;

/** A checked key, or the 400 naming the header. */
export type IdempotencyKeyResult = { readonly ok: true; readonly key: string } | { readonly ok: false; readonly response: ApiResponse };

function invalid(message: string): IdempotencyKeyResult {
  return {
    ok: false,
    response: headerProblem('invalid-header', `Idempotency-Key ${message}.`, { header: 'Idempotency-Key', code: 'format', message }),
  };
}

/**
 * Reads an Idempotency-Key value: the draft's form, a Structured Field String (RFC 8941 §3.3.3,
 * `"..."`), or the bare key most clients send; either way 1 to 255 characters of letters, digits
 * and `. _ ~ : + / = -`. A header sent twice arrives joined with ", " and is refused.
 * @example
 * parseIdempotencyKey('"8e03978e-40d5-43e8-bc93-6894a57f9324"'); // { ok: true, key: '8e03978e-...' }
 */
export function parseIdempotencyKey(value: string): IdempotencyKeyResult {
  const quoted = value.length >= 2 && value.startsWith('"') && value.endsWith('"');
  const key = quoted ? value.slice(1, -1) : value;
  if (key.length === 0) return invalid('must not be empty');
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) return invalid(`must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters, got ${key.length}`);
  if (!KEY.test(key)) return invalid('must be letters, digits and . _ ~ : + / = - only (one key, optionally in double quotes)');
  return { ok: true, key };
}

/** The fingerprint of a request body: SHA-256 of its bytes, in hex (the draft's "Idempotency Fingerprint"). */
export async function bodyFingerprint(body: Uint8Array | undefined): Promise<string> {
  // Request bodies are read into ordinary ArrayBuffers (never shared memory), as digest requires.
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', (body ?? new Uint8Array(0)) as Uint8Array<ArrayBuffer>));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** Runs tasks one at a time per id; tasks of other ids run freely. */
export interface KeyedQueue {
  run<T>(id: string, task: () => Promise<T>): Promise<T>;
  /** Ids with a task running or waiting. */
  size(): number;
}

/**
 * A queue per id: a request with a key that one on this server is still storing waits for it and
 * is then answered from what it stored, instead of racing it. Only busy ids are held.
 */
export function createKeyedQueue(): KeyedQueue {
  const tails = new Map<string, Promise<unknown>>();
  return {
    run(id, task) {
      const previous = tails.get(id);
      const settled = () => undefined;
      const result = previous === undefined ? task() : previous.then(task);
      const tail = result.then(settled, settled);
      tails.set(id, tail);
      void tail.then(() => {
        if (tails.get(id) === tail) tails.delete(id);
      });
      return result;
    },
    size: () => tails.size,
  };
}
