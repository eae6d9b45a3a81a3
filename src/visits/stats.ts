// What every visit store shares about analytics: bucket arithmetic, query validation, filters and
// turning (bucket, key, count) rows into a StatsResult, so stores differ only in how they count.
import type { AgentSeen, EnrichedVisit, SeenQuery, StatsDimension, StatsInterval, StatsQuery, StatsResult, VisitFilter } from './visit-store.js';
import { VisitQueryError } from './visit-store.js';

/** Bucket widths in milliseconds (UTC: days start at midnight UTC). */
export const INTERVAL_MS: Readonly<Record<StatsInterval, number>> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** Stats answer at most this many buckets; a wider range needs a coarser interval. */
export const MAX_STATS_BUCKETS = 10_000;
/** Stats report at most this many keys one by one. */
export const MAX_STATS_KEYS = 1_000;

/** The start of the bucket holding `time`. */
export function bucketStart(time: number, interval: StatsInterval): number {
  const width = INTERVAL_MS[interval];
  return Math.floor(time / width) * width;
}

/** A request path without its query string or fragment: the `path` stats dimension. */
export function pathWithoutQuery(path: string): string {
  // Two indexOf calls, not a regex search: this runs two or three times per stored visit.
  const query = path.indexOf('?');
  const fragment = path.indexOf('#');
  const end = query === -1 ? fragment : fragment === -1 || query < fragment ? query : fragment;
  return end === -1 ? path : path.slice(0, end);
}

/** The key a visit counts under for a stats dimension. */
export function dimensionKey(visit: EnrichedVisit, by: StatsDimension): string | null {
  switch (by) {
    case 'agent':
      return visit.agent_id;
    case 'agent_type':
      return visit.agent_type;
    case 'result':
      return visit.result;
    case 'path':
      return pathWithoutQuery(visit.request_path);
    case 'referral':
      return visit.referral;
    case 'status':
      return statusKey(visit.response_status_code);
  }
}

/** The `status` stats key of a response status code: its decimal digits, null when there is none. */
export function statusKey(status: unknown): string | null {
  return typeof status === 'number' ? String(status) : null;
}

/** A visit's status code as filters compare it: null when it was sent without one. */
function statusOf(visit: EnrichedVisit): number | null {
  return typeof visit.response_status_code === 'number' ? visit.response_status_code : null;
}

/** Whether a visit passes a filter (absent fields do not filter). */
export function matchesFilter(visit: EnrichedVisit, filter: VisitFilter | undefined): boolean {
  if (filter === undefined) return true;
  if (filter.agent_id !== undefined && visit.agent_id !== filter.agent_id) return false;
  if (filter.agent_type !== undefined && visit.agent_type !== filter.agent_type) return false;
  if (filter.result !== undefined && visit.result !== filter.result) return false;
  if (filter.referral !== undefined && visit.referral !== filter.referral) return false;
  if (filter.path !== undefined && pathWithoutQuery(visit.request_path) !== filter.path) return false;
  if (filter.status !== undefined && statusOf(visit) !== filter.status) return false;
  if (filter.has_agent !== undefined && (visit.agent_id !== null) !== filter.has_agent) return false;
  if (filter.has_referral !== undefined && (visit.referral !== null) !== filter.has_referral) return false;
  return true;
}

/**
 * Checks a stats query before any store runs it.
 * @throws {VisitQueryError} for a non-finite or empty range, too many buckets, or a bad limit.
 */
export function validateStatsQuery(query: StatsQuery): void {
  if (!Number.isFinite(query.from)) throw new VisitQueryError('from', 'from must be a time');
  if (!Number.isFinite(query.to)) throw new VisitQueryError('to', 'to must be a time');
  if (query.to <= query.from) throw new VisitQueryError('to', 'to must be later than from');
  if (!(query.interval in INTERVAL_MS)) throw new VisitQueryError('interval', 'interval must be minute, hour or day');
  const buckets = Math.ceil((query.to - bucketStart(query.from, query.interval)) / INTERVAL_MS[query.interval]);
  if (buckets > MAX_STATS_BUCKETS) {
    throw new VisitQueryError('interval', `the range holds ${buckets} ${query.interval}s; at most ${MAX_STATS_BUCKETS} buckets are answered, choose a coarser interval`);
  }
  const limit = query.limit;
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_STATS_KEYS)) {
    throw new VisitQueryError('limit', `limit must be an integer from 1 to ${MAX_STATS_KEYS}`);
  }
}

/**
 * Checks a seen query before any store runs it.
 * @throws {VisitQueryError} for a non-finite or empty range.
 */
export function validateSeenQuery(query: SeenQuery): void {
  if (!Number.isFinite(query.from)) throw new VisitQueryError('from', 'from must be a time');
  if (!Number.isFinite(query.to)) throw new VisitQueryError('to', 'to must be a time');
  if (query.to <= query.from) throw new VisitQueryError('to', 'to must be later than from');
}

/** Each agent's earliest first and latest last over rows of it (raw visits, rollup cells, segments). */
export function mergeSeen(rows: Iterable<AgentSeen>): AgentSeen[] {
  const byAgent = new Map<string | null, { -readonly [K in keyof AgentSeen]: AgentSeen[K] }>();
  for (const row of rows) {
    const found = byAgent.get(row.agent_id);
    if (found === undefined) byAgent.set(row.agent_id, { agent_id: row.agent_id, first: row.first, last: row.last });
    else {
      if (row.first < found.first) found.first = row.first;
      if (row.last > found.last) found.last = row.last;
    }
  }
  return [...byAgent.values()];
}

/** One counted cell: visits in one bucket under one key. */
export interface StatsCell {
  readonly bucket: number;
  readonly key: string | null;
  readonly count: number;
}

/**
 * Builds the answer from counted cells: the `limit` most frequent keys (ties by key) reported one
 * by one, every bucket of the range present (zeros included), the rest summed in `other`.
 */
export function buildStatsResult(query: StatsQuery, cells: Iterable<StatsCell>): StatsResult {
  const width = INTERVAL_MS[query.interval];
  const first = bucketStart(query.from, query.interval);
  const bucketCount = Math.max(0, Math.ceil((query.to - first) / width));
  const totals = new Map<string | null, number>();
  const kept: StatsCell[] = [];
  for (const cell of cells) {
    if (cell.count === 0 || cell.bucket < first || cell.bucket >= query.to) continue;
    kept.push(cell);
    totals.set(cell.key, (totals.get(cell.key) ?? 0) + cell.count);
  }
  const series = [...totals]
    .map(([key, total]) => ({ key, total }))
    .sort((a, b) => b.total - a.total || compareKeys(a.key, b.key))
    .slice(0, query.limit ?? 10);
  const column = new Map(series.map((s, i) => [s.key, i]));
  const buckets = Array.from({ length: bucketCount }, (_, i) => ({ start: first + i * width, counts: new Array<number>(series.length).fill(0), other: 0 }));
  let total = 0;
  let other = 0;
  for (const cell of kept) {
    const bucket = buckets[Math.floor((cell.bucket - first) / width)]!;
    const index = column.get(cell.key);
    if (index === undefined) {
      bucket.other += cell.count;
      other += cell.count;
    } else {
      bucket.counts[index]! += cell.count;
    }
    total += cell.count;
  }
  return { series, buckets, other, total };
}

// null (no agent, no referral) sorts last among equal totals.
function compareKeys(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}
