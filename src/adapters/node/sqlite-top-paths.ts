// Top paths of the SQLite visit store: the (agent, path) pairs with the most visits in a range,
// from the hour and day (agent, path) rollups, the raw rows they lack, and per-pair totals that let
// a query over whole days stop reading once no unread pair can reach the top.
import type BetterSqlite3 from 'better-sqlite3';
import type { AgentType, PathCount, PathCountsQuery } from '../../index.js';
import { compareText, DAY_MS, filterSql, HOUR_MS, isStatusQuery, NONE, segments, source, timeRange, type PreparedStatements, type Segment } from './sqlite-visit-sql.js';

// Pair totals from which visit_agent_path_totals_by_count indexes a pair (the index's WHERE clause).
const INDEXED_TOTAL = 16;

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

/** What the top-paths query reads with. */
export interface TopPathsOptions {
  /** Prepares (once) a statement of a query shape. */
  readonly prepared: PreparedStatements;
  /** The rollup watermark: raw rows past it are counted from the table. */
  readonly watermark: () => number;
}

/**
 * The top-paths query over a store's tables: call it inside one read snapshot (rollups and
 * watermark of one moment).
 */
export function createTopPaths(options: TopPathsOptions): (query: PathCountsQuery) => PathCount[] {
  const { prepared, watermark: readWatermark } = options;
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
    if (query.agentsOnly === true || filter?.has_agent === true) sql += " AND agent_id != ''";
    if (filter?.has_agent === false) sql += " AND agent_id = ''";
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
    const filter = query.filter;
    // The day rollup has no result or referral columns: filters on those read hours only. No
    // (agent, path) rollup has status codes: a status filter reads raw rows only.
    const byDay = filter?.result === undefined && filter?.referral === undefined && filter?.has_referral === undefined;
    const all = segments(query.from, query.to, isStatusQuery(filter) ? [] : byDay ? [DAY_MS, HOUR_MS] : [HOUR_MS]);
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

  return pathCountsNow;
}
