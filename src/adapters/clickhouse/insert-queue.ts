// Group commit for ClickHouse INSERTs: appends that arrive while an INSERT is in flight wait and go
// together in the next one, so many small requests make few, large parts.

/** A batch whose deadline passed before an INSERT could carry it: it was never sent. */
export class InsertDeadlineError extends Error {
  constructor() {
    super('the rows waited past their deadline for an INSERT and were not sent');
    this.name = 'InsertDeadlineError';
  }
}

/** A queue of row batches, each settled when the INSERT that carried it is acknowledged. */
export interface InsertQueue<Row> {
  /**
   * Resolves once ClickHouse acknowledged an INSERT holding `rows`; rejects with its error. With a
   * `deadline` (ms, the queue's clock), rows still waiting then are never sent: the promise
   * rejects with `InsertDeadlineError`.
   */
  enqueue(rows: readonly Row[], deadline?: number): Promise<void>;
  /** Rows waiting for an INSERT (not yet sent). */
  queued(): number;
  /** When the oldest INSERT in flight was sent (the queue's clock); undefined when none is. */
  inFlightSince(): number | undefined;
  /** Resolves when nothing is waiting or in flight. */
  drained(): Promise<void>;
}

interface Waiting<Row> {
  readonly rows: readonly Row[];
  readonly deadline: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Creates an insert queue over `insert`. At most `maxConcurrent` INSERTs are in flight; each takes
 * every waiting batch up to `maxBatchRows` rows (a larger single batch goes alone).
 * @example
 * const queue = createInsertQueue({ insert: (rows) => client.insert({ table, values: rows, format: 'JSONEachRow' }).then(() => {}), maxBatchRows: 10_000, maxConcurrent: 1 });
 * await queue.enqueue([row]);
 */
export function createInsertQueue<Row>(options: {
  insert(rows: readonly Row[]): Promise<void>;
  maxBatchRows: number;
  maxConcurrent: number;
  /** Milliseconds, for deadlines (default `Date.now`). */
  clock?: { now(): number };
}): InsertQueue<Row> {
  const clock = options.clock ?? { now: () => Date.now() };
  const waiting: Waiting<Row>[] = [];
  let queuedRows = 0;
  let inFlight = 0;
  // When each INSERT in flight was sent, oldest first.
  const sentAt: number[] = [];
  const idle: (() => void)[] = [];

  const dropExpired = (): void => {
    const now = clock.now();
    for (let i = 0; i < waiting.length; ) {
      const item = waiting[i]!;
      if (item.deadline >= now) {
        i++;
        continue;
      }
      waiting.splice(i, 1);
      queuedRows -= item.rows.length;
      item.reject(new InsertDeadlineError());
    }
  };

  // While an INSERT hangs (ClickHouse stopped, not down), rows behind it must not wait for it to
  // end: they are refused when their deadline passes, never sent.
  let sweep: ReturnType<typeof setTimeout> | undefined;
  const scheduleSweep = (): void => {
    if (sweep !== undefined) return;
    let earliest = Infinity;
    for (const item of waiting) earliest = Math.min(earliest, item.deadline);
    if (earliest === Infinity) return;
    sweep = setTimeout(
      () => {
        sweep = undefined;
        dropExpired();
        scheduleSweep();
      },
      Math.max(0, earliest - clock.now()) + 1,
    );
    (sweep as { unref?: () => void }).unref?.();
  };

  const pump = (): void => {
    // Checked as the next INSERT forms: past this point the rows are sent.
    if (inFlight < options.maxConcurrent) dropExpired();
    if (inFlight === 0 && waiting.length === 0) idle.splice(0).forEach((resolve) => resolve());
    while (inFlight < options.maxConcurrent && waiting.length > 0) {
      const batch: Waiting<Row>[] = [];
      let count = 0;
      while (waiting.length > 0 && (batch.length === 0 || count + waiting[0]!.rows.length <= options.maxBatchRows)) {
        const next = waiting.shift()!;
        batch.push(next);
        count += next.rows.length;
      }
      queuedRows -= count;
      inFlight++;
      const sent = clock.now();
      sentAt.push(sent);
      // Before the batch settles: whoever it wakes sees this INSERT answered.
      const answered = () => void sentAt.splice(sentAt.indexOf(sent), 1);
      const rows = batch.length === 1 ? batch[0]!.rows : batch.flatMap((item) => item.rows);
      options
        .insert(rows)
        .then(
          () => {
            answered();
            batch.forEach((item) => item.resolve());
          },
          (error: unknown) => {
            answered();
            batch.forEach((item) => item.reject(error));
          },
        )
        .finally(() => {
          inFlight--;
          pump();
          if (inFlight === 0 && waiting.length === 0) idle.splice(0).forEach((resolve) => resolve());
        });
    }
    scheduleSweep();
  };

  return {
    enqueue(rows, deadline = Infinity) {
      return new Promise<void>((resolve, reject) => {
        waiting.push({ rows, deadline, resolve, reject });
        queuedRows += rows.length;
        pump();
      });
    },
    queued: () => queuedRows,
    inFlightSince: () => sentAt[0],
    drained: () => (inFlight === 0 && waiting.length === 0 ? Promise.resolve() : new Promise<void>((resolve) => idle.push(resolve))),
  };
}
