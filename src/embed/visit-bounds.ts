// Visits held to the sizes POST /visits takes by default (DESIGN.md §7). A request may carry more
// headers, longer ones or a longer path than a server accepts in a visit, and a visit past them is
// refused whole: a bot could keep itself out of the records by padding its request with a few
// hundred one-byte headers. Trimmed to the bounds, its visit is kept.
import type { HeadersInput } from '../identify/headers.js';
import { headerObjectSize, headerValueLength, MAX_PATH_LENGTH, MAX_VISIT_HEADERS, MAX_VISIT_HEADER_CHARS } from '../visits/visit.js';
import type { SinkVisit } from './visit-sink.js';

// Kept first when fields must go: what identification and verification read, then the referer.
const KEPT_FIRST = ['user-agent', 'signature-agent', 'signature-input', 'signature', 'host', ':authority', 'from', 'x-forwarded-for', 'forwarded', 'referer'];

/** Whether a header object is within the bounds (field count, and characters of names and values). */
export function headersWithinBounds(headers: HeadersInput): boolean {
  const { count, chars } = headerObjectSize(headers);
  return count <= MAX_VISIT_HEADERS && chars <= MAX_VISIT_HEADER_CHARS;
}

/** A string cut to at most `max` UTF-16 units, never between the two halves of a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/**
 * The header fields within the bounds: those identification reads first, then the others in
 * order, while both the field count and the characters allow; the value that reaches the
 * character bound is cut there, and the fields after it are left out.
 */
export function boundedHeaders(headers: HeadersInput): Record<string, string | readonly string[]> {
  const kept: Record<string, string | readonly string[]> = {};
  let count = 0;
  let room = MAX_VISIT_HEADER_CHARS;
  const take = (name: string) => {
    const value = headers[name];
    if (value === undefined || Object.hasOwn(kept, name) || count === MAX_VISIT_HEADERS || room - name.length <= 0) return;
    let left = room - name.length;
    let bounded: string | readonly string[];
    if (typeof value === 'string') bounded = cut(value, left);
    else {
      const parts: string[] = [];
      for (const part of value) {
        if (typeof part !== 'string' || left === 0) continue;
        const piece = cut(part, left);
        parts.push(piece);
        left -= piece.length;
      }
      bounded = parts;
    }
    kept[name] = bounded;
    count++;
    room -= name.length + headerValueLength(bounded);
  };
  const byLowerName = new Map<string, string>();
  for (const name in headers) if (!byLowerName.has(name.toLowerCase())) byLowerName.set(name.toLowerCase(), name);
  for (const lower of KEPT_FIRST) {
    const name = byLowerName.get(lower);
    if (name !== undefined) take(name);
  }
  for (const name in headers) take(name);
  return kept;
}

function isHeaderObject(value: unknown): value is HeadersInput {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A request path cut to the longest kept (`MAX_PATH_LENGTH`). */
export function boundedPath(path: string): string {
  return cut(path, MAX_PATH_LENGTH);
}

/**
 * The visit within the bounds POST /visits takes by default: itself when it is (nearly always),
 * else a copy with its path cut and its header objects trimmed (`boundedHeaders`).
 * @example
 * boundedVisit({ request_path: '/', request_method: 'GET', request_headers: padded }).request_headers; // the user agent and the first fields, 200 at most
 */
export function boundedVisit(visit: SinkVisit): SinkVisit {
  // A visit some other code built may not have the fields' types: left as it is, for the sink's own validation to name.
  if (typeof visit !== 'object' || visit === null) return visit;
  const path: unknown = visit.request_path;
  const pathFits = typeof path !== 'string' || path.length <= MAX_PATH_LENGTH;
  const requestFits = !isHeaderObject(visit.request_headers) || headersWithinBounds(visit.request_headers);
  const responseFits = !isHeaderObject(visit.response_headers) || headersWithinBounds(visit.response_headers);
  if (pathFits && requestFits && responseFits) return visit;
  return {
    ...visit,
    request_path: pathFits ? visit.request_path : boundedPath(visit.request_path),
    request_headers: requestFits ? visit.request_headers : boundedHeaders(visit.request_headers),
    ...(responseFits ? {} : { response_headers: boundedHeaders(visit.response_headers!) }),
  };
}
