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
