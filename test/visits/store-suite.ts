// The VisitStore contract as one vitest suite every store runs (memory, SQLite, ClickHouse): append,
// timeline paging and filters, cursors, project isolation, stats, pathCounts and seen on a generated
// data set whose answers the suite works out itself, first and last seen to the millisecond through
// the API, and subscribe/unsubscribe.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createApiHandler,
  createEngine,
  createMemoryProjectStore,
  summarizeProjectVisits,
  TEST_AGENT_ID,
  VisitQueryError,
  type AgentSeen,
  type AgentType,
  type EnrichedVisit,
  type IdentificationResult,
  type PathCount,
  type PathCountsQuery,
  type ReferralClass,
  type SeenQuery,
  type StatsInterval,
  type StatsQuery,
  type StatsResult,
  type StoredVisit,
  type VisitFilter,
  type VisitStore,
} from '../../src/index.js';
import { prng as random } from '../helpers/prng.js';

/** A store under test and how to release it. */
export interface OpenedStore {
  readonly store: VisitStore;
  /** Brings the store's pre-aggregated counts up to date (SQLite's rollup pass, ClickHouse's merges); absent when it keeps none. */
  catchUp?(): Promise<void>;
  close(): Promise<void>;
}

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const WIDTH: Record<StatsInterval, number> = { minute: MINUTE, hour: HOUR, day: DAY };
/** Midnight UTC, 1 March 2026: day 0 of the generated data set. */
export const BASE = Date.UTC(2026, 2, 1);

/** An enriched visit with plain defaults (a browser on `/`); `over` sets any field. */
export function makeVisit(over: Partial<EnrichedVisit> = {}): EnrichedVisit {
  const time = over.time ?? BASE;
  return {
    request_path: '/',
    request_method: 'GET',
    request_headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0' },
    received: time + 250,
    time,
    agent_id: null,
    agent_type: null,
    result: 'unknown_agent',
    client_ip: '203.0.113.7',
    referral: null,
    ...over,
  };
}


interface Group {
  readonly agent_id: string | null;
  readonly agent_type: AgentType | null;
  readonly result: IdentificationResult;
  readonly referral: ReferralClass | null;
  readonly count: number;
}

// Fixed counts per (agent, type, result, referral): the totals below follow by construction.
const GROUPS: readonly Group[] = [
  { agent_id: 'gptbot', agent_type: 'AI Data Scraper', result: 'verified', referral: null, count: 700 },
  { agent_id: 'gptbot', agent_type: 'AI Data Scraper', result: 'verification_failed', referral: null, count: 50 },
  { agent_id: 'claudebot', agent_type: 'AI Data Scraper', result: 'not_verifiable', referral: null, count: 500 },
  { agent_id: 'googlebot', agent_type: 'Search Engine Crawler', result: 'verified', referral: null, count: 400 },
  { agent_id: 'perplexitybot', agent_type: 'AI Search Crawler', result: 'not_verifiable', referral: null, count: 300 },
  { agent_id: 'chatgpt-user', agent_type: 'AI Assistant', result: 'verified', referral: null, count: 150 },
  { agent_id: null, agent_type: null, result: 'unknown_agent', referral: 'chatgpt', count: 250 },
  { agent_id: null, agent_type: null, result: 'unknown_agent', referral: 'perplexity', count: 120 },
  { agent_id: null, agent_type: null, result: 'unknown_agent', referral: 'claude', count: 30 },
  { agent_id: null, agent_type: null, result: 'unknown_agent', referral: null, count: 1000 },
];
const KNOWN_TOTALS = {
  agent: { gptbot: 750, claudebot: 500, googlebot: 400, perplexitybot: 300, 'chatgpt-user': 150, null: 1400 },
  agent_type: { 'AI Data Scraper': 1250, 'Search Engine Crawler': 400, 'AI Search Crawler': 300, 'AI Assistant': 150, null: 1400 },
  result: { verified: 1250, not_verifiable: 800, verification_failed: 50, unknown_agent: 1400 },
  referral: { chatgpt: 250, perplexity: 120, claude: 30, null: 3100 },
} as const;
const PATHS = ['/', '/docs', '/docs?utm_source=chatgpt.com', '/blog/a', '/blog/a?page=2', '/pricing', '/private/x', '/robots.txt'];
const DAYS = 4;

/**
 * The generated data set: 3,500 visits over 4 days (times to the millisecond, random order), a few
 * on exact bucket edges, paths cycling with a seeded offset.
 */
export function generateVisits(): EnrichedVisit[] {
  const next = random(0x5eed);
  const visits: EnrichedVisit[] = [];
  for (const group of GROUPS) {
    const offset = Math.floor(next() * PATHS.length);
    for (let i = 0; i < group.count; i++) {
      // One visit in 50 lands exactly on an hour (some of them on a day): the [from, to) edges.
      const time = i % 50 === 0 ? BASE + Math.floor(next() * DAYS * 24) * HOUR : BASE + Math.floor(next() * DAYS * DAY);
      visits.push(
        makeVisit({
          agent_id: group.agent_id,
          agent_type: group.agent_type,
          result: group.result,
          referral: group.referral,
          request_path: PATHS[(offset + i * (i % 3 === 0 ? 1 : 3)) % PATHS.length]!,
          time,
          received: time + 1000,
          ...(i % 7 === 0 ? { response_status_code: 200 + (i % 3) * 100, response_duration_in_milliseconds: i % 40 } : {}),
        }),
      );
    }
  }
  // Deterministic shuffle, so append order is not time order.
  for (let i = visits.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [visits[i], visits[j]] = [visits[j]!, visits[i]!];
  }
  return visits;
}

// --- The oracle: counts worked out here, independently of src/visits/stats.ts ---

function stripQuery(path: string): string {
  const cut = path.search(/[?#]/);
  return cut === -1 ? path : path.slice(0, cut);
}

function passes(visit: EnrichedVisit, filter: VisitFilter = {}): boolean {
  return (
    (filter.agent_id === undefined || visit.agent_id === filter.agent_id) &&
    (filter.agent_type === undefined || visit.agent_type === filter.agent_type) &&
    (filter.result === undefined || visit.result === filter.result) &&
    (filter.referral === undefined || visit.referral === filter.referral) &&
    (filter.path === undefined || stripQuery(visit.request_path) === filter.path) &&
    (filter.status === undefined || (visit.response_status_code ?? null) === filter.status) &&
    (filter.has_agent === undefined || (visit.agent_id !== null) === filter.has_agent) &&
    (filter.has_referral === undefined || (visit.referral !== null) === filter.has_referral)
  );
}

function keyOf(visit: EnrichedVisit, by: StatsQuery['by']): string | null {
  if (by === 'status') return visit.response_status_code === undefined ? null : String(visit.response_status_code);
  return by === 'agent' ? visit.agent_id : by === 'path' ? stripQuery(visit.request_path) : visit[by];
}

/** What `stats` must answer for `query` over `visits`. */
export function expectedStats(visits: readonly EnrichedVisit[], query: StatsQuery): StatsResult {
  const width = WIDTH[query.interval];
  const first = Math.floor(query.from / width) * width;
  const inRange = visits.filter((v) => v.time >= first && v.time < query.to && passes(v, query.filter));
  const totals = new Map<string | null, number>();
  for (const v of inRange) totals.set(keyOf(v, query.by), (totals.get(keyOf(v, query.by)) ?? 0) + 1);
  const series = [...totals.entries()]
    .sort(([ka, a], [kb, b]) => (a !== b ? b - a : ka === kb ? 0 : ka === null ? 1 : kb === null ? -1 : ka < kb ? -1 : 1))
    .slice(0, query.limit ?? 10)
    .map(([key, total]) => ({ key, total }));
  const buckets: { start: number; counts: number[]; other: number }[] = [];
  for (let start = first; start < query.to; start += width) buckets.push({ start, counts: series.map(() => 0), other: 0 });
  for (const v of inRange) {
    const bucket = buckets[Math.floor((v.time - first) / width)]!;
    const column = series.findIndex((s) => s.key === keyOf(v, query.by));
    if (column === -1) bucket.other++;
    else bucket.counts[column]!++;
  }
  const reported = series.reduce((a, s) => a + s.total, 0);
  return { series, buckets, other: inRange.length - reported, total: inRange.length };
}

/** What `pathCounts` must answer for `query` over `visits`. */
export function expectedPathCounts(visits: readonly EnrichedVisit[], query: Omit<PathCountsQuery, 'projectId'>): PathCount[] {
  const rows = new Map<string, { agent_id: string | null; agent_type: AgentType | null; path: string; count: number; last: number }>();
  for (const v of visits) {
    if (v.time < query.from || v.time >= query.to || !passes(v, query.filter) || (query.agentsOnly === true && v.agent_id === null)) continue;
    const key = `${v.agent_id}\n${v.request_path}`;
    const row = rows.get(key) ?? { agent_id: v.agent_id, agent_type: v.agent_type, path: v.request_path, count: 0, last: -Infinity };
    row.count++;
    row.last = Math.max(row.last, v.time);
    rows.set(key, row);
  }
  const text = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...rows.values()].sort((a, b) => b.count - a.count || text(a.agent_id ?? '', b.agent_id ?? '') || text(a.path, b.path)).slice(0, query.limit ?? 1000);
}

/** What `seen` must answer for `query` over `visits`, ordered by agent (null last) as `sortSeen` orders an answer. */
export function expectedSeen(visits: readonly EnrichedVisit[], query: Omit<SeenQuery, 'projectId'>): AgentSeen[] {
  const rows = new Map<string | null, AgentSeen>();
  for (const v of visits) {
    if (v.time < query.from || v.time >= query.to || !passes(v, query.filter)) continue;
    const row = rows.get(v.agent_id);
    rows.set(v.agent_id, { agent_id: v.agent_id, first: Math.min(row?.first ?? Infinity, v.time), last: Math.max(row?.last ?? -Infinity, v.time) });
  }
  return sortSeen([...rows.values()]);
}

/** A `seen` answer (in no set order) by agent id, null last. */
export function sortSeen(rows: readonly AgentSeen[]): AgentSeen[] {
  return [...rows].sort((a, b) => (a.agent_id === b.agent_id ? 0 : a.agent_id === null ? 1 : b.agent_id === null ? -1 : a.agent_id < b.agent_id ? -1 : 1));
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 3000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until a store with up-to-a-second read delay shows `count` visits of the project. */
async function readable(store: VisitStore, projectId: string, count: number): Promise<void> {
  await eventually(
    () => store.stats({ projectId, from: Date.UTC(2020, 0, 1), to: Date.UTC(2030, 0, 1), interval: 'day', by: 'result' }),
    (result) => result.total >= count,
  );
}

let unique = 0;
function projectId(name: string): string {
  return `prj_suite_${name}_${process.pid}_${Date.now().toString(36)}_${unique++}`;
}

/**
 * Registers the VisitStore contract suite for one store. `open` is called once for the suite;
 * every test writes to projects of its own, so stores need not be emptied between tests.
 */
export function describeVisitStore(name: string, open: () => Promise<OpenedStore>): void {
  describe(`VisitStore contract: ${name}`, () => {
    let opened: OpenedStore;
    let store: VisitStore;
    beforeAll(async () => {
      opened = await open();
      store = opened.store;
    });
    afterAll(async () => {
      await opened?.close();
    });

    describe('append and timeline', () => {
      it('returns stored visits with unique ids in input order, each equal to what was sent', async () => {
        const p = projectId('append');
        const sent = [
          makeVisit({ request_path: '/a', time: BASE + 1 }),
          makeVisit({
            request_path: '/b?q=1',
            time: BASE + 2,
            agent_id: 'gptbot',
            agent_type: 'AI Data Scraper',
            result: 'verified',
            client_ip_header: 'x-forwarded-for',
            // Every check with its reason is stored with the visit (the dashboard's visit detail).
            verification: {
              method: 'ip-ranges',
              checks: [
                { method: 'web-bot-auth', outcome: 'inconclusive', reason: 'key-directory-unavailable' },
                { method: 'ip-ranges', outcome: 'pass', reason: 'ip-in-range' },
              ],
            },
            created: new Date(BASE + 2).toISOString(),
            response_status_code: 404,
            response_headers: { 'content-type': 'text/html' },
            response_duration_in_milliseconds: 12.5,
            is_blocked: true,
            // The access policy's decision (agentwarden's middleware).
            decision: { rule: 'deny-verification-failed', action: 'deny', report_only: false },
            mcp_request_method: 'tools/call',
            mcp_response_error_code: -32601,
            acp_response_body: { id: 'cs_1', line_items: [{ quantity: 2 }], nested: { ok: true } },
          }),
          makeVisit({ request_path: '/c', time: BASE + 3, client_ip: null, referral: 'perplexity', is_blocked: false, decision: { rule: 'deny-agent-type', action: 'deny', report_only: true } }),
        ];
        const stored = await store.append(p, sent);
        expect(stored).toHaveLength(3);
        expect(stored.map(({ id: _id, project_id: _p, ...visit }) => visit)).toEqual(sent);
        expect(stored.every((v) => v.project_id === p && typeof v.id === 'string' && v.id !== '')).toBe(true);
        expect(new Set(stored.map((v) => v.id)).size).toBe(3);
        const more = await store.append(p, [makeVisit({ request_path: '/d' })]);
        expect(stored.map((v) => v.id)).not.toContain(more[0]!.id);
        expect(await store.append(p, [])).toEqual([]);
        await readable(store, p, 4);
        // Newest first, each read back exactly as append returned it.
        expect(await store.timeline({ projectId: p, limit: 10 })).toEqual([...stored, ...more].reverse());
      });

      it('pages back with `before`, catches up with `after` (oldest first), honours `limit`', async () => {
        const p = projectId('paging');
        const stored: StoredVisit[] = [];
        for (let i = 0; i < 4; i++) stored.push(...(await store.append(p, Array.from({ length: 5 }, (_, j) => makeVisit({ request_path: `/${i * 5 + j}`, time: BASE + i * 5 + j })))));
        await readable(store, p, 20);
        const newestFirst = [...stored].reverse();
        const pages: StoredVisit[][] = [];
        let before: string | undefined;
        for (;;) {
          const page = await store.timeline({ projectId: p, limit: 6, ...(before === undefined ? {} : { before }) });
          if (page.length === 0) break;
          pages.push([...page]);
          before = page[page.length - 1]!.id;
        }
        expect(pages.map((page) => page.length)).toEqual([6, 6, 6, 2]);
        expect(pages.flat()).toEqual(newestFirst);
        expect(await store.timeline({ projectId: p, limit: 1 })).toEqual([stored[19]]);

        const caughtUp = await store.timeline({ projectId: p, limit: 4, after: stored[9]!.id });
        expect(caughtUp).toEqual(stored.slice(10, 14));
        expect(await store.timeline({ projectId: p, limit: 100, after: stored[19]!.id })).toEqual([]);
        expect(await store.timeline({ projectId: p, limit: 100, after: stored[9]!.id, before: stored[12]!.id })).toEqual(stored.slice(10, 12));
      });

      it('filters the timeline by every field, null meaning "none", path without its query string', async () => {
        const p = projectId('filters');
        const visits = generateVisits().slice(0, 400);
        const stored = await store.append(p, visits);
        await readable(store, p, 400);
        const filters: VisitFilter[] = [
          { agent_id: 'gptbot' },
          { agent_id: null },
          { agent_type: 'AI Data Scraper' },
          { agent_type: null },
          { result: 'verified' },
          { result: 'unknown_agent' },
          { referral: 'chatgpt' },
          { referral: null },
          { path: '/docs' },
          { path: '/blog/a' },
          { agent_id: null, referral: 'chatgpt', path: '/docs' },
          { agent_id: 'no-such-agent' },
          { status: 200 },
          { status: null },
          { has_agent: true },
          { has_agent: false },
          { has_referral: true },
          { has_referral: true, path: '/docs' },
          { status: 400, agent_id: 'gptbot' },
        ];
        for (const filter of filters) {
          const expected = stored.filter((v) => passes(v, filter)).reverse();
          expect(await store.timeline({ projectId: p, limit: 1000, filter }), JSON.stringify(filter)).toEqual(expected);
          // Paging under a filter skips what the filter leaves out.
          if (expected.length > 3) {
            expect(await store.timeline({ projectId: p, limit: 2, filter, before: expected[1]!.id }), JSON.stringify(filter)).toEqual(expected.slice(2, 4));
          }
        }
        // `/docs` matches `/docs?utm_source=...` but never `/docs/` or `/docsx`.
        expect(stored.some((v) => v.request_path === '/docs?utm_source=chatgpt.com')).toBe(true);
      });

      it('finds one visit by id within its project only; an id it never issued finds nothing', async () => {
        const p = projectId('one');
        const [first, second] = await store.append(p, [makeVisit({ request_path: '/one', response_status_code: 404 }), makeVisit({ request_path: '/two' })]);
        await readable(store, p, 2);
        expect(await store.getVisit(p, first!.id)).toEqual(first);
        expect(await store.getVisit(p, second!.id)).toEqual(second);
        expect(await store.getVisit(projectId('other'), first!.id)).toBeUndefined();
        for (const id of ['', 'not an id', '-1', '1.5', '1e3', '99999999999999999999', '💥', "1' OR '1'='1"]) expect(await store.getVisit(p, id), id).toBeUndefined();
      });

      it('rejects a cursor it did not issue with a VisitQueryError naming the parameter', async () => {
        const p = projectId('cursor');
        for (const cursor of ['', 'not a cursor!', '-1', '1.5', '1e3', '💥']) {
          for (const parameter of ['before', 'after'] as const) {
            const error = await store.timeline({ projectId: p, limit: 10, [parameter]: cursor }).then(
              () => undefined,
              (e: unknown) => e,
            );
            expect(error, `${parameter}=${JSON.stringify(cursor)}`).toBeInstanceOf(VisitQueryError);
            expect((error as VisitQueryError).parameter).toBe(parameter);
          }
        }
      });

      it('rejects a page size outside 1 to 1,000 with a VisitQueryError naming limit', async () => {
        for (const limit of [0, -1, 1.5, 1001, Number.NaN]) {
          const error = await store.timeline({ projectId: projectId('limit'), limit }).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error, String(limit)).toBeInstanceOf(VisitQueryError);
          expect((error as VisitQueryError).parameter).toBe('limit');
        }
      });

      it('keeps projects apart in every read', async () => {
        const a = projectId('iso_a');
        const b = projectId('iso_b');
        const storedA = await store.append(a, [makeVisit({ request_path: '/only-a', agent_id: 'gptbot', agent_type: 'AI Data Scraper', result: 'verified' })]);
        const storedB = await store.append(b, [makeVisit({ request_path: '/only-b' }), makeVisit({ request_path: '/only-b', time: BASE + 5 })]);
        await readable(store, a, 1);
        await readable(store, b, 2);
        expect(await store.timeline({ projectId: a, limit: 100 })).toEqual(storedA);
        expect(await store.timeline({ projectId: b, limit: 100 })).toEqual([...storedB].reverse());
        expect(await store.timeline({ projectId: projectId('iso_none'), limit: 100 })).toEqual([]);
        // A cursor issued for another project's visit pages only this project's visits.
        expect(await store.timeline({ projectId: a, limit: 100, before: storedB[1]!.id })).toEqual(storedA);
        const statsA = await store.stats({ projectId: a, from: BASE, to: BASE + DAY, interval: 'day', by: 'path' });
        expect(statsA.series).toEqual([{ key: '/only-a', total: 1 }]);
        expect(await store.pathCounts({ projectId: b, from: BASE, to: BASE + DAY })).toEqual([{ agent_id: null, agent_type: null, path: '/only-b', count: 2, last: BASE + 5 }]);
        expect(await store.seen({ projectId: a, from: BASE, to: BASE + DAY })).toEqual([{ agent_id: 'gptbot', first: BASE, last: BASE }]);
        expect(await store.seen({ projectId: b, from: BASE, to: BASE + DAY })).toEqual([{ agent_id: null, first: BASE, last: BASE + 5 }]);
      });
    });

    describe('stats and pathCounts over a generated data set', () => {
      const p = projectId('generated');
      const visits = generateVisits();
      const start = BASE;
      const end = BASE + DAYS * DAY;
      beforeAll(async () => {
        for (let i = 0; i < visits.length; i += 500) await store.append(p, visits.slice(i, i + 500));
        await readable(store, p, visits.length);
      });

      it('holds the totals the generator was built with, for every dimension', async () => {
        for (const [by, totals] of Object.entries(KNOWN_TOTALS) as [keyof typeof KNOWN_TOTALS, Record<string, number>][]) {
          const result = await store.stats({ projectId: p, from: start, to: end, interval: 'day', by, limit: 1000 });
          expect(result.total).toBe(3500);
          expect(result.other).toBe(0);
          expect(Object.fromEntries(result.series.map((s) => [String(s.key), s.total]))).toEqual(totals);
        }
      });

      it('answers every dimension at every interval exactly, over aligned and unaligned ranges', async () => {
        const ranges: [number, number][] = [
          [start, end],
          // Unaligned: from is floored to the interval, `to` cuts mid-bucket (to the millisecond).
          [start + 5 * HOUR + 17 * MINUTE + 3_001, start + 2 * DAY + 7 * HOUR + 5 * MINUTE + 11_017],
          [start + DAY + 30 * MINUTE, start + DAY + 3 * HOUR],
        ];
        for (const by of ['agent', 'agent_type', 'result', 'path', 'referral', 'status'] as const) {
          for (const interval of ['minute', 'hour', 'day'] as const) {
            for (const [from, to] of ranges) {
              const query: StatsQuery = { projectId: p, from, to, interval, by };
              const result = await store.stats(query);
              expect(result, JSON.stringify({ by, interval, from, to })).toEqual(expectedStats(visits, query));
            }
          }
        }
      });

      it('applies every filter, alone and together, to every dimension', async () => {
        const filters: VisitFilter[] = [
          { agent_id: 'gptbot' },
          { agent_id: null },
          { agent_type: 'AI Data Scraper' },
          { agent_type: null },
          { result: 'verification_failed' },
          { referral: 'chatgpt' },
          { referral: null },
          { path: '/docs' },
          { path: '/blog/a', agent_id: null },
          { result: 'verified', agent_type: 'Search Engine Crawler', path: '/' },
          { status: 200 },
          { status: null, agent_type: 'AI Data Scraper' },
          { has_agent: true },
          { has_agent: false, path: '/docs' },
          { has_referral: true },
          { has_referral: false, result: 'verified' },
        ];
        for (const filter of filters) {
          for (const by of ['agent', 'path', 'referral', 'status'] as const) {
            for (const [interval, from, to] of [
              ['hour', start, end],
              ['day', start + 3 * HOUR, end - 1],
              ['minute', start + DAY, start + DAY + 6 * HOUR + 30_000],
            ] as const) {
              const query: StatsQuery = { projectId: p, from, to, interval, by, filter };
              expect(await store.stats(query), JSON.stringify({ filter, by, interval })).toEqual(expectedStats(visits, query));
            }
          }
        }
      });

      it('finds the exact first and last visit of each agent, over aligned and unaligned ranges, with every filter', async () => {
        const ranges: [number, number][] = [
          [start, end],
          // Whole days, then whole minutes (what the projects list and agent page ask).
          [start - 10 * DAY, start + 2 * DAY + 13 * HOUR + 7 * MINUTE],
          // To the millisecond at both ends.
          [start + 5 * HOUR + 17 * MINUTE + 3_001, start + 2 * DAY + 7 * HOUR + 5 * MINUTE + 11_017],
          [start + DAY + 30 * MINUTE, start + DAY + 3 * HOUR],
        ];
        const filters: (VisitFilter | undefined)[] = [
          undefined,
          { agent_id: 'gptbot' },
          { agent_id: null },
          { agent_type: 'AI Data Scraper', result: 'verification_failed' },
          { referral: 'chatgpt' },
          { has_agent: true },
          { has_referral: false, result: 'verified' },
          { path: '/docs' },
          { status: 200 },
          { status: null, agent_type: 'AI Data Scraper' },
        ];
        for (const [from, to] of ranges) {
          for (const filter of filters) {
            const query = { from, to, ...(filter === undefined ? {} : { filter }) };
            expect(sortSeen(await store.seen({ projectId: p, ...query })), JSON.stringify(query)).toEqual(expectedSeen(visits, query));
          }
        }
        expect(await store.seen({ projectId: p, from: end, to: end + DAY })).toEqual([]);
        await expect(store.seen({ projectId: p, from: end, to: end })).rejects.toBeInstanceOf(VisitQueryError);
        await expect(store.seen({ projectId: p, from: Number.NaN, to: end })).rejects.toBeInstanceOf(VisitQueryError);
      });

      it('reports the `limit` most frequent keys and adds up the rest in `other`', async () => {
        for (const by of ['agent', 'path', 'agent_type'] as const) {
          const query: StatsQuery = { projectId: p, from: start, to: end, interval: 'hour', by, limit: 2 };
          const result = await store.stats(query);
          expect(result).toEqual(expectedStats(visits, query));
          expect(result.series).toHaveLength(2);
          expect(result.other).toBe(3500 - result.series[0]!.total - result.series[1]!.total);
          expect(result.buckets.reduce((sum, b) => sum + b.other, 0)).toBe(result.other);
        }
        // Unaligned ranges at every interval: `other` per bucket down to the raw-row edges.
        for (const by of ['agent', 'path', 'referral', 'result'] as const) {
          for (const interval of ['minute', 'hour', 'day'] as const) {
            const query: StatsQuery = { projectId: p, from: start + DAY + 7 * MINUTE + 5_000, to: start + 3 * DAY + 2 * HOUR + 11 * MINUTE + 42_042, interval, by, limit: 2 };
            expect(await store.stats(query), JSON.stringify({ by, interval })).toEqual(expectedStats(visits, query));
          }
        }
        const agents = await store.stats({ projectId: p, from: start, to: end, interval: 'day', by: 'agent', limit: 1 });
        expect(agents.series).toEqual([{ key: null, total: 1400 }]);
        expect(agents.other).toBe(2100);
      });

      it('counts [from, to): a visit at `to` is out, one at the floored `from` is in', async () => {
        const atHour = visits.filter((v) => v.time % HOUR === 0);
        expect(atHour.length).toBeGreaterThan(20);
        const edge = atHour[0]!.time;
        for (const interval of ['minute', 'hour'] as const) {
          const upTo = await store.stats({ projectId: p, from: edge - 2 * HOUR, to: edge, interval, by: 'result' });
          const from = await store.stats({ projectId: p, from: edge, to: edge + 2 * HOUR, interval, by: 'result' });
          const fromMid = await store.stats({ projectId: p, from: edge + 59_999, to: edge + 2 * HOUR, interval: 'minute', by: 'result' });
          const at = visits.filter((v) => v.time === edge).length;
          const expectedUpTo = visits.filter((v) => v.time >= edge - 2 * HOUR && v.time < edge).length;
          expect(upTo.total).toBe(expectedUpTo);
          expect(from.total).toBe(visits.filter((v) => v.time >= edge && v.time < edge + 2 * HOUR).length);
          expect(from.buckets[0]!.start).toBe(edge);
          // from = edge + 59.999 s floors to the minute starting at edge: the visits at edge count.
          expect(fromMid.total).toBe(from.total);
          expect(at).toBeGreaterThan(0);
        }
        const lastMs = await store.stats({ projectId: p, from: edge - HOUR, to: edge + 1, interval: 'hour', by: 'agent' });
        expect(lastMs.buckets.map((b) => b.start)).toEqual([edge - HOUR, edge]);
        expect(lastMs.buckets[1]!.counts.reduce((a, b) => a + b, lastMs.buckets[1]!.other)).toBe(visits.filter((v) => v.time === edge).length);
      });

      it('answers every bucket of the range, zeros included, oldest first', async () => {
        const q = projectId('dense');
        await store.append(q, [makeVisit({ time: BASE + 10 }), makeVisit({ time: BASE + 2 * DAY + 5, agent_id: 'gptbot', agent_type: 'AI Data Scraper', result: 'verified' })]);
        await readable(store, q, 2);
        const result = await store.stats({ projectId: q, from: BASE, to: BASE + 4 * DAY, interval: 'day', by: 'agent' });
        expect(result).toEqual({
          series: [
            { key: 'gptbot', total: 1 },
            { key: null, total: 1 },
          ],
          buckets: [
            { start: BASE, counts: [0, 1], other: 0 },
            { start: BASE + DAY, counts: [0, 0], other: 0 },
            { start: BASE + 2 * DAY, counts: [1, 0], other: 0 },
            { start: BASE + 3 * DAY, counts: [0, 0], other: 0 },
          ],
          other: 0,
          total: 2,
        });
        const empty = await store.stats({ projectId: q, from: BASE + 10 * DAY, to: BASE + 10 * DAY + 3 * HOUR, interval: 'hour', by: 'path' });
        expect(empty).toEqual({ series: [], buckets: [0, 1, 2].map((i) => ({ start: BASE + 10 * DAY + i * HOUR, counts: [], other: 0 })), other: 0, total: 0 });
      });

      it('rejects a query it cannot answer with a VisitQueryError naming the field', async () => {
        const cases: [Partial<StatsQuery>, string][] = [
          [{ to: start }, 'to'],
          [{ from: Number.NaN }, 'from'],
          [{ interval: 'minute', to: start + 30 * DAY }, 'interval'],
          [{ limit: 0 }, 'limit'],
        ];
        for (const [change, parameter] of cases) {
          const error = await store.stats({ projectId: p, from: start, to: end, interval: 'day', by: 'agent', ...change }).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error).toBeInstanceOf(VisitQueryError);
          expect((error as VisitQueryError).parameter).toBe(parameter);
        }
      });

      it('counts paths per agent: count desc, then agent_id, then path; limit, agentsOnly, filters, last', async () => {
        const queries: Omit<PathCountsQuery, 'projectId'>[] = [
          { from: start, to: end },
          { from: start, to: end, limit: 5 },
          { from: start, to: end, agentsOnly: true },
          { from: start + 7 * HOUR + 13_001, to: start + 2 * DAY + 3 * MINUTE },
          { from: start, to: end, filter: { agent_type: 'AI Data Scraper' } },
          { from: start, to: end, filter: { path: '/docs' } },
          { from: start, to: end, filter: { referral: 'chatgpt' } },
          { from: start, to: end, filter: { result: 'verified' }, agentsOnly: true, limit: 3 },
          { from: start + DAY, to: start + DAY + 1 },
          { from: start, to: end, filter: { status: 200 } },
          { from: start + 5 * HOUR, to: end, filter: { status: null, agent_type: 'AI Data Scraper' }, agentsOnly: true },
          { from: start, to: end, filter: { has_agent: true }, limit: 7 },
          { from: start, to: end, filter: { has_agent: false } },
          { from: start, to: end, filter: { has_referral: true } },
        ];
        for (const query of queries) {
          const result = await store.pathCounts({ projectId: p, ...query });
          expect(result, JSON.stringify(query)).toEqual(expectedPathCounts(visits, query));
        }
        const all = await store.pathCounts({ projectId: p, from: start, to: end });
        // Paths keep their query strings here (robots rules match them), unlike the path dimension.
        expect(all.some((row) => row.path === '/blog/a?page=2')).toBe(true);
        expect(all.reduce((sum, row) => sum + row.count, 0)).toBe(3500);
      });
    });

    describe('appendOnce (idempotency keys)', () => {
      const batch = (key: string, fingerprint = 'f1', response = '{"accepted":2,"rejected":[]}') => ({ key, fingerprint, response });
      const paths = async (p: string) => (await store.timeline({ projectId: p, limit: 100 })).map((visit) => visit.request_path).sort();

      it('stores a batch once per key: a repeat is answered with the first record and stores nothing', async () => {
        expect(typeof store.appendOnce).toBe('function');
        const p = projectId('once');
        const sent = [makeVisit({ request_path: '/once/1' }), makeVisit({ request_path: '/once/2' })];
        const first = await store.appendOnce!(p, sent, batch('k-1'));
        expect(first.outcome).toBe('stored');
        expect(first.outcome === 'stored' && first.visits.map(({ id: _id, project_id: _p, ...visit }) => visit)).toEqual(sent);
        // The repeat carries other visits (as a retry enriched again would): none of them is stored.
        const again = await store.appendOnce!(p, [makeVisit({ request_path: '/once/other' })], batch('k-1', 'f2', '{"other":true}'));
        expect(again).toEqual({ outcome: 'replayed', record: { fingerprint: 'f1', response: '{"accepted":2,"rejected":[]}' } });
        expect(await paths(p)).toEqual(['/once/1', '/once/2']);
        // Another key is another batch.
        expect((await store.appendOnce!(p, [makeVisit({ request_path: '/once/3' })], batch('k-2'))).outcome).toBe('stored');
        expect(await paths(p)).toEqual(['/once/1', '/once/2', '/once/3']);
      });

      it('scopes keys to the project', async () => {
        const a = projectId('once_a');
        const b = projectId('once_b');
        expect((await store.appendOnce!(a, [makeVisit({ request_path: '/a' })], batch('shared'))).outcome).toBe('stored');
        expect((await store.appendOnce!(b, [makeVisit({ request_path: '/b' })], batch('shared', 'fb'))).outcome).toBe('stored');
        expect(await paths(a)).toEqual(['/a']);
        expect(await paths(b)).toEqual(['/b']);
      });

      it('records the key of a batch with no visits', async () => {
        const p = projectId('once_empty');
        expect(await store.appendOnce!(p, [], batch('empty', 'fe', '{"accepted":0,"rejected":[]}'))).toEqual({ outcome: 'stored', visits: [] });
        expect(await store.appendOnce!(p, [makeVisit()], batch('empty', 'fx'))).toEqual({ outcome: 'replayed', record: { fingerprint: 'fe', response: '{"accepted":0,"rejected":[]}' } });
        expect(await paths(p)).toEqual([]);
      });

      it('stores concurrent appends of one key once; the others are replayed or told to retry', async () => {
        const p = projectId('once_race');
        const results = await Promise.all(Array.from({ length: 6 }, (_, i) => store.appendOnce!(p, [makeVisit({ request_path: `/race/${i}` })], batch('race', `f${i}`))));
        const stored = results.filter((result) => result.outcome === 'stored');
        expect(stored).toHaveLength(1);
        for (const result of results) if (result.outcome === 'in-progress') expect(result.retryAfterSeconds).toBeGreaterThanOrEqual(1);
        const winner = stored[0]!.outcome === 'stored' ? stored[0]!.visits[0]!.request_path : '';
        expect(await paths(p)).toEqual([winner]);
        // Once the winner is stored, every repeat is answered from its record.
        const index = winner.split('/').pop();
        const late = await eventually(
          () => store.appendOnce!(p, [makeVisit({ request_path: '/late' })], batch('race', 'late')),
          (result) => result.outcome !== 'in-progress',
        );
        expect(late).toEqual({ outcome: 'replayed', record: { fingerprint: `f${index}`, response: '{"accepted":2,"rejected":[]}' } });
        expect(await paths(p)).toEqual([winner]);
      });
    });

    describe('summarizeProjectVisits (the projects list)', () => {
      it('counts every visit, test visits apart, and finds the newest', async () => {
        const p = projectId('summary');
        const test = (time: number) => makeVisit({ time, received: time, agent_id: TEST_AGENT_ID, agent_type: 'Developer Helper', result: 'not_verifiable', request_path: '/test' });
        const now = BASE + 3 * DAY + 5 * HOUR;
        await store.append(p, [makeVisit({ time: BASE + HOUR, received: BASE + HOUR }), makeVisit({ time: BASE + 2 * DAY, received: BASE + 2 * DAY, agent_id: 'gptbot', agent_type: 'AI Data Scraper', result: 'verified' })]);
        await store.append(p, [test(BASE + 3 * DAY), test(BASE + 3 * DAY + HOUR)]);
        const options = { now };
        expect(await summarizeProjectVisits(store, p, { ...options, excludeTestVisits: false })).toEqual({ visits: 4, test_visits: 2, last_visit: BASE + 3 * DAY + HOUR });
        // The newest visits are test visits: the last one counted is the one before them.
        expect(await summarizeProjectVisits(store, p, { ...options, excludeTestVisits: true })).toEqual({ visits: 2, test_visits: 2, last_visit: BASE + 2 * DAY });
        expect(await summarizeProjectVisits(store, projectId('summary_empty'), { ...options, excludeTestVisits: true })).toEqual({ visits: 0, test_visits: 0, last_visit: null });
      });
    });

    describe('first and last seen, to the millisecond', () => {
      // Visits at hh:mm:35.123 and the like, with other visits in the same minutes: the minute or
      // day rollups that find the first and last visit must not round their times to the minute.
      const at = (day: number, hour: number, minute: number, ms: number) => BASE + day * DAY + hour * HOUR + minute * MINUTE + ms;
      const firstGptbot = at(1, 22, 22, 35_123);
      const lastGptbot = at(2, 22, 25, 21_456);
      const lastBrowser = at(2, 22, 25, 40_789);
      const lastTest = at(2, 22, 25, 59_001);
      const now = at(2, 23, 0, 0);
      const gptbot = (time: number) => makeVisit({ time, received: time + 200, agent_id: 'gptbot', agent_type: 'AI Data Scraper', result: 'verified', request_path: '/docs' });
      const test = (time: number) => makeVisit({ time, received: time + 200, agent_id: TEST_AGENT_ID, agent_type: 'Developer Helper', result: 'not_verifiable', request_path: '/test' });
      let p: string;
      let token: string;
      let get: (path: string) => Promise<{ status: number; json: any }>;
      beforeAll(async () => {
        // The API's own project store names the project; its visits go straight to the store under test.
        const projects = createMemoryProjectStore();
        const created = await projects.createProject('seen');
        p = created.id;
        token = created.token;
        const handle = createApiHandler({ engine: createEngine(), projects, visits: store, rateLimit: false, clock: { now: () => now } });
        get = async (path) => {
          const response = await handle({ method: 'GET', path, headers: { authorization: `Bearer ${token}` }, body: undefined });
          return { status: response.status, json: JSON.parse(typeof response.body === 'string' ? response.body : '') };
        };
        // Later visits in the first minute, earlier ones in the last: only the exact times tell them apart.
        await store.append(p, [gptbot(at(1, 22, 22, 50_000)), gptbot(firstGptbot), gptbot(at(1, 22, 22, 59_999)), makeVisit({ time: at(1, 23, 0, 0) })]);
        await store.append(p, [gptbot(at(2, 22, 25, 3_000)), gptbot(lastGptbot), makeVisit({ time: lastBrowser, received: lastBrowser + 200 }), makeVisit({ time: at(2, 22, 25, 1_000) })]);
        // The newest to arrive is a test visit in the same minute as the newest counted one.
        await store.append(p, [test(at(2, 22, 25, 10_000)), test(lastTest)]);
        await readable(store, p, 10);
      });

      const expectExact = async () => {
        const activity = await get('/stats/agents/gptbot');
        expect(activity.status).toBe(200);
        expect(activity.json).toMatchObject({ visits: 5, first_seen: new Date(firstGptbot).toISOString(), last_seen: new Date(lastGptbot).toISOString() });
        const tests = await get(`/stats/agents/${TEST_AGENT_ID}`);
        expect(tests.json).toMatchObject({ visits: 2, first_seen: new Date(at(2, 22, 25, 10_000)).toISOString(), last_seen: new Date(lastTest).toISOString() });
        expect(await summarizeProjectVisits(store, p, { now, excludeTestVisits: false })).toEqual({ visits: 10, test_visits: 2, last_visit: lastTest });
        expect(await summarizeProjectVisits(store, p, { now, excludeTestVisits: true })).toEqual({ visits: 8, test_visits: 2, last_visit: lastBrowser });
      };

      it('gives first_seen, last_seen and last_visit of a visit at hh:mm:35.123 exactly', async () => {
        await expectExact();
      });

      it('gives the same exact times once the pre-aggregated counts have caught up', async () => {
        await opened.catchUp?.();
        await expectExact();
      });
    });

    describe('subscribe', () => {
      it("delivers each batch of its project only, as stored, and stops after unsubscribe", async () => {
        const a = projectId('sub_a');
        const b = projectId('sub_b');
        const seen: (readonly StoredVisit[])[] = [];
        const unsubscribe = store.subscribe(a, (batch) => seen.push(batch));
        const first = await store.append(a, [makeVisit({ request_path: '/1' }), makeVisit({ request_path: '/2' })]);
        await store.append(b, [makeVisit({ request_path: '/elsewhere' })]);
        const second = await store.append(a, [makeVisit({ request_path: '/3' })]);
        await eventually(async () => seen.length, (n) => n >= 2);
        expect(seen).toEqual([first, second]);
        unsubscribe();
        unsubscribe();
        await store.append(a, [makeVisit({ request_path: '/after' })]);
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(seen).toHaveLength(2);
      });

      it('keeps delivering to other listeners when one throws, and the append still succeeds', async () => {
        const a = projectId('sub_throw');
        const seen: string[] = [];
        const off1 = store.subscribe(a, () => {
          throw new Error('closed stream');
        });
        const off2 = store.subscribe(a, (batch) => seen.push(...batch.map((v) => v.request_path)));
        await expect(store.append(a, [makeVisit({ request_path: '/x' })])).resolves.toHaveLength(1);
        await eventually(async () => seen.length, (n) => n >= 1);
        expect(seen).toEqual(['/x']);
        off1();
        off2();
      });
    });
  });
}
