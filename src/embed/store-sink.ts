// The store visit sink: visits into any VisitStore (the embedded SQLite one, ClickHouse, memory),
// enriched with what the middleware already learnt, appended in batches as the store takes them.
import { createEngine, type Engine, type VerificationOutcome } from '../engine.js';
import { headerMapOf } from '../identify/headers.js';
import { createVisitEnricher, enrichVisit } from '../visits/enrich.js';
import { parseVisit, type Visit } from '../visits/visit.js';
import { VisitStoreUnavailableError, type EnrichedVisit, type VisitStore } from '../visits/visit-store.js';
import { createDeliveryQueue, platformTimers, type Batch, type DeliveryResult, type DeliveryStats, type OverflowPolicy, type Timers } from './delivery-queue.js';
import { checkOptions, integerOption } from './options.js';
import { boundedVisit } from './visit-bounds.js';
import { trustedSink, type VisitSink } from './visit-sink.js';

/** Options of `createStoreSink`. */
export interface StoreSinkOptions {
  readonly store: VisitStore;
  /** The project the visits belong to (`openSqliteStore(...).projects` lists them). */
  readonly projectId: string;
  /** Identifies visits pushed without a verdict (custom code); `createEngine()` on first need when omitted. */
  readonly engine?: Engine;
  /** Visits per append (default 1,000). */
  readonly maxBatchVisits?: number;
  /** Visits held while the store is busy (default 10,000); past it, the overflow policy drops and counts. */
  readonly maxQueueVisits?: number;
  readonly overflow?: OverflowPolicy;
  /** Attempts per batch before its visits are dropped (default 8). */
  readonly maxAttempts?: number;
  readonly closeTimeoutMs?: number;
  readonly onError?: (message: string) => void;
  readonly clock?: { now(): number };
  readonly timers?: Timers;
}

/** A store sink, with its counters. */
export interface StoreSink extends VisitSink {
  stats(): DeliveryStats;
}

interface Pending {
  readonly visit: Visit;
  readonly verdict: VerificationOutcome | undefined;
  readonly clientIp: string | undefined;
}

/**
 * Creates a sink that appends visits to `store` under `projectId`. Each visit is validated as
 * `POST /visits` validates it (secret headers stripped); one that is invalid is counted as
 * rejected. Appends are batched (one at a time: visits pushed meanwhile go in the next); a store
 * that is busy (`VisitStoreUnavailableError`) is retried after its `retryAfterSeconds`, and with
 * `appendOnce` (SQLite, memory) a retried batch is stored once.
 * @throws {TypeError | RangeError} for a bad option (the message names it).
 * @example
 * const { visits, projects } = openSqliteStore({ dataDir: './data-dir' });
 * const sink = createStoreSink({ store: visits, projectId: 'prj_...' });
 */
export function createStoreSink(options: StoreSinkOptions): StoreSink {
  checkOptions(options, 'createStoreSink');
  const { store, projectId } = options;
  if (typeof store?.append !== 'function') throw new TypeError('store must be a VisitStore (an object with append)');
  if (typeof projectId !== 'string' || projectId === '') throw new TypeError('projectId must be a non-empty string');
  const clock = options.clock ?? { now: () => Date.now() };
  let enricher: ReturnType<typeof createVisitEnricher> | undefined;
  const enrichAlone = (visit: Visit, clientIp: () => string | undefined) =>
    (enricher ??= createVisitEnricher({ engine: options.engine ?? createEngine(), clock }))([visit], clientIp).then((visits) => visits[0]!);
  let rejected = 0;
  const keyPrefix = `store-sink.${globalThis.crypto.randomUUID()}`;

  const deliver = async (batch: Batch<Pending>): Promise<DeliveryResult> => {
    const received = Math.floor(clock.now());
    const visits: EnrichedVisit[] = [];
    for (const { visit, verdict, clientIp } of batch.items) {
      // The address the middleware found, whatever header the visit carries (a socket address has none).
      const rule = () => clientIp;
      visits.push(verdict === undefined ? await enrichAlone(visit, rule) : enrichVisit(visit, verdict, headerMapOf(visit.request_headers), received, rule));
    }
    try {
      if (store.appendOnce !== undefined) {
        // A key per batch: a retry after a write whose outcome was lost stores the batch once.
        const result = await store.appendOnce(projectId, visits, { key: `${keyPrefix}.${batch.id}`, fingerprint: String(batch.id), response: '' });
        if (result.outcome === 'in-progress') return { outcome: 'retry', afterMs: result.retryAfterSeconds * 1000, error: 'the batch is being stored by another attempt', inProgress: true };
      } else {
        await store.append(projectId, visits);
      }
      return { outcome: 'delivered' };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (error instanceof VisitStoreUnavailableError) {
        // Without appendOnce a write of unknown outcome is not retried: it could store the visits twice.
        if (error.outcome === 'unknown' && store.appendOnce === undefined) return { outcome: 'failed', error: message };
        return { outcome: 'retry', afterMs: error.retryAfterSeconds * 1000, error: message };
      }
      return { outcome: 'retry', error: message };
    }
  };

  const queue = createDeliveryQueue<Pending>({
    deliver,
    maxBatchItems: integerOption(options.maxBatchVisits, 'maxBatchVisits', 1_000, 1),
    maxBatchBytes: Number.MAX_SAFE_INTEGER,
    maxQueueItems: integerOption(options.maxQueueVisits, 'maxQueueVisits', 10_000, 1),
    maxQueueBytes: Number.MAX_SAFE_INTEGER,
    flushIntervalMs: 0,
    overflow: options.overflow ?? 'drop-oldest',
    maxAttempts: integerOption(options.maxAttempts, 'maxAttempts', 8, 1),
    // A ClickHouse store answers "in progress" for up to about 47 s after an attempt of unknown outcome.
    maxInProgressWaitMs: 600_000,
    baseRetryDelayMs: 200,
    maxRetryDelayMs: 30_000,
    closeTimeoutMs: integerOption(options.closeTimeoutMs, 'closeTimeoutMs', 10_000, 0),
    timers: options.timers ?? platformTimers,
    now: Date.now,
    random: Math.random,
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  });

  // It strips secret headers itself (parseVisit) and never throws: the middleware hands it visits as they are.
  return trustedSink({
    push(input, verdict) {
      const parsed = parseVisit(boundedVisit(input));
      if (!parsed.ok) {
        rejected++;
        queue.discard(`a visit is invalid: ${parsed.errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}`);
        return;
      }
      queue.push({ visit: parsed.visit, verdict, clientIp: parsed.visit.client_ip }, 0);
    },
    flush: () => queue.flush(),
    close: () => queue.close(),
    stats() {
      const stats = queue.stats();
      // Invalid visits were refused before the queue: they count as rejected, not dropped.
      return { ...stats, rejected: stats.rejected + rejected, dropped: stats.dropped - rejected };
    },
  });
}
