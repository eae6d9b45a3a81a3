// Analytics read routes built on the store's stats: status codes by agent, the crawl-to-referral
// ratio of each AI operator, and when one agent was first and last seen.
import type { AgentType } from '../catalog/types.js';
import type { Engine } from '../engine.js';
import { REFERRAL_PRODUCTS, type ReferralClass } from '../visits/referral.js';
import { bucketStart, INTERVAL_MS, MAX_STATS_BUCKETS } from '../visits/stats.js';
import { VisitQueryError, type StatsInterval, type VisitFilter, type VisitStore } from '../visits/visit-store.js';
import { problem } from './problem.js';
import { integerParam, rangeParams, readRoute, visitFilterParams } from './read-query.js';
import type { RouteTable } from './route.js';
import type { ApiResponse } from './types.js';
import { JSON_NO_STORE_HEADERS } from './security-headers.js';

/** Options of `createAnalyticsRoutes`. */
export interface AnalyticsRoutesOptions {
  readonly engine: Engine;
  readonly visits: VisitStore;
  /** Milliseconds since the epoch: default ranges, first and last seen. */
  readonly clock?: { now(): number };
}

const DAY_MS = INTERVAL_MS.day;
// How far back first and last seen look: the longest range day stats answer.
const SEEN_DAYS = MAX_STATS_BUCKETS - 1;
// Types whose agents count as an operator's AI crawling (the ratio's numerator).
const AI_TYPES: ReadonlySet<AgentType> = new Set(['AI Agent', 'AI Assistant', 'AI Coding Agent', 'AI Data Provider', 'AI Data Scraper', 'AI Search Crawler', 'Undocumented AI Agent']);

function json(value: unknown): ApiResponse {
  return { status: 200, headers: JSON_NO_STORE_HEADERS, body: JSON.stringify(value) };
}

function iso(time: number): string {
  return new Date(time).toISOString();
}

/** Where totals over [from, to) start counting: `from` floored to the finest interval that covers the range. */
function countedFrom(from: number, to: number): number {
  return bucketStart(from, finestInterval(from, to));
}

/**
 * The finest bucket width whose buckets cover [from, to) within the stats limit: stats floor
 * `from` to the width, so the finer it is, the closer the counted range is to the asked one.
 * @throws {VisitQueryError} naming `from` when even days would be too many.
 */
export function finestInterval(from: number, to: number): StatsInterval {
  for (const interval of ['minute', 'hour', 'day'] as const) {
    const width = INTERVAL_MS[interval];
    if (Math.ceil((to - Math.floor(from / width) * width) / width) <= MAX_STATS_BUCKETS) return interval;
  }
  // These routes take no interval: the range itself is what is too long.
  throw new VisitQueryError('from', `the range from ${new Date(from).toISOString()} spans more than ${MAX_STATS_BUCKETS} days, the most these totals count; choose a later from`);
}

/**
 * Creates `GET /stats/status-codes`, `GET /stats/operators` and `GET /stats/agents/{id}` (404 for
 * an id the catalog does not name and the project never saw).
 * @throws {TypeError} for a missing engine or store.
 * @example
 * createApiHandler({ ..., routes: [createAnalyticsRoutes({ engine, visits })] });
 */
export function createAnalyticsRoutes(options: AnalyticsRoutesOptions): RouteTable {
  if (typeof options?.engine?.identify !== 'function') throw new TypeError('engine must be an engine from createEngine()');
  if (typeof options.visits?.stats !== 'function') throw new TypeError('visits must be a VisitStore');
  const { engine, visits } = options;
  const catalog = engine.catalog;
  const clock = options.clock ?? { now: () => Date.now() };
  const agentName = (id: string | null) => (id === null ? null : (catalog.getAgent(id)?.name ?? null));

  /** Each key's total over [from, to) (the `limit` most frequent). */
  const totals = async (projectId: string, from: number, to: number, by: 'agent' | 'referral' | 'status', filter: VisitFilter, limit: number) => {
    const result = await visits.stats({ projectId, from, to, interval: finestInterval(from, to), by, filter, limit });
    return result.series;
  };

  return {
    '/stats/status-codes': {
      GET: readRoute(async ({ query }, projectId) => {
        const { from, to } = rangeParams(query, clock);
        const limit = integerParam(query, 'limit', { min: 1, max: 100, fallback: 10 });
        const statusLimit = integerParam(query, 'statuses', { min: 1, max: 20, fallback: 6 });
        // Agents only: status codes of what the catalog names (agent=none is not an agent).
        const filter: VisitFilter = { ...visitFilterParams(query), has_agent: true };
        const [agents, statuses] = await Promise.all([totals(projectId, from, to, 'agent', filter, limit), totals(projectId, from, to, 'status', filter, statusLimit)]);
        const columns = statuses.map((s) => s.key);
        // Each status's visits per agent: one count per (status, agent) for the agents shown.
        const perStatus = await Promise.all(
          columns.map((key) => totals(projectId, from, to, 'agent', { ...filter, status: key === null ? null : Number(key) }, 1000)),
        );
        const rows = agents.map((agent) => {
          const counts = perStatus.map((series) => series.find((s) => s.key === agent.key)?.total ?? 0);
          return {
            agent_id: agent.key,
            agent_name: agentName(agent.key),
            agent_type: agent.key === null ? null : (catalog.getAgent(agent.key)?.type ?? null),
            total: agent.total,
            counts,
            other: agent.total - counts.reduce((sum, n) => sum + n, 0),
          };
        });
        return json({ from: iso(countedFrom(from, to)), to: iso(to), statuses: columns, agents: rows });
      }),
    },
    '/stats/operators': {
      GET: readRoute(async ({ query }, projectId) => {
        const { from, to } = rangeParams(query, clock);
        // A visit whose verification failed is someone borrowing an agent's name: not its operator's crawl.
        const [agents, spoofed, referrals] = await Promise.all([
          totals(projectId, from, to, 'agent', { has_agent: true }, 1000),
          totals(projectId, from, to, 'agent', { has_agent: true, result: 'verification_failed' }, 1000),
          totals(projectId, from, to, 'referral', { has_referral: true }, 100),
        ]);
        const spoofedOf = new Map(spoofed.map((series) => [series.key, series.total]));
        type Row = { operator: string; crawled: number; referred: number; agents: { agent_id: string; agent_name: string; count: number }[]; referrals: { referral: string; name: string; count: number }[] };
        const byOperator = new Map<string, Row>();
        const row = (operator: string) => {
          let found = byOperator.get(operator);
          if (found === undefined) byOperator.set(operator, (found = { operator, crawled: 0, referred: 0, agents: [], referrals: [] }));
          return found;
        };
        // The operators of AI products, by what their products referred and their AI agents crawled.
        const aiOperators = new Set(Object.values(REFERRAL_PRODUCTS).map((product) => product.operator));
        for (const series of agents) {
          const agent = series.key === null ? undefined : catalog.getAgent(series.key);
          if (agent === undefined || !AI_TYPES.has(agent.type)) continue;
          aiOperators.add(agent.operator);
          const count = series.total - (spoofedOf.get(series.key) ?? 0);
          if (count <= 0) continue;
          const r = row(agent.operator);
          r.crawled += count;
          r.agents.push({ agent_id: agent.id, agent_name: agent.name, count });
        }
        for (const series of referrals) {
          const product = series.key === null ? undefined : REFERRAL_PRODUCTS[series.key as ReferralClass];
          if (product === undefined) continue;
          const r = row(product.operator);
          r.referred += series.total;
          r.referrals.push({ referral: series.key!, name: product.name, count: series.total });
        }
        const operators = [...byOperator.values()]
          .filter((r) => aiOperators.has(r.operator))
          .map((r) => ({ ...r, ratio: r.referred === 0 ? null : r.crawled / r.referred }))
          .sort((a, b) => b.crawled + b.referred - (a.crawled + a.referred) || a.operator.localeCompare(b.operator));
        return json({ from: iso(countedFrom(from, to)), to: iso(to), operators });
      }),
    },
    '/stats/agents/{id}': {
      GET: readRoute(async ({ params }, projectId) => {
        const agentId = params['id']!;
        const unknown = () => problem('not-found', `There is no agent ${JSON.stringify(agentId.slice(0, 64))}: the catalog does not name it and the project has no visits of it.`);
        // A catalog agent (or an unlisted one the catalog names) answers even before its first visit;
        // an id the catalog does not know answers only for the visits stored under it (an agent since
        // dropped from the catalog, unlisted agents of a catalog that no longer names them).
        const known = catalog.getAgent(agentId) !== undefined;
        const now = clock.now();
        const to = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;
        const filter: VisitFilter = { agent_id: agentId };
        const from = to - SEEN_DAYS * DAY_MS;
        const [days, seen] = await Promise.all([
          visits.stats({ projectId, from, to, interval: 'day', by: 'result', filter, limit: 4 }),
          // The exact times of its first and last visit (one row: the filter names the agent).
          visits.seen({ projectId, from, to, filter }),
        ]);
        if (!known && days.total === 0) return unknown();
        const times = seen.find((row) => row.agent_id === agentId);
        const results = Object.fromEntries(days.series.map((s) => [s.key, s.total]));
        return json({
          agent_id: agentId,
          agent_name: agentName(agentId),
          visits: days.total,
          results,
          first_seen: times === undefined ? null : iso(times.first),
          last_seen: times === undefined ? null : iso(times.last),
        });
      }),
    },
  };
}
