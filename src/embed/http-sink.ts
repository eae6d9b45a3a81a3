// The HTTP visit sink: batches visits to any Known Agents-compatible `POST /visits` (an agentwarden
// server or the hosted service), with a bounded queue, retries and an Idempotency-Key per batch.
import { headerValueLength, isSecretHeader, MAX_PATH_LENGTH, MAX_VISIT_HEADERS, MAX_VISIT_HEADER_CHARS } from '../visits/visit.js';
import { jsonString } from '../json-string.js';
import { readTextUpTo } from './bounded-text.js';
import { describeFetchFailure } from './fetch-failure.js';
import type { HeadersInput } from '../identify/headers.js';
import { createDeliveryQueue, platformTimers, type Batch, type DeliveryResult, type DeliveryStats, type OverflowPolicy, type Timers } from './delivery-queue.js';
import { checkOptions, integerOption } from './options.js';
import { boundedVisit } from './visit-bounds.js';
import { trustedSink, type SinkVisit, type VisitSink } from './visit-sink.js';

/** Options of `createHttpSink`. */
export interface HttpSinkOptions {
  /** The API's base URL (`https://api.knownagents.com`, `http://127.0.0.1:8080`); visits go to `<url>/visits`. */
  readonly url: string;
  /** The project's access token, sent as `Authorization: Bearer <token>`. */
  readonly token: string;
  /** Milliseconds a partial batch waits before it is sent (default 30,000, as the interface recommends for busy sites). */
  readonly flushIntervalMs?: number;
  /** Visits per request (default 500; agentwarden servers take up to 1,000). */
  readonly maxBatchVisits?: number;
  /** Bytes of JSON per request (default 512 KiB; agentwarden servers take up to 1 MiB). */
  readonly maxBatchBytes?: number;
  /** Visits held while the server is slow or down (default 10,000); past it, the overflow policy drops. */
  readonly maxQueueVisits?: number;
  /** Bytes held the same way (default 16 MiB). */
  readonly maxQueueBytes?: number;
  /** `'drop-oldest'` (default: the newest visits are the ones worth having) or `'drop-newest'`. */
  readonly overflow?: OverflowPolicy;
  /** Failed attempts per batch before its visits are dropped and counted (default 8: about 4 minutes of backoff). */
  readonly maxAttempts?: number;
  /**
   * How long a batch keeps being retried, in all, while the server answers 409 (another server is
   * still storing the same Idempotency-Key): those answers are no failed attempts. Default 600,000
   * ms; an agentwarden server over ClickHouse may answer 409 for about 47 s after an attempt whose
   * outcome it does not know.
   */
  readonly maxInProgressWaitMs?: number;
  /** First retry delay, doubled each attempt with jitter (default 1,000 ms), up to `maxRetryDelayMs` (default 60,000). */
  readonly retryDelayMs?: number;
  readonly maxRetryDelayMs?: number;
  /** One request's time limit (default 10,000 ms). */
  readonly requestTimeoutMs?: number;
  /** How long `close` keeps delivering before it drops what is left (default 10,000 ms). */
  readonly closeTimeoutMs?: number;
  /**
   * Called with each delivery error (a status, a timeout, a dropped batch); the sink never throws.
   * Omitted, errors are written with `console.warn` (each message once a minute at most), since a
   * wrong token or url would otherwise lose every visit in silence; `() => {}` keeps them quiet.
   */
  readonly onError?: (message: string) => void;
  /** Injected for tests and platforms: the Fetch API, timers, the clock and randomness. */
  readonly fetch?: typeof fetch;
  readonly timers?: Timers;
  readonly clock?: { now(): number };
  readonly random?: () => number;
  /** A random prefix for this sink's Idempotency-Keys (default `crypto.randomUUID()`); batches add their number. */
  readonly keyPrefix?: string;
}

/** How often the same delivery error is written again when no onError was given. */
const REPEAT_WARNING_MS = 60_000;

/** Delivery errors to the console: a new message at once, the same one again at most once a minute. */
function consoleWarning(clock: { now(): number }): (message: string) => void {
  let last: string | undefined;
  let lastAt = 0;
  return (message) => {
    const now = clock.now();
    if (message === last && now - lastAt < REPEAT_WARNING_MS) return;
    last = message;
    lastAt = now;
    console.warn(`agentwarden: visit delivery: ${message} (sink.stats() counts the visits; an onError option replaces this warning)`);
  };
}

/** A sink that also reports its counters (queued, delivered, dropped, ...). */
export interface HttpSink extends VisitSink {
  stats(): DeliveryStats;
}

function jsonNumber(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

// Header names repeat from request to request: each one's JSON (or '' for a secret one) is
// remembered, up to a bound, so names a client invents cannot grow it without end.
const headerNameJson = new Map<string, string>();
const MAX_REMEMBERED_NAMES = 1024;

function nameJson(name: string): string {
  let json = headerNameJson.get(name);
  if (json === undefined) {
    json = isSecretHeader(name.toLowerCase()) ? '' : `${jsonString(name)}:`;
    if (headerNameJson.size < MAX_REMEMBERED_NAMES) headerNameJson.set(name, json);
  }
  return json;
}

// Set by headersJson when the headers it wrote are past the bounds POST /visits takes: counted as
// they are written, so a visit within them (nearly every one) costs no second look.
let pastBounds = false;

/** Headers as a JSON object, without secrets (authorization, cookie, *-token, ...): they never leave this program. */
function headersJson(headers: HeadersInput): string {
  let json = '{';
  let count = 0;
  let chars = 0;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const key = nameJson(name);
    if (key === '') continue;
    if (json.length > 1) json += ',';
    count++;
    chars += name.length + headerValueLength(value);
    json += `${key}${typeof value === 'string' ? jsonString(value) : JSON.stringify(value)}`;
  }
  if (count > MAX_VISIT_HEADERS || chars > MAX_VISIT_HEADER_CHARS) pastBounds = true;
  return `${json}}`;
}

// Decisions are a few shared objects (the policy's): each is written once.
const decisionJson = new WeakMap<object, string>();

/**
 * The visit as JSON, without secret headers and within the sizes POST /visits takes
 * (`boundedVisit`: a visit past them would be refused whole): what JSON.stringify would write of
 * its known fields, assembled by hand, since this runs once per request on the site's own thread
 * (about twice as fast as copying the headers and stringifying the copy).
 */
export function serializeVisit(visit: SinkVisit): string {
  pastBounds = false;
  const json = visitJson(visit);
  return pastBounds || visit.request_path.length > MAX_PATH_LENGTH ? visitJson(boundedVisit(visit)) : json;
}

function visitJson(visit: SinkVisit): string {
  let json = `{"request_path":${jsonString(visit.request_path)},"request_method":${jsonString(visit.request_method)},"request_headers":${headersJson(visit.request_headers)}`;
  if (visit.response_status_code !== undefined) json += `,"response_status_code":${jsonNumber(visit.response_status_code)}`;
  if (visit.response_headers !== undefined) json += `,"response_headers":${headersJson(visit.response_headers)}`;
  if (visit.response_duration_in_milliseconds !== undefined) json += `,"response_duration_in_milliseconds":${jsonNumber(visit.response_duration_in_milliseconds)}`;
  if (visit.created !== undefined) json += `,"created":${jsonString(visit.created)}`;
  if (visit.is_blocked !== undefined) json += `,"is_blocked":${visit.is_blocked === true}`;
  const decision = visit.decision;
  if (decision !== undefined) {
    let text = typeof decision === 'object' && decision !== null ? decisionJson.get(decision) : undefined;
    if (text === undefined) {
      text = JSON.stringify(decision);
      if (typeof decision === 'object' && decision !== null && Object.isFrozen(decision)) decisionJson.set(decision, text);
    }
    json += `,"decision":${text}`;
  }
  if (visit.client_ip !== undefined) json += `,"client_ip":${jsonString(visit.client_ip)}`;
  return `${json}}`;
}

// Queued visits are kept as UTF-8 bytes in shared chunks, outside V8's heap. Held as strings, the
// 500 or so visits a busy site queues between batches survived the young generation's collections
// and were copied there, then promoted: in a loaded Fastify app that cost about 2 µs of CPU a
// request, as much as serialising the visit (bench/middleware.mjs, alternating runs with a stub
// fetch). Bytes also give the batch's exact size.
const CHUNK_BYTES = 64 * 1024;

/**
 * A writer of strings as UTF-8, each into the next free part of a shared chunk; the chunk is freed
 * once no visit in it is held. A string that could take more than a quarter of a chunk gets an
 * array of its own, so a large visit holds no more than its bytes.
 */
function createUtf8Writer(): (text: string) => Uint8Array {
  const encoder = new TextEncoder();
  let chunk = new Uint8Array(CHUNK_BYTES);
  let used = 0;
  return (text) => {
    // At most three bytes per UTF-16 unit (a surrogate pair is four bytes for two units).
    const most = text.length * 3;
    if (most > CHUNK_BYTES / 4) return encoder.encode(text);
    if (CHUNK_BYTES - used < most) {
      chunk = new Uint8Array(CHUNK_BYTES);
      used = 0;
    }
    const { written } = encoder.encodeInto(text, chunk.subarray(used));
    const bytes = chunk.subarray(used, used + written);
    used += written;
    return bytes;
  };
}

/** Visits' JSON bytes as one JSON array: the request body. */
function jsonArray(visits: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  let length = visits.length + 1;
  for (const visit of visits) length += visit.length;
  const body = new Uint8Array(length);
  body[0] = 0x5b; // [
  let at = 1;
  for (const visit of visits) {
    body.set(visit, at);
    at += visit.length;
    body[at++] = 0x2c; // ,
  }
  body[length - 1] = 0x5d; // ] in place of the last comma
  return body;
}

/**
 * Milliseconds to wait from a `Retry-After` value (RFC 9110 §10.2.3: delay-seconds or an
 * HTTP-date), or undefined when it is absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

// Statuses worth another try: the server is overloaded, restarting, or the request timed out.
const RETRYABLE = new Set([408, 425, 429, 500, 502, 503, 504]);

/**
 * Creates an HTTP sink. Visits are serialised (without secret headers) when pushed and sent as a
 * JSON array when a batch fills (`maxBatchVisits`, `maxBatchBytes`) or its oldest visit has waited
 * `flushIntervalMs`. One request is in flight at a time, except that `flush()` sends what is queued
 * at once (on Workers, from the request whose `waitUntil` awaits it); a batch that fails with a network error,
 * a timeout, 408, 429 or a 5xx is retried with exponential backoff and jitter, or after the
 * server's `Retry-After` (429, 503), with the same `Idempotency-Key`, so the server stores it once.
 * A 409 (that key is still being stored elsewhere) is retried after its `Retry-After` for up to
 * `maxInProgressWaitMs`, whatever `maxAttempts` says.
 * A 413 splits the batch. Other 4xx answers drop it (counted in `stats().dropped`). While the
 * server is down, at most `maxQueueVisits` wait; past that the `overflow` policy drops and counts.
 * @throws {TypeError | RangeError} for a bad option (the message names it).
 * @example
 * const sink = createHttpSink({ url: 'https://agentwarden.example.com', token: env.AGENTWARDEN_TOKEN }); // env: your platform's settings or secrets
 */
export function createHttpSink(options: HttpSinkOptions): HttpSink {
  checkOptions(options, 'createHttpSink');
  if (typeof options.url !== 'string') throw new TypeError(`url must be a string, got ${typeof options.url}`);
  let endpoint: URL;
  try {
    endpoint = new URL('visits', options.url.endsWith('/') ? options.url : `${options.url}/`);
  } catch {
    throw new RangeError(`url must be an absolute http(s) URL, got ${JSON.stringify(options.url)}`);
  }
  if (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:') throw new RangeError(`url must be an http(s) URL, got ${JSON.stringify(options.url)}`);
  // fetch refuses such a URL, and every error would then print the password (not repeated here).
  if (endpoint.username !== '' || endpoint.password !== '') throw new RangeError('url must not carry a user name or password: the project token is the credential (the token option)');
  if (typeof options.token !== 'string' || options.token === '' || /[\r\n]/.test(options.token)) throw new TypeError('token must be a non-empty string (the project access token)');
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') throw new TypeError('fetch must be a function (the Fetch API)');
  const clock = options.clock ?? { now: () => Date.now() };
  const timers = options.timers ?? platformTimers;
  const overflow = options.overflow ?? 'drop-oldest';
  if (overflow !== 'drop-oldest' && overflow !== 'drop-newest') throw new RangeError(`overflow must be 'drop-oldest' or 'drop-newest', got ${JSON.stringify(overflow)}`);
  const requestTimeoutMs = integerOption(options.requestTimeoutMs, 'requestTimeoutMs', 10_000, 1);
  if (options.keyPrefix !== undefined && (typeof options.keyPrefix !== 'string' || !/^[A-Za-z0-9._~:+/=-]{1,200}$/.test(options.keyPrefix))) {
    throw new RangeError(`keyPrefix must be 1 to 200 URL-safe characters, got ${JSON.stringify(options.keyPrefix)}`);
  }
  // Drawn at the first delivery, not here: Workers refuse random values in a module's top level,
  // where a sink is usually created.
  let keyPrefix = options.keyPrefix;
  const authorization = `Bearer ${options.token}`;
  // Off once a server answers 501 to a keyed request (a store that keeps no keys): its batches
  // are then sent without one rather than never.
  let keyed = true;

  const toUtf8 = createUtf8Writer();
  const deliver = async (batch: Batch<Uint8Array>): Promise<DeliveryResult> => {
    const headers: Record<string, string> = { authorization, 'content-type': 'application/json' };
    if (keyed) headers['idempotency-key'] = `${(keyPrefix ??= globalThis.crypto.randomUUID())}.${batch.id}`;
    const controller = new AbortController();
    const timeout = timers.setTimeout(() => controller.abort(), requestTimeoutMs);
    let response: Response;
    try {
      // A visits endpoint that redirects is a wrong url: the visits and token go nowhere they were not sent.
      response = await fetchImpl(endpoint, { method: 'POST', headers, body: jsonArray(batch.items), signal: controller.signal, redirect: 'manual' });
    } catch (error) {
      timers.clearTimeout(timeout);
      const reason = controller.signal.aborted ? `timed out after ${requestTimeoutMs} ms` : describeFetchFailure(error);
      return { outcome: 'retry', error: `POST ${endpoint.href}: ${reason}` };
    }
    let text = '';
    try {
      // Past the limit the answer is not read: its status still says what happened.
      text = (await readTextUpTo(response, MAX_ANSWER_BYTES)) ?? '';
    } catch {
      // The answer's status is what matters; a body cut short changes nothing.
    } finally {
      timers.clearTimeout(timeout);
    }
    const status = response.status;
    if (status >= 200 && status < 300) return { outcome: 'delivered', rejected: rejectedCount(text) };
    if (status >= 300 && status < 400) {
      const location = response.headers.get('location');
      return { outcome: 'failed', error: `POST ${endpoint.href} answered ${status}, a redirect${location === null ? '' : ` to ${location.slice(0, 200)}`}: set url to the address that serves POST /visits` };
    }
    const error = `POST ${endpoint.href} answered ${status}${text === '' ? '' : `: ${text.slice(0, 200)}`}`;
    if (status === 501 && keyed) {
      keyed = false;
      return { outcome: 'retry', afterMs: 0, error };
    }
    // 409: a request with this key is being stored; its answer comes with a retry, however many
    // 409s it takes (bounded by maxInProgressWaitMs, not maxAttempts).
    const inProgress = status === 409 && keyed;
    if (RETRYABLE.has(status) || inProgress) {
      const afterMs = parseRetryAfter(response.headers.get('retry-after'), clock.now());
      return { outcome: 'retry', error, ...(afterMs === undefined ? {} : { afterMs }), ...(inProgress ? { inProgress } : {}) };
    }
    if (status === 413) return { outcome: 'split', error };
    return { outcome: 'failed', error };
  };

  const queue = createDeliveryQueue<Uint8Array>({
    deliver,
    maxBatchItems: integerOption(options.maxBatchVisits, 'maxBatchVisits', 500, 1),
    maxBatchBytes: integerOption(options.maxBatchBytes, 'maxBatchBytes', 512 * 1024, 256),
    maxQueueItems: integerOption(options.maxQueueVisits, 'maxQueueVisits', 10_000, 1),
    maxQueueBytes: integerOption(options.maxQueueBytes, 'maxQueueBytes', 16 * 1024 * 1024, 256),
    flushIntervalMs: integerOption(options.flushIntervalMs, 'flushIntervalMs', 30_000, 0),
    overflow,
    maxAttempts: integerOption(options.maxAttempts, 'maxAttempts', 8, 1),
    maxInProgressWaitMs: integerOption(options.maxInProgressWaitMs, 'maxInProgressWaitMs', 600_000, 0),
    baseRetryDelayMs: integerOption(options.retryDelayMs, 'retryDelayMs', 1_000, 1),
    maxRetryDelayMs: integerOption(options.maxRetryDelayMs, 'maxRetryDelayMs', 60_000, 1),
    closeTimeoutMs: integerOption(options.closeTimeoutMs, 'closeTimeoutMs', 10_000, 0),
    timers,
    now: () => clock.now(),
    random: options.random ?? Math.random,
    onError: options.onError ?? consoleWarning(clock),
  });

  // It strips secret headers itself and never throws: the middleware hands it visits as they are.
  return trustedSink({
    push(visit) {
      let json: string;
      try {
        json = serializeVisit(visit);
      } catch (error) {
        // Unserialisable input (a cycle, a BigInt in a custom field) is dropped, never thrown.
        queue.discard(`a visit could not be serialised: ${error instanceof Error ? error.message : String(error)}`);
        return;
      }
      const bytes = toUtf8(json);
      // One more byte for the comma that joins it into the batch.
      queue.push(bytes, bytes.length + 1);
    },
    flush: () => queue.flush(),
    close: () => queue.close(),
    stats: () => queue.stats(),
  });
}

/** The most of an answer's body read: a 2xx answer counts rejected visits in it, and nothing else of it is needed. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** How many visits a 2xx answer reports rejected (`{"accepted": n, "rejected": [...]}`); 0 when it does not say. */
function rejectedCount(text: string): number {
  if (!text.includes('"rejected"')) return 0;
  try {
    const body = JSON.parse(text) as { rejected?: unknown };
    return Array.isArray(body.rejected) ? body.rejected.length : 0;
  } catch {
    return 0;
  }
}
