// The SQLite store on its own: migrations recorded in user_version, WAL mode, token hashes only,
// the token cache (own writes apply at once, other processes' within tokenCacheMs), visits per project.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { hashTokenNode, openSqliteStore, SCHEMA_VERSION } from '../../src/adapters/node/index.js';
import { sha256Hex } from '../../src/index.js';
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

  it('caches valid tokens for tokenCacheMs: own revocations apply at once, other writers after the cache time', () => {
    const d = dir();
    let now = 1_000_000;
    const server = openSqliteStore({ dataDir: d, clock: { now: () => now } });
    cleanups.push(() => server.close());
    const { id, token } = server.createProject('p');
    const hash = hashTokenNode(token);
    expect(server.findByTokenHash(hash)?.project.id).toBe(id);
    // Revoked by another connection (the CLI): still cached until the time passes.
    const cli = openSqliteStore({ dataDir: d });
    expect(cli.revokeToken({ token })).toBe(true);
    cli.close();
    expect(server.findByTokenHash(hash)?.project.id).toBe(id);
    now += 1001;
    expect(server.findByTokenHash(hash)).toBeUndefined();
    // Through the same store: at once.
    const { token: next } = server.issueToken(id);
    expect(server.findByTokenHash(hashTokenNode(next))).toBeDefined();
    server.revokeToken({ token: next });
    expect(server.findByTokenHash(hashTokenNode(next))).toBeUndefined();
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
    expect(() => openSqliteStore({ dataDir: dir(), tokenCacheMs: -1 })).toThrow(/tokenCacheMs/);
  });
});
