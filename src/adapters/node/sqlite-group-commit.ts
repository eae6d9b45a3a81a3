// Group commit of SQLite visit appends: every append of one event-loop turn is written in one
// transaction, and each resolves only after that commit, so an accepted visit survives kill -9.
import type BetterSqlite3 from 'better-sqlite3';
import { VisitStoreUnavailableError, type EnrichedVisit, type StoredVisit } from '../../index.js';
import type { HeaderPairs } from './sqlite-header-pairs.js';
import { storedVisit, type VisitRowWriter } from './sqlite-visit-rows.js';

/** One append waiting for the next commit. */
interface Pending {
  readonly projectId: string;
  readonly visits: readonly EnrichedVisit[];
  readonly resolve: (stored: readonly StoredVisit[]) => void;
  readonly reject: (error: unknown) => void;
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
}

/** The group-commit writer of one open store; see `createGroupCommit`. */
export interface GroupCommit {
  /** Queues visits for the next commit; resolves with them as stored once committed. */
  append(projectId: string, visits: readonly EnrichedVisit[]): Promise<readonly StoredVisit[]>;
  /** Transactions committed by appends so far. */
  commits(): number;
  /** Visits waiting for the next commit. */
  pending(): number;
  /** Commits what is queued (when the database is open); later appends are refused as unavailable. */
  close(): void;
}

// SQLite reports these when the disk or another writer is in the way: retry later, not a bug.
const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY)/;

function unavailable(error: unknown): unknown {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.test(code)) {
    return new VisitStoreUnavailableError('unavailable', 5, `the visit database cannot take writes now (${code})`, { cause: error });
  }
  return error;
}

/**
 * The group-commit writer over `db` (in WAL mode, synchronous=NORMAL or FULL): appends arriving in
 * one event-loop turn share one IMMEDIATE transaction; an append that fails it is retried alone,
 * so it cannot fail the others. A bounded backlog answers busy instead of queueing without end.
 */
export function createGroupCommit(db: BetterSqlite3.Database, options: GroupCommitOptions): GroupCommit {
  const { writer, pairs, maxPending, onCommitted, publish } = options;
  const writeGroupTransaction = db.transaction((group: readonly Pending[]) => group.map((item) => writer.write(item.visits.map((visit) => ({ projectId: item.projectId, visit })))));
  const writeGroup = (group: readonly Pending[]): StoredVisit[][] => {
    let ids: number[][];
    try {
      ids = writeGroupTransaction.immediate(group);
    } catch (error) {
      pairs.rolledBack();
      throw error;
    }
    pairs.committed();
    // Past the commit nothing may throw (the caller would write the group again).
    onCommitted(group, ids);
    return group.map((item, g) => item.visits.map((visit, i) => storedVisit(visit, ids[g]![i]!, item.projectId)));
  };

  let queue: Pending[] = [];
  let queued = 0;
  let scheduled: ReturnType<typeof setImmediate> | undefined;
  let commits = 0;
  let closed = false;

  const settle = (group: readonly Pending[], stored: readonly (readonly StoredVisit[])[]) => {
    // Published only after the commit: a live timeline never shows a visit that could still be lost.
    group.forEach((item, i) => publish(item.projectId, stored[i]!));
    group.forEach((item, i) => item.resolve(stored[i]!));
  };
  const flush = () => {
    scheduled = undefined;
    const group = queue;
    queue = [];
    queued = 0;
    if (group.length === 0) return;
    try {
      const stored = writeGroup(group);
      commits++;
      settle(group, stored);
    } catch (error) {
      // One failing append must not fail the others it shared a transaction with: retry each alone.
      if (group.length === 1) return group[0]!.reject(unavailable(error));
      for (const item of group) {
        try {
          const stored = writeGroup([item]);
          commits++;
          settle([item], stored);
        } catch (itemError) {
          item.reject(unavailable(itemError));
        }
      }
    }
  };

  return {
    append(projectId, visits) {
      if (closed) return Promise.reject(new VisitStoreUnavailableError('unavailable', 5, 'the visit store is closed'));
      if (visits.length === 0) return Promise.resolve([]);
      if (queued > 0 && queued + visits.length > maxPending) {
        return Promise.reject(new VisitStoreUnavailableError('busy', 1, `${queued} visits are waiting to be written; retry in a second`));
      }
      return new Promise((resolve, reject) => {
        queue.push({ projectId, visits, resolve, reject });
        queued += visits.length;
        // setImmediate runs after this turn's I/O callbacks: every request parsed in the same
        // turn joins the one transaction.
        scheduled ??= setImmediate(flush);
      });
    },
    commits: () => commits,
    pending: () => queued,
    close() {
      if (closed) return;
      if (scheduled !== undefined) {
        clearImmediate(scheduled);
        if (db.open) flush();
      }
      closed = true;
    },
  };
}
