// The embedded visit store (DESIGN.md §6): enriched visits in the node adapter's SQLite file, rollup
// tables kept in the same transaction as the rows, group commit, a bounded backlog, raw-row retention.
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
  type ReferralClass,
  type StatsCell,
  type StatsDimension,
  type StoredVisit,
  type VisitFilter,
  type VisitStore,
} from '../../index.js';

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
  /** Deletes raw visits (and rollup rows) past retention now, in small chunks between which ingestion runs. */
  applyRetention(): Promise<RetentionResult>;
  /** Transactions committed by appends so far (group commit writes many appends in one). */
  commits(): number;
  /** Visits waiting for the next commit. */
  pending(): number;
  /** Commits what is queued and stops the retention timer; the caller closes the database. */
  close(): void;
}

const DAY_MS = INTERVAL_MS.day;
const HOUR_MS = INTERVAL_MS.hour;
const MINUTE_MS = INTERVAL_MS.minute;
// Rows deleted per retention statement: small enough that an append waits milliseconds, not seconds.
const RETENTION_CHUNK = 2000;
// Rollup key columns hold '' for "no value" (a NULL in a primary key would never conflict, so
// upserts would add a row per batch instead of counting); '' is never an agent id, type or referral.
const NONE = '';

// One small rollup per dimension and width answers the dashboard's unfiltered charts: a 30-day
// hourly chart by agent reads (hours x agents) rows, not (hours x agent/type/result/referral).
const BY_COLUMNS = ['agent_id', 'agent_type', 'result', 'referral', 'path'] as const;
const DIM_KEY = 'agent_id, agent_type, result, referral';

// Timeline filters on agent and path, which can select one visit in a million, have indexes; type,
// result and referral take few values, so walking visits_by_project finds a page of them quickly,
// and each index left out saves a B-tree insert per visit.
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
];

/** The visit schema version this code writes (component 'visits' in schema_versions). */
export const VISIT_SCHEMA_VERSION = VISIT_MIGRATIONS.length;

// Which rollup serves which bucket width. Unfiltered stats read the dimension's own rollup (and
// the combined minute rollup); filters on agent, type, result or referral the combined tables; a
// path filter, or by path with other filters, the (agent, path) hour table; what no rollup covers
// (sub-minute edges, minute-by-path) the raw rows.
const DIM_TABLES = new Map([
  [DAY_MS, 'visit_dims_day'],
  [HOUR_MS, 'visit_dims_hour'],
  [MINUTE_MS, 'visit_dims_minute'],
]);
const byTables = (column: (typeof BY_COLUMNS)[number]) =>
  new Map([
    [DAY_MS, `visit_by_${column}_day`],
    [HOUR_MS, `visit_by_${column}_hour`],
    ...(column === 'path' ? [] : [[MINUTE_MS, 'visit_dims_minute'] as const]),
  ]);
const AGENT_PATH_TABLES = new Map([[HOUR_MS, 'visit_agent_paths_hour']]);
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

/** Runs the visit schema migrations on `db`, moving rows of the first schema's `visits` table over. */
function migrate(db: Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)');
  const versionOf = db.prepare<[], { version: number }>("SELECT version FROM schema_versions WHERE component = 'visits'");
  const current = versionOf.get()?.version ?? 0;
  if (current > VISIT_MIGRATIONS.length) {
    throw new RangeError(`the database has visit schema version ${current}; this agentwarden knows up to ${VISIT_MIGRATIONS.length}`);
  }
  for (let version = current; version < VISIT_MIGRATIONS.length; version++) {
    db.transaction(() => {
      // Another process (the CLI beside a starting server) may have migrated while this one
      // waited for the write lock: read the version again under the lock.
      if ((versionOf.get()?.version ?? 0) > version) return;
      // The project store's first migration made a bare `visits` table (no enrichment columns): keep
      // its rows, moved into the new table below with their ids.
      const legacy = version === 0 && db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'visits'").get() !== undefined;
      if (legacy) db.exec('ALTER TABLE visits RENAME TO visits_v1');
      db.exec(VISIT_MIGRATIONS[version]!);
      if (legacy) {
        copyLegacyVisits(db);
        db.exec('DROP TABLE visits_v1');
      }
      db.prepare("INSERT INTO schema_versions (component, version) VALUES ('visits', ?) ON CONFLICT (component) DO UPDATE SET version = excluded.version").run(version + 1);
    }).immediate();
  }
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

// Visit fields with columns of their own; every other field is kept in `extras` (JSON).
const COLUMN_FIELDS = new Set(['request_path', 'request_method', 'received', 'time', 'agent_id', 'agent_type', 'result', 'client_ip', 'referral', 'id', 'project_id']);

/** Inserts visits and adds them to every rollup; runs inside the caller's transaction. */
function createWriter(db: Database) {
  const insert = db.prepare(
    `INSERT INTO visits (id, project_id, time, received, request_method, request_path, path, agent_id, agent_type, result, client_ip, referral, extras)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const upsertDims = [...DIM_TABLES].map(([width, table]) => ({
    width,
    statement: db.prepare(
      `INSERT INTO ${table} (project_id, bucket, ${DIM_KEY}, count) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (project_id, bucket, ${DIM_KEY}) DO UPDATE SET count = count + excluded.count`,
    ),
  }));
  const upsertBy = BY_COLUMNS.flatMap((column, index) =>
    [HOUR_MS, DAY_MS].map((width) => ({
      width,
      index,
      statement: db.prepare(
        `INSERT INTO visit_by_${column}_${width === HOUR_MS ? 'hour' : 'day'} (project_id, bucket, ${column}, count) VALUES (?, ?, ?, ?)
         ON CONFLICT (project_id, bucket, ${column}) DO UPDATE SET count = count + excluded.count`,
      ),
    })),
  );
  const upsertAgentPathsDay = db.prepare(
    `INSERT INTO visit_agent_paths_day (project_id, bucket, agent_id, agent_type, request_path, path, count, last) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, bucket, agent_id, agent_type, request_path) DO UPDATE SET count = count + excluded.count, last = max(last, excluded.last)`,
  );
  const upsertAgentPaths = db.prepare(
    `INSERT INTO visit_agent_paths_hour (project_id, bucket, ${DIM_KEY}, request_path, path, count, last) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, bucket, ${DIM_KEY}, request_path) DO UPDATE SET count = count + excluded.count, last = max(last, excluded.last)`,
  );

  return {
    /** Stores the visits (in order; `id` only when migrating) and returns their ids. */
    write(batch: readonly { projectId: string; visit: EnrichedVisit; id?: number }[]): number[] {
      const ids: number[] = [];
      // Pre-aggregated so a batch of 1,000 visits costs one upsert per distinct rollup cell.
      const cells = new Map<BetterSqlite3.Statement, Map<string, { params: unknown[]; count: number; last: number }>>();
      const add = (statement: BetterSqlite3.Statement, params: unknown[], time: number) => {
        let table = cells.get(statement);
        if (table === undefined) cells.set(statement, (table = new Map()));
        // Strings length-prefixed, so no two parameter lists share a key whatever a path holds.
        let key = '';
        for (const param of params) key += typeof param === 'string' ? `${param.length}:${param}|` : `${param as number}|`;
        const cell = table.get(key);
        if (cell === undefined) table.set(key, { params, count: 1, last: time });
        else {
          cell.count++;
          if (time > cell.last) cell.last = time;
        }
      };
      for (const { projectId, visit, id } of batch) {
        const { request_path, request_method, received, time, agent_id, agent_type, result, client_ip, referral } = visit;
        // A loop, not rest/spread syntax: on Node 20 spreading a visit object costs microseconds.
        const extras: Record<string, unknown> = {};
        for (const field in visit) if (!COLUMN_FIELDS.has(field)) extras[field] = visit[field as keyof EnrichedVisit];
        const path = pathWithoutQuery(request_path);
        const row = insert.run(id ?? null, projectId, time, received, request_method, request_path, path, agent_id, agent_type, result, client_ip, referral, JSON.stringify(extras));
        ids.push(Number(row.lastInsertRowid));
        const dims = [agent_id ?? NONE, agent_type ?? NONE, result, referral ?? NONE];
        const keys = [...dims, path];
        for (const { width, statement } of upsertDims) add(statement, [projectId, floorTo(time, width), ...dims], time);
        for (const { width, index, statement } of upsertBy) add(statement, [projectId, floorTo(time, width), keys[index]], time);
        add(upsertAgentPaths, [projectId, floorTo(time, HOUR_MS), ...dims, request_path, path], time);
        add(upsertAgentPathsDay, [projectId, floorTo(time, DAY_MS), dims[0], dims[1], request_path, path], time);
      }
      for (const [statement, table] of cells) {
        for (const { params, count, last } of table.values()) {
          if (statement === upsertAgentPaths || statement === upsertAgentPathsDay) statement.run(...params, count, last);
          else statement.run(...params, count);
        }
      }
      return ids;
    },
  };
}

// The planner prefers a primary key that spares it a sort even when it must read every row of the
// range; a path picks out a few percent of them, so its index is named outright.
// Likewise the top keys of a chart by agent or path: ten seeks, not every (hour, key) row of the range.
function source(table: string | undefined, filter: VisitFilter | undefined, someKeys = false): string {
  if (table === undefined) return 'visits INDEXED BY visits_by_time';
  if (table === 'visit_agent_paths_hour' && filter?.path !== undefined) return `${table} INDEXED BY visit_agent_paths_hour_by_path`;
  if (someKeys && (table === 'visit_by_path_hour' || table === 'visit_by_agent_id_hour')) return `${table} INDEXED BY ${table}_by_key`;
  return table;
}

function toStoredVisit(row: VisitRow): StoredVisit {
  return Object.assign(JSON.parse(row.extras) as Record<string, unknown>, {
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
 * survives kill -9 (WAL, synchronous=NORMAL). Rollup tables, updated in the same transaction, answer
 * stats in milliseconds over millions of visits; results equal the in-memory store's.
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
  const clock = options.clock ?? { now: () => Date.now() };
  if (typeof clock.now !== 'function') throw new TypeError('clock must be an object with now()');

  migrate(db);
  // Rollup upserts and index inserts touch pages all over the file; SQLite's default 2 MB page
  // cache makes each a read from the OS. 64 MB keeps the hot pages of millions of visits.
  if ((db.pragma('cache_size', { simple: true }) as number) > -65_536) db.pragma('cache_size = -65536');
  // Each checkpoint copies the WAL into the file and syncs both; every 1,000 pages (the default)
  // that was a third of the cost of an append. Every 10,000 pages (~40 MB of WAL) it is amortised.
  const checkpointPages = db.pragma('wal_autocheckpoint', { simple: true }) as number;
  if (checkpointPages > 0 && checkpointPages < 10_000) db.pragma('wal_autocheckpoint = 10000');
  const writer = createWriter(db);
  const writeGroup = db.transaction((group: readonly Pending[]) =>
    group.map((item) => {
      const ids = writer.write(item.visits.map((visit) => ({ projectId: item.projectId, visit })));
      return item.visits.map((visit, i): StoredVisit => Object.assign({}, visit, { id: String(ids[i]), project_id: item.projectId }));
    }),
  );
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
      const stored = writeGroup.immediate(group);
      commits++;
      settle(group, stored);
    } catch (error) {
      // One failing append must not fail the others it shared a transaction with: retry each alone.
      if (group.length === 1) return group[0]!.reject(unavailable(error));
      for (const item of group) {
        try {
          const stored = writeGroup.immediate([item]);
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
  const deleteVisits = db.prepare('DELETE FROM visits WHERE id IN (SELECT id FROM visits WHERE project_id = ? AND time < ? LIMIT ?)');
  const rollupDelete = (table: string, key: string) =>
    db.prepare(`DELETE FROM ${table} WHERE (project_id, bucket, ${key}) IN (SELECT project_id, bucket, ${key} FROM ${table} WHERE bucket < ? LIMIT ?)`);
  const deleteMinuteRollup = rollupDelete('visit_dims_minute', DIM_KEY);
  const deleteAggregates = [
    rollupDelete('visit_dims_hour', DIM_KEY),
    rollupDelete('visit_dims_day', DIM_KEY),
    ...BY_COLUMNS.flatMap((column) => [rollupDelete(`visit_by_${column}_hour`, column), rollupDelete(`visit_by_${column}_day`, column)]),
    rollupDelete('visit_agent_paths_hour', `${DIM_KEY}, request_path`),
    rollupDelete('visit_agent_paths_day', 'agent_id, agent_type, request_path'),
  ];
  let retention: Promise<RetentionResult> | undefined;
  const runRetention = async (): Promise<RetentionResult> => {
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
          const n = deleteVisits.run(id, cutoff, RETENTION_CHUNK).changes;
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
  const swallow = () => {
    applyRetention().catch(() => {
      // A failed pass (disk trouble) is retried at the next interval; ingestion is unaffected.
    });
  };
  const atOpen = setTimeout(swallow, 0);
  atOpen.unref();
  const timer = retentionIntervalMs > 0 ? setInterval(swallow, retentionIntervalMs) : undefined;
  timer?.unref();

  /**
   * Counted cells of one segment: by (bucket of `width`, key), or by key alone when `width` is 0;
   * only the given `keys` when there are some.
   */
  const countCells = (projectId: string, by: StatsDimension, width: number, segment: Segment, table: string | undefined, filter: VisitFilter | undefined, keys?: readonly (string | null)[]): StatsCell[] => {
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
    const sql =
      `SELECT ${bucket} AS bucket, ${column} AS key, ${rollup ? 'sum(count)' : 'count(*)'} AS count ` +
      `FROM ${source(table, filter, keys !== undefined)} WHERE project_id = ? AND ${time} >= ? AND ${time} < ?${where.sql} GROUP BY 1, 2`;
    const rows = prepared(sql).all(projectId, segment.from, segment.to, ...where.params) as { bucket: number; key: string | null; count: number }[];
    if (rollup && by !== 'path' && by !== 'result') for (const row of rows) if (row.key === NONE) row.key = null;
    return rows;
  };
  /** Counted cells of [from, to), each segment from the coarsest table that covers it. */
  const countRange = (projectId: string, by: StatsDimension, filter: VisitFilter | undefined, tables: ReadonlyMap<number, string>, from: number, to: number, width: number, keys?: readonly (string | null)[]): StatsCell[] => {
    const widths = [...tables.keys()].filter((w) => width === 0 || w <= width);
    const parts: StatsCell[][] = [];
    for (const segment of segments(from, to, widths)) parts.push(countCells(projectId, by, width, segment, segment.width === 0 ? undefined : tables.get(segment.width), filter, keys));
    return parts.flat();
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
      return (prepared(sql).all(...params) as VisitRow[]).map(toStoredVisit);
    },

    async stats(query) {
      validateStatsQuery(query);
      const width = INTERVAL_MS[query.interval];
      const filter = query.filter;
      const pathFilter = filter?.path !== undefined;
      const dimFilter = filter !== undefined && (filter.agent_id !== undefined || filter.agent_type !== undefined || filter.result !== undefined || filter.referral !== undefined);
      const from = floorTo(query.from, width);
      if (pathFilter || dimFilter) {
        const tables = !pathFilter && query.by !== 'path' ? DIM_TABLES : AGENT_PATH_TABLES;
        return buildStatsResult(query, countRange(query.projectId, query.by, filter, tables, from, query.to, width));
      }
      // Unfiltered: a 30-day hourly chart by path would be (hours x paths) cells, most of them
      // summed into `other`. So: totals per key from the coarsest rollups, cells of the top keys
      // only, and every bucket's total from the result rollup (four keys) for `other`.
      const tables = byTables(DIMENSION_COLUMN[query.by]);
      const totals = new Map<string | null, number>();
      for (const cell of countRange(query.projectId, query.by, undefined, tables, from, query.to, 0)) totals.set(cell.key, (totals.get(cell.key) ?? 0) + cell.count);
      // The order buildStatsResult reports series in: total descending, then key (null last).
      const top = [...totals]
        .sort(([ka, a], [kb, b]) => b - a || compareKeys(ka, kb))
        .slice(0, query.limit ?? 10)
        .map(([key]) => key);
      const result = buildStatsResult(query, top.length === 0 ? [] : countRange(query.projectId, query.by, undefined, tables, from, query.to, width, top));
      if (top.length === totals.size) return result;
      const bucketTotals = new Map<number, number>();
      for (const cell of countRange(query.projectId, 'result', undefined, byTables('result'), from, query.to, width)) bucketTotals.set(cell.bucket, (bucketTotals.get(cell.bucket) ?? 0) + cell.count);
      let total = 0;
      for (const count of totals.values()) total += count;
      return {
        series: result.series,
        buckets: result.buckets.map((bucket) => ({ ...bucket, other: (bucketTotals.get(bucket.start) ?? 0) - bucket.counts.reduce((sum, count) => sum + count, 0) })),
        other: total - result.total,
        total,
      };
    },

    async pathCounts(query) {
      const rows = new Map<string, { -readonly [K in keyof PathCount]: PathCount[K] }>();
      // The day rollup has no result or referral columns: filters on those read hours only.
      const byDay = query.filter?.result === undefined && query.filter?.referral === undefined;
      for (const segment of segments(query.from, query.to, byDay ? [DAY_MS, HOUR_MS] : [HOUR_MS])) {
        const rollup = segment.width !== 0;
        const where = filterSql(query.filter, rollup);
        const time = rollup ? 'bucket' : 'time';
        const table = source(segment.width === DAY_MS ? 'visit_agent_paths_day' : rollup ? 'visit_agent_paths_hour' : undefined, query.filter);
        const sql =
          `SELECT agent_id, min(agent_type) AS agent_type, request_path AS path, ${rollup ? 'sum(count)' : 'count(*)'} AS count, max(${rollup ? 'last' : 'time'}) AS last ` +
          `FROM ${table} WHERE project_id = ? AND ${time} >= ? AND ${time} < ?${where.sql}` +
          `${query.agentsOnly === true ? (rollup ? " AND agent_id != ''" : ' AND agent_id IS NOT NULL') : ''} GROUP BY agent_id, request_path`;
        for (const row of prepared(sql).all(query.projectId, segment.from, segment.to, ...where.params) as { agent_id: string | null; agent_type: string | null; path: string; count: number; last: number }[]) {
          const agentId = row.agent_id === NONE ? null : row.agent_id;
          const key = JSON.stringify([agentId, row.path]);
          const seen = rows.get(key);
          if (seen === undefined) {
            rows.set(key, { agent_id: agentId, agent_type: (row.agent_type === NONE ? null : row.agent_type) as AgentType | null, path: row.path, count: row.count, last: row.last });
          } else {
            seen.count += row.count;
            if (row.last > seen.last) seen.last = row.last;
          }
        }
      }
      return [...rows.values()]
        .sort((a, b) => b.count - a.count || compareText(a.agent_id ?? '', b.agent_id ?? '') || compareText(a.path, b.path))
        .slice(0, query.limit ?? 1000);
    },

    subscribe: (projectId, listener) => fanout.subscribe(projectId, listener),

    list(projectId, limit = -1) {
      return listAll.all(projectId, limit).map(toStoredVisit);
    },
    count(projectId) {
      return (projectId === undefined ? countAll.get() : countOf.get(projectId))!.n;
    },
    applyRetention,
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
    },
  };
}
