// Request body decoding: strict UTF-8, a nesting-depth check before parsing, then JSON.parse.
import { problem } from './problem.js';
import type { ApiResponse } from './types.js';

/** Why a body could not be turned into JSON. */
export type JsonBodyResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly reason: 'invalid-utf8' | 'invalid-json' | 'too-deep' | 'empty'; readonly message: string };

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Nesting depth of JSON text, counting brackets outside strings. One pass, no allocation; it
 * runs before JSON.parse so a hostile "[[[[..." is refused in microseconds instead of parsed
 * (DESIGN.md §7). Strings are skipped with indexOf, natively, since they are most of a body.
 */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Jump to the closing quote: one preceded by an even number of backslashes.
      let end = text.indexOf('"', i + 1);
      while (end !== -1) {
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
        if (slashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      if (end === -1) return max; // unterminated: JSON.parse reports it
      i = end;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) max = depth;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/**
 * The number of `[` and `{` in the text, strings included, counted natively and only up to just
 * past `limit`. Depth never exceeds it, so a body with few brackets (most) skips jsonDepth's scan.
 */
function openingBrackets(text: string, limit: number): number {
  let count = 0;
  for (let at = text.indexOf('{'); at !== -1 && count <= limit; at = text.indexOf('{', at + 1)) count++;
  for (let at = text.indexOf('['); at !== -1 && count <= limit; at = text.indexOf('[', at + 1)) count++;
  return count;
}

/** Decodes a body as UTF-8 JSON (RFC 8259 §8.1), refusing nesting deeper than `maxDepth`. */
export function parseJsonBody(body: Uint8Array | undefined, maxDepth: number): JsonBodyResult {
  if (body === undefined || body.byteLength === 0) return { ok: false, reason: 'empty', message: 'The request body is empty; expected JSON.' };
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    return { ok: false, reason: 'invalid-utf8', message: 'The request body is not valid UTF-8.' };
  }
  return parseJsonText(text, maxDepth, 'The request body');
}

/** Parses JSON text (a body, one line of NDJSON), refusing nesting deeper than `maxDepth`; `what` names it in messages. */
export function parseJsonText(text: string, maxDepth: number, what: string): JsonBodyResult {
  const depth = openingBrackets(text, maxDepth) > maxDepth ? jsonDepth(text) : 0;
  if (depth > maxDepth) {
    return { ok: false, reason: 'too-deep', message: `JSON nesting depth ${depth} exceeds the limit of ${maxDepth}.` };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    // JSON.parse messages name a position, never server internals, so they help the client.
    return { ok: false, reason: 'invalid-json', message: `${what} is not valid JSON: ${(error as Error).message}` };
  }
}

/** The answer to a body that is not JSON: 413 when nested too deep (as a body too large), else 400 naming why. */
export function jsonBodyProblem(failure: Extract<JsonBodyResult, { ok: false }>): ApiResponse {
  const code = failure.reason === 'too-deep' ? 'payload-too-large' : failure.reason === 'empty' ? 'validation-failed' : 'invalid-json';
  return problem(code, failure.message, { errors: [{ pointer: '', code: failure.reason, message: failure.message }] });
}
