// The SQLite store on its own: migrations recorded in user_version, WAL mode, token hashes only,
// token revocation through the API handler's cache (own writes at once, other processes' within a
// second), visits per project.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { hashTokenNode, openSqliteStore, SCHEMA_VERSION } from '../../src/adapters/node/index.js';
import { createApiHandler, createEngine, sha256Hex } from '../../src/index.js';
import { tempDir } from './helpers.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});
function dir(): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return t.dir;
}

describe('openSqliteStore', () => {
  it('migrates a new file to the current schema in WAL mode, and reopens it unchanged', () => {
    const d = dir();
    const store = openSqliteStore({ dataDir: d });
    const { id } = store.createProject('p');
    store.close();
    const db = new Database(`${d}/agentwarden.db`, { readonly: true });
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    const hashes = db.prepare('SELECT hash FROM tokens').pluck().all() as string[];
    expect(hashes).toHaveLength(1);
    expect(hashes[0]).toMatch(/^[0-9a-f]{64}$/);
    db.close();
    const again = openSqliteStore({ dataDir: d });
    cleanups.push(() => again.close());
    expect(again.listProjects().map((p) => p.id)).toEqual([id]);
  });

  it('refuses a database from a newer schema', () => {
    const d = dir();
    openSqliteStore({ dataDir: d }).close();
    const db = new Database(`${d}/agentwarden.db`);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => openSqliteStore({ dataDir: d })).toThrow(RangeError);
  });

  it('hashes like the Web Crypto hasher, so either can check a token', async () => {
    expect(hashTokenNode('aw_example')).toBe(await sha256Hex('aw_example'));
  });

  it('with the API handler: own revocations apply at once, another process\'s within the handler\'s one-second token cache', async () => {
    const d = dir();
    let now = 1_000_000;
    const clock = { now: () => now };
    const server = openSqliteStore({ dataDir: d, clock });
    cleanups.push(() => server.close());
    const handle = createApiHandler({ engine: createEngine(), projects: server, visits: server, hashToken: hashTokenNode, rateLimit: false, clock });
    const status = async (token: string) =>
      (await handle({ method: 'POST', path: '/agent-identifications', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: new TextEncoder().encode('{"request_headers":{}}') })).status;
    const { id, token } = server.createProject('p');
    expect(await status(token)).toBe(200);
    // Revoked by another connection (the CLI): still trusted until the second has passed.
    const cli = openSqliteStore({ dataDir: d });
    expect(cli.revokeToken({ token })).toBe(true);
    cli.close();
    expect(server.findByTokenHash(hashTokenNode(token))).toBeUndefined();
    expect(await status(token)).toBe(200);
    now += 1001;
    expect(await status(token)).toBe(401);
    // Through the same store: at once.
    const { token: next } = server.issueToken(id);
    expect(await status(next)).toBe(200);
    server.revokeToken({ token: next });
    expect(await status(next)).toBe(401);
  });

  it('appends visits per project and reads them back, enriched columns included', async () => {
    const store = openSqliteStore({ dataDir: dir(), synchronous: 'full' });
    cleanups.push(() => store.close());
    const a = store.createProject('a');
    const b = store.createProject('b');
    const enriched = { received: 1_767_225_600_500, time: 1_767_225_600_000, agent_id: null, agent_type: null, result: 'unknown_agent', client_ip: '203.0.113.9', referral: 'chatgpt' } as const;
    await store.append(a.id, [{ request_path: '/x', request_method: 'GET', request_headers: { 'user-agent': 'a, b' }, response_status_code: 404, created: '2026-01-01T00:00:00.000Z', ...enriched }]);
    await store.append(b.id, [{ request_path: '/y', request_method: 'POST', request_headers: {}, ...enriched }]);
    expect(store.listVisits(a.id)).toEqual([
      { id: expect.any(String), project_id: a.id, request_path: '/x', request_method: 'GET', request_headers: { 'user-agent': 'a, b' }, response_status_code: 404, created: '2026-01-01T00:00:00.000Z', ...enriched },
    ]);
    expect(store.countVisits(b.id)).toBe(1);
    expect(store.countVisits()).toBe(2);
  });

  it('throws at creation for bad options, naming them', () => {
    expect(() => openSqliteStore({ dataDir: '' })).toThrow(/dataDir/);
    expect(() => openSqliteStore({ dataDir: dir(), synchronous: 'off' as never })).toThrow(/synchronous/);
  });
});

describe('idempotency keys in the SQLite file', () => {
  const batch = (key: string, fingerprint = 'f') => ({ key, fingerprint, response: `{"key":"${key}"}` });
  const visit = (path: string, time: number) => ({
    request_path: path,
    request_method: 'GET',
    request_headers: { 'user-agent': 'x' },
    received: time,
    time,
    agent_id: null,
    agent_type: null,
    result: 'unknown_agent' as const,
    client_ip: null,
    referral: null,
  });

  it('keeps a key across a restart, and for its window only', async () => {
    const d = dir();
    let now = Date.UTC(2026, 5, 1);
    const clock = { now: () => now };
    const first = openSqliteStore({ dataDir: d, clock });
    const { id } = first.createProject('p');
    expect((await first.appendOnce!(id, [visit('/a', now)], batch('k'))).outcome).toBe('stored');
    first.close();

    const second = openSqliteStore({ dataDir: d, clock });
    cleanups.push(() => second.close());
    expect(await second.appendOnce!(id, [visit('/a', now)], batch('k', 'f2'))).toEqual({ outcome: 'replayed', record: { fingerprint: 'f', response: '{"key":"k"}' } });
    now += 24 * 3_600_000 - 1;
    expect((await second.appendOnce!(id, [visit('/a', now)], batch('k'))).outcome).toBe('replayed');
    // Past the window the key names a new batch.
    now += 1;
    expect((await second.appendOnce!(id, [visit('/b', now)], batch('k', 'f3'))).outcome).toBe('stored');
    expect(second.listVisits(id).map((v) => v.request_path)).toEqual(['/a', '/b']);
    expect(await second.appendOnce!(id, [], batch('k'))).toEqual({ outcome: 'replayed', record: { fingerprint: 'f3', response: '{"key":"k"}' } });
  });

  it('deletes keys past their window with retention, whatever the visits\' retention', async () => {
    const d = dir();
    let now = Date.UTC(2026, 5, 1);
    const store = openSqliteStore({ dataDir: d, clock: { now: () => now }, retentionDays: 0 });
    cleanups.push(() => store.close());
    const { id } = store.createProject('p');
    for (let i = 0; i < 5; i++) await store.appendOnce!(id, [visit(`/${i}`, now)], batch(`old-${i}`));
    now += 12 * 3_600_000;
    await store.appendOnce!(id, [visit('/new', now)], batch('new'));
    now += 12 * 3_600_000 + 1;
    expect(await store.visits.applyRetention()).toEqual({ visits: 0, rollupRows: 0, idempotencyKeys: 5 });
    expect(store.countVisits(id)).toBe(6);
    expect((await store.appendOnce!(id, [], batch('new'))).outcome).toBe('replayed');
  });

  it('stores a key once when two processes append it to one file at once', async () => {
    const d = dir();
    const a = openSqliteStore({ dataDir: d });
    cleanups.push(() => a.close());
    const { id } = a.createProject('p');
    const b = openSqliteStore({ dataDir: d });
    cleanups.push(() => b.close());
    const results = await Promise.all([a.appendOnce!(id, [visit('/from-a', 1)], batch('both', 'fa')), b.appendOnce!(id, [visit('/from-b', 2)], batch('both', 'fb'))]);
    expect(results.map((r) => r.outcome).sort()).toEqual(['replayed', 'stored']);
    expect(a.countVisits(id)).toBe(1);
  });
});

describe('POST /visits and retention', () => {
  it('refuses a visit the next retention pass would delete, by index, and keeps every visit it accepts', async () => {
    const d = dir();
    const now = Date.UTC(2026, 10, 26, 12);
    const clock = { now: () => now };
    const store = openSqliteStore({ dataDir: d, clock, retentionDays: 30 });
    cleanups.push(() => store.close());
    expect(store.retentionDays).toBe(30);
    const { id, token } = store.createProject('p');
    const handle = createApiHandler({ engine: createEngine(), projects: store, visits: store, clock });
    const day = 86_400_000;
    const at = (ms: number, path: string) => ({ request_path: path, request_method: 'GET', request_headers: {}, created: new Date(ms).toISOString() });
    const body = JSON.stringify([at(now - day, '/recent'), at(now - 31 * day, '/old'), at(now - 29 * day, '/late'), { request_path: '/undated', request_method: 'GET', request_headers: {} }]);
    const response = await handle({ method: 'POST', path: '/visits', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: new TextEncoder().encode(body) });
    expect(response.status).toBe(202);
    expect(JSON.parse(response.body as string)).toEqual({ accepted: 3, rejected: [{ index: 1, errors: [expect.objectContaining({ pointer: '/1/created', code: 'too-old' })] }] });
    await store.visits.applyRetention();
    expect(store.listVisits(id).map((v) => v.request_path).sort()).toEqual(['/late', '/recent', '/undated']);
  });
});
