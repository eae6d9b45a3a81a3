// Timeline, stats and seen queries of the SQLite visit store: pages of raw rows by id, and counts
// (or first and last visit times) over time buckets, each piece of the range read from the coarsest
// rollup that covers it plus the raw rows the rollups do not hold yet, so results are exact and
// equal the in-memory store's.
import type BetterSqlite3 from 'better-sqlite3';
import {
  buildStatsResult,
  INTERVAL_MS,
  mergeSeen,
  statusKey,
  VisitQueryError,
  type AgentSeen,
  type SeenQuery,
  type StatsCell,
  type StatsDimension,
  type StatsQuery,
  type StatsResult,
  type StoredVisit,
  type TimelineQuery,
  type VisitFilter,
} from '../../index.js';
import type { HeaderPairs } from './sqlite-header-pairs.js';
import { toStoredVisit, type VisitRow } from './sqlite-visit-rows.js';
import { compareText, DAY_MS, filterSql, floorTo, HOUR_MS, MINUTE_MS, NONE, isStatusQuery, segments, source, timeRange, type PreparedStatements, type Segment } from './sqlite-visit-sql.js';

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
// The (agent, path) day table has no result or referral: filters on agents and types only.
const AGENT_PATH_DAY_TABLES = new Map([
  [DAY_MS, 'visit_agent_paths_day'],
  [HOUR_MS, 'visit_agent_paths_hour'],
]);
const PATH_TABLES = new Map([[HOUR_MS, 'visit_paths_hour']]);
const STATUS_TABLES = new Map([
  [DAY_MS, 'visit_status_day'],
  [HOUR_MS, 'visit_status_hour'],
]);

const DIMENSION_COLUMN = { agent: 'agent_id', agent_type: 'agent_type', result: 'result', path: 'path', referral: 'referral', status: 'response_status_code' } as const;
// No rollup: what a status query with a path filter reads is raw rows only.
const RAW_ONLY: ReadonlyMap<number, string> = new Map();

const CURSOR = /^[1-9][0-9]{0,15}$/;

function parseCursor(parameter: string, cursor: string): number {
  const id = CURSOR.test(cursor) ? Number(cursor) : Number.NaN;
  if (!Number.isSafeInteger(id)) throw new VisitQueryError(parameter, `${JSON.stringify(cursor)} is not a visit id from this store`);
  return id;
}

// As buildStatsResult orders keys of equal totals: by key, null last.
function compareKeys(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return compareText(a, b);
}

/** What the queries read with. */
export interface VisitQueriesOptions {
  /** Decodes interned headers of rows read back. */
  readonly pairs: HeaderPairs;
  /** Prepares (once) a statement of a query shape. */
  readonly prepared: PreparedStatements;
  /** The rollup watermark: raw rows past it are counted from the table. */
  readonly watermark: () => number;
}

/** Timeline and stats reads of one open store; see `createVisitQueries`. */
export interface VisitQueries {
  /** A page of a project's visits, newest first (or oldest first after a cursor). */
  timeline(query: TimelineQuery): StoredVisit[];
  /** One visit of a project by id; undefined for none (or an id this store never issues). */
  visit(projectId: string, id: string): StoredVisit | undefined;
  /** Counts by bucket and key; call inside one read snapshot (rollups and watermark of one moment). */
  stats(query: StatsQuery): StatsResult;
  /** First and last visit times by agent; call inside one read snapshot, as stats. */
  seen(query: SeenQuery): AgentSeen[];
  /** Every stored visit of a project, oldest first (at most `limit`; -1 for all). */
  list(projectId: string, limit: number): StoredVisit[];
  /** Raw visits stored, of one project or of all. */
  count(projectId?: string): number;
}

/** The timeline and stats queries over `db`'s visit tables. */
export function createVisitQueries(db: BetterSqlite3.Database, options: VisitQueriesOptions): VisitQueries {
  const { pairs, prepared, watermark: readWatermark } = options;
  const listAll = db.prepare<[string, number], VisitRow>('SELECT * FROM visits WHERE project_id = ? ORDER BY id LIMIT ?');
  const countAll = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM visits');
  const countOf = db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM visits WHERE project_id = ?');
  const byId = db.prepare<[number, string], VisitRow>('SELECT * FROM visits WHERE id = ? AND project_id = ?');

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
    const rollup = table !== undefined;
    // Status rollups name the column `status` (0 for none); raw rows `response_status_code` (NULL).
    const column = by === 'status' && rollup ? 'status' : DIMENSION_COLUMN[by];
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
    const rows = prepared(sql).all(...params) as { bucket: number; key: string | number | null; count: number }[];
    if (by === 'status') for (const row of rows) row.key = rollup && row.key === 0 ? null : statusKey(row.key);
    else if (rollup && by !== 'path' && by !== 'result') for (const row of rows) if (row.key === NONE) row.key = null;
    return rows as StatsCell[];
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
    return readSegments(from, to, widths, tables, watermark, (segment, table, after) => countCells(projectId, by, width, segment, table, filter, keys, after));
  };

  /**
   * Reads a range as the rollups keep it: each segment from the rollup of its width (raw rows at
   * the edges), then the raw rows past the watermark inside the rolled-up span, which the rollups
   * do not hold yet (the rolled-up segments lie together between the raw edges).
   */
  const readSegments = <T>(
    from: number,
    to: number,
    widths: readonly number[],
    tables: ReadonlyMap<number, string>,
    watermark: number,
    read: (segment: Segment, table: string | undefined, after?: number) => T[],
  ): T[] => {
    const all = segments(from, to, widths);
    const parts = all.map((segment) => read(segment, segment.width === 0 ? undefined : tables.get(segment.width)));
    const rolled = all.filter((segment) => segment.width !== 0);
    if (rolled.length > 0) parts.push(read({ width: 0, from: rolled[0]!.from, to: rolled[rolled.length - 1]!.to }, undefined, watermark));
    return parts.flat();
  };

  // A cell's time clamped into its bucket. A server of visit schema 8 or older, still running on
  // the data directory during an upgrade (they took no lock), adds cells with first and last 0
  // (the columns' default): those read as the start of their bucket, the precision they had.
  const withinBucket = (column: 'first' | 'last', width: number) => `max(bucket, min(${column}, bucket + ${width - 1}))`;

  /**
   * The first and last visit times by agent of one segment: from a combined rollup's `first` and
   * `last`, or from raw rows (only those past `after` when given).
   */
  const seenCells = (projectId: string, segment: Segment, table: string | undefined, filter: VisitFilter | undefined, after?: number): AgentSeen[] => {
    const rollup = table !== undefined;
    const where = filterSql(filter, rollup);
    const range = timeRange(rollup, segment.from, segment.to, after);
    const sql = rollup
      ? `SELECT agent_id, min(${withinBucket('first', segment.width)}) AS first, max(${withinBucket('last', segment.width)}) AS last FROM ${table} WHERE project_id = ?${range.sql}${where.sql} GROUP BY agent_id`
      : `SELECT agent_id, min(time) AS first, max(time) AS last FROM ${source(undefined, false, after !== undefined)} WHERE project_id = ?${range.sql}${where.sql} GROUP BY agent_id`;
    const rows = prepared(sql).all(projectId, ...range.params, ...where.params) as { agent_id: string | null; first: number; last: number }[];
    if (rollup) for (const row of rows) if (row.agent_id === NONE) row.agent_id = null;
    return rows;
  };

  const seenNow = (query: SeenQuery): AgentSeen[] => {
    const filter = query.filter;
    const watermark = readWatermark();
    // The combined rollups have no path or status: with such a filter, raw rows (the visits kept) only.
    const tables = filter?.path !== undefined || isStatusQuery(filter) ? RAW_ONLY : DIM_TABLES;
    return mergeSeen(readSegments(query.from, query.to, [...tables.keys()], tables, watermark, (segment, table, after) => seenCells(query.projectId, segment, table, filter, after)));
  };

  const statsNow = (query: StatsQuery): StatsResult => {
    const width = INTERVAL_MS[query.interval];
    const filter = query.filter;
    const watermark = readWatermark();
    const pathFilter = filter?.path !== undefined;
    const dimFilter =
      filter !== undefined &&
      (filter.agent_id !== undefined || filter.agent_type !== undefined || filter.result !== undefined || filter.referral !== undefined || filter.has_agent !== undefined || filter.has_referral !== undefined);
    const from = floorTo(query.from, width);
    if (isStatusQuery(filter, query.by)) {
      // The status rollups have no path: by path or with a path filter, raw rows (the visits kept) only.
      const tables = pathFilter || query.by === 'path' ? RAW_ONLY : STATUS_TABLES;
      return buildStatsResult(query, countRange(query.projectId, query.by, filter, tables, from, query.to, width, watermark));
    }
    if (pathFilter || dimFilter) {
      const byDay = filter.result === undefined && filter.referral === undefined && filter.has_referral === undefined;
      const tables = pathFilter ? PATH_TABLES : query.by === 'path' ? (byDay ? AGENT_PATH_DAY_TABLES : AGENT_PATH_TABLES) : DIM_TABLES;
      return buildStatsResult(query, countRange(query.projectId, query.by, filter, tables, from, query.to, width, watermark));
    }
    // Unfiltered: a 30-day hourly chart by path would be (hours x paths) cells, most of them
    // summed into `other`. So: totals per key from the coarsest rollups, cells of the top keys
    // only, and every bucket's total from the result rollup (four keys) for `other`.
    const tables = byTables(DIMENSION_COLUMN[query.by as Exclude<StatsDimension, 'status'>]);
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

  return {
    timeline(query) {
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

    visit(projectId, id) {
      if (!CURSOR.test(id) || !Number.isSafeInteger(Number(id))) return undefined;
      const row = byId.get(Number(id), projectId);
      return row === undefined ? undefined : toStoredVisit(row, pairs);
    },
    stats: statsNow,
    seen: seenNow,
    list(projectId, limit) {
      return listAll.all(projectId, limit).map((row) => toStoredVisit(row, pairs));
    },
    count(projectId) {
      return (projectId === undefined ? countAll.get() : countOf.get(projectId))!.n;
    },
  };
}
