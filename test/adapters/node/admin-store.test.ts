// The admin login store: the secret stored only as an scrypt hash and shown once, sessions kept
// only as hashes and expiring, one CSRF token per session, per-address login limits, and a
// password reset that ends every session.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openAdminStore, readCookie, type AdminStore, type AdminStoreOptions } from '../../../src/adapters/node/admin-store.js';
import { openSqliteStore } from '../../../src/adapters/node/index.js';

// A low scrypt cost keeps the tests fast; one test checks the default cost separately.
const FAST = { N: 1024, r: 8, p: 1 };
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function open(options: Partial<AdminStoreOptions> = {}): { admin: AdminStore; dir: string; clock: { t: number; now(): number } } {
  const dir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'agentwarden-admin-'));
  const clock = { t: Date.parse('2026-11-22T00:00:00Z'), now() { return this.t; } };
  const admin = openAdminStore({ dataDir: dir, clock, scrypt: FAST, ...options });
  cleanups.push(() => admin.close());
  if (options.dataDir === undefined) cleanups.unshift(() => rmSync(dir, { recursive: true, force: true }));
  return { admin, dir, clock };
}

function rows<T>(dir: string, sql: string): T[] {
  const db = new Database(join(dir, 'agentwarden.db'), { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

describe('admin secret', () => {
  it('is created once, returned only then, and stored as an scrypt hash', async () => {
    const { admin, dir } = open();
    const secret = await admin.ensureSecret();
    expect(secret).toMatch(/^aws_[A-Za-z0-9_-]{32}$/);
    expect(await admin.ensureSecret()).toBeUndefined();
    const [row] = rows<{ hash: string }>(dir, 'SELECT hash FROM admin_secret');
    expect(row!.hash).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(row!.hash).not.toContain(secret!.slice(4));
    expect((await admin.login(secret!, '127.0.0.1')).ok).toBe(true);
  });

  it('uses scrypt N=2^15, r=8, p=1 by default', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentwarden-admin-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const admin = openAdminStore({ dataDir: dir });
    cleanups.unshift(() => admin.close());
    const secret = (await admin.ensureSecret())!;
    expect(rows<{ hash: string }>(dir, 'SELECT hash FROM admin_secret')[0]!.hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect((await admin.login(secret, '::1')).ok).toBe(true);
    expect(await admin.login(`${secret}x`, '::1')).toEqual({ ok: false, reason: 'wrong-secret' });
  });

  it('refuses a wrong secret, a near miss and a non-string, and logins before any secret exists', async () => {
    const { admin } = open();
    expect(await admin.login('anything', '10.0.0.1')).toEqual({ ok: false, reason: 'no-secret' });
    const secret = (await admin.ensureSecret())!;
    expect(await admin.login(secret.slice(0, -1), '10.0.0.1')).toEqual({ ok: false, reason: 'wrong-secret' });
    expect(await admin.login(secret.toUpperCase(), '10.0.0.1')).toEqual({ ok: false, reason: 'wrong-secret' });
    expect(await admin.login(42 as unknown as string, '10.0.0.1')).toEqual({ ok: false, reason: 'wrong-secret' });
    expect(admin.countSessions()).toBe(0);
  });

  it('reset-password replaces the secret and ends every session', async () => {
    const { admin } = open();
    const old = (await admin.ensureSecret())!;
    const login = await admin.login(old, '127.0.0.1');
    if (!login.ok) throw new Error('login failed');
    const fresh = await admin.resetSecret();
    expect(fresh).not.toBe(old);
    expect(admin.findSession(login.cookieValue)).toBeUndefined();
    expect(await admin.login(old, '127.0.0.1')).toEqual({ ok: false, reason: 'wrong-secret' });
    expect((await admin.login(fresh, '127.0.0.1')).ok).toBe(true);
  });

  it('shares the data directory with the project store, in its own versioned tables', async () => {
    const { admin, dir } = open();
    await admin.ensureSecret();
    const store = openSqliteStore({ dataDir: dir });
    store.createProject('example.com');
    store.close();
    expect(rows<{ component: string; version: number }>(dir, "SELECT component, version FROM schema_versions WHERE component = 'admin'")).toEqual([{ component: 'admin', version: 1 }]);
    admin.close();
    // Reopening migrates nothing and keeps the secret.
    const again = openAdminStore({ dataDir: dir, scrypt: FAST });
    cleanups.push(() => again.close());
    expect(await again.ensureSecret()).toBeUndefined();
  });
});

describe('admin sessions', () => {
  it('are random 256-bit cookies stored only as hashes, each with its own CSRF token', async () => {
    const { admin, dir } = open();
    const secret = (await admin.ensureSecret())!;
    const a = await admin.login(secret, '127.0.0.1');
    const b = await admin.login(secret, '127.0.0.1');
    if (!a.ok || !b.ok) throw new Error('login failed');
    expect(a.cookieValue).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.cookieValue).not.toBe(b.cookieValue);
    expect(a.session.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.session.csrfToken).not.toBe(b.session.csrfToken);
    expect(a.session.id).not.toContain(a.cookieValue);
    const stored = rows<{ id_hash: string }>(dir, 'SELECT id_hash FROM admin_sessions').map((r) => r.id_hash);
    expect(stored).toHaveLength(2);
    expect(stored.join(' ')).not.toContain(a.cookieValue);
    expect(admin.findSession(a.cookieValue)).toMatchObject({ id: a.session.id, csrfToken: a.session.csrfToken });
    expect(admin.findSession(`${a.cookieValue.slice(0, -1)}${a.cookieValue.endsWith('A') ? 'B' : 'A'}`)).toBeUndefined();
  });

  it('expire after the session length and are read from the Cookie header', async () => {
    const { admin, clock } = open({ sessionMs: 60_000 });
    const secret = (await admin.ensureSecret())!;
    const login = await admin.login(secret, '127.0.0.1');
    if (!login.ok) throw new Error('login failed');
    expect(login.maxAgeSeconds).toBe(60);
    const request = { method: 'GET', path: '/admin/session', headers: { cookie: `theme=dark; aw_session=${login.cookieValue}; other=1` } };
    expect(admin.authenticate(request)).toMatchObject({ id: login.session.id });
    clock.t += 59_999;
    expect(admin.authenticate(request)).toBeDefined();
    clock.t += 1;
    expect(admin.authenticate(request)).toBeUndefined();
    expect(admin.countSessions()).toBe(0);
  });

  it('end at logout', async () => {
    const { admin } = open();
    const secret = (await admin.ensureSecret())!;
    const login = await admin.login(secret, '127.0.0.1');
    if (!login.ok) throw new Error('login failed');
    expect(admin.logout(login.session.id)).toBe(true);
    expect(admin.findSession(login.cookieValue)).toBeUndefined();
    expect(admin.logout(login.session.id)).toBe(false);
  });

  it('reads one cookie among several, in one or more Cookie headers', () => {
    expect(readCookie('a=1; aw_session=xyz; b=2', 'aw_session')).toBe('xyz');
    expect(readCookie(['a=1', 'aw_session=q'], 'aw_session')).toBe('q');
    expect(readCookie('xaw_session=1', 'aw_session')).toBeUndefined();
    expect(readCookie(undefined, 'aw_session')).toBeUndefined();
  });
});

describe('login rate limit', () => {
  it('allows a burst per address, then refuses even the right secret until time passes', async () => {
    const { admin, clock } = open({ loginLimit: { burst: 3, refillSeconds: 60 } });
    const secret = (await admin.ensureSecret())!;
    for (let i = 0; i < 3; i++) expect(await admin.login('wrong', '198.51.100.7')).toEqual({ ok: false, reason: 'wrong-secret' });
    expect(await admin.login(secret, '198.51.100.7')).toEqual({ ok: false, reason: 'rate-limited', retryAfterSeconds: 60 });
    // Another address has its own budget.
    expect((await admin.login(secret, '198.51.100.8')).ok).toBe(true);
    clock.t += 60_000;
    expect((await admin.login(secret, '198.51.100.7')).ok).toBe(true);
  });

  it('rejects bad options at creation, naming them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentwarden-admin-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    expect(() => openAdminStore({ dataDir: '' })).toThrow(TypeError);
    expect(() => openAdminStore({ dataDir: dir, sessionMs: 0 })).toThrow(/sessionMs must be a positive number, got 0/);
    expect(() => openAdminStore({ dataDir: dir, loginLimit: { burst: -1, refillSeconds: 1 } })).toThrow(/loginLimit.burst/);
    expect(() => openAdminStore({ dataDir: dir, scrypt: { N: 1000, r: 8, p: 1 } })).toThrow(/scrypt.N must be a power of two, got 1000/);
  });
});
