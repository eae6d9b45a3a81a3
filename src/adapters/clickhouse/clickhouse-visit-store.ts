// The ClickHouse visit store: visits, projects, tokens and project settings in one ClickHouse database
// shared by any number of agentwarden servers, with acknowledged batched inserts and a live tail across servers.
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import {
  bucketStart,
  buildStatsResult,
  createVisitFanout,
  FAILED_WRITE_MEMORY_MS,
  IDEMPOTENCY_WINDOW_MS,
  INTERVAL_MS,
  pathWithoutQuery,
  STORE_READY,
  validateSeenQuery,
  validateStatsQuery,
  VisitQueryError,
  VisitStoreUnavailableError,
  type AgentSeen,
  type EnrichedVisit,
  type IdempotentAppendResult,
  type IdempotentBatch,
  type PathCount,
  type StatsCell,
  type StoreHealth,
  type StoredVisit,
  type VisitFilter,
  type VisitListener,
  type VisitStore,
} from '../../index.js';
import { createClaims, type ClaimInsert } from './idempotency-claims.js';
import { createInsertQueue } from './insert-queue.js';
import { createLiveTail } from './live-tail.js';
import { createProjectTables, type ProjectTables } from './project-tables.js';
import { MIGRATIONS, MIGRATIONS_TABLE, quoteDatabase, SCHEMA_VERSION, type MonthlyCopy } from './schema.js';
import { rowsInLists, sqlInt, sqlString, sqlUInt } from './sql.js';
import { insertError, insertOutcome, isConnectionError, unavailableError } from './unavailable.js';
import { createVisitIdGenerator, isVisitId, visitIdAt, visitIdFloor, visitIdTime } from './visit-id.js';

/** The ClickHouse store: visits, project lookup, settings and administration, shared by servers. */
export interface ClickHouseVisitStore extends VisitStore, ProjectTables {
  /**
   * Unavailable while closed, while an INSERT has gone unanswered for HUNG_INSERT_MS, for
   * FAILED_WRITE_MEMORY_MS after an INSERT ClickHouse refused or that timed out (until one
   * succeeds), or when `SELECT 1` fails or takes over HEALTH_QUERY_MS (which is all an INSERT that
   * only lost its connection needs); busy with the queue of waiting visits full.
   */
  health(): Promise<StoreHealth>;
  /** Always there: through claims every server sharing the database sees (idempotency-claims.ts). */
  appendOnce(projectId: string, visits: readonly EnrichedVisit[], batch: IdempotentBatch): Promise<IdempotentAppendResult>;
  readonly url: string;
  readonly database: string;
  countVisits(projectId?: string): Promise<number>;
  /**
   * Deletes a project: hidden and its tokens revoked at once, then its visits, counts, claims,
   * tokens, settings and names removed by ClickHouse mutations, which finish in the background
   * (18.16 cannot wait for them). False when there is no such project.
   */
  deleteProject(projectId: string): Promise<boolean>;
  /** Drops the months of raw visits that lie wholly before the retention period; resolves to the months dropped. */
  enforceRetention(): Promise<readonly string[]>;
  /**
   * Deletes what visits, counts and claims remain of deleted projects (written through another
   * server that still trusted a token it had cached, or an INSERT that was in flight); runs hourly,
   * and once SWEEP_AFTER_DELETE_MS after a project is deleted here. Resolves to the projects swept.
   */
  sweepDeletedProjects(): Promise<readonly string[]>;
  /** Waits for inserts in flight, stops the live tail and retention timers, and closes connections. */
  close(): Promise<void>;
}

/** Options of `openClickHouseVisitStore`. */
export interface ClickHouseVisitStoreOptions {
  /** The HTTP interface, e.g. `http://127.0.0.1:8123` (credentials in the URL are used). */
  readonly url: string;
  /** Database for agentwarden's tables, created when missing (default `agentwarden`). */
  readonly database?: string;
  /** Milliseconds since the epoch: visit ids, token times, retention. */
  readonly clock?: { now(): number };
  /** How often the live tail asks ClickHouse for other servers' visits (default 250 ms). */
  readonly pollMs?: number;
  /**
   * How far back each poll looks (default 5,000 ms): a visit another server stamped this long
   * before it became readable (insert latency, clock skew between servers) still reaches subscribers.
   */
  readonly tailWindowMs?: number;
  /**
   * Rows per INSERT at most; concurrent appends wait and go in one INSERT (default 10,000; at most
   * 1,000,000, below ClickHouse's max_insert_block_size, so that one append's rows are one block,
   * which ClickHouse writes whole or not at all).
   */
  readonly maxBatchRows?: number;
  /**
   * INSERTs in flight at once (default 1). An INSERT costs about the same whatever its size (it
   * writes a part per table), so under load one at a time, carrying every waiting visit, gives the
   * most visits per second (measured: 1 > 2 > 4); more overlap lowers latency only when idle.
   */
  readonly maxConcurrentInserts?: number;
  /** Rows waiting for an INSERT beyond which appends are refused as busy (default 100,000). */
  readonly maxQueuedRows?: number;
  /** Seconds a client is told to wait when ClickHouse is unreachable (default 2). */
  readonly retryAfterSeconds?: number;
  /** Per-request timeout towards ClickHouse in ms (default 10,000). */
  readonly requestTimeoutMs?: number;
  /** How long a token lookup is trusted without asking ClickHouse again (default 1,000 ms). */
  readonly tokenCacheMs?: number;
  /**
   * How long ClickHouse may still be applying an INSERT after this server stopped waiting for it
   * (default 30,000 ms). A batch with an idempotency key whose first attempt's outcome is unknown
   * is stored again (if it did not land) only after this, so it must exceed the longest INSERT.
   */
  readonly insertSettleMs?: number;
  /**
   * Keep raw visits at least this many days: months that end before that are dropped (checked at
   * open and hourly); the per-minute counts stay, so stats of old ranges still answer (but for
   * paths). ClickHouse 18.16 has no TTL, so retention works by whole monthly partitions.
   */
  readonly retentionDays?: number;
  /**
   * Called after each retention check (at open and hourly) that dropped months of raw visits (their
   * YYYYMM partition ids), and with the error of an hourly one that failed (retried an hour later),
   * so a server can say what retention removed.
   */
  readonly onRetention?: (outcome: { readonly droppedMonths: readonly string[] } | { readonly error: unknown }) => void;
  /**
   * Called before the schema is migrated at open (not when it is current or new): a migration that copies
   * rows (schema 5 reads every visit, a month per query) takes a while on a large database.
   */
  readonly onMigration?: (migration: { readonly from: number; readonly to: number }) => void;
}

interface VisitRow {
  project_id: string;
  id: string;
  received: number;
  /** Milliseconds as UInt64: before 1970, the two's complement as a decimal string (see TIME). */
  time: number | string;
  path: string;
  request_path: string;
  agent_id: string;
  agent_type: string;
  result: string;
  referral: string;
  /** The response status code; 0 for none. */
  status: number;
  visit: string;
}

// Below max_insert_block_size (1,048,576 rows by default): ClickHouse parses an INSERT's rows into
// blocks of that many and writes each block (per partition) as one part, all or nothing.
const MAX_BATCH_ROWS = 1_000_000;
// An attempt with an idempotency key sends its INSERT within this long of its claim, or never.
const SEND_WITHIN_MS = 5000;
// What is left of SEND_WITHIN_MS for the INSERT when an attempt stops waiting for younger ones to step aside.
const SEND_MARGIN_MS = 3000;
// An INSERT unanswered this long means ClickHouse is stuck (stopped, or its disk hangs), whatever
// it answers to a query: it is the longest a visit waits for its INSERT to be sent (SEND_WITHIN_MS).
const HUNG_INSERT_MS = SEND_WITHIN_MS;
// A token, project or settings read gets this long, start to end (they are small).
const LOOKUP_TIMEOUT_MS = 2000;
// After a project is deleted, its visits are swept again this much later: past any server's token
// cache (1 s by default) and the deadlines of an INSERT already queued (about 15 s).
const SWEEP_AFTER_DELETE_MS = 30_000;
// A health check's query gets this long: under the API's 3 s readiness deadline.
const HEALTH_QUERY_MS = 2000;
// A migration that copies rows (a new view's share of the visits already stored) reads every
// visit: on a large database that takes minutes, with no byte on the connection meanwhile.
const MIGRATION_COPY_TIMEOUT_MS = 3_600_000;
// Claim partitions (days) are dropped once wholly past the 24-hour window, with a day to spare for
// time zones (toYYYYMMDD is in the server's).
const CLAIM_DAYS_KEPT = 3;

// TimelineQuery: a page holds 1 to 1,000 visits.
const TIMELINE_MAX = 1000;
// Timeline windows, widest last: an hour, a day, a month, everything.
const TIMELINE_WINDOWS_MS = [3_600_000, 86_400_000, 31 * 86_400_000, Infinity];

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be an integer >= 1, got ${String(value)}`);
  return value;
}

// A visit's time, signed. The `time` column is UInt64, as the first schema made it, and 18.16
// changes a column's type only by rewriting every part: a time before 1970 (kept only when
// retention keeps everything) is stored as its two's complement, which this reads back.
const TIME = 'toInt64(time)';

/** A visit's time as the `time` column holds it (TIME). */
function timeColumn(time: number): number | string {
  const ms = Math.floor(time);
  return ms >= 0 ? ms : BigInt.asUintN(64, BigInt(ms)).toString();
}

/** `column >= from AND column < to` over whole milliseconds, for any finite from/to. */
function timeRange(column: string, from: number, to: number): string {
  const bound = (ms: number) => sqlInt(Math.min(Number.MAX_SAFE_INTEGER, Math.max(-Number.MAX_SAFE_INTEGER, Math.ceil(ms))));
  return `${column} >= ${bound(from)} AND ${column} < ${bound(to)}`;
}

// How far a visit's time may lie ahead of its receipt and still not move its id: a `created` up
// to a minute ahead is taken as the visit's time (MAX_CLOCK_SKEW_MS, visits/enrich.ts).
const TIME_LEAD_MS = 60_000;

/**
 * The time a visit's id is issued at (at least): its receipt, so ids follow the order visits came
 * in, as SQLite's sequence numbers do. A time ahead of the receipt moves it only past
 * TIME_LEAD_MS (a visit an embedder enriched with a time further ahead), so that no id is earlier
 * than TIME_LEAD_MS before its visit's time. Were ids issued at the time itself, one `created` a
 * minute ahead would set this server's id clock that far ahead for every later visit of every
 * project: they would all sort after visits other servers take meanwhile.
 */
function idTime(visit: EnrichedVisit): number {
  return Math.max(visit.received, visit.time - TIME_LEAD_MS);
}

/** The primary-key bound of visits with `time >= from`: their ids are no earlier than TIME_LEAD_MS before it (idTime). */
function idFrom(from: number): string {
  return `id >= ${sqlString(visitIdFloor(Math.max(0, Math.ceil(from) - TIME_LEAD_MS)))}`;
}

/** The WHERE terms of a visit filter, on visits or visit_counts ('' stands for none). */
function filterTerms(filter: VisitFilter | undefined, withPath = true): string[] {
  if (filter === undefined) return [];
  const terms: string[] = [];
  if (filter.agent_id !== undefined) terms.push(`agent_id = ${sqlString(filter.agent_id ?? '')}`);
  if (filter.agent_type !== undefined) terms.push(`agent_type = ${sqlString(filter.agent_type ?? '')}`);
  if (filter.result !== undefined) terms.push(`result = ${sqlString(filter.result)}`);
  if (filter.referral !== undefined) terms.push(`referral = ${sqlString(filter.referral ?? '')}`);
  if (withPath && filter.path !== undefined) terms.push(`path = ${sqlString(filter.path)}`);
  if (filter.status !== undefined) terms.push(`status = ${sqlUInt(filter.status ?? 0)}`);
  if (filter.has_agent !== undefined) terms.push(filter.has_agent ? "agent_id != ''" : "agent_id = ''");
  if (filter.has_referral !== undefined) terms.push(filter.has_referral ? "referral != ''" : "referral = ''");
  return terms;
}

// The key of each stats dimension; '' is "none" for agent, type and referral (a path may be '').
const DIMENSION_KEY = {
  agent: "nullIf(agent_id, '')",
  agent_type: "nullIf(agent_type, '')",
  result: 'result',
  path: 'path',
  referral: "nullIf(referral, '')",
  status: 'nullIf(toString(status), \'0\')',
} as const;

/** A status code as the `status` column holds it: an integer from 100 to 599, else 0 (none). */
function statusColumn(status: unknown): number {
  return Number.isInteger(status) && (status as number) >= 100 && (status as number) <= 599 ? (status as number) : 0;
}

/**
 * Opens the store: creates the database and applies pending migrations, so it is ready when this
 * resolves. Several servers may open the same database at once.
 * @throws {TypeError|RangeError} for bad options; {RangeError} when the database has a newer schema;
 *   the connection error when ClickHouse cannot be reached at open.
 * @example
 * const store = await openClickHouseVisitStore({ url: 'http://127.0.0.1:8123' });
 * const { id, token } = await store.createProject('example.com');
 */
export async function openClickHouseVisitStore(options: ClickHouseVisitStoreOptions): Promise<ClickHouseVisitStore> {
  if (typeof options?.url !== 'string') throw new TypeError(`url must be a string, got ${typeof options?.url}`);
  let parsedUrl: URL;
  // The URL may carry a password: an error names it without one.
  const shown = JSON.stringify(options.url.replace(/(\/\/[^/@:]*):[^/@]*@/, '$1:***@'));
  try {
    parsedUrl = new URL(options.url);
  } catch {
    throw new RangeError(`url must be an http(s) URL, got ${shown}`);
  }
  if (parsedUrl.protocol !== 'http:' && parsedUrl.protocol !== 'https:') throw new RangeError(`url must be an http(s) URL, got ${shown}`);
  const databaseName = options.database ?? 'agentwarden';
  const db = quoteDatabase(databaseName);
  const clock = options.clock ?? { now: () => Date.now() };
  const pollMs = positiveInteger('pollMs', options.pollMs, 250);
  const tailWindowMs = positiveInteger('tailWindowMs', options.tailWindowMs, 5000);
  const maxBatchRows = positiveInteger('maxBatchRows', options.maxBatchRows, 10_000);
  if (maxBatchRows > MAX_BATCH_ROWS) throw new RangeError(`maxBatchRows must be at most ${MAX_BATCH_ROWS}, got ${maxBatchRows}`);
  const maxQueuedRows = positiveInteger('maxQueuedRows', options.maxQueuedRows, 100_000);
  const maxConcurrentInserts = positiveInteger('maxConcurrentInserts', options.maxConcurrentInserts, 1);
  const retryAfterSeconds = positiveInteger('retryAfterSeconds', options.retryAfterSeconds, 2);
  const requestTimeoutMs = positiveInteger('requestTimeoutMs', options.requestTimeoutMs, 10_000);
  const insertSettleMs = positiveInteger('insertSettleMs', options.insertSettleMs, 30_000);
  const tokenCacheMs = options.tokenCacheMs ?? 1000;
  if (!Number.isSafeInteger(tokenCacheMs) || tokenCacheMs < 0) throw new RangeError(`tokenCacheMs must be an integer >= 0, got ${String(tokenCacheMs)}`);
  const retentionDays = options.retentionDays === undefined ? undefined : positiveInteger('retentionDays', options.retentionDays, 1);

  const clientOptions = {
    url: parsedUrl.origin,
    username: decodeURIComponent(parsedUrl.username) || 'default',
    password: decodeURIComponent(parsedUrl.password),
    request_timeout: requestTimeoutMs,
    application: 'agentwarden',
    // 18.16 knows none of the newer settings; the client sends none unless asked.
    compression: { request: false, response: false },
    log: { level: ClickHouseLogLevel.OFF },
  };
  const client: ClickHouseClient = createClient(clientOptions);
  const sql = (text: string) => text.replaceAll('{db}', db);
  const rows = async <T>(query: string, timeoutMs?: number): Promise<T[]> =>
    (await client.query({ query: sql(query), format: 'JSONEachRow', ...(timeoutMs === undefined ? {} : { abort_signal: AbortSignal.timeout(timeoutMs) }) })).json<T>();
  const command = async (query: string): Promise<void> => {
    await client.command({ query: sql(query) });
  };

  try {
    await migrate();
  } catch (error) {
    await client.close();
    throw error;
  }

  async function migrate(): Promise<void> {
    await command(`CREATE DATABASE IF NOT EXISTS {db}`);
    await command(MIGRATIONS_TABLE);
    const [applied] = await rows<{ version: number | string }>(`SELECT max(version) AS version FROM {db}.schema_migrations`);
    const current = Number(applied?.version ?? 0);
    if (current > SCHEMA_VERSION) throw new Error(`ClickHouse database ${databaseName} has schema version ${current}; this agentwarden knows up to ${SCHEMA_VERSION}`);
    // A new database is created, not migrated: nothing to tell.
    if (current > 0 && current < SCHEMA_VERSION) options.onMigration?.({ from: current, to: SCHEMA_VERSION });
    for (let version = current; version < SCHEMA_VERSION; version++) {
      for (const statement of MIGRATIONS[version]!) {
        try {
          if (typeof statement === 'object' || statement.startsWith('INSERT')) await copyRows(statement);
          else await command(statement);
        } catch (error) {
          // Another server added the column a moment ago (18.16 has no ADD COLUMN IF NOT EXISTS).
          if (!(typeof statement === 'string' && statement.includes('ADD COLUMN') && /already exists/i.test(String((error as Error).message)))) throw error;
        }
      }
      await client.insert({ table: `${db}.schema_migrations`, values: [{ version: version + 1, applied: new Date(clock.now()).toISOString() }], format: 'JSONEachRow' });
    }
  }

  /**
   * Runs a migration's INSERT ... SELECT, or a monthly copy's listing and then its copy once per
   * month, over a connection of its own that waits for each query up to MIGRATION_COPY_TIMEOUT_MS.
   */
  async function copyRows(statement: string | MonthlyCopy): Promise<void> {
    const copier = createClient({ ...clientOptions, request_timeout: Math.max(requestTimeoutMs, MIGRATION_COPY_TIMEOUT_MS) });
    try {
      if (typeof statement === 'string') {
        await copier.command({ query: sql(statement) });
        return;
      }
      type Month = { month: number | string; lo?: number | string; hi?: number | string };
      const months = await (await copier.query({ query: sql(statement.months), format: 'JSONEachRow' })).json<Month>();
      for (const { month, lo = 0, hi = 0 } of months) {
        if (![month, lo, hi].every((value) => /^\d+$/.test(String(value)))) throw new Error(`a migration listed a month it cannot copy: ${JSON.stringify({ month, lo, hi })}`);
        await copier.command({ query: sql(statement.copy.replaceAll('{month}', String(month)).replaceAll('{lo}', String(lo)).replaceAll('{hi}', String(hi))) });
      }
    } finally {
      await copier.close();
    }
  }

  const generateVisitId = createVisitIdGenerator(clock);
  // The newest id this server issued, so the first timeline window includes it even when the
  // clock stands behind (ids borrow milliseconds when one holds more than 65,536 visits).
  let lastIssued = 0;
  // Raw reads of a time range start at the primary-key position idFrom gives (idTime).
  const nextId = (visit: EnrichedVisit) => {
    const id = generateVisitId(idTime(visit));
    lastIssued = visitIdTime(id);
    return id;
  };
  const newestIssued = () => lastIssued;
  const fanout = createVisitFanout();
  let closed = false;
  const insertRows = async (table: string, values: readonly object[]): Promise<void> => {
    await client.insert({ table: `${db}.${table}`, values: values as object[], format: 'JSONEachRow' });
  };
  // One INSERT in flight per server by default, carrying every visit that waited for it. The
  // client's request_timeout counts only idle time on a socket it has; the abort bounds the whole
  // INSERT, so its rows reach ClickHouse within requestTimeoutMs of being sent, or never (the
  // idempotency claims rely on that bound).
  // The last visits INSERT that failed, while none has succeeded since (readiness); `connection`
  // when only the connection failed, which a query that goes through later clears.
  let insertFailure: { readonly at: number; readonly detail: string; readonly connection: boolean } | undefined;
  const inserts = createInsertQueue<VisitRow>({
    insert: async (values) => {
      try {
        await client.insert({ table: `${db}.visits`, values: values as VisitRow[], format: 'JSONEachRow', abort_signal: AbortSignal.timeout(requestTimeoutMs) });
      } catch (error) {
        insertFailure = { at: clock.now(), detail: error instanceof Error ? error.message : String(error), connection: isConnectionError(error) };
        throw error;
      }
      insertFailure = undefined;
    },
    maxBatchRows,
    maxConcurrent: maxConcurrentInserts,
    clock,
  });
  // Claims go in INSERTs of their own, batched the same way (a part per INSERT).
  const claimInserts = createInsertQueue<ClaimInsert>({ insert: (values) => insertRows('idempotency_claims', values), maxBatchRows: 10_000, maxConcurrent: 1, clock });
  const claims = createClaims({
    rows,
    insert: (values) => claimInserts.enqueue(values),
    clock,
    windowSeconds: IDEMPOTENCY_WINDOW_MS / 1000,
    sendWithinMs: SEND_WITHIN_MS,
    requestTimeoutMs,
    settleMs: insertSettleMs,
  });

  const toRow = (projectId: string, visit: EnrichedVisit, id: string): VisitRow => ({
    project_id: projectId,
    id,
    received: Math.max(0, Math.floor(visit.received)),
    time: timeColumn(visit.time),
    path: pathWithoutQuery(visit.request_path),
    request_path: visit.request_path,
    agent_id: visit.agent_id ?? '',
    agent_type: visit.agent_type ?? '',
    result: visit.result,
    referral: visit.referral ?? '',
    status: statusColumn(visit.response_status_code),
    visit: JSON.stringify(visit),
  });
  /**
   * Sends visits (with their ids) through the insert queue, the live tail told first so it never
   * delivers them a second time; rejects with the INSERT's own error.
   */
  const sendVisits = async (projectId: string, visits: readonly EnrichedVisit[], ids: readonly string[], deadline?: number): Promise<void> => {
    const tailed = tail.watched(projectId);
    if (tailed) tail.claim(projectId, ids);
    try {
      await inserts.enqueue(
        visits.map((visit, i) => toRow(projectId, visit, ids[i]!)),
        deadline,
      );
    } catch (error) {
      if (tailed) tail.unclaim(ids);
      throw error;
    }
  };
  const refuseAppend = (count: number): VisitStoreUnavailableError | undefined => {
    if (closed) return new VisitStoreUnavailableError('unavailable', retryAfterSeconds, 'the ClickHouse store is closed');
    if (inserts.queued() + count > maxQueuedRows) return new VisitStoreUnavailableError('busy', 1, `${inserts.queued()} visits are waiting for ClickHouse already`);
    return undefined;
  };
  const fromRow = (row: { project_id: string; id: string; visit: string }): StoredVisit => ({ ...(JSON.parse(row.visit) as EnrichedVisit), id: row.id, project_id: row.project_id });
  const idOrder = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

  // Both lists grow with traffic (watched projects, visits between two polls): they go to
  // ClickHouse in pieces below max_query_size (rowsInLists), and the pieces' rows are merged by id.
  const tail = createLiveTail({
    clock,
    pollMs,
    windowMs: tailWindowMs,
    readIds: async (projectIds, floor) =>
      (await rowsInLists<{ project_id: string; id: string }>(rows, projectIds.map(sqlString), (list) => `SELECT project_id, id FROM {db}.visits WHERE project_id IN (${list}) AND id >= ${sqlString(floor)} ORDER BY id`)).sort(idOrder),
    readVisits: async (keys) =>
      (
        await rowsInLists<{ project_id: string; id: string; visit: string }>(
          rows,
          keys.map((key) => `(${sqlString(key.project_id)}, ${sqlString(key.id)})`),
          // A (project, id) pair is a primary-key lookup.
          (list) => `SELECT project_id, id, visit FROM {db}.visits WHERE (project_id, id) IN (${list}) ORDER BY id`,
        )
      )
        .sort(idOrder)
        .map(fromRow),
    publish: (projectId, visits) => fanout.publish(projectId, visits),
  });
  // Token, project and settings reads sit in front of every request: bounded as a whole, so a
  // ClickHouse that hangs costs a request LOOKUP_TIMEOUT_MS each (then a token or rule seen before
  // is used), not the client's idle timeout.
  const projects = createProjectTables({ rows: (query) => rows(query, LOOKUP_TIMEOUT_MS), insert: insertRows, clock, tokenCacheMs, retryAfterSeconds });

  let retentionTimer: ReturnType<typeof setInterval> | undefined;
  /** Drops the partitions of `table` whose ids (YYYYMM or YYYYMMDD numbers) are below `keepFrom`; resolves to those dropped. */
  const dropPartitionsBefore = async (table: 'visits' | 'idempotency_claims', keepFrom: number): Promise<readonly string[]> => {
    const parts = await rows<{ partition: string }>(
      `SELECT DISTINCT partition FROM system.parts WHERE database = ${sqlString(databaseName)} AND table = ${sqlString(table)} AND active`,
    );
    const dropped: string[] = [];
    for (const part of parts) {
      if (!/^\d{6,8}$/.test(part.partition) || Number(part.partition) >= keepFrom) continue;
      await command(`ALTER TABLE {db}.${table} DROP PARTITION ${part.partition}`);
      dropped.push(part.partition);
    }
    return dropped;
  };
  const enforceRetention = async (): Promise<readonly string[]> => {
    if (retentionDays === undefined) return [];
    const cutoff = new Date(clock.now() - retentionDays * 86_400_000);
    // Months ending before the cutoff: partition ids (YYYYMM) below the cutoff's month.
    return dropPartitionsBefore('visits', cutoff.getUTCFullYear() * 100 + cutoff.getUTCMonth() + 1);
  };
  if (retentionDays !== undefined) {
    // A throwing onRetention changes nothing; a failed hourly check (ClickHouse away) is retried an hour later.
    const report = (outcome: Parameters<NonNullable<ClickHouseVisitStoreOptions['onRetention']>>[0]) => {
      try {
        options.onRetention?.(outcome);
      } catch {
        // The caller's own failure.
      }
    };
    const dropped = (droppedMonths: readonly string[]) => {
      if (droppedMonths.length > 0) report({ droppedMonths });
    };
    dropped(await enforceRetention());
    retentionTimer = setInterval(() => void enforceRetention().then(dropped, (error: unknown) => report({ error })), 3_600_000);
    retentionTimer.unref?.();
  }
  // Claims matter for their 24-hour window: whole days of them are dropped after CLAIM_DAYS_KEPT.
  const dropOldClaims = async (): Promise<readonly string[]> => {
    const cutoff = new Date(clock.now() - CLAIM_DAYS_KEPT * 86_400_000);
    return dropPartitionsBefore('idempotency_claims', cutoff.getUTCFullYear() * 10_000 + (cutoff.getUTCMonth() + 1) * 100 + cutoff.getUTCDate());
  };
  await dropOldClaims().catch(() => undefined);
  // Tables that hold a project's visits (the per-minute counts and times live in the materialized
  // views' inner tables); a deleted project's rows go from each.
  const VISIT_TABLES = ['visits', '`.inner.visit_counts`', '`.inner.visit_times`', 'idempotency_claims'];
  const deleteRowsOf = async (projectId: string, tables: readonly string[]): Promise<void> => {
    for (const table of tables) await command(`ALTER TABLE {db}.${table} DELETE WHERE project_id = ${sqlString(projectId)}`);
  };
  const sweepDeletedProjects = async (): Promise<readonly string[]> => {
    const left = await rows<{ project_id: string }>('SELECT DISTINCT project_id FROM {db}.visits WHERE project_id IN (SELECT project_id FROM {db}.project_deletions)');
    for (const { project_id } of left) await deleteRowsOf(project_id, VISIT_TABLES);
    return left.map((row) => row.project_id);
  };
  const claimsTimer = setInterval(() => {
    void dropOldClaims().catch(() => {});
    void sweepDeletedProjects().catch(() => {});
  }, 3_600_000);
  claimsTimer.unref?.();
  const sweepTimers = new Set<ReturnType<typeof setTimeout>>();

  const store: ClickHouseVisitStore = {
    url: parsedUrl.origin,
    database: databaseName,
    ...(retentionDays === undefined ? {} : { retentionDays }),

    append(projectId, visits) {
      if (visits.length === 0 && !closed) return Promise.resolve([]);
      const refused = refuseAppend(visits.length);
      if (refused !== undefined) return Promise.reject(refused);
      const ids = visits.map(nextId);
      const stored = visits.map((visit, i): StoredVisit => ({ ...visit, id: ids[i]!, project_id: projectId }));
      // Rows that cannot go out within SEND_WITHIN_MS (an INSERT ahead of them hangs) are never
      // sent: the request is answered 503 "not stored" then, not held until ClickHouse wakes.
      return sendVisits(projectId, visits, ids, clock.now() + SEND_WITHIN_MS).then(
        () => {
          fanout.publish(projectId, stored);
          return stored;
        },
        (error: unknown) => {
          throw insertError(error, retryAfterSeconds);
        },
      );
    },

    async appendOnce(projectId, visits, batch) {
      const refused = refuseAppend(visits.length);
      if (refused !== undefined) throw refused;
      if (visits.length > MAX_BATCH_ROWS) throw new RangeError(`a batch with an idempotency key holds at most ${MAX_BATCH_ROWS} visits, got ${visits.length}`);
      // Consecutive ids from one reservation: any server can name them from the first and the count.
      let atLeast = 0;
      for (const visit of visits) atLeast = Math.max(atLeast, idTime(visit));
      const first = generateVisitId.reserve(Math.max(1, visits.length), atLeast);
      const ids = visits.map((_, i) => visitIdAt(first, i));
      lastIssued = Math.max(lastIssued, visitIdTime(ids[ids.length - 1] ?? first));
      const attempt = { project_id: projectId, key: batch.key, attempt: first, visits: visits.length };
      const notStored = async (error: unknown): Promise<never> => {
        // Known here at once; the row for other servers goes when ClickHouse takes it.
        void claims.release(attempt);
        const failed = unavailableError(error, retryAfterSeconds, 'idempotency claim');
        if (failed === undefined) throw error;
        throw new VisitStoreUnavailableError(failed.reason, failed.retryAfterSeconds, failed.message, { cause: error, outcome: 'not-stored' });
      };

      // The INSERT goes out within SEND_WITHIN_MS of this moment or never: no later than what
      // other servers assume from the claim's time, which ClickHouse stamps after this.
      const deadline = clock.now() + SEND_WITHIN_MS;
      let decision;
      try {
        await claims.claim({ ...attempt, fingerprint: batch.fingerprint, response: batch.response });
        // Looking again for younger attempts to step aside ends in time to send by the deadline.
        decision = await claims.decide(projectId, batch.key, first, deadline - SEND_MARGIN_MS);
      } catch (error) {
        // No visit was sent: whatever became of the claim, nothing of the batch is stored.
        return notStored(error);
      }
      if (decision.kind === 'replay') {
        // An empty attempt's claim is its record: only one that would store visits steps aside.
        if (visits.length > 0) await claims.release(attempt);
        return { outcome: 'replayed', record: { fingerprint: decision.attempt.fingerprint, response: decision.attempt.response } };
      }
      if (decision.kind === 'wait') {
        await claims.release(attempt);
        return { outcome: 'in-progress', retryAfterSeconds: decision.retryAfterSeconds };
      }
      const stored = visits.map((visit, i): StoredVisit => ({ ...visit, id: ids[i]!, project_id: projectId }));
      if (visits.length === 0) return { outcome: 'stored', visits: stored };
      try {
        await sendVisits(projectId, visits, ids, deadline);
      } catch (error) {
        if (insertOutcome(error) === 'not-stored') {
          void claims.release(attempt);
          throw insertError(error, retryAfterSeconds);
        }
        claims.ended(first);
        // The connection broke with the rows sent: they may have landed. Ask; if they did, the
        // batch is stored (published here; the live tail leaves these ids to this server).
        const landed = await claims.landed(projectId, { attempt: first, visits: visits.length, released: false, age: 0, fingerprint: '', response: '' }).catch(() => false);
        if (!landed) throw insertError(error, retryAfterSeconds);
        if (tail.watched(projectId)) tail.claim(projectId, ids);
      }
      fanout.publish(projectId, stored);
      return { outcome: 'stored', visits: stored };
    },

    async timeline(query) {
      const limit = query.limit;
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > TIMELINE_MAX) throw new VisitQueryError('limit', `limit must be an integer from 1 to ${TIMELINE_MAX}`);
      if (query.before !== undefined && !isVisitId(query.before)) throw new VisitQueryError('before', `${JSON.stringify(query.before)} is not a visit id from this store`);
      if (query.after !== undefined && !isVisitId(query.after)) throw new VisitQueryError('after', `${JSON.stringify(query.after)} is not a visit id from this store`);
      const where = [`project_id = ${sqlString(query.projectId)}`, ...filterTerms(query.filter)];
      if (query.before !== undefined) where.push(`id < ${sqlString(query.before)}`);
      if (query.after !== undefined) where.push(`id > ${sqlString(query.after)}`);
      const ascending = query.after !== undefined;
      try {
        // ClickHouse 18.16 sorts every matching row for ORDER BY ... LIMIT, so look in a growing
        // window of ids next to the cursor first (a primary-key range): ids are time-ordered, so
        // when a window holds `limit` matches, no row outside it can come before them.
        let ids: { id: string }[] = [];
        for (const span of TIMELINE_WINDOWS_MS) {
          const window = [...where];
          if (span !== Infinity) {
            if (ascending) window.push(`id < ${sqlString(visitIdFloor(visitIdTime(query.after!) + span))}`);
            else window.push(`id >= ${sqlString(visitIdFloor((query.before === undefined ? Math.max(clock.now(), newestIssued()) : visitIdTime(query.before)) - span))}`);
          }
          // Ids first (a narrow column), then only the chosen rows' visits.
          ids = await rows<{ id: string }>(`SELECT id FROM {db}.visits WHERE ${window.join(' AND ')} ORDER BY id ${ascending ? 'ASC' : 'DESC'} LIMIT ${limit}`);
          if (ids.length >= limit) break;
        }
        if (ids.length === 0) return [];
        const found = await rows<{ project_id: string; id: string; visit: string }>(
          `SELECT project_id, id, visit FROM {db}.visits WHERE project_id = ${sqlString(query.projectId)} AND id IN (${ids.map((r) => sqlString(r.id)).join(', ')})`,
        );
        const byId = new Map(found.map((row) => [row.id, row]));
        return ids.flatMap(({ id }) => {
          const row = byId.get(id);
          return row === undefined ? [] : [fromRow(row)];
        });
      } catch (error) {
        throw unavailableError(error, retryAfterSeconds, 'timeline') ?? error;
      }
    },

    async getVisit(projectId, id) {
      if (!isVisitId(id)) return undefined;
      try {
        const [row] = await rows<{ project_id: string; id: string; visit: string }>(
          `SELECT project_id, id, visit FROM {db}.visits WHERE project_id = ${sqlString(projectId)} AND id = ${sqlString(id)} LIMIT 1`,
        );
        return row === undefined ? undefined : fromRow(row);
      } catch (error) {
        throw unavailableError(error, retryAfterSeconds, 'visit') ?? error;
      }
    },

    async stats(query) {
      validateStatsQuery(query);
      const width = INTERVAL_MS[query.interval];
      // `from` is floored to the interval (StatsQuery), so the range starts on a whole minute.
      const from = bucketStart(query.from, query.interval);
      // Whole minutes since 1970 without a path: the pre-aggregated counts answer exactly, reading
      // a few rows per minute instead of every visit. Anything else counts visits one by one. (The
      // counts' view computes minutes from the unsigned column: a visit before 1970 is in none of
      // the minutes a range reaches.)
      const aggregated = from >= 0 && query.by !== 'path' && query.by !== 'status' && query.filter?.path === undefined && query.filter?.status === undefined && query.to % 60_000 === 0;
      const statement = aggregated
        ? `SELECT intDiv(minute, ${width}) * ${width} AS bucket, ${DIMENSION_KEY[query.by]} AS key, sum(visits) AS count
           FROM {db}.visit_counts WHERE ${[`project_id = ${sqlString(query.projectId)}`, timeRange('minute', from, query.to), ...filterTerms(query.filter, false)].join(' AND ')}
           GROUP BY bucket, key`
        : // intDiv rounds towards zero: a time before 1970 is moved down first, so buckets floor.
          `SELECT intDiv(${TIME} - if(${TIME} < 0, ${width - 1}, 0), ${width}) * ${width} AS bucket, ${DIMENSION_KEY[query.by]} AS key, count() AS count
           FROM {db}.visits WHERE ${[`project_id = ${sqlString(query.projectId)}`, idFrom(from), timeRange(TIME, from, query.to), ...filterTerms(query.filter)].join(' AND ')}
           GROUP BY bucket, key`;
      try {
        const cells = await rows<{ bucket: string; key: string | null; count: string }>(statement);
        return buildStatsResult(
          query,
          cells.map((cell): StatsCell => ({ bucket: Number(cell.bucket), key: cell.key, count: Number(cell.count) })),
        );
      } catch (error) {
        throw unavailableError(error, retryAfterSeconds, 'stats') ?? error;
      }
    },

    async pathCounts(query) {
      const limit = query.limit ?? 1000;
      const where = [`project_id = ${sqlString(query.projectId)}`, idFrom(query.from), timeRange(TIME, query.from, query.to), ...filterTerms(query.filter)];
      if (query.agentsOnly === true) where.push("agent_id != ''");
      try {
        // Aliases differ from column names: ClickHouse resolves an alias in WHERE before a column.
        // Ties are cut as the other stores cut them, by JavaScript's string order (UTF-16 code
        // units), which the rows LIMIT keeps must follow too. ClickHouse compares bytes: UTF-8
        // order, which puts U+E000-U+FFFF before the astral characters, UTF-16 after. Paths are
        // compared as UTF-16BE bytes, which is UTF-16 order; agent ids are ASCII slugs (catalog).
        const found = await rows<{ agent: string | null; any_type: string | null; request_path: string; visits: string; last_time: string }>(
          `SELECT nullIf(agent_id, '') AS agent, nullIf(any(agent_type), '') AS any_type, request_path, count() AS visits, max(${TIME}) AS last_time
           FROM {db}.visits WHERE ${where.join(' AND ')}
           GROUP BY agent_id, request_path
           ORDER BY visits DESC, agent_id ASC, convertCharset(request_path, 'UTF-8', 'UTF-16BE') ASC
           LIMIT ${sqlUInt(Math.max(0, Math.floor(limit)))}`,
        );
        return found.map((row): PathCount => ({ agent_id: row.agent, agent_type: row.any_type as PathCount['agent_type'], path: row.request_path, count: Number(row.visits), last: Number(row.last_time) }));
      } catch (error) {
        throw unavailableError(error, retryAfterSeconds, 'path counts') ?? error;
      }
    },

    async seen(query) {
      validateSeenQuery(query);
      // Whole minutes since 1970 without a path or status filter: the per-minute times answer
      // exactly, a few rows per minute. Anything else reads the visits (as stats do).
      const aggregated = query.from >= 0 && query.from % 60_000 === 0 && query.to % 60_000 === 0 && query.filter?.path === undefined && query.filter?.status === undefined;
      const project = `project_id = ${sqlString(query.projectId)}`;
      const statement = aggregated
        ? `SELECT nullIf(agent_id, '') AS agent, minMerge(first) AS first_time, maxMerge(last) AS last_time
           FROM {db}.visit_times WHERE ${[project, timeRange('minute', query.from, query.to), ...filterTerms(query.filter, false)].join(' AND ')}
           GROUP BY agent_id`
        : `SELECT nullIf(agent_id, '') AS agent, min(${TIME}) AS first_time, max(${TIME}) AS last_time
           FROM {db}.visits WHERE ${[project, idFrom(query.from), timeRange(TIME, query.from, query.to), ...filterTerms(query.filter)].join(' AND ')}
           GROUP BY agent_id`;
      try {
        const found = await rows<{ agent: string | null; first_time: string; last_time: string }>(statement);
        return found.map((row): AgentSeen => ({ agent_id: row.agent, first: Number(row.first_time), last: Number(row.last_time) }));
      } catch (error) {
        throw unavailableError(error, retryAfterSeconds, 'first and last seen') ?? error;
      }
    },

    subscribe(projectId: string, listener: VisitListener) {
      const unsubscribe = fanout.subscribe(projectId, listener);
      const release = tail.watch(projectId);
      return () => {
        unsubscribe();
        release();
      };
    },

    findByTokenHash: projects.findByTokenHash,
    tokensVersion: projects.tokensVersion,
    findProject: projects.findProject,
    createProject: projects.createProject,
    listProjects: projects.listProjects,
    issueToken: projects.issueToken,
    revokeToken: projects.revokeToken,
    getProjectSettings: projects.getProjectSettings,
    putProjectSettings: projects.putProjectSettings,
    renameProject: projects.renameProject,
    async deleteProject(projectId) {
      if (!(await projects.deleteProject(projectId))) return false;
      await deleteRowsOf(projectId, [...VISIT_TABLES, 'tokens', 'project_settings', 'project_renames']);
      await command(`ALTER TABLE {db}.projects DELETE WHERE id = ${sqlString(projectId)}`);
      // Another server may accept the project's visits while it still trusts a cached token, and
      // an INSERT may be in flight: swept again once both are over.
      const timer = setTimeout(() => {
        sweepTimers.delete(timer);
        void sweepDeletedProjects().catch(() => {});
      }, SWEEP_AFTER_DELETE_MS);
      timer.unref?.();
      sweepTimers.add(timer);
      return true;
    },
    async countVisits(projectId) {
      const [row] = await rows<{ n: string }>(`SELECT count() AS n FROM {db}.visits${projectId === undefined ? '' : ` WHERE project_id = ${sqlString(projectId)}`}`);
      return Number(row?.n ?? 0);
    },
    enforceRetention,
    sweepDeletedProjects,
    async health() {
      if (closed) return { status: 'unavailable', detail: 'the ClickHouse store is closed' };
      const now = clock.now();
      const sent = inserts.inFlightSince();
      if (sent !== undefined && now - sent >= HUNG_INSERT_MS) return { status: 'unavailable', detail: `an INSERT sent ${Math.round((now - sent) / 1000)} s ago is not answered yet` };
      // ClickHouse refused the INSERT, or it timed out: SELECT 1 cannot vouch for the next one.
      if (insertFailure !== undefined && !insertFailure.connection && now - insertFailure.at < FAILED_WRITE_MEMORY_MS) {
        return { status: 'unavailable', detail: `the last INSERT, ${Math.round((now - insertFailure.at) / 1000)} s ago, failed: ${insertFailure.detail}` };
      }
      if (inserts.queued() >= maxQueuedRows) return { status: 'busy', detail: `${inserts.queued()} visits are waiting for ClickHouse` };
      try {
        await (await client.query({ query: 'SELECT 1', format: 'TabSeparated', abort_signal: AbortSignal.timeout(HEALTH_QUERY_MS) })).text();
      } catch (error) {
        return { status: 'unavailable', detail: `ClickHouse did not answer SELECT 1 (${HEALTH_QUERY_MS} ms allowed): ${error instanceof Error ? error.message : String(error)}` };
      }
      return STORE_READY;
    },

    async close() {
      if (closed) return;
      closed = true;
      tail.close();
      if (retentionTimer !== undefined) clearInterval(retentionTimer);
      clearInterval(claimsTimer);
      for (const timer of sweepTimers) clearTimeout(timer);
      await inserts.drained();
      await claimInserts.drained();
      await client.close();
    },
  };
  return store;
}
