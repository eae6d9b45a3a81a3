// Visit sinks (DESIGN.md §9): where the middleware hands each visit after the response — a store,
// a Known Agents-compatible `POST /visits`, several of them, or any plain object with these methods.
import type { VerificationOutcome } from '../engine.js';
import type { HeadersInput } from '../identify/headers.js';
import type { VisitDecision } from '../visits/visit.js';

/**
 * A visit as the middleware hands it to a sink: the `POST /visits` body fields. Headers are as the
 * platform gave them, secrets included: every sink strips them (`isSecretHeader`) before a visit
 * is stored or leaves the program.
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
 * cannot take. `verdict` is what the middleware already learnt of the request, so a sink that
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

/**
 * A sink that hands every visit to each of `sinks`, in order. One sink that throws does not keep
 * the visit from the others; flush and close wait for all of them.
 * @throws {TypeError} when `sinks` is not an array of sinks.
 * @example
 * const sink = createFanoutSink([createStoreSink({ store, projectId }), createHttpSink({ url, token })]);
 */
export function createFanoutSink(sinks: readonly VisitSink[]): VisitSink {
  if (!Array.isArray(sinks)) throw new TypeError(`sinks must be an array of visit sinks, got ${typeof sinks}`);
  sinks.forEach((sink, i) => assertVisitSink(sink, `sinks[${i}]`));
  const all = [...sinks];
  const settle = async (run: (sink: VisitSink) => Promise<void>) => {
    const results = await Promise.allSettled(all.map(run));
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  };
  return {
    push(visit, verdict) {
      for (const sink of all) {
        try {
          sink.push(visit, verdict);
        } catch {
          // A custom sink broke its promise not to throw: the others still get the visit.
        }
      }
    },
    flush: () => settle((sink) => sink.flush()),
    close: () => settle((sink) => sink.close()),
  };
}
