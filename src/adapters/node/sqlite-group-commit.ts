// Group commit of SQLite visit appends: every append of one event-loop turn is written in one
// transaction, and each resolves only after that commit, so an accepted visit survives kill -9. An
// append with an idempotency key writes the key's row in the same transaction as its visits.
// Another connection's write lock (the CLI, a backup) is waited for on a timer, never inside
// SQLite's busy handler: that would stop the event loop, and every request with it, for as long.
import type BetterSqlite3 from 'better-sqlite3';
import {
  IDEMPOTENCY_WINDOW_MS,
  VisitStoreUnavailableError,
  type EnrichedVisit,
  type IdempotencyRecord,
  type IdempotentAppendResult,
  type IdempotentBatch,
  type StoredVisit,
} from '../../index.js';
import type { HeaderPairs } from './sqlite-header-pairs.js';
import { storedVisit, type VisitRowWriter } from './sqlite-visit-rows.js';

/** A commit that failed for the database's sake. */
export interface CommitFailure {
  readonly at: number;
  readonly detail: string;
  /** SQLITE_BUSY or SQLITE_LOCKED: another connection held the database; nothing is wrong with the disk. */
  readonly lock: boolean;
}

/** What one append came to in a committed transaction: its visits' ids, or the record of its key. */
type Written = { readonly ids: readonly number[] } | { readonly replayed: IdempotencyRecord };

/** One append waiting for the next commit. */
interface Pending {
  readonly projectId: string;
  readonly visits: readonly EnrichedVisit[];
  /** The idempotency key of an `appendOnce`. */
  readonly once: IdempotentBatch | undefined;
  readonly resolve: (result: { readonly stored: readonly StoredVisit[] } | { readonly replayed: IdempotencyRecord }) => void;
  readonly reject: (error: unknown) => void;
  /** performance.now() when it was queued: it waits for another connection's lock up to busy_timeout from then. */
  readonly since: number;
}

/** What the group commit writes with, and whom it tells. */
export interface GroupCommitOptions {
  /** Writes raw rows inside the group's transaction. */
  readonly writer: VisitRowWriter;
  /** The interned header pairs the writer encodes with: told whether the transaction committed. */
  readonly pairs: HeaderPairs;
  /** Visits allowed to wait for the next commit; past it an append is refused as busy. */
  readonly maxPending: number;
  /** Called right after a commit, before any append resolves; must not throw. */
  readonly onCommitted: (group: readonly { readonly projectId: string; readonly visits: readonly EnrichedVisit[] }[], ids: readonly (readonly number[])[]) => void;
  /** Called with each append's stored visits after its commit (the live timeline). */
  readonly publish: (projectId: string, stored: readonly StoredVisit[]) => void;
  /** Milliseconds since the epoch: when a key was stored, for its window. */
  readonly clock: { now(): number };
}

/** The group-commit writer of one open store; see `createGroupCommit`. */
export interface GroupCommit {
  /** Queues visits for the next commit; resolves with them as stored once committed. */
  append(projectId: string, visits: readonly EnrichedVisit[]): Promise<readonly StoredVisit[]>;
  /** As `append`, unless the project stored `batch.key` within the window: then its record, and nothing is written. */
  appendOnce(projectId: string, visits: readonly EnrichedVisit[], batch: IdempotentBatch): Promise<IdempotentAppendResult>;
  /** Transactions committed by appends so far. */
  commits(): number;
  /** Commits what is queued now, in this turn (before a write that must come after it). */
  flush(): void;
  /** Visits waiting for the next commit. */
  pending(): number;
  /**
   * The last commit that failed for the database's sake (disk, lock), when no commit has succeeded
   * since: when, why, and whether it was only the lock (another connection writing).
   */
  lastFailure(): CommitFailure | undefined;
  /** Commits what is queued (when the database is open); later appends are refused as unavailable. */
  close(): void;
}

// SQLite reports these when the disk or another writer is in the way: retry later, not a bug.
const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY)/;
const LOCK_CODES = /^SQLITE_(BUSY|LOCKED)/;
// Every code but I/O errors means the transaction rolled back. An I/O error may come from the
// COMMIT's own write or sync: a commit frame that reached the WAL before a failed fsync is
// replayed by the next open, so whether the visits are stored is not known.
const UNKNOWN_OUTCOME_CODES = /^SQLITE_IOERR/;

// While another connection holds the write lock, a group is tried again after this long, doubling.
const LOCK_RETRY_FIRST_MS = 5;
const LOCK_RETRY_MAX_MS = 100;

/** better-sqlite3's error code (SQLITE_BUSY, SQLITE_FULL...); '' for an error without one. */
function sqliteCode(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' ? code : '';
}

/** Whether the store refused a commit only because another connection held the write lock. */
function refusedForLock(error: unknown): boolean {
  return error instanceof VisitStoreUnavailableError && LOCK_CODES.test(sqliteCode(error.cause));
}

function unavailable(error: unknown): unknown {
  const code = sqliteCode(error);
  if (UNAVAILABLE_CODES.test(code)) {
    const outcome = UNKNOWN_OUTCOME_CODES.test(code) ? 'unknown' : 'not-stored';
    return new VisitStoreUnavailableError('unavailable', 5, `the visit database cannot take writes now (${code})`, { cause: error, outcome });
  }
  return error;
}

/**
 * The group-commit writer over `db` (in WAL mode, synchronous=NORMAL or FULL): appends arriving in
 * one event-loop turn share one IMMEDIATE transaction; an append that fails it is retried alone,
 * so it cannot fail the others. A bounded backlog answers busy instead of queueing without end.
 */
export function createGroupCommit(db: BetterSqlite3.Database, options: GroupCommitOptions): GroupCommit {
  const { writer, pairs, maxPending, onCommitted, publish, clock } = options;
  const findKey = db.prepare<[string, string, number], IdempotencyRecord>(
    'SELECT fingerprint, response FROM visit_idempotency_keys WHERE project_id = ? AND key = ? AND created > ?',
  );
  // A row past the window is a key seen long ago: the new batch takes it over.
  const storeKey = db.prepare<[string, string, number, string, string]>(
    `INSERT INTO visit_idempotency_keys (project_id, key, created, fingerprint, response) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (project_id, key) DO UPDATE SET created = excluded.created, fingerprint = excluded.fingerprint, response = excluded.response`,
  );
  const writeGroupTransaction = db.transaction((group: readonly Pending[], now: number): Written[] =>
    group.map((item): Written => {
      if (item.once !== undefined) {
        // Inside the transaction: another process on the file, or an earlier append of this group,
        // that stored the key has committed it or is in this very transaction.
        const seen = findKey.get(item.projectId, item.once.key, now - IDEMPOTENCY_WINDOW_MS);
        if (seen !== undefined) return { replayed: seen };
        storeKey.run(item.projectId, item.once.key, now, item.once.fingerprint, item.once.response);
      }
      return { ids: writer.write(item.visits.map((visit) => ({ projectId: item.projectId, visit }))) };
    }),
  );
  /** Writes the group in one transaction; throws (having written nothing) when it does not commit. */
  const commitGroup = (group: readonly Pending[]): Written[] => {
    let written: Written[];
    try {
      written = writeGroupTransaction.immediate(group, clock.now());
    } catch (error) {
      pairs.rolledBack();
      throw error;
    }
    pairs.committed();
    return written;
  };
  /** Resolves the appends of a committed group: nothing here may write again, whatever happens. */
  const settle = (group: readonly Pending[], written: readonly Written[]) => {
    // Each append's stored copies; a copy that fails (a library caller's visit whose getter throws)
    // fails that append alone: it is committed, and never written again.
    const stored = group.map((item, g): StoredVisit[] | IdempotencyRecord | Error => {
      const result = written[g]!;
      if (!('ids' in result)) return result.replayed;
      try {
        return item.visits.map((visit, i) => storedVisit(visit, result.ids[i]!, item.projectId));
      } catch (error) {
        return error instanceof Error ? error : new Error(String(error));
      }
    });
    onCommitted(
      group.map((item, g) => ({ projectId: item.projectId, visits: 'ids' in written[g]! ? item.visits : [] })),
      written.map((result) => ('ids' in result ? result.ids : [])),
    );
    // Published only after the commit: a live timeline never shows a visit that could still be lost.
    group.forEach((item, g) => {
      const copies = stored[g]!;
      if (Array.isArray(copies) && copies.length > 0) publish(item.projectId, copies);
    });
    group.forEach((item, g) => {
      const copies = stored[g]!;
      if (copies instanceof Error) item.reject(copies);
      else item.resolve(Array.isArray(copies) ? { stored: copies } : { replayed: copies });
    });
  };

  let queue: Pending[] = [];
  let queued = 0;
  let scheduled: ReturnType<typeof setImmediate> | undefined;
  // Set while the queue waits for another connection's write lock.
  let lockRetry: ReturnType<typeof setTimeout> | undefined;
  let lockRetryMs = LOCK_RETRY_FIRST_MS;
  let commits = 0;
  let closed = false;

  let failure: CommitFailure | undefined;
  /** Commits a group, noting whether the database took it (readiness); throws commitGroup's error, as the store's when the database refused. */
  const commitNoted = (group: readonly Pending[]): Written[] => {
    try {
      const written = commitGroup(group);
      commits++;
      failure = undefined;
      return written;
    } catch (error) {
      const refused = unavailable(error);
      if (refused instanceof VisitStoreUnavailableError) failure = { at: clock.now(), detail: refused.message, lock: LOCK_CODES.test(sqliteCode(error)) };
      throw refused;
    }
  };

  // Asked and set through db.pragma each time: SQLite applies a prepared PRAGMA when it compiles
  // it, so a statement kept for reuse would answer and set stale values.
  const busyTimeout = () => db.pragma('busy_timeout', { simple: true }) as number;
  const setBusyTimeout = (ms: number) => db.pragma(`busy_timeout = ${ms}`);
  /** As commitNoted, but asking for the lock without waiting; the connection's busy_timeout is how long a group may wait in all. */
  const commitWithoutWaiting = (group: readonly Pending[]): { readonly written: Written[] } | { readonly locked: unknown; readonly budgetMs: number } => {
    const budgetMs = busyTimeout();
    if (budgetMs > 0) setBusyTimeout(0);
    try {
      return { written: commitNoted(group) };
    } catch (error) {
      if (refusedForLock(error)) return { locked: error, budgetMs };
      throw error;
    } finally {
      if (budgetMs > 0) setBusyTimeout(budgetMs);
    }
  };

  /** Puts a group that met another connection's lock back at the head of the queue, refusing what has waited out busy_timeout. */
  const waitForLock = (group: readonly Pending[], error: unknown, budgetMs: number) => {
    const now = performance.now();
    const waiting = group.filter((item) => {
      if (now - item.since < budgetMs) return true;
      item.reject(error);
      return false;
    });
    if (waiting.length === 0) {
      lockRetryMs = LOCK_RETRY_FIRST_MS;
      return;
    }
    queue = [...waiting, ...queue];
    for (const item of waiting) queued += item.visits.length;
    lockRetry = setTimeout(retryAfterLock, lockRetryMs);
    lockRetryMs = Math.min(lockRetryMs * 2, LOCK_RETRY_MAX_MS);
  };

  /** Commits what is queued. `wait`: inside SQLite's busy handler (before a write that must come after it, or at close); else on timers. */
  const flush = (wait: boolean) => {
    scheduled = undefined;
    const group = queue;
    queue = [];
    queued = 0;
    if (group.length === 0) return;
    let written: Written[];
    try {
      if (wait) written = commitNoted(group);
      else {
        const attempt = commitWithoutWaiting(group);
        if ('locked' in attempt) return waitForLock(group, attempt.locked, attempt.budgetMs);
        written = attempt.written;
      }
    } catch (error) {
      // One failing append must not fail the others it shared a transaction with: retry each alone
      // (not for a lock, which each would meet again).
      if (group.length === 1 || refusedForLock(error)) {
        for (const item of group) item.reject(error);
        return;
      }
      for (const item of group) {
        let alone: Written[];
        try {
          alone = commitNoted([item]);
        } catch (itemError) {
          item.reject(itemError);
          continue;
        }
        settle([item], alone);
      }
      return;
    }
    lockRetryMs = LOCK_RETRY_FIRST_MS;
    settle(group, written);
  };
  const retryAfterLock = () => {
    lockRetry = undefined;
    flush(false);
  };
  const scheduledFlush = () => flush(false);

  const enqueue = (projectId: string, visits: readonly EnrichedVisit[], once: IdempotentBatch | undefined): Promise<{ readonly stored: readonly StoredVisit[] } | { readonly replayed: IdempotencyRecord }> => {
    if (closed) return Promise.reject(new VisitStoreUnavailableError('unavailable', 5, 'the visit store is closed'));
    if (queued > 0 && queued + visits.length > maxPending) {
      return Promise.reject(new VisitStoreUnavailableError('busy', 1, `${queued} visits are waiting to be written; retry in a second`));
    }
    return new Promise((resolve, reject) => {
      queue.push({ projectId, visits, once, resolve, reject, since: performance.now() });
      queued += visits.length;
      // setImmediate runs after this turn's I/O callbacks: every request parsed in the same
      // turn joins the one transaction. While the queue waits for a lock, its timer commits it.
      if (lockRetry === undefined) scheduled ??= setImmediate(scheduledFlush);
    });
  };

  /** Stops the queue's timers; true when one was set (something is queued). */
  const cancelTimers = (): boolean => {
    const set = scheduled !== undefined || lockRetry !== undefined;
    if (scheduled !== undefined) clearImmediate(scheduled);
    if (lockRetry !== undefined) clearTimeout(lockRetry);
    scheduled = undefined;
    lockRetry = undefined;
    return set;
  };

  return {
    async append(projectId, visits) {
      if (visits.length === 0 && !closed) return [];
      const result = await enqueue(projectId, visits, undefined);
      return 'stored' in result ? result.stored : [];
    },
    async appendOnce(projectId, visits, batch) {
      const result = await enqueue(projectId, visits, batch);
      return 'stored' in result ? { outcome: 'stored', visits: result.stored } : { outcome: 'replayed', record: result.replayed };
    },
    commits: () => commits,
    pending: () => queued,
    lastFailure: () => failure,
    flush() {
      if (closed) return;
      if (cancelTimers()) flush(true);
    },
    close() {
      if (closed) return;
      if (cancelTimers()) {
        if (db.open) flush(true);
        // Closed by its owner first: what waits was never written, and is told so.
        for (const item of queue.splice(0)) item.reject(new VisitStoreUnavailableError('unavailable', 5, 'the visit store is closed', { outcome: 'not-stored' }));
        queued = 0;
      }
      closed = true;
    },
  };
}
