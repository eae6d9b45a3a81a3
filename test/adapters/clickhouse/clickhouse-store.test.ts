// The ClickHouse visit store against a real ClickHouse server on loopback: the same answers as the
// in-memory reference store, ids across servers, the live tail across stores, shared tokens,
// outage behaviour and retention.
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickHouseVisitStore, type ClickHouseVisitStore } from '../../../src/adapters/clickhouse/index.js';
import { openSqliteVisitStore } from '../../../src/adapters/node/sqlite-visit-store.js';
import { createMemoryVisitStore, VisitQueryError, VisitStoreUnavailableError, type EnrichedVisit, type StoreHealth, type StatsDimension, type StatsInterval, type StoredVisit, type VisitStore } from '../../../src/index.js';
import { clickhouseAvailable, migrationStatements, startClickHouse, type ClickHouseServer } from '../../helpers/clickhouse.js';
import { startClickHouseProxy } from '../../helpers/clickhouse-proxy.js';
import { describeVisitStore } from '../../visits/store-suite.js';
import { sqlString } from '../../../src/adapters/clickhouse/sql.js';
import { visitIdTime } from '../../../src/adapters/clickhouse/visit-id.js';
import { MIGRATIONS, MIGRATIONS_TABLE, SCHEMA_VERSION } from '../../../src/adapters/clickhouse/schema.js';

const available = clickhouseAvailable();

if (available) {
  // The shared VisitStore contract, against its own ClickHouse server and database.
  let suiteServer: ClickHouseServer | undefined;
  describeVisitStore('clickhouse', async () => {
    suiteServer = await startClickHouse();
    const store = await openClickHouseVisitStore({ url: suiteServer.url, database: 'aw_suite' });
    return {
      store,
      // Merges every part of the materialized views' tables: their rows as the background merges leave them.
      async catchUp() {
        const tables = (await suiteServer!.query("SELECT name FROM system.tables WHERE database = 'aw_suite' AND name LIKE '.inner.%' FORMAT TSV")).split('\n').filter(Boolean);
        for (const table of tables) await suiteServer!.query(`OPTIMIZE TABLE aw_suite.\`${table}\` FINAL`);
      },
      async close() {
        await store.close();
        await suiteServer?.destroy();
      },
    };
  });
}
const T0 = Date.UTC(2026, 10, 20, 10, 0, 0);
const DAY_MS = 86_400_000;

function visit(overrides: Partial<EnrichedVisit> = {}): EnrichedVisit {
  return {
    request_path: '/',
    request_method: 'GET',
    request_headers: { 'user-agent': 'GPTBot/1.2' },
    received: T0,
    time: T0,
    agent_id: 'gptbot',
    agent_type: 'AI Data Scraper',
    result: 'not_verifiable',
    client_ip: '192.0.2.1',
    referral: null,
    ...overrides,
  };
}

const AGENTS = [
  { agent_id: 'gptbot', agent_type: 'AI Data Scraper', result: 'verified' },
  { agent_id: 'gptbot', agent_type: 'AI Data Scraper', result: 'verification_failed' },
  { agent_id: 'googlebot', agent_type: 'Search Engine Crawler', result: 'not_verifiable' },
  { agent_id: null, agent_type: null, result: 'unknown_agent' },
] as const;

const arbitraryVisit = fc
  .record({
    agent: fc.constantFrom(...AGENTS),
    path: fc.constantFrom('/', '/a', '/a?x=1', "/it's\\odd", '/b#f', '/ünï'),
    referral: fc.constantFrom(null, 'chatgpt', 'perplexity'),
    // Mostly a few instants (many visits share a minute, as real traffic does), sometimes anywhere.
    offset: fc.oneof(fc.constantFrom(0, 1, 59_999, 60_000, 3_600_000, 86_400_000 - 1), fc.integer({ min: -3_600_000, max: 3 * 86_400_000 })),
  })
  .map(({ agent, path, referral, offset }) =>
    visit({ ...agent, request_path: path, referral: agent.agent_id === null ? (referral as EnrichedVisit['referral']) : null, time: T0 + offset, received: T0 + offset }),
  );

describe.runIf(available)('ClickHouse visit store', () => {
  let server: ClickHouseServer;
  let store: ClickHouseVisitStore;
  let other: ClickHouseVisitStore;
  let project = 0;
  const nextProject = () => `prj_test${++project}`;

  beforeAll(async () => {
    server = await startClickHouse();
    store = await openClickHouseVisitStore({ url: server.url, database: 'aw_store', pollMs: 100 });
    // A second store over the same database: another agentwarden server.
    other = await openClickHouseVisitStore({ url: server.url, database: 'aw_store', pollMs: 100 });
  });
  afterAll(async () => {
    await store?.close();
    await other?.close();
    await server?.destroy();
  });

  /** A database at schema 4, as that version left it: before visit_times. */
  const createSchema4Database = async (db: string) => {
    await server.query(`CREATE DATABASE ${db}`);
    for (const statement of migrationStatements(MIGRATIONS.slice(0, 4), db)) await server.query(statement);
    await server.query(MIGRATIONS_TABLE.replaceAll('{db}', db));
    await server.query(`INSERT INTO ${db}.schema_migrations VALUES ${[1, 2, 3, 4].map((version) => `(${version}, '2026-11-01T00:00:00.000Z')`).join(', ')}`);
  };

  it('creates the schema on open and opens an existing one again', async () => {
    const tables = (await server.query("SELECT name FROM system.tables WHERE database = 'aw_store' ORDER BY name FORMAT TSV")).trim().split('\n');
    expect(tables).toEqual(expect.arrayContaining(['projects', 'schema_migrations', 'token_revocations', 'tokens', 'visit_counts', 'visit_times', 'visits']));
    const engine = (await server.query("SELECT engine, partition_key, sorting_key FROM system.tables WHERE database = 'aw_store' AND name = 'visits' FORMAT TSV")).trim();
    expect(engine).toBe('MergeTree\ttoYYYYMM(toDateTime(intDiv(received, 1000)))\tproject_id, id');
    expect((await server.query('SELECT count() FROM aw_store.schema_migrations')).trim()).toBe(String(SCHEMA_VERSION));
  });

  it('migrates a first-schema database while two servers open it at once; older visits count by status', async () => {
    const db = 'aw_upgrade';
    await server.query(`CREATE DATABASE ${db}`);
    for (const statement of migrationStatements(MIGRATIONS.slice(0, 1), db)) await server.query(statement);
    await server.query(MIGRATIONS_TABLE.replaceAll('{db}', db));
    await server.query(`INSERT INTO ${db}.schema_migrations VALUES (1, '2026-11-01T00:00:00.000Z')`);
    // A visit as the first schema stored it: no status column.
    const old = visit({ response_status_code: 404, request_headers: { 'user-agent': 'GPTBot/1.2', response_status_code: '200' } });
    await server.query(
      `INSERT INTO ${db}.visits (project_id, id, received, time, path, request_path, agent_id, agent_type, result, referral, visit) VALUES ('prj_old', '${T0.toString(16).padStart(12, '0')}0000000000abcdef', ${T0}, ${T0}, '/', '/', 'gptbot', 'AI Data Scraper', 'not_verifiable', '', ${sqlString(JSON.stringify(old))})`,
    );
    const [a, b] = await Promise.all([openClickHouseVisitStore({ url: server.url, database: db }), openClickHouseVisitStore({ url: server.url, database: db })]);
    try {
      await a.append('prj_old', [visit({ response_status_code: 200 })]);
      const byStatus = await b.stats({ projectId: 'prj_old', from: T0, to: T0 + 60_000, interval: 'minute', by: 'status' });
      expect(byStatus.series).toEqual([
        { key: '200', total: 1 },
        { key: '404', total: 1 },
      ]);
      expect((await server.query(`SELECT max(version) FROM ${db}.schema_migrations`)).trim()).toBe(String(SCHEMA_VERSION));
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('migrates a database of schema 4: first and last visit times from the raw visits, the start of the minute for months retention dropped', async () => {
    const db = 'aw_times';
    await createSchema4Database(db);
    const row = (id: number, time: number, agent: string) => {
      const stored = visit({ time, received: time, agent_id: agent === '' ? null : agent });
      return `('prj_times', '${time.toString(16).padStart(12, '0')}0000${id.toString(16).padStart(12, '0')}', ${time}, ${time}, '/', '/', '${agent}', '${agent === '' ? '' : 'AI Data Scraper'}', 'not_verifiable', '', ${sqlString(JSON.stringify(stored))})`;
    };
    const exact = [T0 + 35_123, T0 + 50_000, T0 + DAY_MS + 21_456];
    // A month whose raw visits retention dropped: only its per-minute counts are left.
    const dropped = Date.UTC(2026, 7, 3, 22, 22, 35, 123);
    await server.query(
      `INSERT INTO ${db}.visits (project_id, id, received, time, path, request_path, agent_id, agent_type, result, referral, visit) VALUES ${[row(1, dropped, 'gptbot'), ...exact.map((time, i) => row(i + 2, time, 'gptbot')), row(9, T0 + 40_000, '')].join(', ')}`,
    );
    await server.query(`ALTER TABLE ${db}.visits DROP PARTITION 202608`);
    const [a, b] = await Promise.all([openClickHouseVisitStore({ url: server.url, database: db }), openClickHouseVisitStore({ url: server.url, database: db })]);
    try {
      const after = T0 + 2 * DAY_MS + 7_007;
      await a.append('prj_times', [visit({ time: after, received: after })]);
      const seen = async (from: number, to: number) => (await b.seen({ projectId: 'prj_times', from, to, filter: { agent_id: 'gptbot' } })).map(({ first, last }) => ({ first: new Date(first).toISOString(), last: new Date(last).toISOString() }));
      const iso = (time: number) => new Date(time).toISOString();
      expect(await seen(T0, T0 + 3 * DAY_MS)).toEqual([{ first: iso(exact[0]!), last: iso(after) }]);
      expect(await seen(Date.UTC(2026, 7, 1), Date.UTC(2026, 8, 1))).toEqual([{ first: '2026-08-03T22:22:00.000Z', last: '2026-08-03T22:22:00.000Z' }]);
      expect(await b.seen({ projectId: 'prj_times', from: T0, to: T0 + DAY_MS })).toEqual(expect.arrayContaining([{ agent_id: null, first: T0 + 40_000, last: T0 + 40_000 }]));
      // The raw visits (a range to the millisecond) agree with the per-minute times.
      expect(await seen(T0 + 1, T0 + 3 * DAY_MS)).toEqual([{ first: iso(exact[0]!), last: iso(after) }]);
      expect((await server.query(`SELECT max(version) FROM ${db}.schema_migrations`)).trim()).toBe(String(SCHEMA_VERSION));
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('migrates a long history of schema 4 one month at a time, each copy reading only its month’s parts', async () => {
    const db = 'aw_history';
    await createSchema4Database(db);
    // Three months of 10,000 visits each, one part per month (two marks of 8,192 rows), a second apart.
    const PER_MONTH = 10_000;
    const starts = [Date.UTC(2026, 8, 1), Date.UTC(2026, 9, 1), Date.UTC(2026, 10, 1)].map((start) => start + 1_234);
    for (const start of starts) {
      await server.query(
        `INSERT INTO ${db}.visits (project_id, id, received, time, path, request_path, agent_id, agent_type, result, referral, visit)
         SELECT 'prj_history', lower(hex(toFixedString(toString(${start} + number * 1000), 16))), ${start} + number * 1000, ${start} + number * 1000, '/', '/', 'gptbot', 'AI Data Scraper', 'not_verifiable', '', '{}'
         FROM system.numbers LIMIT ${PER_MONTH}`,
      );
    }
    const proxy = await startClickHouseProxy(server.url);
    const migrations: unknown[] = [];
    const store = await openClickHouseVisitStore({ url: proxy.url, database: db, onMigration: (migration) => migrations.push(migration) });
    try {
      // Told before it ran; a current database is not migrated.
      expect(migrations).toEqual([{ from: 4, to: SCHEMA_VERSION }]);
      await (await openClickHouseVisitStore({ url: server.url, database: db, onMigration: (migration) => migrations.push(migration) })).close();
      expect(migrations).toHaveLength(1);
      const copies = proxy.statements().filter((statement) => statement.startsWith('INSERT INTO') && statement.includes('visit_times'));
      expect(copies).toHaveLength(starts.length);
      // Run alone, each copy's SELECT may read one month's part (16,384 rows by marks) but not two.
      for (const copy of copies) {
        const select = copy.slice(copy.indexOf('SELECT'));
        await server.query(`SELECT count() FROM (${select}) SETTINGS max_rows_to_read = ${2 * 8_192 + 1}`);
      }
      // Whole minutes, read from the copied times: exact to the millisecond in every month.
      const seen = await store.seen({ projectId: 'prj_history', from: Date.UTC(2026, 8, 1), to: Date.UTC(2026, 11, 1) });
      expect(seen).toEqual([{ agent_id: 'gptbot', first: starts[0]!, last: starts[2]! + (PER_MONTH - 1) * 1000 }]);
      for (const start of starts) {
        const month = start - 1_234;
        expect(await store.seen({ projectId: 'prj_history', from: month + 60_000, to: month + 20 * DAY_MS })).toEqual([{ agent_id: 'gptbot', first: month + 60_234, last: start + (PER_MONTH - 1) * 1000 }]);
      }
    } finally {
      await store.close();
      await proxy.close();
    }
  });

  it('quotes any string so ClickHouse reads back exactly that string', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 40 }), async (value) => {
        const answer = await server.query(`SELECT ${sqlString(value)} AS v FORMAT JSONEachRow`);
        expect(JSON.parse(answer).v).toBe(value);
      }),
      { numRuns: 100 },
    );
  });

  it('rejects bad options at creation, naming them', async () => {
    await expect(openClickHouseVisitStore({ url: 'ftp://x' })).rejects.toThrow(RangeError);
    await expect(openClickHouseVisitStore({ url: server.url, database: 'a-b; DROP' })).rejects.toThrow(/database must be/);
    await expect(openClickHouseVisitStore({ url: server.url, pollMs: 0 })).rejects.toThrow(/pollMs/);
  });

  it('stores visits exactly as given and returns them newest first, with cursors both ways', async () => {
    const id = nextProject();
    // A header named "__proto__" is an own field, as JSON.parse and parseVisit give it.
    const headers = JSON.parse('{"user-agent":"x\'y\\\\z","x-emoji":"🦀 ünï","__proto__":"p"}') as Record<string, string>;
    const odd = visit({ request_path: "/q?a='1'&b=\\x00\n", request_headers: headers, is_blocked: true, acp_response_body: { a: [1, { b: null }] } });
    const first = await store.append(id, [visit({ request_path: '/1' }), odd]);
    const second = await store.append(id, [visit({ request_path: '/3' })]);
    const all = [...first, ...second];
    expect(new Set(all.map((v) => v.id)).size).toBe(3);
    expect([...all.map((v) => v.id)].sort()).toEqual(all.map((v) => v.id));
    const page = await store.timeline({ projectId: id, limit: 10 });
    expect(page).toEqual([...all].reverse());
    expect(page[1]).toEqual({ ...odd, id: first[1]!.id, project_id: id });
    expect(JSON.stringify(page[1]!.request_headers)).toBe('{"user-agent":"x\'y\\\\z","x-emoji":"🦀 ünï","__proto__":"p"}');
    expect(await store.timeline({ projectId: id, limit: 1, before: second[0]!.id })).toEqual([first[1]]);
    expect(await store.timeline({ projectId: id, limit: 10, after: first[0]!.id })).toEqual([first[1], second[0]]);
    expect(await store.timeline({ projectId: id, limit: 10, filter: { path: '/q' } })).toEqual([first[1]]);
    await expect(store.timeline({ projectId: id, limit: 1, before: "1' OR 1=1" })).rejects.toThrow(VisitQueryError);
    expect(await store.timeline({ projectId: 'prj_none', limit: 10 })).toEqual([]);
  });

  it('answers stats, path counts and the timeline exactly as the memory store does', async () => {
    const intervals: StatsInterval[] = ['minute', 'hour', 'day'];
    const dimensions: StatsDimension[] = ['agent', 'agent_type', 'result', 'path', 'referral'];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(arbitraryVisit, { minLength: 1, maxLength: 20 }), { minLength: 1, maxLength: 4 }),
        fc.constantFrom(...intervals),
        fc.constantFrom(...dimensions),
        fc.integer({ min: -7_200_000, max: 86_400_000 }),
        fc.integer({ min: 1, max: 4 * 86_400_000 }),
        fc.option(fc.constantFrom({ agent_id: null }, { agent_id: 'gptbot' }, { result: 'verified' as const }, { path: '/a' }, { referral: null }, { agent_type: 'AI Data Scraper' as const }), { nil: undefined }),
        fc.integer({ min: 1, max: 5 }),
        async (batches, interval, by, fromOffset, span, filter, limit) => {
          const id = nextProject();
          const memory = createMemoryVisitStore();
          for (const batch of batches) {
            await memory.append(id, batch);
            await store.append(id, batch);
          }
          // Whole minutes (the pre-aggregated path) and arbitrary milliseconds (the raw path).
          for (const from of [T0 + fromOffset, Math.floor((T0 + fromOffset) / 60_000) * 60_000]) {
            const to = span % 2 === 0 ? Math.ceil((from + span) / 60_000) * 60_000 : from + span;
            const query = { projectId: id, from, to, interval: interval === 'minute' && span > 86_400_000 ? ('hour' as const) : interval, by, limit, ...(filter === undefined ? {} : { filter }) };
            expect(await store.stats(query)).toEqual(await memory.stats(query));
            const paths = { projectId: id, from, to, limit: limit * 2, agentsOnly: limit % 2 === 0, ...(filter === undefined ? {} : { filter }) };
            expect(await store.pathCounts(paths)).toEqual(await memory.pathCounts(paths));
          }
          const strip = (visits: readonly StoredVisit[]) => visits.map(({ id: _id, ...rest }) => rest);
          expect(strip(await store.timeline({ projectId: id, limit: 7, ...(filter === undefined ? {} : { filter }) }))).toEqual(
            strip(await memory.timeline({ projectId: id, limit: 7, ...(filter === undefined ? {} : { filter }) })),
          );
        },
      ),
      { numRuns: 15 },
    );
  });

  /** Stores `visits` here and in a SQLite store (keeping everything), and hands both to `compare`. */
  const withSqlite = async (visits: readonly EnrichedVisit[], compare: (id: string, sqlite: VisitStore) => Promise<void>) => {
    const id = nextProject();
    const sqlite = openSqliteVisitStore(new Database(':memory:'), { retentionDays: 0, rollupIntervalMs: 0 });
    try {
      await store.append(id, visits);
      await sqlite.append(id, visits);
      await compare(id, sqlite);
    } finally {
      sqlite.close();
    }
  };

  it('keeps at the limit of path counts the rows it reports first, tied ones in the SQLite store\'s order (UTF-16, not UTF-8)', async () => {
    // U+E000 and above sort after astral characters in UTF-16 (surrogates are D800-DFFF), before them in UTF-8.
    const visits = ['/\uff01', '/😀', '/\ue000', '/\ud7ff', '/a', '/\uffff', '/𝄞', '/a'].map((path) => visit({ request_path: path }));
    await withSqlite(visits, async (id, sqlite) => {
      for (const limit of [1, 2, 3, 4, 8]) {
        const query = { projectId: id, from: T0, to: T0 + 60_000, limit };
        expect(await store.pathCounts(query), `limit ${limit}`).toEqual(await sqlite.pathCounts(query));
      }
    });
  });

  it('counts visits before 1970 at their time, as the SQLite store does (kept when retention keeps everything)', async () => {
    const times = [Date.UTC(1969, 11, 31, 12), Date.UTC(1900, 5, 1), Date.UTC(1969, 11, 31, 23, 59, 59, 999), Date.UTC(1970, 0, 1, 0, 0, 30), -1];
    await withSqlite(times.map((time, i) => visit({ request_path: `/old/${i % 3}`, time })), async (id, sqlite) => {
      const day = 86_400_000;
      const widths = { minute: 60_000, hour: 3_600_000, day };
      for (const [from, to] of [[-2 * day, 2 * day], [0, day], [-day, 0], [Date.UTC(1950, 0, 1), day], [Date.UTC(1899, 0, 1), day], [-90_000, 90_000]] as const) {
        for (const interval of ['minute', 'hour', 'day'] as const) {
          // At most 10,000 buckets are answered.
          if ((to - from) / widths[interval] > 10_000) continue;
          for (const by of ['path', 'agent'] as const) {
            const query = { projectId: id, from, to, interval, by };
            expect(await store.stats(query), JSON.stringify(query)).toEqual(await sqlite.stats(query));
          }
        }
        const paths = { projectId: id, from, to };
        expect(await store.pathCounts(paths), JSON.stringify(paths)).toEqual(await sqlite.pathCounts(paths));
      }
    });
  });

  it('pages through a timeline whose visits lie hours, days and months apart (the id windows widen)', async () => {
    const id = nextProject();
    let now = T0 - 90 * 86_400_000;
    const clocked = await openClickHouseVisitStore({ url: server.url, database: 'aw_store', clock: { now: () => now } });
    try {
      const stored: StoredVisit[] = [];
      for (const step of [0, 40 * 86_400_000, 48 * 86_400_000, 49 * 86_400_000, 90 * 86_400_000 - 7_200_000, 90 * 86_400_000 - 60_000, 90 * 86_400_000]) {
        now = T0 - 90 * 86_400_000 + step;
        stored.push(...(await clocked.append(id, [visit({ request_path: `/${step}`, time: now, received: now })])));
      }
      const newest = [...stored].reverse();
      expect(await clocked.timeline({ projectId: id, limit: 3 })).toEqual(newest.slice(0, 3));
      expect(await clocked.timeline({ projectId: id, limit: 100 })).toEqual(newest);
      expect(await clocked.timeline({ projectId: id, limit: 2, before: newest[2]!.id })).toEqual(newest.slice(3, 5));
      expect(await clocked.timeline({ projectId: id, limit: 3, after: stored[0]!.id })).toEqual(stored.slice(1, 4));
      expect(await clocked.timeline({ projectId: id, limit: 100, after: stored[0]!.id, before: stored[6]!.id })).toEqual(stored.slice(1, 6));
      // A server whose clock is days ahead widens its windows until it finds them.
      expect(await store.timeline({ projectId: id, limit: 1 })).toEqual(newest.slice(0, 1));
    } finally {
      await clocked.close();
    }
  });

  it('issues ids by receipt: a created time a minute ahead moves no later visit of any project, and ranges by time still find it', async () => {
    const id = nextProject();
    const received = Date.now();
    const [ahead] = await store.append(id, [visit({ request_path: '/ahead', received, time: received + 55_000 })]);
    const [next] = await store.append(nextProject(), [visit({ request_path: '/next', received: Date.now(), time: Date.now() })]);
    expect(visitIdTime(next!.id) - received).toBeLessThan(5000);
    // Another server's later visit comes after it, in the timeline and when a stream resumes after it.
    const now = Date.now();
    await other.append(id, [visit({ request_path: '/later', received: now, time: now })]);
    expect((await store.timeline({ projectId: id, limit: 10 })).map((v) => v.request_path)).toEqual(['/later', '/ahead']);
    expect((await other.timeline({ projectId: id, limit: 10, after: ahead!.id })).map((v) => v.request_path)).toEqual(['/later']);
    // Its time, not its receipt, places it in stats and path counts (raw reads bounded by id).
    const from = received + 50_000;
    expect((await store.pathCounts({ projectId: id, from, to: from + 60_000 })).map((p) => p.path)).toEqual(['/ahead']);
    expect((await store.stats({ projectId: id, from, to: from + 60_000, interval: 'minute', by: 'path', filter: { path: '/ahead' } })).total).toBe(1);
  });

  it('gives ids that are unique and time-ordered across two servers', async () => {
    const id = nextProject();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? store : other).append(id, [visit(), visit()])));
    const ids = results.flat().map((v) => v.id);
    expect(new Set(ids).size).toBe(40);
    const page = await other.timeline({ projectId: id, limit: 100 });
    expect(page.map((v) => v.id)).toEqual([...ids].sort().reverse());
  });

  it('delivers visits appended through another server to subscribers, once each', async () => {
    const id = nextProject();
    const received: StoredVisit[] = [];
    const unsubscribe = store.subscribe(id, (visits) => received.push(...visits));
    try {
      // Right after subscribing (before any poll), append through both servers.
      const local = await store.append(id, [visit({ request_path: '/local' })]);
      expect(received).toEqual(local);
      const remote = await other.append(id, [visit({ request_path: '/remote1' }), visit({ request_path: '/remote2' })]);
      const started = Date.now();
      while (received.length < 3 && Date.now() - started < 2000) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(Date.now() - started).toBeLessThan(2000);
      expect(received).toEqual([...local, ...remote]);
      // Several more polls later: nothing arrives twice.
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(received.map((v) => v.id)).toEqual([...local, ...remote].map((v) => v.id));
    } finally {
      unsubscribe();
    }
  });

  it('delivers visits whose first read failed at the next poll: a broken read loses none', async () => {
    const proxy = await startClickHouseProxy(server.url);
    const tailed = await openClickHouseVisitStore({ url: proxy.url, database: 'aw_store', pollMs: 100 });
    const id = nextProject();
    const received: StoredVisit[] = [];
    const unsubscribe = tailed.subscribe(id, (visits) => received.push(...visits));
    try {
      // The connection of the tail's read of the visits themselves breaks once (its read of ids goes through).
      proxy.dropNext((sql) => sql.startsWith('SELECT project_id, id, visit FROM'));
      const remote = await other.append(id, Array.from({ length: 5 }, (_, i) => visit({ request_path: `/reset/${i}` })));
      await expect.poll(() => received.length, { timeout: 3000, interval: 20 }).toBe(5);
      expect(proxy.dropped()).toBe(1);
      expect(received).toEqual(remote);
    } finally {
      unsubscribe();
      await tailed.close();
      await proxy.close();
    }
  });

  it('delivers 12,000 visits another server took at once (more ids than one query may list)', async () => {
    const id = nextProject();
    const received = new Set<string>();
    const unsubscribe = store.subscribe(id, (visits) => visits.forEach((v) => received.add(v.id)));
    try {
      const appended = await Promise.all(Array.from({ length: 12 }, (_, batch) => other.append(id, Array.from({ length: 1000 }, (_, i) => visit({ request_path: `/many/${batch}/${i}` })))));
      await expect.poll(() => received.size, { timeout: 5000, interval: 50 }).toBe(12_000);
      expect(appended.flat().filter((v) => !received.has(v.id))).toEqual([]);
    } finally {
      unsubscribe();
    }
  });

  it('does not replay visits stored before a subscription', async () => {
    const id = nextProject();
    await other.append(id, [visit({ request_path: '/before' })]);
    const received: StoredVisit[] = [];
    const unsubscribe = store.subscribe(id, (visits) => received.push(...visits));
    await new Promise((resolve) => setTimeout(resolve, 500));
    unsubscribe();
    expect(received).toEqual([]);
  });

  it('shares projects and tokens: issued on one server, accepted and revoked on the other', async () => {
    const created = await store.createProject('shared.example');
    const hash = (await import('node:crypto')).createHash('sha256').update(created.token).digest('hex');
    expect(await other.findByTokenHash(hash)).toEqual({ project: { id: created.id, name: 'shared.example' }, tokenHash: hash });
    expect((await other.listProjects()).find((p) => p.id === created.id)?.tokens).toHaveLength(1);
    const rotated = await other.issueToken(created.id, { revokeOthers: true });
    expect(await other.findByTokenHash(hash)).toBeUndefined();
    // The first server trusted the old token for at most tokenCacheMs (1 s).
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await store.findByTokenHash(hash)).toBeUndefined();
    expect(await other.revokeToken({ token: rotated.token })).toBe(true);
    expect(await other.revokeToken({ token: rotated.token })).toBe(false);
    await expect(store.issueToken('prj_missing')).rejects.toThrow(RangeError);
    const listed = (await store.listProjects()).find((p) => p.id === created.id)!;
    expect(listed.tokens.map((t) => t.revoked !== null)).toEqual([true, true]);
  });

  it('renames and deletes a project for every server: its tokens stop at once, its visits, counts and settings go, other projects keep theirs', async () => {
    const doomed = await store.createProject('doomed.example');
    const kept = await store.createProject('kept.example');
    const hash = (await import('node:crypto')).createHash('sha256').update(doomed.token).digest('hex');
    for (const { id } of [doomed, kept]) {
      await store.append(id, [visit({ request_path: '/a' }), visit({ request_path: '/b' })]);
      await store.putProjectSettings(id, { robots: null, client_ip: {} });
    }
    expect(await store.renameProject(doomed.id, 'renamed.example')).toBe(true);
    expect((await store.listProjects()).find((p) => p.id === doomed.id)?.name).toBe('renamed.example');
    // The other server knew the old name for at most tokenCacheMs.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await other.findProject(doomed.id)).toEqual({ id: doomed.id, name: 'renamed.example' });
    expect(await other.renameProject('prj_missing', 'x')).toBe(false);

    expect(await other.findByTokenHash(hash)).toMatchObject({ project: { id: doomed.id } });
    expect(await store.deleteProject(doomed.id)).toBe(true);
    // Hidden and its token refused at once through this server, and through the other within its cache time.
    expect(await store.findByTokenHash(hash)).toBeUndefined();
    expect((await store.listProjects()).some((p) => p.id === doomed.id)).toBe(false);
    expect(await store.findProject(doomed.id)).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await other.findByTokenHash(hash)).toBeUndefined();
    expect(await other.findProject(doomed.id)).toBeUndefined();
    expect(await other.deleteProject(doomed.id)).toBe(false);
    // The mutations finish in the background: every row of the project goes, in each table.
    const left = async (projectId: string) => {
      const counts: Record<string, number> = {};
      for (const table of ['visits', '`.inner.visit_counts`', '`.inner.visit_times`', 'tokens', 'project_settings', 'project_renames']) {
        counts[table] = Number((await server.query(`SELECT count() FROM aw_store.${table} WHERE project_id = ${sqlString(projectId)}`)).trim());
      }
      counts['projects'] = Number((await server.query(`SELECT count() FROM aw_store.projects WHERE id = ${sqlString(projectId)}`)).trim());
      return counts;
    };
    await expect.poll(() => left(doomed.id), { timeout: 20_000, interval: 200 }).toEqual({ visits: 0, '`.inner.visit_counts`': 0, '`.inner.visit_times`': 0, tokens: 0, project_settings: 0, project_renames: 0, projects: 0 });
    expect(await left(kept.id)).toMatchObject({ visits: 2, tokens: 1, project_settings: 1, projects: 1 });
    expect((await store.stats({ projectId: kept.id, from: T0 - 60_000, to: T0 + 60_000, interval: 'minute', by: 'agent' })).total).toBe(2);

    // Visits that reach ClickHouse after the deletion (another server still trusting its cached
    // token, an INSERT in flight) are swept too, by any server, and only the deleted project's.
    await other.append(doomed.id, [visit({ request_path: '/late' })]);
    expect(await other.sweepDeletedProjects()).toEqual([doomed.id]);
    await expect.poll(() => left(doomed.id), { timeout: 20_000, interval: 200 }).toMatchObject({ visits: 0, '`.inner.visit_counts`': 0 });
    expect(await left(kept.id)).toMatchObject({ visits: 2 });
    expect(await store.sweepDeletedProjects()).toEqual([]);
  });

  it('drops whole months of raw visits older than the retention period and keeps the counts', async () => {
    const id = nextProject();
    const old = Date.UTC(2024, 0, 15);
    const recent = Date.UTC(2026, 7, 1);
    await store.append(id, [visit({ received: old, time: old }), visit({ received: recent, time: recent }), visit({ received: T0, time: T0 })]);
    // Opening with retention drops at once: 90 days before T0 is in August 2026, so January 2024 goes, August stays.
    const reported: unknown[] = [];
    const retained = await openClickHouseVisitStore({ url: server.url, database: 'aw_store', retentionDays: 90, clock: { now: () => T0 }, onRetention: (outcome) => reported.push(outcome) });
    try {
      // Told which months went (serve logs them).
      expect(reported).toEqual([{ droppedMonths: expect.arrayContaining(['202401']) }]);
      const from = Date.UTC(2024, 0, 1);
      expect((await store.timeline({ projectId: id, limit: 10 })).map((v) => v.time)).toEqual([T0, recent]);
      // Per-minute counts are kept: stats of whole minutes still see the old visit; raw (path) stats do not.
      expect((await store.stats({ projectId: id, from, to: T0 + 60_000, interval: 'day', by: 'agent' })).total).toBe(3);
      expect((await store.stats({ projectId: id, from, to: T0 + 60_000, interval: 'day', by: 'path' })).total).toBe(2);
      expect(await retained.enforceRetention()).toEqual([]);
    } finally {
      await retained.close();
    }
  });
});

describe.runIf(available)('ClickHouse visit store when ClickHouse goes away', () => {
  let server: ClickHouseServer;
  beforeAll(async () => {
    server = await startClickHouse();
  });
  afterAll(async () => {
    await server?.destroy();
  });

  it('refuses appends with VisitStoreUnavailableError while ClickHouse is down, keeps tokens it knew, and recovers', async () => {
    const store = await openClickHouseVisitStore({ url: server.url, database: 'aw_outage', retryAfterSeconds: 3, requestTimeoutMs: 2000 });
    try {
      const created = await store.createProject('outage.example');
      const hash = (await import('node:crypto')).createHash('sha256').update(created.token).digest('hex');
      expect(await store.findByTokenHash(hash)).toBeDefined();
      const before = await store.append(created.id, [visit()]);
      await server.stop('SIGKILL');
      const error = await store.append(created.id, [visit()]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(VisitStoreUnavailableError);
      expect(error).toMatchObject({ reason: 'unavailable', retryAfterSeconds: 3 });
      await expect(store.timeline({ projectId: created.id, limit: 1 })).rejects.toBeInstanceOf(VisitStoreUnavailableError);
      // A token seen before ClickHouse went away still authenticates (stale on error).
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect((await store.findByTokenHash(hash))?.project.id).toBe(created.id);
      await server.start();
      const after = await store.append(created.id, [visit()]);
      const page = await store.timeline({ projectId: created.id, limit: 10 });
      expect(page.map((v) => v.id)).toEqual([after[0]!.id, before[0]!.id]);
    } finally {
      await store.close();
    }
  });

  it('reports its health (GET /readyz): unavailable within 2.5 s while ClickHouse hangs or is down, while an INSERT hangs, and after ClickHouse refused one until one goes through', async () => {
    const store = await openClickHouseVisitStore({ url: server.url, database: 'aw_health' });
    const detail = (health: StoreHealth) => (health.status === 'ok' ? '' : health.detail);
    try {
      expect(await store.health()).toEqual({ status: 'ok' });
      // Stopped, not down: connections are accepted and never answered.
      server.pause();
      let started = Date.now();
      let hung: StoreHealth;
      let insert: Promise<unknown>;
      try {
        hung = await store.health();
        expect(Date.now() - started).toBeLessThan(2500);
        // An INSERT sent now hangs with it: past 5 s the store says so without asking ClickHouse again.
        insert = store.append('prj_health', [visit({ request_path: '/health/hung' })]).catch((e: unknown) => e);
        await new Promise((resolve) => setTimeout(resolve, 5200));
        started = Date.now();
        const waiting = await store.health();
        expect(Date.now() - started).toBeLessThan(100);
        expect(waiting.status).toBe('unavailable');
        expect(detail(waiting)).toMatch(/^an INSERT sent \d+ s ago is not answered yet$/);
      } finally {
        server.resume();
      }
      expect(hung.status).toBe('unavailable');
      expect(detail(hung)).toContain('ClickHouse did not answer SELECT 1');
      await insert;
      // Down: refused at once.
      await server.stop('SIGKILL');
      started = Date.now();
      const down = await store.health();
      expect(Date.now() - started).toBeLessThan(2500);
      expect(down.status).toBe('unavailable');
      await expect(store.append('prj_health', [visit()])).rejects.toBeInstanceOf(VisitStoreUnavailableError);
      await server.start();
      // Back: that INSERT only found no connection, and SELECT 1 going through says enough.
      expect(await store.health()).toEqual({ status: 'ok' });
      // An INSERT ClickHouse itself refuses (here: no such table) keeps the store unready while
      // SELECT 1 still answers, until an INSERT goes through (or 30 s pass).
      await server.query('DETACH TABLE aw_health.visits');
      await expect(store.append('prj_health', [visit()])).rejects.toBeInstanceOf(VisitStoreUnavailableError);
      const refused = await store.health();
      expect(refused.status).toBe('unavailable');
      expect(detail(refused)).toMatch(/^the last INSERT, \d+ s ago, failed: /);
      await server.query('ATTACH TABLE aw_health.visits');
      expect((await store.health()).status).toBe('unavailable');
      await store.append('prj_health', [visit({ request_path: '/health/after' })]);
      expect(await store.health()).toEqual({ status: 'ok' });
    } finally {
      await store.close();
    }
    expect(await store.health()).toEqual({ status: 'unavailable', detail: 'the ClickHouse store is closed' });
  }, 40_000);
});
