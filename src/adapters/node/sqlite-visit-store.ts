// The embedded visit store (DESIGN.md §6): enriched visits in the node adapter's SQLite file, group
// commit of raw rows, rollup tables folded behind a watermark, a bounded backlog, raw-row retention.
import type BetterSqlite3 from 'better-sqlite3';
import {
  buildStatsResult,
  createVisitFanout,
  INTERVAL_MS,
  pathWithoutQuery,
  validateStatsQuery,
  VisitQueryError,
  VisitStoreUnavailableError,
  type AgentType,
  type EnrichedVisit,
  type IdentificationResult,
  type PathCount,
  type PathCountsQuery,
  type ReferralClass,
  type StatsCell,
  type StatsDimension,
  type StatsQuery,
  type StatsResult,
  type StoredVisit,
  type VisitFilter,
  type VisitStore,
} from '../../index.js';
import { openHeaderPairs, type HeaderPairs } from './sqlite-header-pairs.js';

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
}

/** What one retention pass deleted. */
export interface RetentionResult {
  readonly visits: number;
  readonly rollupRows: number;
}

/** The SQLite visit store: a VisitStore plus what the server and its tests need around it. */
export interface SqliteVisitStore extends VisitStore {
  /** Every stored visit of a project, oldest first (at most `limit`). */
  list(projectId: string, limit?: number): StoredVisit[];
  /** Raw visits stored, of one project or of all. */
  count(projectId?: string): number;
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

const DAY_MS = INTERVAL_MS.day;
const HOUR_MS = INTERVAL_MS.hour;
const MINUTE_MS = INTERVAL_MS.minute;
// Rows deleted per retention statement: small enough that an append waits milliseconds, not seconds.
const RETENTION_CHUNK = 2000;
// Visits written per INSERT statement: each statement costs a call into SQLite and an update of
// the AUTOINCREMENT counter, which a few rows per statement share (2 us less per visit).
const ROWS_PER_INSERT = 16;
// Fine cells remembered from appends for the rollup pass at most: a pass every second keeps far
// fewer; past it (passes off, or extreme variety) the rows are read back from the table instead.
const MAX_RECENT_CELLS = 100_000;
// Raw rows folded per rollup transaction, then appends get their turn: at 10-30 us a visit (many
// distinct paths, or times spread over days) one transaction holds the event loop 100-300 ms. The
// more rows one fold sees, the more of them share a cell: 20,000 cost half what 4 x 5,000 do.
const ROLLUP_CHUNK = 10_000;
// Pair totals from which visit_agent_path_totals_by_count indexes a pair (the index's WHERE clause).
const INDEXED_TOTAL = 16;
// Rollup key columns hold '' for "no value" (a NULL in a primary key would never conflict, so
// upserts would add a row per batch instead of counting); '' is never an agent id, type or referral.
const NONE = '';

// Rollup key columns of the combined tables (one row per bucket and combination seen).
const DIM_KEY = 'agent_id, agent_type, result, referral';

// Visit schema migrations, versioned apart from the project store's (schema_versions, component
// 'visits'), so both can grow without renumbering each other. Append; never edit an applied one.
const VISIT_MIGRATIONS: readonly string[] = [
  `CREATE TABLE visits (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     project_id TEXT NOT NULL,
     time INTEGER NOT NULL,
     received INTEGER NOT NULL,
     request_method TEXT NOT NULL,
     request_path TEXT NOT NULL,
     path TEXT NOT NULL,
     agent_id TEXT,
     agent_type TEXT,
     result TEXT NOT NULL,
     client_ip TEXT,
     referral TEXT,
     extras TEXT NOT NULL
   );
   CREATE INDEX visits_by_project ON visits(project_id, id);
   CREATE INDEX visits_by_time ON visits(project_id, time);
   CREATE INDEX visits_by_agent ON visits(project_id, agent_id, id);
   CREATE INDEX visits_by_path ON visits(project_id, path, id);
   CREATE TABLE visit_dims_minute (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, agent_type TEXT NOT NULL, result TEXT NOT NULL, referral TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_id, agent_type, result, referral)) WITHOUT ROWID;
   CREATE TABLE visit_dims_hour (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, agent_type TEXT NOT NULL, result TEXT NOT NULL, referral TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_id, agent_type, result, referral)) WITHOUT ROWID;
   CREATE TABLE visit_dims_day (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, agent_type TEXT NOT NULL, result TEXT NOT NULL, referral TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_id, agent_type, result, referral)) WITHOUT ROWID;
   CREATE TABLE visit_by_agent_id_hour (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_id)) WITHOUT ROWID;
   CREATE INDEX visit_by_agent_id_hour_by_key ON visit_by_agent_id_hour(project_id, agent_id, bucket);
   CREATE TABLE visit_by_agent_id_day (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_id)) WITHOUT ROWID;
   CREATE TABLE visit_by_agent_type_hour (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_type TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_type)) WITHOUT ROWID;
   CREATE TABLE visit_by_agent_type_day (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_type TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_type)) WITHOUT ROWID;
   CREATE TABLE visit_by_result_hour (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, result TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, result)) WITHOUT ROWID;
   CREATE TABLE visit_by_result_day (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, result TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, result)) WITHOUT ROWID;
   CREATE TABLE visit_by_referral_hour (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, referral TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, referral)) WITHOUT ROWID;
   CREATE TABLE visit_by_referral_day (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, referral TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, referral)) WITHOUT ROWID;
   CREATE TABLE visit_by_path_hour (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, path TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, path)) WITHOUT ROWID;
   CREATE INDEX visit_by_path_hour_by_key ON visit_by_path_hour(project_id, path, bucket);
   CREATE TABLE visit_by_path_day (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, path TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, path)) WITHOUT ROWID;
   CREATE TABLE visit_agent_paths_hour (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, agent_type TEXT NOT NULL, result TEXT NOT NULL, referral TEXT NOT NULL, request_path TEXT NOT NULL,
     path TEXT NOT NULL, count INTEGER NOT NULL, last INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_id, agent_type, result, referral, request_path)) WITHOUT ROWID;
   CREATE INDEX visit_agent_paths_hour_by_path ON visit_agent_paths_hour(project_id, path, bucket);
   CREATE TABLE visit_agent_paths_day (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, agent_type TEXT NOT NULL, request_path TEXT NOT NULL,
     path TEXT NOT NULL, count INTEGER NOT NULL, last INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_id, agent_type, request_path)) WITHOUT ROWID;`,
  // Appends write raw rows only; a background pass folds rows past the watermark into the rollups
  // (exact: queries add the raw rows past it). Existing rollups are exact up to the last id, so
  // they are kept and the watermark starts there. Path-filtered stats get a table keyed by path
  // first (read in key order, not through an index); day tables the queries can do without (the
  // combined day table is small) are dropped, as are the agent and path indexes on raw rows (a
  // B-tree insert per visit each, for filtered timelines that walk the id index fast enough).
  `CREATE TABLE visit_rollup_state (id INTEGER PRIMARY KEY CHECK (id = 1), watermark INTEGER NOT NULL);
   INSERT INTO visit_rollup_state (id, watermark) SELECT 1, coalesce(max(id), 0) FROM visits;
   CREATE TABLE visit_paths_hour (project_id TEXT NOT NULL, path TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, agent_type TEXT NOT NULL, result TEXT NOT NULL, referral TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, path, bucket, agent_id, agent_type, result, referral)) WITHOUT ROWID;
   INSERT INTO visit_paths_hour SELECT project_id, path, bucket, agent_id, agent_type, result, referral, sum(count) FROM visit_agent_paths_hour
     GROUP BY project_id, path, bucket, agent_id, agent_type, result, referral;
   DROP INDEX visit_agent_paths_hour_by_path;
   DROP TABLE visit_by_agent_id_day;
   DROP TABLE visit_by_agent_type_day;
   DROP TABLE visit_by_result_day;
   DROP TABLE visit_by_referral_day;
   DROP INDEX visits_by_agent;
   DROP INDEX visits_by_path;`,
  // Header pairs most visits repeat, interned (sqlite-header-pairs.ts); rows written before keep
  // their headers as JSON objects, which reads tell apart from the encoded arrays.
  // Raw rows are found by minute, not by time: SDKs send batches late, so visit times arrive out
  // of order and an index on the exact time took a page write per visit (scattered over the last
  // seconds of entries), where entries of one minute sit in id order and a batch's land together.
  // Fields every visit has get columns rather than keys in extras: the keys cost bytes per row
  // (a fifth of a row), and JSON.stringify formats a fractional duration slowly. Rows written
  // before keep them in extras.
  `CREATE TABLE visit_header_pairs (id INTEGER PRIMARY KEY, name TEXT NOT NULL, value TEXT NOT NULL, UNIQUE (name, value));
   DROP INDEX visits_by_time;
   CREATE INDEX visits_by_minute ON visits(project_id, (time / 60000));
   ALTER TABLE visits ADD COLUMN response_status_code INTEGER;
   ALTER TABLE visits ADD COLUMN response_duration_in_milliseconds REAL;
   ALTER TABLE visits ADD COLUMN created TEXT;
   ALTER TABLE visits ADD COLUMN request_headers TEXT;
   ALTER TABLE visits ADD COLUMN response_headers TEXT;`,
  // Top paths without aggregating every (agent, path) of the range (pathCounts): the day table is
  // keyed by (agent, path) first, so one pair's count over any days is one short range read, and
  // triggers keep per-pair totals over all the days kept, read largest first. A pair's total bounds
  // its count in any range, so reading pairs by total can stop once the top is out of reach. Only
  // pairs of 16 visits or more are indexed by total: the long tail's updates, most of the fold's,
  // then leave the index alone, and a query that reaches the tail sorts it.
  `CREATE TABLE visit_agent_paths_day_by_key (project_id TEXT NOT NULL, agent_id TEXT NOT NULL, request_path TEXT NOT NULL, bucket INTEGER NOT NULL, agent_type TEXT NOT NULL,
     path TEXT NOT NULL, count INTEGER NOT NULL, last INTEGER NOT NULL,
     PRIMARY KEY (project_id, agent_id, request_path, bucket, agent_type)) WITHOUT ROWID;
   INSERT INTO visit_agent_paths_day_by_key SELECT project_id, agent_id, request_path, bucket, agent_type, path, count, last FROM visit_agent_paths_day;
   DROP TABLE visit_agent_paths_day;
   ALTER TABLE visit_agent_paths_day_by_key RENAME TO visit_agent_paths_day;
   CREATE INDEX visit_agent_paths_day_by_bucket ON visit_agent_paths_day(bucket);
   CREATE TABLE visit_agent_path_totals (project_id TEXT NOT NULL, agent_id TEXT NOT NULL, request_path TEXT NOT NULL, path TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, agent_id, request_path)) WITHOUT ROWID;
   INSERT INTO visit_agent_path_totals SELECT project_id, agent_id, request_path, min(path), sum(count) FROM visit_agent_paths_day GROUP BY project_id, agent_id, request_path;
   CREATE INDEX visit_agent_path_totals_by_count ON visit_agent_path_totals(project_id, count DESC) WHERE count >= 16;
   CREATE TRIGGER visit_agent_paths_day_inserted AFTER INSERT ON visit_agent_paths_day BEGIN
     INSERT INTO visit_agent_path_totals VALUES (NEW.project_id, NEW.agent_id, NEW.request_path, NEW.path, NEW.count)
       ON CONFLICT (project_id, agent_id, request_path) DO UPDATE SET count = count + excluded.count;
   END;
   CREATE TRIGGER visit_agent_paths_day_counted AFTER UPDATE OF count ON visit_agent_paths_day BEGIN
     UPDATE visit_agent_path_totals SET count = count + NEW.count - OLD.count WHERE project_id = NEW.project_id AND agent_id = NEW.agent_id AND request_path = NEW.request_path;
   END;
   CREATE TRIGGER visit_agent_paths_day_deleted AFTER DELETE ON visit_agent_paths_day BEGIN
     UPDATE visit_agent_path_totals SET count = count - OLD.count WHERE project_id = OLD.project_id AND agent_id = OLD.agent_id AND request_path = OLD.request_path;
     DELETE FROM visit_agent_path_totals WHERE project_id = OLD.project_id AND agent_id = OLD.agent_id AND request_path = OLD.request_path AND count <= 0;
   END;`,
];

/** The visit schema version this code writes (component 'visits' in schema_versions). */
export const VISIT_SCHEMA_VERSION = VISIT_MIGRATIONS.length;

// Which rollup serves which bucket width. Unfiltered stats read the dimension's own hour rollup,
// the combined day and minute ones; filters on agent, type, result or referral the combined
// tables; a path filter the path-first table; by path with other filters the (agent, path) hour
// table; what no rollup covers (sub-minute edges, minute-by-path) the raw rows.
const DIM_TABLES = new Map([
  [DAY_MS, 'visit_dims_day'],
  [HOUR_MS, 'visit_dims_hour'],
  [MINUTE_MS, 'visit_dims_minute'],
]);
type ByColumn = 'agent_id' | 'agent_type' | 'result' | 'referral' | 'path';
const byTables = (column: ByColumn) =>
  new Map(
    column === 'path'
      ? [
          [DAY_MS, 'visit_by_path_day'],
          [HOUR_MS, 'visit_by_path_hour'],
        ]
      : [
          [DAY_MS, 'visit_dims_day'],
          [HOUR_MS, `visit_by_${column}_hour`],
          [MINUTE_MS, 'visit_dims_minute'],
        ],
  );
const AGENT_PATH_TABLES = new Map([[HOUR_MS, 'visit_agent_paths_hour']]);
const PATH_TABLES = new Map([[HOUR_MS, 'visit_paths_hour']]);

/** Columns a rollup is keyed by (besides project and bucket), as the pass derives them from a visit. */
type RollupColumn = 'agent_id' | 'agent_type' | 'result' | 'referral' | 'path' | 'request_path';
/** One rollup table: its bucket width, key columns, columns that follow from the key, and whether it keeps the latest time. */
interface Rollup {
  readonly table: string;
  readonly width: number;
  readonly key: readonly RollupColumn[];
  readonly extra?: readonly RollupColumn[];
  readonly last?: boolean;
}
const DIMS = ['agent_id', 'agent_type', 'result', 'referral'] as const;
const ROLLUPS: readonly Rollup[] = [
  { table: 'visit_dims_minute', width: MINUTE_MS, key: DIMS },
  { table: 'visit_dims_hour', width: HOUR_MS, key: DIMS },
  { table: 'visit_dims_day', width: DAY_MS, key: DIMS },
  ...(['agent_id', 'agent_type', 'result', 'referral', 'path'] as const).map((column) => ({ table: `visit_by_${column}_hour`, width: HOUR_MS, key: [column] })),
  { table: 'visit_by_path_day', width: DAY_MS, key: ['path'] },
  { table: 'visit_paths_hour', width: HOUR_MS, key: ['path', ...DIMS] },
  { table: 'visit_agent_paths_hour', width: HOUR_MS, key: [...DIMS, 'request_path'], extra: ['path'], last: true },
  { table: 'visit_agent_paths_day', width: DAY_MS, key: ['agent_id', 'agent_type', 'request_path'], extra: ['path'], last: true },
];
const DIMENSION_COLUMN = { agent: 'agent_id', agent_type: 'agent_type', result: 'result', path: 'path', referral: 'referral' } as const;

interface VisitRow {
  id: number;
  project_id: string;
  time: number;
  received: number;
  request_method: string;
  request_path: string;
  agent_id: string | null;
  agent_type: string | null;
  result: string;
  client_ip: string | null;
  referral: string | null;
  response_status_code: number | null;
  response_duration_in_milliseconds: number | null;
  created: string | null;
  request_headers: string | null;
  response_headers: string | null;
  extras: string;
}

interface Pending {
  readonly projectId: string;
  readonly visits: readonly EnrichedVisit[];
  readonly resolve: (stored: readonly StoredVisit[]) => void;
  readonly reject: (error: unknown) => void;
}

function floorTo(time: number, width: number): number {
  return time - (((time % width) + width) % width);
}

function ceilTo(time: number, width: number): number {
  const floored = floorTo(time, width);
  return floored === time ? time : floored + width;
}

/** One piece of a time range and where to count it: a rollup of `width`, or raw rows (width 0). */
interface Segment {
  readonly width: number;
  readonly from: number;
  readonly to: number;
}

/**
 * Splits [from, to) into the coarsest aligned pieces the widths allow (widths coarse to fine, each
 * dividing the previous), the unaligned rest going to raw rows: a 30-day range at hour interval is
 * whole days from the day rollup, whole hours at the edges, minutes, then seconds from raw rows.
 */
function segments(from: number, to: number, widths: readonly number[], index = 0): Segment[] {
  if (from >= to) return [];
  const width = widths[index];
  if (width === undefined) return [{ width: 0, from, to }];
  const start = ceilTo(from, width);
  const end = floorTo(to, width);
  if (start >= end) return segments(from, to, widths, index + 1);
  return [...segments(from, start, widths, index + 1), { width, from: start, to: end }, ...segments(end, to, widths, index + 1)];
}

const CURSOR = /^[1-9][0-9]{0,15}$/;

function parseCursor(parameter: string, cursor: string): number {
  const id = CURSOR.test(cursor) ? Number(cursor) : Number.NaN;
  if (!Number.isSafeInteger(id)) throw new VisitQueryError(parameter, `${JSON.stringify(cursor)} is not a visit id from this store`);
  return id;
}

type MutablePathCount = { -readonly [K in keyof PathCount]: PathCount[K] };

/** The key of an (agent, path) pair; '' is never an agent id, and the path ends the key. */
function pairKey(agentId: string, requestPath: string): string {
  return `${agentId}\u0000${requestPath}`;
}

/** Adds one count of a pair ('' agent id or type: none, as rollups store it) into `rows`. */
function addPathCount(rows: Map<string, MutablePathCount>, agentId: string | null, agentType: string | null, requestPath: string, count: number, last: number): void {
  const id = agentId === NONE ? null : agentId;
  const type = (agentType === NONE ? null : agentType) as AgentType | null;
  const key = pairKey(id ?? NONE, requestPath);
  const seen = rows.get(key);
  if (seen === undefined) {
    rows.set(key, { agent_id: id, agent_type: type, path: requestPath, count, last });
    return;
  }
  seen.count += count;
  if (last > seen.last) seen.last = last;
  seen.agent_type = minAgentType(seen.agent_type, type);
}

/** As SQL's min(agent_type) over a pair's rows (none first), whichever part of a range is read first. */
function minAgentType(a: AgentType | null, b: AgentType | null): AgentType | null {
  return a === null || b === null ? null : b < a ? b : a;
}

/** Top paths order: most visits first, then agent id and path (none as ''). */
function comparePathCounts(a: PathCount, b: PathCount): number {
  return b.count - a.count || compareText(a.agent_id ?? '', b.agent_id ?? '') || compareText(a.path, b.path);
}

/** The best `limit` path counts seen so far: a binary heap with the worst at the root. */
class PathCountHeap {
  private readonly items: PathCount[] = [];
  constructor(private readonly limit: number) {}
  get full(): boolean {
    return this.items.length >= this.limit;
  }
  get worst(): PathCount {
    return this.items[0]!;
  }
  offer(item: PathCount): void {
    const items = this.items;
    if (items.length < this.limit) {
      items.push(item);
      let i = items.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (comparePathCounts(items[parent]!, items[i]!) >= 0) break;
        [items[parent], items[i]] = [items[i]!, items[parent]!];
        i = parent;
      }
    } else if (comparePathCounts(item, items[0]!) < 0) {
      items[0] = item;
      for (let i = 0; ; ) {
        const left = 2 * i + 1;
        let worst = i;
        if (left < items.length && comparePathCounts(items[left]!, items[worst]!) > 0) worst = left;
        if (left + 1 < items.length && comparePathCounts(items[left + 1]!, items[worst]!) > 0) worst = left + 1;
        if (worst === i) break;
        [items[worst], items[i]] = [items[i]!, items[worst]!];
        i = worst;
      }
    }
  }
  sorted(): PathCount[] {
    return [...this.items].sort(comparePathCounts);
  }
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// As buildStatsResult orders keys of equal totals: by key, null last.
function compareKeys(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return compareText(a, b);
}

function integerOption(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min) throw new RangeError(`${name} must be an integer >= ${min}, got ${String(value)}`);
  return value;
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
 * Runs the visit schema migrations on `db` in one transaction, moving rows of the first schema's
 * `visits` table over (they were never rolled up, so the rollups are then rebuilt from raw rows).
 */
function migrate(db: Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)');
  const versionOf = db.prepare<[], { version: number }>("SELECT version FROM schema_versions WHERE component = 'visits'");
  const check = (current: number) => {
    if (current > VISIT_MIGRATIONS.length) {
      throw new RangeError(`the database has visit schema version ${current}; this agentwarden knows up to ${VISIT_MIGRATIONS.length}`);
    }
  };
  check(versionOf.get()?.version ?? 0);
  if ((versionOf.get()?.version ?? 0) === VISIT_MIGRATIONS.length) return;
  db.transaction(() => {
    // Another process (the CLI beside a starting server) may have migrated while this one waited
    // for the write lock: read the version again under the lock.
    const current = versionOf.get()?.version ?? 0;
    check(current);
    // The project store's first migration made a bare `visits` table (no enrichment columns): keep
    // its rows, moved into the new table with their ids once it has every column the writer fills.
    const legacy = current === 0 && db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'visits'").get() !== undefined;
    if (legacy) db.exec('ALTER TABLE visits RENAME TO visits_v1');
    for (let version = current; version < VISIT_MIGRATIONS.length; version++) db.exec(VISIT_MIGRATIONS[version]!);
    if (legacy) {
      copyLegacyVisits(db);
      db.exec('DROP TABLE visits_v1');
      // Never rolled up: the pass rebuilds the rollups from the raw rows.
      db.exec('UPDATE visit_rollup_state SET watermark = 0');
    }
    db.prepare("INSERT INTO schema_versions (component, version) VALUES ('visits', ?) ON CONFLICT (component) DO UPDATE SET version = excluded.version").run(VISIT_MIGRATIONS.length);
  }).immediate();
}

interface LegacyRow {
  id: number;
  project_id: string;
  received: string;
  created: string | null;
  request_path: string;
  request_method: string;
  request_headers: string;
  response_status_code: number | null;
  response_headers: string | null;
  response_duration_in_milliseconds: number | null;
}

// Header values of the first schema could be arrays; a Visit joins them (RFC 9110 §5.3).
function joinHeaderValues(json: string): Record<string, string> {
  const parsed = JSON.parse(json) as Record<string, string | string[]>;
  return Object.fromEntries(Object.entries(parsed).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]));
}

// Rows stored before enrichment existed carry no identification: they count as unknown agents
// without client IP or referral (re-identifying them would need the engine at open time).
function copyLegacyVisits(db: Database): void {
  const page = db.prepare<[number], LegacyRow>('SELECT * FROM visits_v1 WHERE id > ? ORDER BY id LIMIT 1000');
  const writer = createWriter(db);
  for (let last = 0; ; ) {
    const rows = page.all(last);
    if (rows.length === 0) break;
    const batch = rows.map((row) => {
      const created = row.created === null ? Number.NaN : Date.parse(row.created);
      const parsed = Date.parse(row.received);
      const received = Number.isFinite(parsed) ? parsed : Number.isFinite(created) ? created : 0;
      const visit: Record<string, unknown> = {
        request_path: row.request_path,
        request_method: row.request_method,
        request_headers: joinHeaderValues(row.request_headers),
        received,
        time: Number.isFinite(created) ? created : received,
        agent_id: null,
        agent_type: null,
        result: 'unknown_agent',
        client_ip: null,
        referral: null,
      };
      if (row.created !== null) visit['created'] = row.created;
      if (row.response_status_code !== null) visit['response_status_code'] = row.response_status_code;
      if (row.response_headers !== null) visit['response_headers'] = joinHeaderValues(row.response_headers);
      if (row.response_duration_in_milliseconds !== null) visit['response_duration_in_milliseconds'] = row.response_duration_in_milliseconds;
      return { projectId: row.project_id, visit: visit as unknown as EnrichedVisit, id: row.id };
    });
    writer.write(batch);
    last = rows[rows.length - 1]!.id;
  }
}

// Visit fields with columns of their own; every other field is kept in `extras` (JSON; '' for none).
const COLUMN_FIELDS = new Set(['request_path', 'request_method', 'received', 'time', 'agent_id', 'agent_type', 'result', 'client_ip', 'referral', 'id', 'project_id']);
// Optional fields with columns of their own (NULL when absent) when their value has the type a
// visit gives them; a value of another type (a library caller's) stays in `extras`, so it reads
// back as it was. Headers are stored as JSON, encoded through the interned pairs when there are some.
const OPTIONAL_COLUMNS = ['response_status_code', 'response_duration_in_milliseconds', 'created', 'request_headers', 'response_headers'] as const;
type OptionalColumn = (typeof OPTIONAL_COLUMNS)[number];
const OPTIONAL_FIELDS: ReadonlySet<string> = new Set(OPTIONAL_COLUMNS);
const HEADER_COLUMNS: ReadonlySet<string> = new Set(['request_headers', 'response_headers']);

/** The column value of an optional field, or undefined when its value belongs in extras. */
function optionalColumnValue(field: string, value: unknown, pairs: HeaderPairs | undefined): number | string | undefined {
  if (field === 'created') return typeof value === 'string' ? value : undefined;
  if (HEADER_COLUMNS.has(field)) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    return JSON.stringify(pairs === undefined ? value : pairs.encode(value as Record<string, string>));
  }
  return typeof value === 'number' ? value : undefined;
}

/**
 * Inserts visits (raw rows only: the rollup pass counts them later); runs inside the caller's
 * transaction. With `pairs`, headers are stored encoded; the caller reports the commit to it.
 */
function createWriter(db: Database, pairs?: HeaderPairs) {
  const columns = `id, project_id, time, received, request_method, request_path, path, agent_id, agent_type, result, client_ip, referral, ${OPTIONAL_COLUMNS.join(', ')}, extras`;
  const row = `(${columns.split(', ').map(() => '?').join(', ')})`;
  // One INSERT per ROWS_PER_INSERT visits, by the number of rows it takes (prepared when first needed).
  const inserts = new Map<number, BetterSqlite3.Statement>();
  const insertOf = (rows: number) => {
    let statement = inserts.get(rows);
    if (statement === undefined) inserts.set(rows, (statement = db.prepare(`INSERT INTO visits (${columns}) VALUES ${Array.from({ length: rows }, () => row).join(', ')}`)));
    return statement;
  };
  return {
    /** Stores the visits (in order; `id` only when migrating, for every visit) and returns their ids. */
    write(batch: readonly { projectId: string; visit: EnrichedVisit; id?: number }[]): number[] {
      const ids: number[] = new Array(batch.length);
      const params: unknown[] = [];
      const explicit = batch.length > 0 && batch[0]!.id !== undefined;
      let first = 0;
      for (let i = 0; i < batch.length; i++) {
        const { projectId, visit, id } = batch[i]!;
        const { request_path, request_method, received, time, agent_id, agent_type, result, client_ip, referral } = visit;
        // A loop, not rest/spread syntax: on Node 20 spreading a visit object costs microseconds.
        const optional: Partial<Record<OptionalColumn, number | string>> = {};
        let extras: Record<string, unknown> | undefined;
        for (const field in visit) {
          if (COLUMN_FIELDS.has(field)) continue;
          const value = visit[field as keyof EnrichedVisit];
          const column = OPTIONAL_FIELDS.has(field) ? optionalColumnValue(field, value, pairs) : undefined;
          if (column !== undefined) optional[field as OptionalColumn] = column;
          else if (value !== undefined) (extras ??= {})[field] = value;
        }
        // The minute index divides integers (an enricher's times are whole milliseconds already).
        params.push(
          id ?? null,
          projectId,
          Math.floor(time),
          received,
          request_method,
          request_path,
          pathWithoutQuery(request_path),
          agent_id,
          agent_type,
          result,
          client_ip,
          referral,
          optional.response_status_code ?? null,
          optional.response_duration_in_milliseconds ?? null,
          optional.created ?? null,
          optional.request_headers ?? null,
          optional.response_headers ?? null,
          extras === undefined ? '' : JSON.stringify(extras),
        );
        const rows = i - first + 1;
        if (rows < ROWS_PER_INSERT && i < batch.length - 1) continue;
        const last = Number(insertOf(rows).run(params).lastInsertRowid);
        // One statement's rows take consecutive ids (AUTOINCREMENT, and this transaction is the only writer).
        for (let k = 0; k < rows; k++) ids[first + k] = explicit ? batch[first + k]!.id! : last - rows + 1 + k;
        params.length = 0;
        first = i + 1;
      }
      return ids;
    },
  };
}

/** A raw row as the rollup pass reads it: id, project, time, request path, path, agent, type, result, referral. */
type PassRow = [number, string, number, string, string, string | null, string | null, string, string | null];

/** Visits of one (project, minute, agent, type, result, referral, request path): the finest rollup cell. */
interface FineCell {
  readonly projectId: string;
  readonly minute: number;
  readonly values: Readonly<Record<RollupColumn, string>>;
  count: number;
  last: number;
}

/** Fine cells of some visits, keyed so that equal cells merge. */
type FineCells = Map<string, FineCell>;

/** Counts one visit into `fine`. */
function addFine(
  fine: FineCells,
  projectId: string,
  time: number,
  requestPath: string,
  path: string,
  agentId: string | null,
  agentType: string | null,
  result: string,
  referral: string | null,
): void {
  const minute = floorTo(time, MINUTE_MS);
  // The request path last: every field before it is an id, a closed code or '' (no separator).
  const key = `${projectId}\u0000${minute}\u0000${agentId ?? NONE}\u0000${agentType ?? NONE}\u0000${result}\u0000${referral ?? NONE}\u0000${requestPath}`;
  const cell = fine.get(key);
  if (cell !== undefined) {
    cell.count++;
    if (time > cell.last) cell.last = time;
  } else {
    const values = { agent_id: agentId ?? NONE, agent_type: agentType ?? NONE, result, referral: referral ?? NONE, path, request_path: requestPath };
    fine.set(key, { projectId, minute, values, count: 1, last: time });
  }
}

/**
 * Adds fine cells into every rollup: runs inside the caller's transaction. Visits are first merged
 * into fine cells, then each rollup's cells are summed from those, so a chunk of live traffic
 * costs one upsert per distinct cell, not per visit.
 */
function createRollupWriter(db: Database) {
  const statements = ROLLUPS.map((rollup) => {
    const columns = [...rollup.key, ...(rollup.extra ?? [])];
    return db.prepare(
      `INSERT INTO ${rollup.table} (project_id, bucket, ${columns.join(', ')}, count${rollup.last === true ? ', last' : ''})
       VALUES (?, ?, ${columns.map(() => '?').join(', ')}, ?${rollup.last === true ? ', ?' : ''})
       ON CONFLICT (project_id, bucket, ${rollup.key.join(', ')}) DO UPDATE SET count = count + excluded.count${rollup.last === true ? ', last = max(last, excluded.last)' : ''}`,
    );
  });
  return {
    /** Folds raw rows read back from the table. */
    foldRows(rows: readonly PassRow[]): void {
      const fine: FineCells = new Map();
      for (const [, projectId, time, requestPath, path, agentId, agentType, result, referral] of rows) addFine(fine, projectId, time, requestPath, path, agentId, agentType, result, referral);
      this.foldCells(fine);
    },
    foldCells(fine: FineCells): void {
      ROLLUPS.forEach((rollup, index) => {
        const cells = new Map<string, { params: unknown[]; count: number; last: number }>();
        const columns = [...rollup.key, ...(rollup.extra ?? [])];
        for (const { projectId, minute, values, count, last } of fine.values()) {
          const bucket = floorTo(minute, rollup.width);
          let key = `${projectId}\u0000${bucket}`;
          // Length-prefixed: no two key lists share a string, whatever a path holds.
          for (const column of rollup.key) key += `\u0000${values[column].length}:${values[column]}`;
          const cell = cells.get(key);
          if (cell !== undefined) {
            cell.count += count;
            if (last > cell.last) cell.last = last;
          } else {
            cells.set(key, { params: [projectId, bucket, ...columns.map((column) => values[column])], count, last });
          }
        }
        const statement = statements[index]!;
        for (const { params, count, last } of cells.values()) {
          if (rollup.last === true) statement.run(...params, count, last);
          else statement.run(...params, count);
        }
      });
    },
  };
}

// Raw rows of a time range are read through the minute index; those past the watermark (a few
// seconds of traffic) through the id index. The top keys of a chart by agent or path: ten seeks
// of the key index, not every (hour, key) row of the range (the planner prefers the primary key,
// which spares it a sort, even when it must read every row).
function source(table: string | undefined, someKeys: boolean, pending: boolean): string {
  if (table === undefined) return pending ? 'visits INDEXED BY visits_by_project' : 'visits INDEXED BY visits_by_minute';
  if (someKeys && (table === 'visit_by_path_hour' || table === 'visit_by_agent_id_hour')) return `${table} INDEXED BY ${table}_by_key`;
  return table;
}

/**
 * The minute of a time as the minute index holds it: SQLite's integer division, which truncates
 * toward zero (so does Math.trunc). Times are stored as integers, so the division is integral.
 */
function indexMinute(time: number): number {
  return Math.trunc(time / MINUTE_MS);
}

/**
 * SQL conditions selecting [from, to): on `bucket` for a rollup; for raw rows on `time`, after
 * the minutes of the index that can hold such times (stored times are integers, and truncation is
 * monotonic), or past the watermark id `after` through the id index.
 */
function timeRange(rollup: boolean, from: number, to: number, after: number | undefined): { sql: string; params: number[] } {
  if (rollup) return { sql: ' AND bucket >= ? AND bucket < ?', params: [from, to] };
  if (after !== undefined) return { sql: ' AND id > ? AND time >= ? AND time < ?', params: [after, from, to] };
  return { sql: ' AND time / 60000 BETWEEN ? AND ? AND time >= ? AND time < ?', params: [indexMinute(Math.ceil(from)), indexMinute(Math.ceil(to) - 1), from, to] };
}

/** The stored form of an appended visit: a copy with its id and project. */
function storedVisit(visit: EnrichedVisit, id: number, projectId: string): StoredVisit {
  // Object.assign of the visit alone, then the new fields: as in enrich.ts, the fast copy on Node 20.
  const stored = Object.assign({}, visit) as unknown as Record<string, unknown>;
  stored['id'] = String(id);
  stored['project_id'] = projectId;
  return stored as unknown as StoredVisit;
}

function toStoredVisit(row: VisitRow, pairs: HeaderPairs): StoredVisit {
  const extras = (row.extras === '' ? {} : JSON.parse(row.extras)) as Record<string, unknown>;
  for (const field of OPTIONAL_COLUMNS) {
    const value = row[field];
    if (value === null) continue;
    if (!HEADER_COLUMNS.has(field)) extras[field] = value;
    else {
      const headers = JSON.parse(value as string) as unknown;
      extras[field] = Array.isArray(headers) ? pairs.decode(headers) : headers;
    }
  }
  return Object.assign(extras, {
    request_path: row.request_path,
    request_method: row.request_method,
    received: row.received,
    time: row.time,
    agent_id: row.agent_id,
    agent_type: row.agent_type as AgentType | null,
    result: row.result as IdentificationResult,
    client_ip: row.client_ip,
    referral: row.referral as ReferralClass | null,
    id: String(row.id),
    project_id: row.project_id,
  }) as unknown as StoredVisit;
}

/** SQL conditions for a filter; rollups hold '' where raw rows hold NULL. */
function filterSql(filter: VisitFilter | undefined, rollup: boolean): { sql: string; params: unknown[] } {
  let sql = '';
  const params: unknown[] = [];
  if (filter === undefined) return { sql, params };
  const nullable = (column: string, value: string | null | undefined) => {
    if (value === undefined) return;
    if (rollup) {
      sql += ` AND ${column} = ?`;
      params.push(value ?? NONE);
    } else {
      // IS compares NULL as a value and still uses the index (SQLite treats it like =).
      sql += ` AND ${column} IS ?`;
      params.push(value);
    }
  };
  nullable('agent_id', filter.agent_id);
  nullable('agent_type', filter.agent_type);
  nullable('referral', filter.referral);
  if (filter.result !== undefined) {
    sql += ' AND result = ?';
    params.push(filter.result);
  }
  if (filter.path !== undefined) {
    sql += ' AND path = ?';
    params.push(filter.path);
  }
  return { sql, params };
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
  const clock = options.clock ?? { now: () => Date.now() };
  if (typeof clock.now !== 'function') throw new TypeError('clock must be an object with now()');

  migrate(db);
  // Rollup upserts touch pages all over the file; SQLite's default 2 MB page cache makes each a
  // read from the OS. 64 MB keeps the hot pages of millions of visits.
  if ((db.pragma('cache_size', { simple: true }) as number) > -65_536) db.pragma('cache_size = -65536');
  // Each checkpoint copies the WAL into the file and syncs both; every 1,000 pages (the default)
  // that was a third of the cost of an append. Every 10,000 pages (~40 MB of WAL) it is amortised.
  const checkpointPages = db.pragma('wal_autocheckpoint', { simple: true }) as number;
  if (checkpointPages > 0 && checkpointPages < 10_000) db.pragma('wal_autocheckpoint = 10000');
  const pairs = openHeaderPairs(db);
  const writer = createWriter(db, pairs);
  const writeGroupTransaction = db.transaction((group: readonly Pending[]) => group.map((item) => writer.write(item.visits.map((visit) => ({ projectId: item.projectId, visit })))));

  // Fine cells of the rows this process committed, from the first id on while ids run on without
  // a gap: the pass folds them without reading the rows back (a third of its cost). Rows another
  // writer put between them, rows before a restart and a map past its bound are read from the table.
  let recent: { readonly first: number; last: number; readonly fine: FineCells } | undefined;
  const noteCommitted = (group: readonly Pending[], ids: readonly (readonly number[])[]) => {
    for (let g = 0; g < group.length; g++) {
      const { projectId, visits } = group[g]!;
      const groupIds = ids[g]!;
      for (let i = 0; i < visits.length; i++) {
        const visit = visits[i]!;
        const id = groupIds[i]!;
        if (recent === undefined || id !== recent.last + 1 || recent.fine.size >= MAX_RECENT_CELLS) recent = { first: id, last: id - 1, fine: new Map() };
        addFine(recent.fine, projectId, Math.floor(visit.time), visit.request_path, pathWithoutQuery(visit.request_path), visit.agent_id, visit.agent_type, visit.result, visit.referral);
        recent.last = id;
      }
    }
  };
  const writeGroup = (group: readonly Pending[]): StoredVisit[][] => {
    let ids: number[][];
    try {
      ids = writeGroupTransaction.immediate(group);
    } catch (error) {
      pairs.rolledBack();
      throw error;
    }
    pairs.committed();
    // Past the commit nothing may throw (the caller would write the group again): visits a
    // library caller typed oddly are left for the pass to read back from the table.
    try {
      noteCommitted(group, ids);
    } catch {
      recent = undefined;
    }
    return group.map((item, g) => item.visits.map((visit, i) => storedVisit(visit, ids[g]![i]!, item.projectId)));
  };
  const fanout = createVisitFanout();
  const statements = new Map<string, BetterSqlite3.Statement>();
  const prepared = (sql: string) => {
    let statement = statements.get(sql);
    if (statement === undefined) statements.set(sql, (statement = db.prepare(sql)));
    return statement;
  };
  const listAll = db.prepare<[string, number], VisitRow>('SELECT * FROM visits WHERE project_id = ? ORDER BY id LIMIT ?');
  const countAll = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM visits');
  const countOf = db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM visits WHERE project_id = ?');

  // The rollup pass. Rows past the watermark are read, counted and the watermark advanced in one
  // transaction, so a crash leaves both or neither; the watermark is read from the database inside
  // it (never cached), so two processes on one file never fold a row twice. Ids grow in commit
  // order (AUTOINCREMENT, one writer at a time), so no row can later appear below the watermark.
  const watermarkOf = db.prepare<[], { watermark: number }>('SELECT watermark FROM visit_rollup_state WHERE id = 1');
  const setWatermark = db.prepare('UPDATE visit_rollup_state SET watermark = ? WHERE id = 1');
  const passRows = db
    .prepare<[number, number, number]>('SELECT id, project_id, time, request_path, path, agent_id, agent_type, result, referral FROM visits WHERE id > ? AND id <= ? ORDER BY id LIMIT ?')
    .raw();
  const rollupWriter = createRollupWriter(db);
  /** Folds the next rows past the watermark: the remembered ones when they come next, else a chunk read from the table. */
  const foldChunk = db.transaction((remembered: typeof recent): { folded: number; fromMemory: boolean } => {
    const watermark = watermarkOf.get()!.watermark;
    if (remembered !== undefined && watermark === remembered.first - 1) {
      rollupWriter.foldCells(remembered.fine);
      setWatermark.run(remembered.last);
      return { folded: remembered.last - watermark, fromMemory: true };
    }
    // Up to the remembered rows only, so they can follow from memory; past them (another process
    // folded them), all of them.
    const upTo = remembered !== undefined && watermark < remembered.first ? remembered.first - 1 : Number.MAX_SAFE_INTEGER;
    const rows = passRows.all(watermark, upTo, ROLLUP_CHUNK) as PassRow[];
    if (rows.length === 0) return { folded: 0, fromMemory: false };
    rollupWriter.foldRows(rows);
    setWatermark.run(rows[rows.length - 1]![0]);
    return { folded: rows.length, fromMemory: false };
  });
  const readWatermark = () => watermarkOf.get()!.watermark;
  // Reads of one query see one snapshot: rollups and watermark from the same moment.
  const inSnapshot = db.transaction((read: () => unknown) => read());
  const snapshot = <T>(read: () => T): T => inSnapshot.deferred(read) as T;

  let queue: Pending[] = [];
  let queued = 0;
  let scheduled: ReturnType<typeof setImmediate> | undefined;
  let commits = 0;
  let closed = false;

  const settle = (group: readonly Pending[], stored: readonly (readonly StoredVisit[])[]) => {
    // Published only after the commit: a live timeline never shows a visit that could still be lost.
    group.forEach((item, i) => fanout.publish(item.projectId, stored[i]!));
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

  // Retention: chunks of RETENTION_CHUNK rows, each its own short transaction, yielding between
  // them so appends queued meanwhile commit without waiting for the whole pass.
  const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const projectIds = db.prepare<[], { id: string | null }>(
    // A loose index scan over visits_by_project: one seek per project, not one row per visit.
    `WITH RECURSIVE p(id) AS (SELECT min(project_id) FROM visits
       UNION ALL SELECT (SELECT min(project_id) FROM visits WHERE project_id > p.id) FROM p WHERE p.id IS NOT NULL)
     SELECT id FROM p WHERE id IS NOT NULL`,
  );
  // Only rows the rollups hold: a visit past the watermark would vanish from every count.
  const deleteVisits = db.prepare(
    'DELETE FROM visits WHERE id IN (SELECT id FROM visits WHERE project_id = ? AND time / 60000 <= ? AND time < ? AND id <= (SELECT watermark FROM visit_rollup_state WHERE id = 1) LIMIT ?)',
  );
  const rollupDelete = (table: string, key: string) =>
    db.prepare(`DELETE FROM ${table} WHERE (project_id, bucket, ${key}) IN (SELECT project_id, bucket, ${key} FROM ${table} WHERE bucket < ? LIMIT ?)`);
  const deleteMinuteRollup = rollupDelete('visit_dims_minute', DIM_KEY);
  const deleteAggregates = ROLLUPS.filter((rollup) => rollup.width !== MINUTE_MS).map((rollup) => rollupDelete(rollup.table, rollup.key.join(', ')));
  let rolling: Promise<number> | undefined;
  const runRollUp = async (): Promise<number> => {
    let folded = 0;
    let memoryUsed = false;
    for (;;) {
      if (closed || !db.open) return folded;
      const { folded: n, fromMemory } = foldChunk.immediate(memoryUsed ? undefined : recent);
      folded += n;
      if (fromMemory) {
        // Committed: the remembered rows are in the rollups (no append runs during the transaction).
        // Rows another writer appended after them are read from the table next.
        recent = undefined;
        memoryUsed = true;
        continue;
      }
      // Remembered rows folded from the table (another process folded them, or they arrived while
      // this pass read the table) are of no use any more: the next append starts afresh.
      const watermark = readWatermark();
      if (recent !== undefined && watermark >= recent.first) recent = undefined;
      const rememberedNext = !memoryUsed && recent !== undefined && watermark === recent.first - 1;
      if (n < ROLLUP_CHUNK && !rememberedNext) return folded;
      await yieldTurn();
    }
  };
  const rollUp = () => {
    rolling ??= runRollUp().finally(() => {
      rolling = undefined;
    });
    return rolling;
  };
  let retention: Promise<RetentionResult> | undefined;
  const runRetention = async (): Promise<RetentionResult> => {
    await rollUp();
    let visits = 0;
    let rollupRows = 0;
    const drain = async (step: () => number) => {
      for (;;) {
        if (closed || !db.open) return 0;
        const deleted = step();
        if (deleted < RETENTION_CHUNK) return deleted;
        await yieldTurn();
      }
    };
    const now = clock.now();
    if (retentionDays > 0) {
      const cutoff = now - retentionDays * DAY_MS;
      for (const { id } of projectIds.all()) {
        await drain(() => {
          const n = deleteVisits.run(id, indexMinute(Math.ceil(cutoff) - 1), cutoff, RETENTION_CHUNK).changes;
          visits += n;
          return n;
        });
      }
      // The minute rollup goes with the raw rows: minute buckets only serve ranges of a few days.
      await drain(() => {
        const n = deleteMinuteRollup.run(floorTo(cutoff, MINUTE_MS), RETENTION_CHUNK).changes;
        rollupRows += n;
        return n;
      });
    }
    if (aggregateRetentionDays > 0) {
      const cutoff = floorTo(now - aggregateRetentionDays * DAY_MS, DAY_MS);
      for (const statement of deleteAggregates) {
        await drain(() => {
          const n = statement.run(cutoff, RETENTION_CHUNK).changes;
          rollupRows += n;
          return n;
        });
      }
    }
    return { visits, rollupRows };
  };
  const applyRetention = () => {
    retention ??= runRetention().finally(() => {
      retention = undefined;
    });
    return retention;
  };
  // A failed pass (disk trouble, another writer) is retried at the next interval; ingestion is unaffected.
  const ignore = () => undefined;
  const swallow = () => {
    applyRetention().catch(ignore);
  };
  // Retention at open folds first: rows a crash left past the watermark are counted again at once.
  const atOpen = setTimeout(swallow, 0);
  atOpen.unref();
  const timer = retentionIntervalMs > 0 ? setInterval(swallow, retentionIntervalMs) : undefined;
  timer?.unref();
  const rollupTimer = rollupIntervalMs > 0 ? setInterval(() => void rollUp().catch(ignore), rollupIntervalMs) : undefined;
  rollupTimer?.unref();

  /**
   * Counted cells of one segment: by (bucket of `width`, key), or by key alone when `width` is 0;
   * only the given `keys` when there are some; from raw rows, only those past `after` when given.
   */
  const countCells = (
    projectId: string,
    by: StatsDimension,
    width: number,
    segment: Segment,
    table: string | undefined,
    filter: VisitFilter | undefined,
    keys: readonly (string | null)[] | undefined,
    after?: number,
  ): StatsCell[] => {
    const column = DIMENSION_COLUMN[by];
    const rollup = table !== undefined;
    const time = rollup ? 'bucket' : 'time';
    const where = filterSql(filter, rollup);
    if (keys !== undefined) {
      const values = keys.filter((key) => key !== null || rollup).map((key) => key ?? NONE);
      const conditions = values.length === 0 ? [] : [`${column} IN (${values.map(() => '?').join(', ')})`];
      if (!rollup && keys.includes(null)) conditions.push(`${column} IS NULL`);
      if (conditions.length === 0) return [];
      where.sql += ` AND (${conditions.join(' OR ')})`;
      where.params.push(...values);
    }
    // A rollup of the query's own width is grouped in its primary-key order (no sort); finer rows
    // are floored to the query's buckets (the modulo keeps times before 1970 in the right bucket).
    const bucket = width === 0 ? '0' : segment.width === width ? 'bucket' : `${time} - ((${time} % ${width}) + ${width}) % ${width}`;
    const range = timeRange(rollup, segment.from, segment.to, after);
    const sql =
      `SELECT ${bucket} AS bucket, ${column} AS key, ${rollup ? 'sum(count)' : 'count(*)'} AS count ` +
      `FROM ${source(table, keys !== undefined, after !== undefined)} WHERE project_id = ?${range.sql}${where.sql} GROUP BY 1, 2`;
    const params = [projectId, ...range.params, ...where.params];
    const rows = prepared(sql).all(...params) as { bucket: number; key: string | null; count: number }[];
    if (rollup && by !== 'path' && by !== 'result') for (const row of rows) if (row.key === NONE) row.key = null;
    return rows;
  };
  /**
   * Counted cells of [from, to), each segment from the coarsest table that covers it, plus the raw
   * rows past the watermark in the rolled-up segments (which lie together between the raw edges).
   */
  const countRange = (
    projectId: string,
    by: StatsDimension,
    filter: VisitFilter | undefined,
    tables: ReadonlyMap<number, string>,
    from: number,
    to: number,
    width: number,
    watermark: number,
    keys?: readonly (string | null)[],
  ): StatsCell[] => {
    const widths = [...tables.keys()].filter((w) => width === 0 || w <= width);
    const parts: StatsCell[][] = [];
    const all = segments(from, to, widths);
    for (const segment of all) parts.push(countCells(projectId, by, width, segment, segment.width === 0 ? undefined : tables.get(segment.width), filter, keys));
    const rolled = all.filter((segment) => segment.width !== 0);
    if (rolled.length > 0) parts.push(countCells(projectId, by, width, { width: 0, from: rolled[0]!.from, to: rolled[rolled.length - 1]!.to }, undefined, filter, keys, watermark));
    return parts.flat();
  };

  const statsNow = (query: StatsQuery): StatsResult => {
    const width = INTERVAL_MS[query.interval];
    const filter = query.filter;
    const watermark = readWatermark();
    const pathFilter = filter?.path !== undefined;
    const dimFilter = filter !== undefined && (filter.agent_id !== undefined || filter.agent_type !== undefined || filter.result !== undefined || filter.referral !== undefined);
    const from = floorTo(query.from, width);
    if (pathFilter || dimFilter) {
      const tables = pathFilter ? PATH_TABLES : query.by === 'path' ? AGENT_PATH_TABLES : DIM_TABLES;
      return buildStatsResult(query, countRange(query.projectId, query.by, filter, tables, from, query.to, width, watermark));
    }
    // Unfiltered: a 30-day hourly chart by path would be (hours x paths) cells, most of them
    // summed into `other`. So: totals per key from the coarsest rollups, cells of the top keys
    // only, and every bucket's total from the result rollup (four keys) for `other`.
    const tables = byTables(DIMENSION_COLUMN[query.by]);
    const totals = new Map<string | null, number>();
    for (const cell of countRange(query.projectId, query.by, undefined, tables, from, query.to, 0, watermark)) totals.set(cell.key, (totals.get(cell.key) ?? 0) + cell.count);
    // The order buildStatsResult reports series in: total descending, then key (null last).
    const top = [...totals]
      .sort(([ka, a], [kb, b]) => b - a || compareKeys(ka, kb))
      .slice(0, query.limit ?? 10)
      .map(([key]) => key);
    const result = buildStatsResult(query, top.length === 0 ? [] : countRange(query.projectId, query.by, undefined, tables, from, query.to, width, watermark, top));
    if (top.length === totals.size) return result;
    const bucketTotals = new Map<number, number>();
    for (const cell of countRange(query.projectId, 'result', undefined, byTables('result'), from, query.to, width, watermark)) bucketTotals.set(cell.bucket, (bucketTotals.get(cell.bucket) ?? 0) + cell.count);
    let total = 0;
    for (const count of totals.values()) total += count;
    return {
      series: result.series,
      buckets: result.buckets.map((bucket) => ({ ...bucket, other: (bucketTotals.get(bucket.start) ?? 0) - bucket.counts.reduce((sum, count) => sum + count, 0) })),
      other: total - result.total,
      total,
    };
  };

  /** Adds the (agent, path) counts of one segment (every pair in it) into `rows`. */
  const countPairs = (rows: Map<string, MutablePathCount>, query: PathCountsQuery, segment: Segment, table: string | undefined, after?: number) => {
    const rollup = table !== undefined;
    const where = filterSql(query.filter, rollup);
    const range = timeRange(rollup, segment.from, segment.to, after);
    const sql =
      `SELECT agent_id, min(agent_type) AS agent_type, request_path AS path, ${rollup ? 'sum(count)' : 'count(*)'} AS count, max(${rollup ? 'last' : 'time'}) AS last ` +
      `FROM ${table ?? source(undefined, false, after !== undefined)} WHERE project_id = ?${range.sql}${where.sql}` +
      `${query.agentsOnly === true ? (rollup ? " AND agent_id != ''" : ' AND agent_id IS NOT NULL') : ''} GROUP BY agent_id, request_path`;
    const params = [query.projectId, ...range.params, ...where.params];
    // Rows as arrays: named objects cost as much again as the query for thousands of pairs.
    const statement = prepared(sql).raw() as BetterSqlite3.Statement<unknown[], [string | null, string | null, string, number, number]>;
    for (const [agentId, agentType, path, count, last] of statement.all(...params)) addPathCount(rows, agentId, agentType, path, count, last);
  };

  /**
   * The top `limit` pairs when whole days of the range come from the day table: pairs are read
   * largest total first (the totals bound a pair's count in any range) alongside the pairs of the
   * rest of the range (`partial`, exact) largest first, each read pair counted exactly, until no
   * pair left unread can reach the top (Fagin's threshold algorithm over the two lists). Undefined
   * when that takes more reads than aggregating the days would (a range much shorter than the
   * history kept, where totals bound loosely).
   */
  const topPairsByTotals = (query: PathCountsQuery, days: Segment, partial: Map<string, MutablePathCount>, limit: number): PathCount[] | undefined => {
    const filter = query.filter;
    let sql = 'SELECT agent_id, request_path, count FROM visit_agent_path_totals WHERE project_id = ?';
    const params: unknown[] = [query.projectId];
    if (query.agentsOnly === true) sql += " AND agent_id != ''";
    if (filter?.agent_id !== undefined) {
      sql += ' AND agent_id = ?';
      params.push(filter.agent_id ?? NONE);
    }
    if (filter?.path !== undefined) {
      sql += ' AND path = ?';
      params.push(filter.path);
    }
    const byTotal = (range: string) => (prepared(`${sql} AND count ${range} ORDER BY count DESC`).raw() as BetterSqlite3.Statement<unknown[], [string, string, number]>).iterate(...params);
    // Indexed pairs first; the tail (sorted when read) only if the top is not settled by then.
    const totals = (function* () {
      yield* byTotal(`>= ${INDEXED_TOTAL}`);
      yield* byTotal(`< ${INDEXED_TOTAL}`);
    })();
    // A pair's total spans all its agent types; a type filter applies to the rows counted.
    const count = prepared(
      'SELECT sum(count), max(last), min(agent_type) FROM visit_agent_paths_day WHERE project_id = ? AND agent_id = ? AND request_path = ? AND bucket >= ? AND bucket < ?' +
        (filter?.agent_type !== undefined ? ' AND agent_type = ?' : ''),
    ).raw();
    const typeParam = filter?.agent_type !== undefined ? [filter.agent_type ?? NONE] : [];
    const partialLargestFirst = [...partial.values()].sort((a, b) => b.count - a.count);
    const top = new PathCountHeap(limit);
    const read = new Set<string>();
    // Reading pairs one by one pays off while the top is found in few reads; past a budget,
    // aggregating the days is cheaper. The budget is sized only for queries that get that far.
    let budget = Math.max(2000, 2 * limit);
    let budgetSized = false;
    let nextTotal = totals.next();
    let nextPartial = 0;
    try {
      for (let turn = 0; !nextTotal.done || nextPartial < partialLargestFirst.length; turn++) {
        // Every pair not read yet has a total at most the next one's and a partial count at most the next one's.
        const bound = (nextTotal.done ? 0 : nextTotal.value[2]) + (partialLargestFirst[nextPartial]?.count ?? 0);
        if (top.full && bound < top.worst.count) break;
        if (read.size >= budget) {
          if (budgetSized) return undefined;
          budgetSized = true;
          // A pair read (one seek and a short range, ~8 us) costs about what aggregating four day
          // rows does (~2 us each; bench/visits-stats.mjs).
          const dayRows = prepared('SELECT count(*) FROM visit_agent_paths_day INDEXED BY visit_agent_paths_day_by_bucket WHERE bucket >= ? AND bucket < ? AND project_id = ?')
            .pluck()
            .get(days.from, days.to, query.projectId) as number;
          budget = Math.ceil(dayRows / 4);
          if (read.size >= budget) return undefined;
        }
        let agentId: string;
        let requestPath: string;
        // Alternate between the lists (reading the larger next value first took 13,600 reads
        // where alternating took 8,900, bench/visits-stats.mjs, last 7 days).
        if ((turn % 2 === 0 || nextPartial >= partialLargestFirst.length) && !nextTotal.done) {
          [agentId, requestPath] = nextTotal.value;
          nextTotal = totals.next();
        } else {
          const row = partialLargestFirst[nextPartial++]!;
          agentId = row.agent_id ?? NONE;
          requestPath = row.path;
        }
        const key = pairKey(agentId, requestPath);
        if (read.has(key)) continue;
        read.add(key);
        const [inDays, last, type] = count.get(query.projectId, agentId, requestPath, days.from, days.to, ...typeParam) as [number | null, number | null, string | null];
        const rest = partial.get(key);
        if (inDays === null) {
          if (rest !== undefined) top.offer(rest);
          continue;
        }
        const agentType = (type === NONE ? null : type) as AgentType | null;
        top.offer(
          rest === undefined
            ? { agent_id: agentId === NONE ? null : agentId, agent_type: agentType, path: requestPath, count: inDays, last: last! }
            : { ...rest, count: rest.count + inDays, last: Math.max(rest.last, last!), agent_type: minAgentType(rest.agent_type, agentType) },
        );
      }
    } finally {
      totals.return?.();
    }
    return top.sorted();
  };

  const pathCountsNow = (query: PathCountsQuery): PathCount[] => {
    const limit = query.limit ?? 1000;
    const watermark = readWatermark();
    // The day rollup has no result or referral columns: filters on those read hours only.
    const byDay = query.filter?.result === undefined && query.filter?.referral === undefined;
    const all = segments(query.from, query.to, byDay ? [DAY_MS, HOUR_MS] : [HOUR_MS]);
    // Everything but whole days, counted pair by pair: hours at the edges, raw rows, and the raw
    // rows the rollups do not hold yet.
    const rows = new Map<string, MutablePathCount>();
    for (const segment of all) if (segment.width !== DAY_MS) countPairs(rows, query, segment, segment.width === HOUR_MS ? 'visit_agent_paths_hour' : undefined);
    const rolled = all.filter((segment) => segment.width !== 0);
    if (rolled.length > 0) countPairs(rows, query, { width: 0, from: rolled[0]!.from, to: rolled[rolled.length - 1]!.to }, undefined, watermark);
    const days = all.find((segment) => segment.width === DAY_MS);
    if (days !== undefined) {
      const top = topPairsByTotals(query, days, rows, limit);
      if (top !== undefined) return top;
      countPairs(rows, query, days, 'visit_agent_paths_day');
    }
    return [...rows.values()].sort(comparePathCounts).slice(0, limit);
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

    async timeline(query) {
      if (!Number.isSafeInteger(query.limit) || query.limit < 1 || query.limit > 1000) throw new VisitQueryError('limit', 'limit must be an integer from 1 to 1000');
      const before = query.before === undefined ? undefined : parseCursor('before', query.before);
      const after = query.after === undefined ? undefined : parseCursor('after', query.after);
      const where = filterSql(query.filter, false);
      let sql = `SELECT * FROM visits WHERE project_id = ?${where.sql}`;
      const params: unknown[] = [query.projectId, ...where.params];
      if (before !== undefined) {
        sql += ' AND id < ?';
        params.push(before);
      }
      if (after !== undefined) {
        sql += ' AND id > ?';
        params.push(after);
      }
      sql += ` ORDER BY id ${after === undefined ? 'DESC' : 'ASC'} LIMIT ?`;
      params.push(query.limit);
      return (prepared(sql).all(...params) as VisitRow[]).map((row) => toStoredVisit(row, pairs));
    },

    async stats(query) {
      validateStatsQuery(query);
      return snapshot(() => statsNow(query));
    },

    async pathCounts(query) {
      return snapshot(() => pathCountsNow(query));
    },

    subscribe: (projectId, listener) => fanout.subscribe(projectId, listener),


    list(projectId, limit = -1) {
      return listAll.all(projectId, limit).map((row) => toStoredVisit(row, pairs));
    },
    count(projectId) {
      return (projectId === undefined ? countAll.get() : countOf.get(projectId))!.n;
    },
    applyRetention,
    rollUp,
    commits: () => commits,
    pending: () => queued,
    close() {
      if (closed) return;
      if (scheduled !== undefined) {
        clearImmediate(scheduled);
        if (db.open) flush();
      }
      closed = true;
      clearTimeout(atOpen);
      if (timer !== undefined) clearInterval(timer);
      if (rollupTimer !== undefined) clearInterval(rollupTimer);
    },
  };
}
