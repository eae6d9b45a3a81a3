// How the ClickHouse store reads the errors a real ClickHouse 18.16 answers (its text names no
// error type, so the client gives a plain Error): too many parts is "busy, nothing stored" and the
// keyed retry stores at once, the same refusal from the per-minute counts' view comes after the
// write (outcome unknown), a full disk is an outage, and a query error is thrown as it is, not
// taken for an outage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickHouseVisitStore, type ClickHouseVisitStore } from '../../../src/adapters/clickhouse/index.js';
import { MIGRATIONS } from '../../../src/adapters/clickhouse/schema.js';
import { VisitStoreUnavailableError, type EnrichedVisit } from '../../../src/index.js';
import { clickhouseAvailable, migrationStatements, startClickHouse, type ClickHouseServer } from '../../helpers/clickhouse.js';
import { startClickHouseProxy } from '../../helpers/clickhouse-proxy.js';

const available = clickhouseAvailable();

function visit(path: string): EnrichedVisit {
  const now = Date.now();
  return { request_path: path, request_method: 'GET', request_headers: { 'user-agent': 'GPTBot/1.2' }, received: now, time: now, agent_id: 'gptbot', agent_type: 'AI Data Scraper', result: 'not_verifiable', client_ip: '192.0.2.1', referral: null };
}

// A MergeTree that refuses an INSERT once a partition has three parts (300 by default).
const FEW_PARTS = 'SETTINGS parts_to_delay_insert = 2, parts_to_throw_insert = 3';

describe.runIf(available)('ClickHouse 18.16 errors', () => {
  let server: ClickHouseServer;
  const opened: ClickHouseVisitStore[] = [];
  /** A store over a database whose `visits` table, or per-minute counts, was created first with FEW_PARTS; merges of it stopped. */
  const openWithFewParts = async (database: string, table: 'visits' | 'counts') => {
    await server.query(`CREATE DATABASE ${database}`);
    const [visits, counts] = migrationStatements(MIGRATIONS.slice(0, 1), database);
    if (table === 'visits') await server.query(visits!.replace('ORDER BY (project_id, id)', `ORDER BY (project_id, id) ${FEW_PARTS}`));
    else {
      await server.query(visits!);
      await server.query(counts!.replace(/\s+AS SELECT/, ` ${FEW_PARTS} AS SELECT`));
    }
    const store = await openClickHouseVisitStore({ url: server.url, database, retryAfterSeconds: 2 });
    opened.push(store);
    await server.query(`SYSTEM STOP MERGES ${database}.${table === 'visits' ? 'visits' : '`.inner.visit_counts`'}`);
    // Three INSERTs, three parts: the limit.
    for (let i = 0; i < 3; i++) await store.append('prj_parts', [visit(`/fill/${i}`)]);
    return store;
  };
  const count = async (database: string, path: string) => Number((await server.query(`SELECT count() FROM ${database}.visits WHERE request_path = '${path}'`)).trim());

  beforeAll(async () => {
    server = await startClickHouse();
  });
  afterAll(async () => {
    for (const store of opened) await store.close().catch(() => undefined);
    await server?.destroy();
  });

  it('answers "too many parts" as busy with nothing stored, and the keyed retry stores at once once merges catch up', async () => {
    const store = await openWithFewParts('aw_parts', 'visits');
    const plain = await store.append('prj_parts', [visit('/parts/plain')]).catch((error: unknown) => error);
    expect(plain).toBeInstanceOf(VisitStoreUnavailableError);
    expect(plain).toMatchObject({ reason: 'busy', retryAfterSeconds: 1, outcome: 'not-stored' });
    expect((plain as Error).message).toMatch(/^ClickHouse is overloaded \(insert\): Code: 252, .*Too many parts/);
    const batch = { key: 'parts', fingerprint: 'f', response: '{}' };
    const keyed = await store.appendOnce('prj_parts', [visit('/parts/keyed')], batch).catch((error: unknown) => error);
    expect(keyed).toMatchObject({ reason: 'busy', retryAfterSeconds: 1, outcome: 'not-stored' });
    expect(await count('aw_parts', '/parts/plain')).toBe(0);
    expect(await count('aw_parts', '/parts/keyed')).toBe(0);

    await server.query('SYSTEM START MERGES aw_parts.visits');
    await server.query('OPTIMIZE TABLE aw_parts.visits FINAL');
    // Known not stored, the first attempt was released: no wait for it to settle (409 for 30 s).
    expect((await store.appendOnce('prj_parts', [visit('/parts/keyed')], batch)).outcome).toBe('stored');
    expect(await count('aw_parts', '/parts/keyed')).toBe(1);
  });

  it('answers "too many parts" of the per-minute counts as outcome unknown: the visits were written before the view refused them', async () => {
    const store = await openWithFewParts('aw_view_parts', 'counts');
    const refused = await store.append('prj_parts', [visit('/view/plain')]).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(VisitStoreUnavailableError);
    expect(refused).toMatchObject({ reason: 'busy', outcome: 'unknown' });
    expect((refused as Error).message).toContain('while pushing to view');
    expect(await count('aw_view_parts', '/view/plain')).toBe(1);
  });

  // From a crash and fault audit that filled ClickHouse's disk: every keyed batch was answered 500
  // (the claim's INSERT failed first), where the store cannot take visits now and stored none.
  it('answers a ClickHouse out of disk space as unavailable: a claim that could not be written stored nothing, and the keyed retry stores once', async () => {
    const proxy = await startClickHouseProxy(server.url);
    const store = await openClickHouseVisitStore({ url: proxy.url, database: 'aw_disk_full', retryAfterSeconds: 3 });
    opened.push(store);
    try {
      // The text 18.16 answered in the audit, and its NOT_ENOUGH_SPACE.
      const enospc = (table: string) => `Code: 75, e.displayText() = DB::ErrnoException: Cannot write to file /var/lib/clickhouse/data/aw_disk_full/${table}/tmp_insert_20261128_406_406_0/primary.idx, errno: 28, strerror: No space left on device, e.what() = DB::ErrnoException\n`;
      const reserve = 'Code: 243, e.displayText() = DB::Exception: Cannot reserve 1.00 MiB, not enough space, e.what() = DB::Exception\n';
      const batch = { key: 'disk-full', fingerprint: 'f', response: '{}' };
      proxy.failNext((statement) => /^INSERT INTO \S*\.idempotency_claims\b/i.test(statement), enospc('idempotency_claims'));
      const claimRefused = await store.appendOnce!('prj_disk', [visit('/disk/keyed')], batch).catch((error: unknown) => error);
      expect(claimRefused).toBeInstanceOf(VisitStoreUnavailableError);
      expect(claimRefused).toMatchObject({ reason: 'unavailable', retryAfterSeconds: 3, outcome: 'not-stored' });
      expect((claimRefused as Error).message).toMatch(/^ClickHouse has no disk space left \(idempotency claim\): Code: 75, /);
      expect((await store.appendOnce!('prj_disk', [visit('/disk/keyed')], batch)).outcome).toBe('stored');
      // The visits INSERT itself: outcome unknown (a view may refuse the block after the table took it).
      proxy.failNext((statement) => /^INSERT INTO \S*\.visits\b/i.test(statement), enospc('visits'));
      await expect(store.append('prj_disk', [visit('/disk/plain')])).rejects.toMatchObject({ reason: 'unavailable', outcome: 'unknown', message: expect.stringMatching(/^ClickHouse has no disk space left \(insert\)/) });
      // A read that needs space (a sort spilled to disk).
      proxy.failNext((statement) => statement.startsWith('SELECT') && statement.includes('FROM `aw_disk_full`.visits'), reserve);
      await expect(store.timeline({ projectId: 'prj_disk', limit: 10 })).rejects.toMatchObject({ reason: 'unavailable', message: expect.stringMatching(/^ClickHouse has no disk space left \(timeline\): Code: 243, /) });
      expect((await store.timeline({ projectId: 'prj_disk', limit: 10 })).map((stored) => stored.request_path)).toEqual(['/disk/keyed']);
    } finally {
      await proxy.close();
    }
  });

  it('throws a query error as it is (a 500 the server logs), not as "ClickHouse is unreachable"', async () => {
    const store = await openClickHouseVisitStore({ url: server.url, database: 'aw_query_error' });
    opened.push(store);
    await server.query('DETACH TABLE aw_query_error.visits');
    try {
      const error = await store.timeline({ projectId: 'prj_q', limit: 10 }).catch((e: unknown) => e);
      expect(error).not.toBeInstanceOf(VisitStoreUnavailableError);
      expect((error as Error).message).toMatch(/^Code: 60, .*doesn't exist/);
      // An error ClickHouse answered is no connection failure: readiness does not wait for a query to go through.
      await expect(store.append('prj_q', [visit('/q')])).rejects.toMatchObject({ reason: 'unavailable', outcome: 'unknown' });
    } finally {
      await server.query('ATTACH TABLE aw_query_error.visits');
    }
  });
});
