// The bounded queue behind the visit sinks: batches by count, bytes and interval, one delivery at a
// time, retries with backoff (or the server's Retry-After), and counters for what was dropped.

/** Timers as the platform has them (injected so tests drive time). */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The platform's timers; a Node timer is unref'd so a pending batch never keeps a process alive. */
export const platformTimers: Timers = {
  setTimeout(callback, ms) {
    const handle = globalThis.setTimeout(callback, ms) as unknown as { unref?: () => void };
    if (typeof handle?.unref === 'function') handle.unref();
    return handle;
  },
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>),
};

/** A batch handed to `deliver`: its items, their size, and which attempt this is (1 first). */
export interface Batch<T> {
  readonly items: readonly T[];
  readonly bytes: number;
  readonly attempt: number;
  /** Stable across the batch's retries (the HTTP sink's Idempotency-Key). */
  readonly id: number;
}

/**
 * What became of a delivery: delivered (some items may have been refused by the receiver: counted
 * as `rejected`); to retry (after the receiver's `afterMs`, else backoff); to split (too large: the
 * halves are sent as new batches); or failed for good (the items are dropped and counted). A retry
 * marked `inProgress` says the receiver is still storing this very batch (an HTTP 409 for its
 * Idempotency-Key): waiting for that is no failed attempt, so it is bounded by time instead.
 */
export type DeliveryResult =
  | { readonly outcome: 'delivered'; readonly rejected?: number }
  | { readonly outcome: 'retry'; readonly afterMs?: number; readonly error: string; readonly inProgress?: boolean }
  | { readonly outcome: 'split'; readonly error: string }
  | { readonly outcome: 'failed'; readonly error: string };

/** Counters of a sink since it was created. */
export interface DeliveryStats {
  /** Items waiting in the queue (not yet in a batch). */
  readonly queued: number;
  /** Items of the batch being delivered or waiting to be retried. */
  readonly inFlight: number;
  readonly delivered: number;
  /** Items refused one by one by the receiver (invalid visits) in delivered batches. */
  readonly rejected: number;
  /** Items dropped: the queue was full, a batch failed for good or ran out of attempts, or the sink was closed. */
  readonly dropped: number;
  readonly retries: number;
  /** The last delivery error, if any. */
  readonly lastError: string | undefined;
}

/** What the queue does when it is full: drop the oldest queued item for the new one, or the new one. */
export type OverflowPolicy = 'drop-oldest' | 'drop-newest';

/** Options of `createDeliveryQueue`. */
export interface DeliveryQueueOptions<T> {
  readonly deliver: (batch: Batch<T>) => Promise<DeliveryResult>;
  readonly maxBatchItems: number;
  readonly maxBatchBytes: number;
  readonly maxQueueItems: number;
  readonly maxQueueBytes: number;
  /** A batch smaller than the limits waits at most this long; 0 sends as soon as the previous one is done. */
  readonly flushIntervalMs: number;
  readonly overflow: OverflowPolicy;
  /** Failed attempts per batch before its items are dropped (answers that it is in progress do not count). */
  readonly maxAttempts: number;
  /** How long a batch waits in all for a receiver that answers it is still storing it, before it is dropped. */
  readonly maxInProgressWaitMs: number;
  readonly baseRetryDelayMs: number;
  readonly maxRetryDelayMs: number;
  /** How long `close` keeps trying before it drops what is left. */
  readonly closeTimeoutMs: number;
  readonly timers: Timers;
  /** Milliseconds now: a batch timer long overdue is taken as lost. */
  readonly now: () => number;
  /** In [0, 1): jitter for backoff, so many sites do not retry in step. */
  readonly random: () => number;
  readonly onError?: (error: string) => void;
}

/** The queue a sink pushes to. */
export interface DeliveryQueue<T> {
  /** Queues one item of `bytes` size; never throws. */
  push(item: T, bytes: number): void;
  /** Counts one item that could not even be queued (unserialisable) as dropped. */
  discard(error: string): void;
  flush(): Promise<void>;
  close(): Promise<void>;
  stats(): DeliveryStats;
}

interface PendingBatch<T> {
  items: T[];
  sizes: number[];
  bytes: number;
  attempt: number;
  /** Of its attempts, those answered "in progress", and the time waited after them. */
  inProgressAnswers: number;
  inProgressWaitedMs: number;
  id: number;
}

/** How late past its time a batch timer is taken as lost rather than delayed by a busy event loop. */
const LOST_TIMER_MS = 1_000;

/** The longest Retry-After honoured: a server asking for more is treated as down for an hour. */
const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * Creates a delivery queue. Batches leave when they reach `maxBatchItems` or `maxBatchBytes`, when
 * the oldest queued item has waited `flushIntervalMs`, on `flush` and on `close`. One batch is in
 * flight at a time, except that a flush sends everything queued at once, from its caller; so memory
 * is bounded by the queue limits plus the batches in flight, whatever the receiver does, and items
 * only move from the queue into a batch. Past the limits the overflow policy drops and counts.
 */
export function createDeliveryQueue<T>(options: DeliveryQueueOptions<T>): DeliveryQueue<T> {
  const { deliver, timers } = options;
  // Slots before `head` are cleared as items leave: the array is compacted only now and then, and
  // a left item must not stay reachable (delivered or dropped visits held past the byte bound).
  let queue: (T | undefined)[] = [];
  let sizes: number[] = [];
  let head = 0;
  let queuedBytes = 0;
  // Batches being delivered or waiting to be retried: one at a time, except that a flush sends what
  // is queued at once, beside a batch already in flight (see flushTo).
  const inFlight = new Set<PendingBatch<T>>();
  let nextId = 1;
  let timer: unknown;
  let timerDue = 0;
  // Ends a retry's wait now, by batch waiting (close does not wait out a backoff).
  const retryWakes = new Set<() => void>();
  let closed = false;
  let closing = false;
  // Items pushed so far / items settled (delivered, rejected or dropped) so far: a flush waits
  // until everything pushed before it has settled.
  let pushed = 0;
  let settled = 0;
  const waiters: { upTo: number; resolve: () => void }[] = [];
  const counters = { delivered: 0, rejected: 0, dropped: 0, retries: 0, lastError: undefined as string | undefined };
  // True when a flush or close asked for everything queued to leave now, not at the interval.
  let draining = false;
  // A batch cap lowered after a receiver refused a batch as too large.
  let batchCap = options.maxBatchItems;

  const queued = () => queue.length - head;

  const settle = (count: number) => {
    settled += count;
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (waiters[i]!.upTo <= settled) waiters.splice(i, 1)[0]!.resolve();
    }
  };

  const drop = (count: number, error?: string) => {
    if (count === 0) return;
    counters.dropped += count;
    if (error !== undefined) report(error);
    settle(count);
  };

  const report = (error: string) => {
    counters.lastError = error;
    try {
      options.onError?.(error);
    } catch {
      // An error callback that throws must not stop deliveries.
    }
  };

  const takeHead = (): [T, number] => {
    const item = queue[head]!;
    const size = sizes[head]!;
    queue[head] = undefined;
    head++;
    queuedBytes -= size;
    if (head > 1024 && head * 2 > queue.length) {
      queue = queue.slice(head);
      sizes = sizes.slice(head);
      head = 0;
    }
    return [item, size];
  };

  const takeBatch = (): PendingBatch<T> => {
    const items: T[] = [];
    const itemSizes: number[] = [];
    let bytes = 0;
    while (queued() > 0 && items.length < batchCap) {
      const size = sizes[head]!;
      // A single item larger than the byte limit still goes, alone: the receiver decides.
      if (items.length > 0 && bytes + size > options.maxBatchBytes) break;
      items.push(takeHead()[0]);
      itemSizes.push(size);
      bytes += size;
    }
    return { items, sizes: itemSizes, bytes, attempt: 0, inProgressAnswers: 0, inProgressWaitedMs: 0, id: nextId++ };
  };

  const full = () => queued() >= batchCap || queuedBytes >= options.maxBatchBytes;

  const schedule = () => {
    if (inFlight.size > 0 || queued() === 0) return;
    if (draining || full() || options.flushIntervalMs === 0) {
      if (timer !== undefined) {
        timers.clearTimeout(timer);
        timer = undefined;
      }
      void send(takeBatch());
      return;
    }
    if (timer === undefined) {
      timerDue = options.now() + options.flushIntervalMs;
      timer = timers.setTimeout(() => {
        timer = undefined;
        if (inFlight.size === 0 && queued() > 0) void send(takeBatch());
      }, options.flushIntervalMs);
    } else if (options.now() > timerDue + LOST_TIMER_MS) {
      // The timer never fired: Workers cancel a request's timers with its response, so one armed
      // during a request without ctx.waitUntil is gone. The batch leaves now, and the next waits anew.
      timers.clearTimeout(timer);
      timer = undefined;
      void send(takeBatch());
    }
  };

  const backoff = (attempt: number) => {
    const exponential = Math.min(options.maxRetryDelayMs, options.baseRetryDelayMs * 2 ** Math.min(attempt - 1, 30));
    return Math.round(exponential * (0.5 + options.random() / 2));
  };

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        retryWakes.delete(wake);
        timers.clearTimeout(handle);
        resolve();
      };
      const handle = timers.setTimeout(wake, ms);
      retryWakes.add(wake);
    });

  async function send(batch: PendingBatch<T>): Promise<void> {
    inFlight.add(batch);
    for (;;) {
      batch.attempt++;
      let result: DeliveryResult;
      try {
        result = await deliver({ items: batch.items, bytes: batch.bytes, attempt: batch.attempt, id: batch.id });
      } catch (error) {
        result = { outcome: 'retry', error: error instanceof Error ? error.message : String(error) };
      }
      if (result.outcome === 'delivered') {
        const rejected = Math.min(result.rejected ?? 0, batch.items.length);
        counters.delivered += batch.items.length - rejected;
        counters.rejected += rejected;
        settle(batch.items.length);
        break;
      }
      if (result.outcome === 'split' && batch.items.length > 1) {
        // Too large for the receiver: send the halves as new batches (first half first) and keep
        // later batches at most that size.
        const half = Math.ceil(batch.items.length / 2);
        batchCap = Math.max(1, Math.min(batchCap, half));
        report(result.error);
        queue = [...batch.items, ...queue.slice(head)];
        sizes = [...batch.sizes, ...sizes.slice(head)];
        queuedBytes += batch.bytes;
        head = 0;
        break;
      }
      if (result.outcome !== 'retry' || closed) {
        drop(batch.items.length, result.error);
        break;
      }
      const inProgress = result.inProgress === true;
      if (inProgress) batch.inProgressAnswers++;
      const failures = batch.attempt - batch.inProgressAnswers;
      // The receiver's Retry-After is a minimum: after a second failure in a row our own backoff
      // applies too, so "Retry-After: 0" on every answer cannot spend all attempts at once and drop
      // the batch. (A first one may be 0: the keyless retry after a 501.)
      const floor = failures >= 2 && !inProgress ? backoff(failures - 1) : 0;
      const delay = result.afterMs === undefined ? backoff(Math.max(1, failures)) : Math.max(floor, Math.min(result.afterMs, MAX_RETRY_AFTER_MS));
      if (inProgress ? batch.inProgressWaitedMs + delay > options.maxInProgressWaitMs : failures >= options.maxAttempts) {
        drop(batch.items.length, inProgress ? `${result.error} (still in progress after ${Math.round(batch.inProgressWaitedMs / 1000)} s of waiting)` : result.error);
        break;
      }
      if (inProgress) batch.inProgressWaitedMs += delay;
      counters.retries++;
      report(result.error);
      await wait(delay);
      if (closed) {
        drop(batch.items.length, 'the sink was closed before the batch could be delivered');
        break;
      }
    }
    inFlight.delete(batch);
    if (draining && queued() === 0) draining = false;
    schedule();
  }

  /** Ends every retry's wait now (close does not wait out a backoff). */
  const wakeRetry = () => {
    for (const wake of [...retryWakes]) wake();
  };

  const flushTo = (upTo: number) =>
    new Promise<void>((resolve) => {
      if (settled >= upTo) return resolve();
      waiters.push({ upTo, resolve });
      draining = true;
      // What is queued leaves now, from the caller, beside any batch in flight: on Workers each
      // request's waitUntil(flush()) must start its own delivery, since I/O started while serving
      // another request is cancelled once that request is done.
      while (!closed && queued() > 0) void send(takeBatch());
    });

  return {
    push(item, bytes) {
      if (closed || closing) {
        pushed++;
        drop(1);
        return;
      }
      pushed++;
      if (queued() >= options.maxQueueItems || queuedBytes + bytes > options.maxQueueBytes) {
        if (options.overflow === 'drop-newest' || queued() === 0) {
          drop(1);
          return;
        }
        while (queued() > 0 && (queued() >= options.maxQueueItems || queuedBytes + bytes > options.maxQueueBytes)) {
          takeHead();
          drop(1);
        }
      }
      queue.push(item);
      sizes.push(bytes);
      queuedBytes += bytes;
      schedule();
    },
    discard(error) {
      pushed++;
      drop(1, error);
    },
    flush: () => flushTo(pushed),
    async close() {
      if (closed || closing) return flushTo(pushed);
      closing = true;
      const upTo = pushed;
      // A timer that is not unref'd: it keeps a Node process alive while the last batches go.
      let deadline: ReturnType<typeof globalThis.setTimeout> | undefined;
      const expired = new Promise<void>((resolve) => {
        deadline = globalThis.setTimeout(resolve, options.closeTimeoutMs);
      });
      // A batch waiting to be retried is tried once more now rather than at its backoff.
      wakeRetry();
      await Promise.race([flushTo(upTo), expired]);
      globalThis.clearTimeout(deadline);
      closed = true;
      if (timer !== undefined) timers.clearTimeout(timer);
      wakeRetry();
      const left = queued();
      queue = [];
      sizes = [];
      head = 0;
      queuedBytes = 0;
      drop(left, left > 0 ? `the sink closed with ${left} visits undelivered` : undefined);
      // The batch in flight settles itself (dropped after its attempt if it fails).
    },
    stats: () => ({
      queued: queued(),
      inFlight: [...inFlight].reduce((sum, batch) => sum + batch.items.length, 0),
      delivered: counters.delivered,
      rejected: counters.rejected,
      dropped: counters.dropped,
      retries: counters.retries,
      lastError: counters.lastError,
    }),
  };
}
