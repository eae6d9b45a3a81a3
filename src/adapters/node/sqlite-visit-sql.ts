// SQL pieces every SQLite visit query shares: bucket arithmetic, a time range split into the
// coarsest rollup pieces, the conditions that select a range or a filter, and a statement cache.
import type BetterSqlite3 from 'better-sqlite3';
import { INTERVAL_MS, type VisitFilter } from '../../index.js';

export const DAY_MS = INTERVAL_MS.day;
export const HOUR_MS = INTERVAL_MS.hour;
export const MINUTE_MS = INTERVAL_MS.minute;

// Rollup key columns hold '' for "no value" (a NULL in a primary key would never conflict, so
// upserts would add a row per batch instead of counting); '' is never an agent id, type or referral.
export const NONE = '';

/** `time` floored to a multiple of `width` (times before 1970 included). */
export function floorTo(time: number, width: number): number {
  return time - (((time % width) + width) % width);
}

function ceilTo(time: number, width: number): number {
  const floored = floorTo(time, width);
  return floored === time ? time : floored + width;
}

/** One piece of a time range and where to count it: a rollup of `width`, or raw rows (width 0). */
export interface Segment {
  readonly width: number;
  readonly from: number;
  readonly to: number;
}

/**
 * Splits [from, to) into the coarsest aligned pieces the widths allow (widths coarse to fine, each
 * dividing the previous), the unaligned rest going to raw rows: a 30-day range at hour interval is
 * whole days from the day rollup, whole hours at the edges, minutes, then seconds from raw rows.
 */
export function segments(from: number, to: number, widths: readonly number[], index = 0): Segment[] {
  if (from >= to) return [];
  const width = widths[index];
  if (width === undefined) return [{ width: 0, from, to }];
  const start = ceilTo(from, width);
  const end = floorTo(to, width);
  if (start >= end) return segments(from, to, widths, index + 1);
  return [...segments(from, start, widths, index + 1), { width, from: start, to: end }, ...segments(end, to, widths, index + 1)];
}

// Raw rows of a time range are read through the minute index; those past the watermark (a few
// seconds of traffic) through the id index. The top keys of a chart by agent or path: ten seeks
// of the key index, not every (hour, key) row of the range (the planner prefers the primary key,
// which spares it a sort, even when it must read every row).
/** The FROM of a query over a rollup `table`, or over raw rows when undefined (`pending`: only rows past the watermark). */
export function source(table: string | undefined, someKeys: boolean, pending: boolean): string {
  if (table === undefined) return pending ? 'visits INDEXED BY visits_by_project' : 'visits INDEXED BY visits_by_minute';
  if (someKeys && (table === 'visit_by_path_hour' || table === 'visit_by_agent_id_hour')) return `${table} INDEXED BY ${table}_by_key`;
  return table;
}

/**
 * The minute of a time as the minute index holds it: SQLite's integer division, which truncates
 * toward zero (so does Math.trunc). Times are stored as integers, so the division is integral.
 */
export function indexMinute(time: number): number {
  return Math.trunc(time / MINUTE_MS);
}

/**
 * SQL conditions selecting [from, to): on `bucket` for a rollup; for raw rows on `time`, after
 * the minutes of the index that can hold such times (stored times are integers, and truncation is
 * monotonic), or past the watermark id `after` through the id index.
 */
export function timeRange(rollup: boolean, from: number, to: number, after: number | undefined): { sql: string; params: number[] } {
  if (rollup) return { sql: ' AND bucket >= ? AND bucket < ?', params: [from, to] };
  if (after !== undefined) return { sql: ' AND id > ? AND time >= ? AND time < ?', params: [after, from, to] };
  return { sql: ' AND time / 60000 BETWEEN ? AND ? AND time >= ? AND time < ?', params: [indexMinute(Math.ceil(from)), indexMinute(Math.ceil(to) - 1), from, to] };
}

/** SQL conditions for a filter; rollups hold '' where raw rows hold NULL. */
export function filterSql(filter: VisitFilter | undefined, rollup: boolean): { sql: string; params: unknown[] } {
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
  const present = (column: string, wanted: boolean | undefined) => {
    if (wanted === undefined) return;
    if (rollup) sql += wanted ? ` AND ${column} != '${NONE}'` : ` AND ${column} = '${NONE}'`;
    else sql += wanted ? ` AND ${column} IS NOT NULL` : ` AND ${column} IS NULL`;
  };
  present('agent_id', filter.has_agent);
  present('referral', filter.has_referral);
  if (filter.status !== undefined) {
    // Only the status rollups have the column (0 for none); callers pick them for status queries.
    if (rollup) {
      sql += ' AND status = ?';
      params.push(filter.status ?? 0);
    } else {
      sql += ' AND response_status_code IS ?';
      params.push(filter.status);
    }
  }
  return { sql, params };
}

/** Whether a query is about status codes, which only the status rollups (and raw rows) hold. */
export function isStatusQuery(filter: VisitFilter | undefined, by?: string): boolean {
  return filter?.status !== undefined || by === 'status';
}

/** A statement prepared once per distinct SQL text (queries are built from a few shapes). */
export type PreparedStatements = (sql: string) => BetterSqlite3.Statement;

/** A cache of prepared statements on `db`. */
export function preparedStatements(db: BetterSqlite3.Database): PreparedStatements {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return (sql) => {
    let statement = statements.get(sql);
    if (statement === undefined) statements.set(sql, (statement = db.prepare(sql)));
    return statement;
  };
}

/** Plain string order: the tie-break of sorted query results. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
