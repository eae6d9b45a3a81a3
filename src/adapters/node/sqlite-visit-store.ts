// The embedded visit store (DESIGN.md §6): enriched visits in the node adapter's SQLite file. This
// file wires the parts, each in its own file: schema and migrations (sqlite-visit-schema.ts), row
// layout (sqlite-visit-rows.ts), group commit (sqlite-group-commit.ts), rollups behind a watermark
// (sqlite-visit-rollups.ts), retention (sqlite-visit-retention.ts), timeline and stats
// (sqlite-visit-queries.ts) and top paths (sqlite-top-paths.ts).
import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import {
  createVisitFanout,
  FAILED_WRITE_MEMORY_MS,
  STORE_READY,
  validateSeenQuery,
  validateStatsQuery,
  type EnrichedVisit,
  type IdempotentAppendResult,
  type IdempotentBatch,
  type StoreHealth,
  type StoredVisit,
  type VisitStore,
} from '../../index.js';
import { createGroupCommit } from './sqlite-group-commit.js';
import { openHeaderPairs } from './sqlite-header-pairs.js';
import { createTopPaths } from './sqlite-top-paths.js';
import { createVisitQueries } from './sqlite-visit-queries.js';
import { createRetention, type RetentionResult } from './sqlite-visit-retention.js';
import { createRollupPass } from './sqlite-visit-rollups.js';
import { createVisitRowWriter } from './sqlite-visit-rows.js';
import { migrateVisitSchema, type SchemaMigration } from './sqlite-visit-schema.js';
import { HOUR_MS, preparedStatements } from './sqlite-visit-sql.js';

export type { RetentionResult } from './sqlite-visit-retention.js';
export { VISIT_SCHEMA_VERSION } from './sqlite-visit-schema.js';

type Database = BetterSqlite3.Database;

/** Options of `openSqliteVisitStore`. */
export interface SqliteVisitStoreOptions {
  /**
   * Days raw visits (and the per-minute rollup) are kept, by visit `time` (default 90; 0 keeps them
   * forever). Hour and day rollups outlive them, so stats at hour or day intervals still answer.
   */
  readonly retentionDays?: number;
  /** Days the hour and day rollups are kept (default 0: forever; they are small beside raw rows). */
  readonly aggregateRetentionDays?: number;
  /**
   * Visits allowed to wait for the next commit (default 100,000). Past it `append` rejects with
   * `VisitStoreUnavailableError('busy')` (the API answers 503 + Retry-After) instead of queueing
   * without bound; an append arriving at an empty queue is always taken, whatever its size.
   */
  readonly maxPendingVisits?: number;
  /**
   * Below this many bytes free on the disk of the database file, `health()` reports the store
   * unavailable (default 64 MiB; 0: never), so a balancer stops sending visits before writes fail.
   */
  readonly minFreeDiskBytes?: number;
  /** How often retention runs, in ms (default one hour; 0: only at open and by `applyRetention()`). */
  readonly retentionIntervalMs?: number;
  /**
   * How often new visits are folded into the rollup tables, in ms (default 1,000; 0: only by
   * `rollUp()` and before each retention pass, which also runs at open). Stats are exact either
   * way: they count the rows not folded yet from the raw table, which costs more the more wait.
   */
  readonly rollupIntervalMs?: number;
  /** Milliseconds since the epoch: the retention cut-off. */
  readonly clock?: { now(): number };
  /**
   * Called after each scheduled retention pass (at open and every `retentionIntervalMs`) that
   * deleted anything, and with the error of one that failed (retried at the next interval), so a
   * server can say what retention removed: visits older than its days leave without a trace.
   */
  readonly onRetention?: (outcome: { readonly deleted: RetentionResult } | { readonly error: unknown }) => void;
  /**
   * Called before the visit schema is migrated at open (not when it is current or new): some migrations
   * read every visit, so a large database takes a while, and a server can say why it has not
   * started yet.
   */
  readonly onMigration?: (migration: SchemaMigration) => void;
}

/** The SQLite visit store: a VisitStore plus what the server and its tests need around it. */
export interface SqliteVisitStore extends VisitStore {
  /**
   * Unavailable while closed, for FAILED_WRITE_MEMORY_MS after a failed commit (until one succeeds;
   * one that failed only for another connection's lock, until that lock is gone), or with the disk
   * nearly full; busy with the backlog full.
   */
  health(): Promise<StoreHealth>;
  /** Always there: the key's row is written in the transaction of its visits. */
  appendOnce(projectId: string, visits: readonly EnrichedVisit[], batch: IdempotentBatch): Promise<IdempotentAppendResult>;
  /** Every stored visit of a project, oldest first (at most `limit`). */
  list(projectId: string, limit?: number): StoredVisit[];
  /** Raw visits stored, of one project or of all. */
  count(projectId?: string): number;
  /**
   * Deletes a project's visits, their rollups and idempotency keys in one transaction, after
   * committing appends still queued (which may be the project's); returns the raw visits deleted.
   */
  deleteProject(projectId: string): number;
  /**
   * Deletes raw visits (and rollup rows) past retention now, in small chunks between which
   * ingestion runs; folds new visits into the rollups first, and never deletes a visit they lack.
   */
  applyRetention(): Promise<RetentionResult>;
  /** Folds every visit committed so far into the rollups, in chunks between which ingestion runs; resolves with how many. */
  rollUp(): Promise<number>;
  /** Transactions committed by appends so far (group commit writes many appends in one). */
  commits(): number;
  /** Visits waiting for the next commit. */
  pending(): number;
  /** Commits what is queued and stops the timers (rollups catch up at the next open); the caller closes the database. */
  close(): void;
}

const DEFAULT_MIN_FREE_DISK_BYTES = 64 * 1024 * 1024;
const mebibytes = (bytes: number) => Math.floor(bytes / (1024 * 1024));

function integerOption(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min) throw new RangeError(`${name} must be an integer >= ${min}, got ${String(value)}`);
  return value;
}

/**
 * Opens the visit store on an open better-sqlite3 database (the project store's file, in WAL mode),
 * migrating its visit tables. Appends arriving in one event-loop turn are written in one
 * transaction (group commit), and each append resolves only after that commit, so an accepted visit
 * survives kill -9 (WAL, synchronous=NORMAL). Appends write raw rows only; a background pass folds
 * them into rollup tables (with a watermark, in the same transaction), which answer stats in
 * milliseconds over millions of visits, plus the raw rows past the watermark, so results are exact
 * at every moment and equal the in-memory store's.
 * @throws {RangeError} for a bad option, or a database with a newer visit schema than this code.
 * @example
 * const db = new Database('agentwarden.db');
 * db.pragma('journal_mode = WAL');
 * const visits = openSqliteVisitStore(db, { retentionDays: 30 });
 * await visits.append('prj_1', enrichedVisits);
 */
export function openSqliteVisitStore(db: Database, options: SqliteVisitStoreOptions = {}): SqliteVisitStore {
  if (typeof db?.prepare !== 'function') throw new TypeError('db must be an open better-sqlite3 Database');
  const retentionDays = integerOption('retentionDays', options.retentionDays, 90, 0);
  const aggregateRetentionDays = integerOption('aggregateRetentionDays', options.aggregateRetentionDays, 0, 0);
  const maxPending = integerOption('maxPendingVisits', options.maxPendingVisits, 100_000, 1);
  const retentionIntervalMs = integerOption('retentionIntervalMs', options.retentionIntervalMs, HOUR_MS, 0);
  const rollupIntervalMs = integerOption('rollupIntervalMs', options.rollupIntervalMs, 1000, 0);
  const minFreeDiskBytes = integerOption('minFreeDiskBytes', options.minFreeDiskBytes, DEFAULT_MIN_FREE_DISK_BYTES, 0);
  const clock = options.clock ?? { now: () => Date.now() };
  if (typeof clock.now !== 'function') throw new TypeError('clock must be an object with now()');

  migrateVisitSchema(db, options.onMigration);
  // Rollup upserts touch pages all over the file; SQLite's default 2 MB page cache makes each a
  // read from the OS. 64 MB keeps the hot pages of millions of visits.
  if ((db.pragma('cache_size', { simple: true }) as number) > -65_536) db.pragma('cache_size = -65536');
  // Each checkpoint copies the WAL into the file and syncs both; every 1,000 pages (the default)
  // that was a third of the cost of an append. Every 10,000 pages (~40 MB of WAL) it is amortised.
  const checkpointPages = db.pragma('wal_autocheckpoint', { simple: true }) as number;
  if (checkpointPages > 0 && checkpointPages < 10_000) db.pragma('wal_autocheckpoint = 10000');
  const pairs = openHeaderPairs(db);
  let closed = false;
  const isClosed = () => closed;
  const rollups = createRollupPass(db, isClosed);
  const fanout = createVisitFanout();
  const groupCommit = createGroupCommit(db, {
    writer: createVisitRowWriter(db, pairs),
    pairs,
    maxPending,
    onCommitted: rollups.noteCommitted,
    publish: fanout.publish,
    clock,
  });
  const prepared = preparedStatements(db);
  const queries = createVisitQueries(db, { pairs, prepared, watermark: rollups.watermark });
  const topPaths = createTopPaths({ prepared, watermark: rollups.watermark });
  // Reads of one query see one snapshot: rollups and watermark from the same moment.
  const inSnapshot = db.transaction((read: () => unknown) => read());
  const snapshot = <T>(read: () => T): T => inSnapshot.deferred(read) as T;
  // Every visit table has a project_id column: found by name, so a table added later is covered.
  const projectTables = () =>
    db
      .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND (name = 'visits' OR name LIKE 'visit\\_%' ESCAPE '\\')")
      .all()
      .map((row) => row.name)
      .filter((name) => db.prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('${name}')`).all().some((column) => column.name === 'project_id'));
  const deleteProject = db.transaction((projectId: string): number => {
    let removed = 0;
    for (const table of projectTables()) {
      const changes = db.prepare(`DELETE FROM "${table}" WHERE project_id = ?`).run(projectId).changes;
      if (table === 'visits') removed = changes;
    }
    return removed;
  });
  /**
   * Whether this connection could start writing now, asked without waiting (busy_timeout 0 for the
   * moment): the write lock taken and given back, nothing written.
   */
  const writeLockFree = (): boolean => {
    // A timer may fire after the store or its database was closed.
    if (isClosed() || !db.open) return false;
    if (db.inTransaction) return true;
    const timeout = db.pragma('busy_timeout', { simple: true }) as number;
    db.pragma('busy_timeout = 0');
    try {
      db.exec('BEGIN IMMEDIATE');
      db.exec('ROLLBACK');
      return true;
    } catch {
      return false;
    } finally {
      db.pragma(`busy_timeout = ${timeout}`);
    }
  };
  const applyRetention = createRetention(db, { retentionDays, aggregateRetentionDays, clock, rollUp: rollups.rollUp, closed: isClosed });

  // A failed pass (disk trouble, another writer) is retried at the next interval; ingestion is
  // unaffected. Nor is it by an onRetention that throws.
  const ignore = () => undefined;
  const onRetention = options.onRetention;
  // The timers' passes start only when the write lock is free: waiting out busy_timeout (5 s) for
  // another process's lock would block the event loop, every request with it.
  const swallow = () => {
    if (!writeLockFree()) return;
    applyRetention()
      .then(
        (deleted) => {
          if (deleted.visits + deleted.rollupRows + deleted.idempotencyKeys > 0) onRetention?.({ deleted });
        },
        (error: unknown) => onRetention?.({ error }),
      )
      .catch(ignore);
  };
  // Retention at open folds first: rows a crash left past the watermark are counted again at once.
  const atOpen = setTimeout(swallow, 0);
  atOpen.unref();
  const timer = retentionIntervalMs > 0 ? setInterval(swallow, retentionIntervalMs) : undefined;
  timer?.unref();
  const rollupTimer =
    rollupIntervalMs > 0
      ? setInterval(() => {
          if (writeLockFree()) void rollups.rollUp().catch(ignore);
        }, rollupIntervalMs)
      : undefined;
  rollupTimer?.unref();

  return {
    retentionDays,
    append: (projectId, visits) => groupCommit.append(projectId, visits),
    appendOnce: (projectId, visits, batch) => groupCommit.appendOnce(projectId, visits, batch),

    async timeline(query) {
      return queries.timeline(query);
    },

    async getVisit(projectId, id) {
      return queries.visit(projectId, id);
    },

    async stats(query) {
      validateStatsQuery(query);
      return snapshot(() => queries.stats(query));
    },

    async pathCounts(query) {
      return snapshot(() => topPaths(query));
    },

    async seen(query) {
      validateSeenQuery(query);
      return snapshot(() => queries.seen(query));
    },

    subscribe: (projectId, listener) => fanout.subscribe(projectId, listener),

    list(projectId, limit = -1) {
      return queries.list(projectId, limit);
    },
    count: (projectId) => queries.count(projectId),
    deleteProject(projectId) {
      groupCommit.flush();
      return deleteProject.immediate(projectId);
    },
    applyRetention,
    rollUp: rollups.rollUp,
    commits: groupCommit.commits,
    pending: groupCommit.pending,
    async health() {
      if (closed || !db.open) return { status: 'unavailable', detail: 'the visit store is closed' };
      const failure = groupCommit.lastFailure();
      const since = failure === undefined ? Infinity : clock.now() - failure.at;
      // A write that failed only for the lock is forgiven once the lock can be had.
      if (since < FAILED_WRITE_MEMORY_MS && !(failure!.lock && writeLockFree())) {
        return { status: 'unavailable', detail: `the last write, ${Math.round(since / 1000)} s ago, failed: ${failure!.detail}` };
      }
      if (groupCommit.pending() >= maxPending) return { status: 'busy', detail: `${groupCommit.pending()} visits are waiting to be written` };
      if (minFreeDiskBytes === 0 || db.memory) return STORE_READY;
      const directory = dirname(db.name);
      try {
        const disk = await statfs(directory);
        const free = disk.bavail * disk.bsize;
        if (free < minFreeDiskBytes) return { status: 'unavailable', detail: `${mebibytes(free)} MiB free on the disk of ${directory}, below the ${mebibytes(minFreeDiskBytes)} MiB the store keeps in reserve` };
      } catch (error) {
        return { status: 'unavailable', detail: `cannot read the free space of ${directory}: ${(error as Error).message}` };
      }
      return STORE_READY;
    },
    close() {
      if (closed) return;
      groupCommit.close();
      closed = true;
      clearTimeout(atOpen);
      if (timer !== undefined) clearInterval(timer);
      if (rollupTimer !== undefined) clearInterval(rollupTimer);
    },
  };
}
