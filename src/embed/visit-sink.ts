// Visit sinks (DESIGN.md §9): where the middleware hands each visit after the response — a store,
// a Known Agents-compatible `POST /visits`, several of them, or any plain object with these methods.
import type { VerificationOutcome } from '../engine.js';
import type { HeadersInput } from '../identify/headers.js';
import { isSecretHeader, type VisitDecision } from '../visits/visit.js';

/**
 * A visit as the middleware hands it to a sink: the `POST /visits` body fields. A custom sink gets
 * its headers without secrets (`isSecretHeader`: authorization, cookie, set-cookie, *-token...);
 * the sinks of this package get them as the platform gave them, and strip them themselves before a
 * visit is stored or leaves the program.
 */
export interface SinkVisit {
  readonly request_path: string;
  readonly request_method: string;
  readonly request_headers: HeadersInput;
  readonly response_status_code?: number;
  readonly response_headers?: HeadersInput;
  readonly response_duration_in_milliseconds?: number;
  /** When the request arrived (ISO 8601, UTC): batches reach the server late. */
  readonly created?: string;
  /** True when the site refused the request (a deny rule outside report-only mode). */
  readonly is_blocked?: boolean;
  readonly decision?: VisitDecision;
  /** The visitor's address as the middleware found it (a trusted header, else the socket or platform). */
  readonly client_ip?: string;
}

/**
 * Where visits go. `push` never throws and never waits: a sink queues or drops (and counts) what it
 * cannot take. A custom sink that breaks this (a `push` that throws, or an `async` one that
 * rejects) loses that visit and nothing else: the middleware catches both. `verdict` is what the middleware already learnt of the request, so a sink that
 * stores visits need not identify them again (a replay guard would refuse a second look at a
 * signature). A custom sink is any object with these three methods.
 */
export interface VisitSink {
  push(visit: SinkVisit, verdict?: VerificationOutcome): void;
  /** Resolves once every visit pushed before the call is delivered, or given up on (and counted). */
  flush(): Promise<void>;
  /** Flushes, then releases timers and connections; pushes after it are dropped. */
  close(): Promise<void>;
}

/**
 * Checks that `value` is a sink, naming `option` in the error.
 * @throws {TypeError} when it lacks push, flush or close.
 */
export function assertVisitSink(value: unknown, option: string): asserts value is VisitSink {
  const sink = value as Partial<VisitSink> | null;
  if (typeof sink !== 'object' || sink === null || typeof sink.push !== 'function' || typeof sink.flush !== 'function' || typeof sink.close !== 'function') {
    throw new TypeError(`${option} must be a visit sink (an object with push, flush and close), got ${sink === null ? 'null' : typeof sink}`);
  }
}

// The sinks of this package: they strip secret headers themselves and never throw or reject from push.
const TRUSTED_SINKS = new WeakSet<VisitSink>();

/** Marks a sink of this package as one that strips secrets itself and never throws or rejects from `push`. */
export function trustedSink<S extends VisitSink>(sink: S): S {
  TRUSTED_SINKS.add(sink);
  return sink;
}

/** Headers without the secret ones (a copy), or the object itself when it holds none. */
function withoutSecrets(headers: HeadersInput): HeadersInput {
  let kept: Record<string, string | readonly string[] | undefined> | undefined;
  for (const name in headers) {
    if (!isSecretHeader(name.toLowerCase())) continue;
    kept ??= { ...headers };
    delete kept[name];
  }
  return kept ?? headers;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * A sink as the middleware uses it. One of this package is itself. Any other (the site's own code)
 * gets its visits without secret headers, so credentials never reach a log or database through
 * agentwarden; a `push` that throws or rejects (an `async` one whose write failed) loses that
 * visit and nothing else (a rejection left unhandled would end a Node process); a `flush` or
 * `close` that throws rejects instead.
 */
export function guardSink(sink: VisitSink): VisitSink {
  if (TRUSTED_SINKS.has(sink)) return sink;
  return trustedSink({
    push(visit, verdict) {
      const headers = withoutSecrets(visit.request_headers);
      const response = visit.response_headers === undefined ? undefined : withoutSecrets(visit.response_headers);
      const safe = headers === visit.request_headers && response === visit.response_headers ? visit : { ...visit, request_headers: headers, ...(response === undefined ? {} : { response_headers: response }) };
      let result: unknown;
      try {
        result = (sink.push as (visit: SinkVisit, verdict?: VerificationOutcome) => unknown)(safe, verdict);
      } catch {
        return;
      }
      if (isThenable(result)) result.then(undefined, () => undefined);
    },
    // Async: a flush or close that throws instead of rejecting rejects too.
    flush: async () => sink.flush(),
    close: async () => sink.close(),
  });
}

/**
 * A sink that hands every visit to each of `sinks`, in order. One sink that throws or rejects does
 * not keep the visit from the others; flush and close wait for all of them.
 * @throws {TypeError} when `sinks` is not an array of sinks.
 * @example
 * const sink = createFanoutSink([createStoreSink({ store, projectId }), createHttpSink({ url, token })]);
 */
export function createFanoutSink(sinks: readonly VisitSink[]): VisitSink {
  if (!Array.isArray(sinks)) throw new TypeError(`sinks must be an array of visit sinks, got ${typeof sinks}`);
  sinks.forEach((sink, i) => assertVisitSink(sink, `sinks[${i}]`));
  const all = sinks.map(guardSink);
  const settle = async (run: (sink: VisitSink) => Promise<void>) => {
    const results = await Promise.allSettled(all.map(run));
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  };
  // Each sink is guarded: one that throws leaves the others their visit.
  return trustedSink({
    push(visit, verdict) {
      for (const sink of all) sink.push(visit, verdict);
    },
    flush: () => settle((sink) => sink.flush()),
    close: () => settle((sink) => sink.close()),
  });
}
