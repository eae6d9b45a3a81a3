// The SQLite visit store: the shared contract suite on a real file, then what only it promises —
// group commit, backpressure, exact counts around the rollup pass (before it, after it, after a
// crash between the two), retention with rollups that outlive raw rows, reopening, and the
// migration of the first schema's visits table.
import { mkdtempSync, rmSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serveCommand } from '../../../src/adapters/node/commands/serve.js';
import { openSqliteStore } from '../../../src/adapters/node/sqlite-store.js';
import { openSqliteVisitStore, VISIT_SCHEMA_VERSION, type SqliteVisitStoreOptions } from '../../../src/adapters/node/sqlite-visit-store.js';
import { createMemoryVisitStore, FAILED_WRITE_MEMORY_MS, VisitStoreUnavailableError, type EnrichedVisit, type PathCountsQuery, type StatsQuery } from '../../../src/index.js';
import { captureIo } from '../../helpers/cli-io.js';
import { BASE, describeVisitStore, expectedPathCounts, expectedSeen, expectedStats, generateVisits, makeVisit, sortSeen } from '../../visits/store-suite.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;

function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'agentwarden-visits-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

// The product path: the project store composes the visit store on its own database.
describeVisitStore('sqlite', async () => {
  const { dir, cleanup } = tempDir();
  const store = openSqliteStore({ dataDir: dir });
  return {
    store,
    catchUp: async () => {
      await store.visits.rollUp();
    },
    close: async () => {
      store.close();
      cleanup();
    },
  };
});

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** A visit store on a fresh WAL database of its own. */
function openFresh(options: SqliteVisitStoreOptions = {}, dir = tempDir()) {
  cleanups.push(dir.cleanup);
  const db = new Database(join(dir.dir, 'visits.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const store = openSqliteVisitStore(db, { retentionDays: 0, ...options });
  cleanups.push(() => {
    store.close();
    db.close();
  });
  return { db, store, dir };
}

/** Undoes the last visit migration: the combined rollups without their first and last times. */
const DROP_TIMES = ['minute', 'hour', 'day'].map((width) => `ALTER TABLE visit_dims_${width} DROP COLUMN first; ALTER TABLE visit_dims_${width} DROP COLUMN last;`).join(' ');

/** The rollup pass's progress: its watermark, and the last visit id written. */
function progress(db: Database.Database): { watermark: number; last: number } {
  return {
    watermark: db.prepare('SELECT watermark FROM visit_rollup_state').pluck().get() as number,
    last: (db.prepare('SELECT max(id) FROM visits').pluck().get() as number | null) ?? 0,
  };
}

/** Every rollup table's visits: each must hold every visit once (retention aside). */
function rollupTotals(db: Database.Database): Record<string, number> {
  const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'visit\\_%' ESCAPE '\\' AND name NOT IN ('visit_rollup_state', 'visit_header_pairs', 'visit_idempotency_keys')").pluck().all() as string[];
  return Object.fromEntries(tables.map((table) => [table, (db.prepare(`SELECT coalesce(sum(count), 0) FROM ${table}`).pluck().get() as number) ?? 0]));
}

// Queries over the generated data set that read every kind of rollup: day, hour and minute tables,
// the path-first and (agent, path) tables, top keys with `other`, edges from raw rows.
const DAY_SET = 4 * DAY;
function exactnessQueries(projectId: string): { stats: StatsQuery[]; paths: PathCountsQuery[] } {
  const stats: StatsQuery[] = [];
  for (const by of ['agent', 'agent_type', 'result', 'referral', 'path', 'status'] as const) {
    stats.push({ projectId, from: BASE, to: BASE + DAY_SET, interval: 'day', by });
    stats.push({ projectId, from: BASE + 3 * HOUR, to: BASE + DAY_SET - 1, interval: 'day', by, filter: { status: 200, has_agent: true } });
    stats.push({ projectId, from: BASE + 2 * HOUR + 9, to: BASE + 2 * DAY + 7, interval: 'hour', by, filter: { status: null, result: 'verified' } });
    stats.push({ projectId, from: BASE - 7, to: BASE + DAY_SET - 3 * HOUR + 1234, interval: 'hour', by, limit: 3 });
    stats.push({ projectId, from: BASE + DAY + 17 * 60_000 + 5, to: BASE + DAY + 5 * HOUR + 31_000, interval: 'minute', by });
    stats.push({ projectId, from: BASE + 999, to: BASE + 3 * DAY + 2 * HOUR + 7, interval: 'hour', by, filter: { agent_type: 'AI Data Scraper' } });
    stats.push({ projectId, from: BASE, to: BASE + DAY_SET, interval: 'hour', by, filter: { path: '/docs' } });
  }
  const paths: PathCountsQuery[] = [
    { projectId, from: BASE, to: BASE + DAY_SET },
    { projectId, from: BASE + 5 * HOUR + 3, to: BASE + 3 * DAY + 7, agentsOnly: true },
    { projectId, from: BASE, to: BASE + DAY_SET, filter: { result: 'verified' } },
    { projectId, from: BASE + 11, to: BASE + DAY_SET, filter: { agent_id: null } },
    // Small limits stop reading pairs by total early; filters narrow the totals read.
    { projectId, from: BASE, to: BASE + DAY_SET, limit: 3 },
    { projectId, from: BASE + 5 * HOUR + 3, to: BASE + 3 * DAY + 7, agentsOnly: true, limit: 4 },
    { projectId, from: BASE + DAY, to: BASE + 2 * DAY, limit: 2 },
    { projectId, from: BASE, to: BASE + DAY_SET, filter: { agent_type: 'AI Data Scraper' }, limit: 2 },
    { projectId, from: BASE - HOUR, to: BASE + DAY_SET, filter: { path: '/docs' }, limit: 1 },
  ];
  return { stats, paths };
}

async function expectExact(store: { stats: (q: StatsQuery) => Promise<unknown>; pathCounts: (q: PathCountsQuery) => Promise<unknown> }, visits: readonly EnrichedVisit[], projectId: string): Promise<void> {
  const { stats, paths } = exactnessQueries(projectId);
  for (const query of stats) expect(await store.stats(query), JSON.stringify(query)).toEqual(expectedStats(visits, query));
  for (const query of paths) expect(await store.pathCounts(query), JSON.stringify(query)).toEqual(expectedPathCounts(visits, query));
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('openSqliteVisitStore', () => {
  it('writes appends of one event-loop turn in one transaction, resolving each after the commit', async () => {
    const { store } = openFresh();
    const before = store.commits();
    const appends = Array.from({ length: 200 }, (_, i) => store.append(`prj_${i % 3}`, Array.from({ length: 5 }, (_, j) => makeVisit({ request_path: `/${i}/${j}` }))));
    expect(store.pending()).toBe(1000);
    const results = await Promise.all(appends);
    expect(store.commits() - before).toBe(1);
    expect(store.pending()).toBe(0);
    expect(store.count()).toBe(1000);
    const ids = results.flat().map((v) => Number(v.id));
    expect(new Set(ids).size).toBe(1000);
    // Ids follow append order, so each project's timeline is in the order its appends were made.
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(store.list('prj_1').map((v) => v.request_path)).toEqual(results.flatMap((batch, i) => (i % 3 === 1 ? batch.map((v) => v.request_path) : [])));

    // Appends of later turns get transactions of their own.
    await store.append('prj_0', [makeVisit()]);
    await store.append('prj_0', [makeVisit()]);
    expect(store.commits() - before).toBe(3);
  });

  it('rejects with VisitStoreUnavailableError("busy") past maxPendingVisits, storing nothing of the refused batch', async () => {
    const { store } = openFresh({ maxPendingVisits: 10 });
    const first = store.append('prj_a', Array.from({ length: 8 }, (_, i) => makeVisit({ request_path: `/ok/${i}` })));
    const refused = store.append('prj_a', Array.from({ length: 5 }, (_, i) => makeVisit({ request_path: `/refused/${i}` })));
    const error = await refused.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(VisitStoreUnavailableError);
    expect((error as VisitStoreUnavailableError).reason).toBe('busy');
    expect((error as VisitStoreUnavailableError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    // What fits still joins the waiting batch.
    const fits = store.append('prj_a', [makeVisit({ request_path: '/fits' }), makeVisit({ request_path: '/fits' })]);
    expect(await first).toHaveLength(8);
    expect(await fits).toHaveLength(2);
    expect(store.list('prj_a').map((v) => v.request_path).filter((path) => path.startsWith('/refused'))).toEqual([]);
    expect(store.count()).toBe(10);
    // Once written, the queue takes visits again; a batch larger than the bound alone is taken whole.
    expect(await store.append('prj_a', Array.from({ length: 25 }, () => makeVisit()))).toHaveLength(25);
  });

  it('runs its rollup and retention timers only when the write lock is free: another process\'s lock never blocks the event loop for busy_timeout', async () => {
    const { db, store, dir } = openFresh({ rollupIntervalMs: 20, retentionIntervalMs: 20 });
    db.pragma('busy_timeout = 1000');
    expect(await store.append('prj_a', [makeVisit()])).toHaveLength(1);
    const other = new Database(join(dir.dir, 'visits.db'));
    other.exec('BEGIN IMMEDIATE');
    try {
      // The event loop's longest stall over half a second of timer passes.
      let longest = 0;
      let last = performance.now();
      const until = last + 500;
      while (performance.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        const now = performance.now();
        longest = Math.max(longest, now - last);
        last = now;
      }
      expect(longest).toBeLessThan(500);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    // With the lock gone the passes run again.
    await expect.poll(() => store.rollUp().then(() => true), { timeout: 2000 }).toBe(true);
  });

  it('lets its timers find the database closed under them without an error (the pass at open, the intervals)', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const db = new Database(join(dir.dir, 'visits.db'));
    const store = openSqliteVisitStore(db, { retentionDays: 0, rollupIntervalMs: 10, retentionIntervalMs: 10 });
    // Closed by its owner without closing the store first: the timers' next passes must skip it.
    db.close();
    await new Promise((resolve) => setTimeout(resolve, 60));
    store.close();
  });

  it("waits for another connection's write lock on timers, never in SQLite's busy handler: the event loop keeps serving, the visits commit once the lock is free, and are refused after busy_timeout", async () => {
    const { db, store, dir } = openFresh();
    db.pragma('busy_timeout = 3000');
    const other = new Database(join(dir.dir, 'visits.db'));
    other.exec('BEGIN IMMEDIATE');
    let stored: Promise<readonly unknown[]>;
    let longest = 0;
    try {
      stored = store.append('prj_a', [makeVisit({ request_path: '/while-locked' })]);
      const later = store.append('prj_a', [makeVisit({ request_path: '/joined-the-wait' })]);
      stored = Promise.all([stored, later]).then((groups) => groups.flat());
      // The event loop's longest stall while the append waits (it used to block for busy_timeout).
      let last = performance.now();
      for (const until = last + 400; performance.now() < until; ) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        const now = performance.now();
        longest = Math.max(longest, now - last);
        last = now;
      }
      expect((await store.health()).status).toBe('unavailable');
    } finally {
      other.exec('ROLLBACK');
    }
    expect(longest).toBeLessThan(200);
    expect(await stored).toHaveLength(2);
    expect(store.list('prj_a').map((visit) => visit.request_path).sort()).toEqual(['/joined-the-wait', '/while-locked']);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(3000);
    expect(await store.health()).toEqual({ status: 'ok' });

    // Held longer than busy_timeout: refused as not stored, and nothing is written after.
    db.pragma('busy_timeout = 300');
    other.exec('BEGIN IMMEDIATE');
    const started = performance.now();
    try {
      const error = await store.append('prj_a', [makeVisit({ request_path: '/refused' })]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ name: 'VisitStoreUnavailableError', reason: 'unavailable', outcome: 'not-stored' });
      expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(store.count('prj_a')).toBe(2);
  });

  it('answers unavailable when another writer holds the database, and recovers after', async () => {
    const { db, store, dir } = openFresh();
    db.pragma('busy_timeout = 0');
    const other = new Database(join(dir.dir, 'visits.db'));
    other.exec('BEGIN IMMEDIATE');
    const error = await store.append('prj_a', [makeVisit()]).then(
      () => undefined,
      (e: unknown) => e,
    );
    other.exec('ROLLBACK');
    other.close();
    expect(error).toBeInstanceOf(VisitStoreUnavailableError);
    expect((error as VisitStoreUnavailableError).reason).toBe('unavailable');
    // SQLITE_BUSY: the transaction never began, so the store knows nothing was written.
    expect((error as VisitStoreUnavailableError).outcome).toBe('not-stored');
    expect(store.count()).toBe(0);
    expect(await store.append('prj_a', [makeVisit()])).toHaveLength(1);
  });

  it('reports itself not ready (GET /readyz) after a commit failed for another connection\'s lock, until the lock is gone, a commit succeeds, or FAILED_WRITE_MEMORY_MS pass', async () => {
    let now = Date.parse('2026-11-26T12:00:00Z');
    const { db, store, dir } = openFresh({ clock: { now: () => now } });
    expect(await store.health()).toEqual({ status: 'ok' });
    db.pragma('busy_timeout = 0');
    const other = new Database(join(dir.dir, 'visits.db'));
    other.exec('BEGIN IMMEDIATE');
    await expect(store.append('prj_a', [makeVisit()])).rejects.toBeInstanceOf(VisitStoreUnavailableError);
    const down = await store.health();
    expect(down.status).toBe('unavailable');
    expect(down.status !== 'ok' && down.detail).toContain('SQLITE_BUSY');
    // Still failing while the other writer holds the file; the memory of it fades with time.
    now += FAILED_WRITE_MEMORY_MS - 1;
    expect((await store.health()).status).toBe('unavailable');
    now += 1;
    expect(await store.health()).toEqual({ status: 'ok' });
    await expect(store.append('prj_a', [makeVisit()])).rejects.toBeInstanceOf(VisitStoreUnavailableError);
    expect((await store.health()).status).toBe('unavailable');
    other.exec('ROLLBACK');
    // The lock is free again: asked without waiting, and without writing anything.
    const pages = db.pragma('page_count', { simple: true });
    expect(await store.health()).toEqual({ status: 'ok' });
    expect(db.pragma('page_count', { simple: true })).toBe(pages);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(0);
    // Taken again by the other connection: the failure counts again, and the check does not wait.
    other.exec('BEGIN IMMEDIATE');
    db.pragma('busy_timeout = 2000');
    const started = Date.now();
    expect((await store.health()).status).toBe('unavailable');
    expect(Date.now() - started).toBeLessThan(200);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(2000);
    other.exec('ROLLBACK');
    other.close();
    // One commit that goes through makes it ready again whatever the lock does.
    expect(await store.append('prj_a', [makeVisit()])).toHaveLength(1);
    expect(await store.health()).toEqual({ status: 'ok' });
  });

  it('reports itself not ready when the database is full (SQLITE_FULL), as on a full disk', async () => {
    const { db, store } = openFresh();
    await store.append('prj_a', [makeVisit()]);
    // SQLite's own size cap fails writes exactly as a full disk does: with SQLITE_FULL.
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
    const error = await store.append('prj_a', Array.from({ length: 500 }, (_, i) => makeVisit({ request_path: `/full/${i}/${'x'.repeat(200)}` }))).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ reason: 'unavailable', outcome: 'not-stored' });
    const health = await store.health();
    expect(health.status).toBe('unavailable');
    expect(health.status !== 'ok' && health.detail).toContain('SQLITE_FULL');
    expect(store.count()).toBe(1);
  });

  it('reports itself not ready when the disk of its file has less free space than minFreeDiskBytes, and when closed', async () => {
    const free = (await statfs(tmpdir())).bavail * (await statfs(tmpdir())).bsize;
    const { store: roomy } = openFresh({ minFreeDiskBytes: 1 });
    expect(await roomy.health()).toEqual({ status: 'ok' });
    const { store: cramped, dir } = openFresh({ minFreeDiskBytes: free * 4 });
    const health = await cramped.health();
    expect(health.status).toBe('unavailable');
    expect(health.status !== 'ok' && health.detail).toMatch(new RegExp(`^\\d+ MiB free on the disk of ${dir.dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, below the \\d+ MiB`));
    const { store: unchecked } = openFresh({ minFreeDiskBytes: 0 });
    expect(await unchecked.health()).toEqual({ status: 'ok' });
    unchecked.close();
    expect(await unchecked.health()).toEqual({ status: 'unavailable', detail: 'the visit store is closed' });
    expect(() => openFresh({ minFreeDiskBytes: -1 })).toThrow('minFreeDiskBytes must be an integer >= 0, got -1');
  });

  it('says the outcome of a failed write is unknown for an I/O error (the commit may have reached the WAL)', async () => {
    const { db, store } = openFresh();
    // The COMMIT of a group whose write hits an I/O error: the transaction throws SQLITE_IOERR.
    const ioError = Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' });
    const prepare = db.prepare.bind(db);
    const failing = vi.spyOn(db, 'prepare').mockImplementation(((sql: string) => {
      const statement = prepare(sql);
      if (sql.startsWith('INSERT INTO visits ')) statement.run = () => {
        throw ioError;
      };
      return statement;
    }) as typeof db.prepare);
    const error = await store.append('prj_io', [makeVisit({ request_path: '/io/never-written' })]).then(
      () => undefined,
      (e: unknown) => e,
    );
    failing.mockRestore();
    expect(error).toBeInstanceOf(VisitStoreUnavailableError);
    expect(error).toMatchObject({ reason: 'unavailable', outcome: 'unknown' });
  });

  it('never writes a committed group again when something fails after the commit', async () => {
    const { store } = openFresh();
    // A library caller's visit whose field reads once (as the row is written), then throws (as
    // the stored copy is made, after the commit).
    let reads = 0;
    const odd = makeVisit({ request_path: '/odd' });
    Object.defineProperty(odd, 'note', {
      enumerable: true,
      get: () => {
        if (reads++ > 0) throw new Error('read twice');
        return 'once';
      },
    });
    const plain = store.append('prj_post', [makeVisit({ request_path: '/plain' })]);
    const oddAppend = store.append('prj_post', [odd]).then(
      () => 'stored',
      (e: unknown) => (e as Error).message,
    );
    // Both were in one transaction: committed once, and never again; the odd one fails alone.
    expect(await oddAppend).toBe('read twice');
    expect((await plain).map((v) => v.request_path)).toEqual(['/plain']);
    expect(store.list('prj_post').map((v) => v.request_path).sort()).toEqual(['/odd', '/plain']);
    expect(store.commits()).toBe(1);
  });

  it('deletes raw visits past retentionDays in chunks while hour and day rollups keep answering', async () => {
    let now = BASE + 3 * DAY;
    const { store } = openFresh({ retentionDays: 30, retentionIntervalMs: 0, clock: { now: () => now } });
    const old = Array.from({ length: 5000 }, (_, i) =>
      makeVisit({ time: BASE + (i % 48) * HOUR + i, agent_id: i % 2 === 0 ? 'gptbot' : null, agent_type: i % 2 === 0 ? 'AI Data Scraper' : null, request_path: `/old/${i % 7}` }),
    );
    const recent = Array.from({ length: 30 }, (_, i) => makeVisit({ time: BASE + 35 * DAY + i, request_path: '/recent' }));
    await store.append('prj_r', old);
    await store.append('prj_r', recent);
    await store.append('prj_other', [makeVisit({ time: BASE })]);
    const queries: StatsQuery[] = [
      { projectId: 'prj_r', from: BASE, to: BASE + 2 * DAY, interval: 'day', by: 'agent' },
      { projectId: 'prj_r', from: BASE, to: BASE + 2 * DAY, interval: 'hour', by: 'path' },
      { projectId: 'prj_r', from: BASE + 3 * HOUR, to: BASE + 20 * HOUR, interval: 'hour', by: 'agent_type', filter: { path: '/old/3' } },
    ];
    const answers = await Promise.all(queries.map((q) => store.stats(q)));
    const paths = await store.pathCounts({ projectId: 'prj_r', from: BASE, to: BASE + 2 * DAY, agentsOnly: true });
    expect(answers[0]!.total).toBe(5000);

    // Nothing is 30 days old yet; 40 days after BASE the first two days' visits are.
    expect(await store.applyRetention()).toEqual({ visits: 0, rollupRows: 0, idempotencyKeys: 0 });
    now = BASE + 40 * DAY;
    const pass = await store.applyRetention();
    expect(pass.visits).toBe(5001);
    expect(pass.rollupRows).toBeGreaterThan(0);
    expect(store.count('prj_r')).toBe(30);
    expect(store.count('prj_other')).toBe(0);
    expect((await store.timeline({ projectId: 'prj_r', limit: 1000 })).map((v) => v.request_path)).toEqual(Array(30).fill('/recent'));
    for (const [i, query] of queries.entries()) expect(await store.stats(query)).toEqual(answers[i]);
    expect(await store.pathCounts({ projectId: 'prj_r', from: BASE, to: BASE + 2 * DAY, agentsOnly: true })).toEqual(paths);
    // The minute rollup goes with the raw rows: minute stats of a pruned range are empty.
    expect((await store.stats({ projectId: 'prj_r', from: BASE, to: BASE + DAY, interval: 'minute', by: 'agent' })).total).toBe(0);
  });

  it('tells onRetention what a scheduled pass deleted (none when it deleted nothing), and why one failed', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const db = new Database(join(dir.dir, 'visits.db'));
    cleanups.push(() => db.close());
    const now = BASE + 40 * DAY;
    let clock = BASE + 2 * DAY;
    const open = (onRetention: SqliteVisitStoreOptions['onRetention']) => openSqliteVisitStore(db, { retentionDays: 30, retentionIntervalMs: 0, clock: { now: () => clock }, onRetention });
    const outcomes: Parameters<NonNullable<SqliteVisitStoreOptions['onRetention']>>[0][] = [];
    const until = async (count: number) => {
      for (let waited = 0; outcomes.length < count && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    let store = open((outcome) => outcomes.push(outcome));
    await store.append('prj_r', [makeVisit({ time: BASE }), makeVisit({ time: BASE + HOUR }), makeVisit({ time: now - DAY })]);
    await store.applyRetention();
    // Nothing was 30 days old yet: the pass at open deleted nothing, and said nothing.
    expect(outcomes).toEqual([]);
    store.close();
    clock = now;

    store = open((outcome) => outcomes.push(outcome));
    await until(1);
    expect(outcomes).toEqual([{ deleted: { visits: 2, rollupRows: expect.any(Number), idempotencyKeys: 0 } }]);
    store.close();

    db.exec("CREATE TRIGGER refuse_delete BEFORE DELETE ON visit_dims_minute BEGIN SELECT RAISE(ABORT, 'the disk refused the delete'); END");
    const again = openSqliteVisitStore(db, { retentionDays: 1, retentionIntervalMs: 0, clock: { now: () => now + 10 * DAY }, onRetention: (outcome) => outcomes.push(outcome) });
    await until(2);
    again.close();
    expect(String((outcomes[1] as { error: Error }).error)).toContain('the disk refused the delete');
    // A throwing onRetention breaks nothing: the store goes on.
    db.exec('DROP TRIGGER refuse_delete');
    let thrown = 0;
    const thrower = openSqliteVisitStore(db, {
      retentionDays: 1,
      retentionIntervalMs: 0,
      clock: { now: () => now + 10 * DAY },
      onRetention: () => {
        thrown++;
        throw new Error('a broken logger');
      },
    });
    for (let waited = 0; thrown === 0 && waited < 5000; waited += 10) await settled();
    expect(thrown).toBe(1);
    await thrower.append('prj_r', [makeVisit({ time: now + 10 * DAY })]);
    expect(thrower.count('prj_r')).toBe(1);
    thrower.close();
  });

  it('counts visits exactly while they wait past the rollup watermark, and after the pass folds them', async () => {
    const { db, store } = openFresh({ rollupIntervalMs: 0 });
    await settled(); // the fold at open has run
    const visits = generateVisits();
    const half = Math.floor(visits.length / 2);
    await store.append('prj_x', visits.slice(0, half));
    expect(await store.rollUp()).toBe(half);
    await store.append('prj_x', visits.slice(half));
    // Appends write raw rows only: the second half waits past the watermark.
    expect(progress(db).watermark).toBeLessThan(progress(db).last);
    await expectExact(store, visits, 'prj_x');
    expect(await store.rollUp()).toBe(visits.length - half);
    expect(progress(db).watermark).toBe(progress(db).last);
    await expectExact(store, visits, 'prj_x');
    for (const [table, total] of Object.entries(rollupTotals(db))) expect(total, table).toBe(visits.length);
  });

  it('finds the exact first and last visit of each agent past the watermark, after the pass, and past raw-visit retention', async () => {
    let now = BASE + 5 * DAY;
    const { store } = openFresh({ rollupIntervalMs: 0, retentionDays: 30, retentionIntervalMs: 0, clock: { now: () => now } });
    await settled();
    const visits = generateVisits();
    const half = Math.floor(visits.length / 2);
    await store.append('prj_s', visits.slice(0, half));
    expect(await store.rollUp()).toBe(half);
    // The rest waits past the watermark: read from raw rows alongside the rollups.
    await store.append('prj_s', visits.slice(half));
    const queries = [
      { from: BASE - DAY, to: BASE + 5 * DAY },
      { from: BASE, to: BASE + 2 * DAY + 13 * HOUR + 7 * 60_000 },
      { from: BASE + 5 * HOUR + 17 * 60_000 + 3_001, to: BASE + 2 * DAY + 7 * HOUR + 11_017, filter: { agent_id: 'gptbot' } },
      { from: BASE + DAY, to: BASE + 3 * DAY, filter: { has_agent: false, referral: null } },
      { from: BASE, to: BASE + 4 * DAY, filter: { path: '/docs' } },
    ];
    const check = async (list: typeof queries) => {
      for (const query of list) expect(sortSeen(await store.seen({ projectId: 'prj_s', ...query })), JSON.stringify(query)).toEqual(expectedSeen(visits, query));
    };
    await check(queries);
    await store.rollUp();
    await check(queries);
    // Past retention raw rows and the minute rollup are gone; hour and day rollups keep the exact times.
    now = BASE + 40 * DAY;
    expect((await store.applyRetention()).visits).toBe(visits.length);
    await check(queries.filter((query) => query.from % HOUR === 0 && query.to % HOUR === 0 && query.filter?.path === undefined));
  });

  it('finds raw rows of any sub-minute range through the minute index, times before 1970 included', async () => {
    const { db, store } = openFresh({ rollupIntervalMs: 0 });
    await settled();
    const times = [-120_001, -60_001, -60_000, -59_999, -30_000, -1, 0, 1, 59_999, 60_000, 119_999, 120_000];
    await store.append('prj_x', times.map((time) => makeVisit({ time, request_path: `/t${time}` })));
    const ranges: [number, number][] = [
      [-60_001, -59_999],
      [-60_000, 0],
      [-59_999.5, 0.5],
      [-1, 1],
      [0, 60_000],
      [1, 119_999],
      [59_999, 60_001],
      [-120_001, 120_001],
    ];
    // The in-memory store is the reference; pathCounts counts exactly [from, to), stats whole buckets from the one holding `from`.
    const reference = createMemoryVisitStore();
    await reference.append('prj_x', times.map((time) => makeVisit({ time, request_path: `/t${time}` })));
    const check = async () => {
      for (const [from, to] of ranges) {
        const paths = await store.pathCounts({ projectId: 'prj_x', from, to });
        expect(paths.reduce((sum, row) => sum + row.count, 0), `[${from}, ${to})`).toBe(times.filter((time) => time >= from && time < to).length);
        expect(paths).toEqual(await reference.pathCounts({ projectId: 'prj_x', from, to }));
        for (const interval of ['minute', 'hour'] as const) {
          const query = { projectId: 'prj_x', from, to, interval, by: 'path', limit: 50 } as const;
          expect(await store.stats(query), `[${from}, ${to}) by ${interval}`).toEqual(await reference.stats(query));
        }
      }
    };
    await check(); // every row past the watermark (the id index)
    await store.rollUp();
    await check(); // sub-minute edges from raw rows (the minute index), whole minutes from rollups
    const plan = db
      .prepare("EXPLAIN QUERY PLAN SELECT count(*) FROM visits INDEXED BY visits_by_minute WHERE project_id = 'prj_x' AND time / 60000 BETWEEN 0 AND 1 AND time >= 0 AND time < 90000")
      .all() as { detail: string }[];
    expect(plan.map((row) => row.detail).join(' ')).toMatch(/USING INDEX visits_by_minute \(project_id=\? AND <expr>>\? AND <expr><\?\)/);
  });

  it('stores repeated header texts once: a visit row keeps ids for them', async () => {
    const { db, store } = openFresh({ rollupIntervalMs: 0 });
    const headers = {
      'user-agent': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      'accept-language': 'de-DE,de;q=0.9,en-US;q=0.8,en;q=0.7',
      'accept-encoding': 'gzip, deflate, br',
      'x-forwarded-for': '198.51.100.23',
    };
    const visit = makeVisit({ request_headers: headers, response_headers: { 'content-type': 'text/html; charset=utf-8' } } as Partial<EnrichedVisit>);
    await store.append('prj_x', [visit, visit, visit]);
    const sizes = db.prepare('SELECT length(request_headers) + length(response_headers) FROM visits ORDER BY id').pluck().all() as number[];
    expect(sizes[2]!).toBeLessThan(sizes[0]! / 3);
    const [newest] = await store.timeline({ projectId: 'prj_x', limit: 1 });
    expect(newest).toMatchObject({ request_headers: headers, response_headers: { 'content-type': 'text/html; charset=utf-8' } });
    // Rows written before pairs existed keep JSON objects, and read back the same.
    db.prepare("UPDATE visits SET extras = json_object('request_headers', json(?)), request_headers = NULL WHERE id = 1").run(JSON.stringify(headers));
    expect((await store.timeline({ projectId: 'prj_x', limit: 3 }))[2]!.request_headers).toEqual(headers);
  });

  it('keeps the fields visits have in columns, a value of another type in extras, and reads both back as they were', async () => {
    const { db, store } = openFresh({ rollupIntervalMs: 0 });
    const typical = makeVisit({
      response_status_code: 503,
      response_duration_in_milliseconds: 0.1 + 0.2,
      created: '2026-03-01T09:59:00.000Z',
      response_headers: { 'content-type': 'text/html' },
      client_ip_header: 'x-forwarded-for',
      verification: {
        method: 'ip-ranges',
        checks: [
          { method: 'web-bot-auth', outcome: 'inconclusive', reason: 'key-directory-unavailable' },
          { method: 'ip-ranges', outcome: 'fail', reason: 'ip-not-in-range' },
        ],
      },
    });
    // A library caller may hand append() what parseVisit would refuse; it must read back unchanged.
    const odd = makeVisit({
      response_status_code: '200' as unknown as number,
      response_duration_in_milliseconds: null as unknown as number,
      created: 5 as unknown as string,
      request_headers: ['user-agent', 'x'] as unknown as Record<string, string>,
      is_blocked: true,
    } as Partial<EnrichedVisit>);
    const bare = makeVisit();
    await store.append('prj_x', [typical, odd, bare]);
    const rows = (
      db.prepare('SELECT response_status_code, response_duration_in_milliseconds, created, request_headers IS NOT NULL AS headers, client_ip_header, verification, extras FROM visits ORDER BY id').raw().all() as unknown[][]
    ).map((row) => [...row.slice(0, 6), row[6] === '' ? '' : JSON.parse(row[6] as string)]);
    expect(rows).toEqual([
      [503, 0.30000000000000004, '2026-03-01T09:59:00.000Z', 1, 'x-forwarded-for', 'web-bot-auth:i:key-directory-unavailable ip-ranges:f:ip-not-in-range', ''],
      [null, null, null, 0, null, null, { response_status_code: '200', response_duration_in_milliseconds: null, created: 5, request_headers: ['user-agent', 'x'], is_blocked: true }],
      [null, null, null, 1, null, null, ''],
    ]);
    const timeline = await store.timeline({ projectId: 'prj_x', limit: 3 });
    expect(timeline.map(({ id: _id, project_id: _p, ...visit }) => visit)).toEqual([bare, odd, typical]);
    expect(timeline[2]!.response_duration_in_milliseconds).toBe(0.1 + 0.2);
  });

  it('reads back every visit as appended, whatever its optional fields hold (property)', async () => {
    const { store } = openFresh({ rollupIntervalMs: 0 });
    const headers = fc.dictionary(fc.constantFrom('user-agent', 'accept', 'x-forwarded-for', 'date', 'constructor', '__proto__', '7'), fc.string({ maxLength: 8 }), { maxKeys: 4 });
    // What parseVisit gives these fields, and what a library caller might pass instead.
    const anything = fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
      fc.string({ maxLength: 8 }),
      headers,
      fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }),
    );
    // Verification reports as the chain makes them (the deciding method is the last check's when it
    // passed or failed), and ones it never makes (another method, odd words) that extras keep.
    const check = fc.record({
      method: fc.oneof(fc.constantFrom('web-bot-auth', 'ip-ranges', 'reverse-dns'), fc.string({ maxLength: 6 })),
      outcome: fc.constantFrom('pass', 'fail', 'inconclusive', 'maybe'),
      reason: fc.oneof(fc.constantFrom('ip-in-range', 'no-ptr', 'signature-expired'), fc.string({ maxLength: 6 })),
    });
    const report = fc.array(check, { minLength: 1, maxLength: 3 }).chain((checks) => {
      const last = checks[checks.length - 1]!;
      const decided = last.outcome === 'pass' || last.outcome === 'fail' ? last.method : null;
      return fc.record({ method: fc.oneof(fc.constant(decided), fc.constant(decided), anything), checks: fc.constant(checks) });
    });
    const optional = fc.record(
      {
        response_status_code: fc.oneof(fc.integer({ min: 100, max: 599 }), anything),
        response_duration_in_milliseconds: fc.oneof(fc.double({ min: 0, max: 1e6, noNaN: true }).filter((n) => !Object.is(n, -0)), anything),
        created: fc.oneof(fc.date({ noInvalidDate: true }).map((date) => date.toISOString()), anything),
        request_headers: fc.oneof(headers, anything),
        response_headers: fc.oneof(headers, anything),
        is_blocked: anything,
        client_ip_header: fc.oneof(fc.constantFrom('x-forwarded-for', 'cf-connecting-ip'), anything),
        verification: fc.oneof(report, anything, fc.record({ method: anything, checks: fc.array(anything.filter((value) => value !== undefined), { maxLength: 2 }) })),
      },
      { requiredKeys: [] },
    );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(optional, { minLength: 1, maxLength: 20 }), async (fields) => {
        const projectId = `prj_p${run++}`;
        const sent = fields.map((over) => ({ ...makeVisit(), ...over }) as EnrichedVisit);
        await store.append(projectId, sent);
        const read = await store.timeline({ projectId, limit: 1000 });
        expect([...read].reverse().map(({ id: _id, project_id: _p, ...visit }) => visit)).toEqual(sent);
      }),
      { numRuns: 150 },
    );
  });

  it('counts every visit once when two processes append to and fold one file in any order', async () => {
    for (const order of ['a-first', 'b-first'] as const) {
      const { db, store: a, dir } = openFresh({ rollupIntervalMs: 0 });
      const dbB = new Database(join(dir.dir, 'visits.db'));
      const b = openSqliteVisitStore(dbB, { retentionDays: 0, rollupIntervalMs: 0 });
      cleanups.push(() => {
        b.close();
        dbB.close();
      });
      await settled();
      const visits = generateVisits();
      const third = Math.floor(visits.length / 3);
      // A's own rows run on, then B's rows break them, then A's again.
      await a.append('prj_x', visits.slice(0, third));
      await b.append('prj_x', visits.slice(third, 2 * third));
      await a.append('prj_x', visits.slice(2 * third, 2 * third + 5));
      await a.append('prj_x', visits.slice(2 * third + 5));
      if (order === 'a-first') {
        expect(await a.rollUp(), order).toBe(visits.length);
        expect(await b.rollUp(), order).toBe(0);
      } else {
        expect(await b.rollUp(), order).toBe(visits.length);
        expect(await a.rollUp(), order).toBe(0);
      }
      for (const [table, total] of Object.entries(rollupTotals(db))) expect(total, `${order} ${table}`).toBe(visits.length);
      await expectExact(a, visits, 'prj_x');
      // Both keep folding exactly afterwards.
      await a.append('prj_x', visits.slice(0, 7));
      await b.append('prj_x', visits.slice(0, 3));
      expect((await a.rollUp()) + (await b.rollUp()), order).toBe(10);
      for (const [table, total] of Object.entries(rollupTotals(db))) expect(total, `${order} ${table}`).toBe(visits.length + 10);
    }
  });

  it('returns the ids the rows got, for batches of any size written several rows per statement', async () => {
    const { store, dir } = openFresh();
    const other = new Database(join(dir.dir, 'visits.db'));
    cleanups.push(() => other.close());
    const appended: { id: string; request_path: string }[] = [];
    for (const size of [1, 15, 16, 17, 37, 100]) {
      const batch = Array.from({ length: size }, (_, i) => makeVisit({ request_path: `/${size}/${i}` }));
      appended.push(...(await store.append('prj_x', batch)));
      // Another writer takes ids in between: the next batch's ids must still be its rows'.
      other.prepare("INSERT INTO visits (project_id, time, received, request_method, request_path, path, result, extras) VALUES ('prj_y', 0, 0, 'GET', '/', '/', 'unknown_agent', '{}')").run();
    }
    const stored = store.list('prj_x');
    expect(stored.map((visit) => [visit.id, visit.request_path])).toEqual(appended.map((visit) => [visit.id, visit.request_path]));
    expect(new Set(stored.map((visit) => visit.id)).size).toBe(186);
  });

  it('folds new visits in the background every rollupIntervalMs', async () => {
    const { db, store } = openFresh({ rollupIntervalMs: 20 });
    await store.append('prj_x', [makeVisit(), makeVisit({ time: BASE + DAY })]);
    await vi.waitFor(() => expect(progress(db).watermark).toBe(progress(db).last), { timeout: 2000, interval: 10 });
    expect(rollupTotals(db)['visit_dims_hour']).toBe(2);
  });

  it('catches up after a crash between the raw commit and the rollup pass, counting nothing twice', async () => {
    const dir = tempDir();
    const visits = generateVisits();
    const half = Math.floor(visits.length / 2);
    {
      const { db, store } = openFresh({ rollupIntervalMs: 0 }, dir);
      await settled();
      await store.append('prj_c', visits.slice(0, half));
      await store.rollUp();
      await store.append('prj_c', visits.slice(half));
      expect(progress(db).watermark).toBeLessThan(progress(db).last);
      // The process dies here: no close, no pass. (Committed rows are on disk: WAL.)
      db.close();
    }
    const { db, store } = openFresh({ rollupIntervalMs: 0 }, { ...dir, cleanup: () => undefined });
    // Before the pass: rollups plus the raw rows past the watermark.
    await expectExact(store, visits, 'prj_c');
    // The fold at open catches up by itself.
    await vi.waitFor(() => expect(progress(db).watermark).toBe(progress(db).last), { timeout: 2000, interval: 10 });
    await expectExact(store, visits, 'prj_c');
    for (const [table, total] of Object.entries(rollupTotals(db))) expect(total, table).toBe(visits.length);
    expect(await store.rollUp()).toBe(0);
  });

  it('never deletes a visit the rollups do not hold yet', async () => {
    const now = BASE + 40 * DAY;
    const { db, store } = openFresh({ retentionDays: 30, retentionIntervalMs: 0, rollupIntervalMs: 0, clock: { now: () => now } });
    await settled();
    const old = (n: number, path: string) => Array.from({ length: n }, (_, i) => makeVisit({ time: BASE + (i % 40) * HOUR + i, request_path: path, agent_id: i % 3 === 0 ? 'gptbot' : null, agent_type: i % 3 === 0 ? 'AI Data Scraper' : null }));
    const early = old(4100, '/early');
    const late = old(300, '/late');
    await store.append('prj_g', early);
    // The pass folds `early`, then deletes in chunks; `late` commits between two chunks, past the watermark.
    const pass = store.applyRetention();
    const appended = store.append('prj_g', late);
    expect((await pass).visits).toBe(early.length);
    await appended;
    expect(progress(db).watermark).toBeLessThan(progress(db).last);
    expect(store.count('prj_g')).toBe(late.length);
    const query: StatsQuery = { projectId: 'prj_g', from: BASE, to: BASE + 2 * DAY, interval: 'hour', by: 'path' };
    const both = [...early, ...late];
    expect(await store.stats(query)).toEqual(expectedStats(both, query));
    // Once folded, they go too, and every count stays.
    expect((await store.applyRetention()).visits).toBe(late.length);
    expect(store.count('prj_g')).toBe(0);
    expect(await store.stats(query)).toEqual(expectedStats(both, query));
    expect(await store.pathCounts({ projectId: 'prj_g', from: BASE, to: BASE + 2 * DAY })).toEqual(expectedPathCounts(both, { from: BASE, to: BASE + 2 * DAY }));
  });

  it('keeps everything across close and reopen, committing appends still queued at close', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const first = openSqliteStore({ dataDir: dir.dir });
    const stored = await first.append('prj_a', [makeVisit({ request_path: '/a', agent_id: 'gptbot', agent_type: 'AI Data Scraper', result: 'verified' })]);
    const queued = first.append('prj_a', [makeVisit({ request_path: '/queued', time: BASE + HOUR })]);
    first.close();
    const late = await queued;
    const query: StatsQuery = { projectId: 'prj_a', from: BASE, to: BASE + DAY, interval: 'hour', by: 'agent' };
    const again = openSqliteStore({ dataDir: dir.dir });
    cleanups.push(() => again.close());
    expect(await again.timeline({ projectId: 'prj_a', limit: 10 })).toEqual([...late, ...stored]);
    expect((await again.stats(query)).total).toBe(2);
    await expect(first.append('prj_a', [makeVisit()])).rejects.toBeInstanceOf(VisitStoreUnavailableError);
    // Ids keep growing after a reopen: cursors issued before stay valid.
    const next = await again.append('prj_a', [makeVisit()]);
    expect(Number(next[0]!.id)).toBeGreaterThan(Number(late[0]!.id));
  });

  it('migrates the first schema\u2019s visits table, keeping its rows, ids and counts', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const db = new Database(join(dir.dir, 'agentwarden.db'));
    // The project store's migration 1 as it shipped, with rows written by that version.
    db.exec(`CREATE TABLE projects (id TEXT PRIMARY KEY, name TEXT NOT NULL, created TEXT NOT NULL);
      CREATE TABLE tokens (id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id), hash TEXT NOT NULL UNIQUE, prefix TEXT NOT NULL, created TEXT NOT NULL, revoked TEXT);
      CREATE INDEX tokens_project ON tokens(project_id);
      CREATE TABLE visits (id INTEGER PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id), received TEXT NOT NULL, created TEXT,
        request_path TEXT NOT NULL, request_method TEXT NOT NULL, request_headers TEXT NOT NULL, response_status_code INTEGER,
        response_headers TEXT, response_duration_in_milliseconds REAL);
      CREATE INDEX visits_project ON visits(project_id, id);
      PRAGMA user_version = 1;`);
    db.prepare("INSERT INTO projects VALUES ('prj_old', 'old', '2026-03-01T00:00:00.000Z')").run();
    const insert = db.prepare('INSERT INTO visits VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    insert.run(3, 'prj_old', '2026-03-01T10:00:01.000Z', '2026-03-01T09:59:00.000Z', '/docs?x=1', 'GET', JSON.stringify({ 'user-agent': ['a', 'b'] }), 200, JSON.stringify({ 'content-type': 'text/html' }), 12.5);
    insert.run(7, 'prj_old', '2026-03-01T11:00:00.000Z', null, '/', 'POST', '{}', null, null, null);
    db.close();

    const store = openSqliteStore({ dataDir: dir.dir });
    cleanups.push(() => store.close());
    expect(await store.timeline({ projectId: 'prj_old', limit: 10 })).toEqual([
      { id: '7', project_id: 'prj_old', request_path: '/', request_method: 'POST', request_headers: {}, received: Date.parse('2026-03-01T11:00:00.000Z'), time: Date.parse('2026-03-01T11:00:00.000Z'), agent_id: null, agent_type: null, result: 'unknown_agent', client_ip: null, referral: null },
      {
        id: '3',
        project_id: 'prj_old',
        request_path: '/docs?x=1',
        request_method: 'GET',
        request_headers: { 'user-agent': 'a, b' },
        response_status_code: 200,
        response_headers: { 'content-type': 'text/html' },
        response_duration_in_milliseconds: 12.5,
        created: '2026-03-01T09:59:00.000Z',
        received: Date.parse('2026-03-01T10:00:01.000Z'),
        time: Date.parse('2026-03-01T09:59:00.000Z'),
        agent_id: null,
        agent_type: null,
        result: 'unknown_agent',
        client_ip: null,
        referral: null,
      },
    ]);
    const stats = await store.stats({ projectId: 'prj_old', from: BASE, to: BASE + DAY, interval: 'hour', by: 'path' });
    expect(stats.series).toEqual([
      { key: '/', total: 1 },
      { key: '/docs', total: 1 },
    ]);
    expect(stats.buckets[9]!.counts).toEqual([0, 1]);
    const [next] = await store.append('prj_old', [makeVisit()]);
    expect(Number(next!.id)).toBe(8);
    store.close();
    const check = new Database(join(dir.dir, 'agentwarden.db'), { readonly: true });
    expect(check.prepare("SELECT version FROM schema_versions WHERE component = 'visits'").pluck().get()).toBe(VISIT_SCHEMA_VERSION);
    expect(check.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'visits_v1'").pluck().get()).toBe(0);
    check.close();
  });

  it('upgrades a database of visit schema 2 in place: old rows keep reading and counting', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const file = join(dir.dir, 'visits.db');
    const headers = { 'user-agent': 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', accept: '*/*' };
    {
      // Schema 2 as it shipped: the exact-time index, no header pairs, headers as JSON objects.
      const db = new Database(file);
      db.pragma('journal_mode = WAL');
      const store = openSqliteVisitStore(db, { retentionDays: 0, rollupIntervalMs: 0 });
      store.close();
      db.exec(`DROP TABLE visit_idempotency_keys; DROP TABLE visit_agent_path_totals; DROP TABLE visit_agent_paths_day;
        CREATE TABLE visit_agent_paths_day (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, agent_type TEXT NOT NULL, request_path TEXT NOT NULL,
          path TEXT NOT NULL, count INTEGER NOT NULL, last INTEGER NOT NULL, PRIMARY KEY (project_id, bucket, agent_id, agent_type, request_path)) WITHOUT ROWID;
        DROP INDEX visits_by_minute; DROP TABLE visit_header_pairs; CREATE INDEX visits_by_time ON visits(project_id, time);
        ALTER TABLE visits DROP COLUMN response_status_code; ALTER TABLE visits DROP COLUMN response_duration_in_milliseconds;
        ALTER TABLE visits DROP COLUMN created; ALTER TABLE visits DROP COLUMN request_headers; ALTER TABLE visits DROP COLUMN response_headers;
        ALTER TABLE visits DROP COLUMN client_ip_header; ALTER TABLE visits DROP COLUMN verification; ALTER TABLE visits DROP COLUMN decision;
        DROP TABLE visit_status_hour; DROP TABLE visit_status_day; ${DROP_TIMES}
        UPDATE schema_versions SET version = 2 WHERE component = 'visits'`);
      db.prepare("INSERT INTO visits (project_id, time, received, request_method, request_path, path, agent_id, agent_type, result, client_ip, referral, extras) VALUES ('prj_x', ?, ?, 'GET', '/a?b=1', '/a', 'googlebot', 'Search Engine Crawler', 'verified', '66.249.66.1', NULL, ?)").run(
        BASE + 90_000,
        BASE + 91_000,
        JSON.stringify({ request_headers: headers, response_status_code: 200 }),
      );
      db.close();
    }
    const { db, store } = openFresh({ rollupIntervalMs: 0 }, { dir: dir.dir, cleanup: () => undefined });
    expect(db.prepare("SELECT version FROM schema_versions WHERE component = 'visits'").pluck().get()).toBe(VISIT_SCHEMA_VERSION);
    expect(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND name IN ('visits_by_time', 'visits_by_minute')").pluck().all()).toEqual(['visits_by_minute']);
    await store.append('prj_x', [makeVisit({ time: BASE + 100_000, request_headers: headers })]);
    const timeline = await store.timeline({ projectId: 'prj_x', limit: 10 });
    expect(timeline.map((visit) => visit.request_headers)).toEqual([headers, headers]);
    expect(timeline[1]).toMatchObject({ id: '1', request_path: '/a?b=1', response_status_code: 200, agent_id: 'googlebot' });
    // The old row is counted from raw rows (a sub-minute range) and after the pass from rollups.
    const query = { projectId: 'prj_x', from: BASE + 60_000, to: BASE + 120_000, interval: 'minute', by: 'agent' } as const;
    expect((await store.stats(query)).total).toBe(2);
    expect((await store.pathCounts({ projectId: 'prj_x', from: BASE + 89_000, to: BASE + 95_000 })).map((row) => row.path)).toEqual(['/a?b=1']);
    // The pass at open may already have folded the old row, so count what the rollups hold, not what this call folded.
    await store.rollUp();
    expect(progress(db)).toEqual({ watermark: 2, last: 2 });
    for (const total of Object.values(rollupTotals(db))) expect(total).toBe(2);
    expect((await store.stats(query)).total).toBe(2);
    // Its status code, which schema 2 kept in extras, counts and filters as the new row's does.
    const byStatus = async (from: number, to: number) => (await store.stats({ ...query, from, to, interval: 'hour', by: 'status' })).series;
    for (const [from, to] of [[BASE, BASE + HOUR], [BASE + 60_000, BASE + 120_000], [BASE, BASE + DAY]] as const) {
      const series = await byStatus(from, to);
      expect(series, `${from}..${to}`).toHaveLength(2);
      // The new row was sent without a status.
      expect(series, `${from}..${to}`).toEqual(expect.arrayContaining([{ key: '200', total: 1 }, { key: null, total: 1 }]));
    }
    expect((await store.timeline({ projectId: 'prj_x', limit: 10, filter: { status: 200 } })).map((visit) => visit.id)).toContain('1');
  });

  it('upgrades a database of visit schema 9 that holds rows of schema 1 or 2: their status codes, kept in extras, move into the column and the status rollups', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const file = join(dir.dir, 'visits.db');
    const old = [
      makeVisit({ time: BASE + 90_000, response_status_code: 404 }),
      makeVisit({ time: BASE + 2 * HOUR, response_status_code: 200, agent_id: 'gptbot', agent_type: 'AI Data Scraper', result: 'not_verifiable' }),
      makeVisit({ time: BASE + DAY + HOUR, response_status_code: 404 }),
    ];
    {
      const db = new Database(file);
      db.pragma('journal_mode = WAL');
      const store = openSqliteVisitStore(db, { retentionDays: 0, rollupIntervalMs: 0 });
      await store.append('prj_x', old);
      await store.append('prj_x', [makeVisit({ time: BASE + 95_000, response_status_code: 500 })]);
      await store.rollUp();
      store.close();
      // As a schema 2 row reaches schema 9: the status in extras, counted by schema 8 as none.
      db.exec(`UPDATE visits SET extras = json_set(CASE WHEN extras = '' THEN '{}' ELSE extras END, '$.response_status_code', response_status_code), response_status_code = NULL WHERE id <= 3;
        UPDATE visit_status_hour SET status = 0 WHERE status IN (200, 404);
        UPDATE schema_versions SET version = 9 WHERE component = 'visits';
        DELETE FROM visit_status_day;
        INSERT INTO visit_status_day SELECT project_id, bucket - ((bucket % 86400000) + 86400000) % 86400000, agent_id, agent_type, result, referral, status, sum(count) FROM visit_status_hour GROUP BY 1, 2, 3, 4, 5, 6, 7`);
      expect(db.prepare('SELECT count(*) FROM visit_status_hour WHERE status IN (200, 404)').pluck().get()).toBe(0);
      db.close();
    }
    const migrations: unknown[] = [];
    const { db, store } = openFresh({ rollupIntervalMs: 0, onMigration: (migration) => migrations.push(migration) }, { dir: dir.dir, cleanup: () => undefined });
    expect(db.prepare("SELECT version FROM schema_versions WHERE component = 'visits'").pluck().get()).toBe(VISIT_SCHEMA_VERSION);
    // Told before it ran; a current database and a new one are not migrated.
    expect(migrations).toEqual([{ from: 9, to: VISIT_SCHEMA_VERSION }]);
    openSqliteVisitStore(db, { retentionDays: 0, rollupIntervalMs: 0, onMigration: (migration) => migrations.push(migration) }).close();
    openFresh({ onMigration: (migration) => migrations.push(migration) });
    expect(migrations).toHaveLength(1);
    const byStatus = async (from: number, to: number, interval: 'hour' | 'day') => Object.fromEntries((await store.stats({ projectId: 'prj_x', from, to, interval, by: 'status' })).series.map((row) => [String(row.key), row.total]));
    // Whole hours and days, read from the status rollups.
    expect(await byStatus(BASE, BASE + 2 * DAY, 'day')).toEqual({ '200': 1, '404': 2, '500': 1 });
    expect(await byStatus(BASE, BASE + 3 * HOUR, 'hour')).toEqual({ '200': 1, '404': 1, '500': 1 });
    expect(db.prepare('SELECT count(*) FROM visit_status_hour WHERE status = 0').pluck().get()).toBe(0);
    expect(db.prepare('SELECT count(*) FROM visit_status_day WHERE status = 0').pluck().get()).toBe(0);
    // Raw rows: filters by status find them, and each reads its status once, from the column.
    expect((await store.timeline({ projectId: 'prj_x', limit: 10, filter: { status: 404 } })).map((visit) => visit.id)).toEqual(['3', '1']);
    expect((await store.timeline({ projectId: 'prj_x', limit: 10 })).map((visit) => visit.response_status_code)).toEqual([500, 404, 200, 404]);
  });

  it('upgrades a database of visit schema 3: the day table is rebuilt (agent, path) first and totals are counted from it', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const file = join(dir.dir, 'visits.db');
    const visits = generateVisits();
    {
      const db = new Database(file);
      db.pragma('journal_mode = WAL');
      const store = openSqliteVisitStore(db, { retentionDays: 0, rollupIntervalMs: 0 });
      await store.append('prj_x', visits);
      await store.rollUp();
      store.close();
      // Schema 3 as it shipped: the day table keyed by bucket first, no totals, no triggers.
      const rows = db.prepare('SELECT * FROM visit_agent_paths_day').all();
      db.exec(`DROP TABLE visit_idempotency_keys; DROP TABLE visit_agent_path_totals; DROP TABLE visit_agent_paths_day;
        CREATE TABLE visit_agent_paths_day (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, agent_type TEXT NOT NULL, request_path TEXT NOT NULL,
          path TEXT NOT NULL, count INTEGER NOT NULL, last INTEGER NOT NULL, PRIMARY KEY (project_id, bucket, agent_id, agent_type, request_path)) WITHOUT ROWID;
        ALTER TABLE visits DROP COLUMN client_ip_header; ALTER TABLE visits DROP COLUMN verification; ALTER TABLE visits DROP COLUMN decision;
        DROP TABLE visit_status_hour; DROP TABLE visit_status_day; ${DROP_TIMES}
        UPDATE schema_versions SET version = 3 WHERE component = 'visits'`);
      const insert = db.prepare('INSERT INTO visit_agent_paths_day VALUES (@project_id, @bucket, @agent_id, @agent_type, @request_path, @path, @count, @last)');
      for (const row of rows) insert.run(row);
      db.close();
    }
    const { db, store } = openFresh({ rollupIntervalMs: 0 }, { dir: dir.dir, cleanup: () => undefined });
    expect(db.prepare("SELECT version FROM schema_versions WHERE component = 'visits'").pluck().get()).toBe(VISIT_SCHEMA_VERSION);
    for (const [table, total] of Object.entries(rollupTotals(db))) expect(total, table).toBe(visits.length);
    await expectExact(store, visits, 'prj_x');
    // The triggers keep totals in step with what is folded and what retention deletes.
    const more = generateVisits().map((visit) => ({ ...visit, time: visit.time + DAY_SET }));
    await store.append('prj_x', more);
    await store.rollUp();
    for (const [table, total] of Object.entries(rollupTotals(db))) expect(total, table).toBe(2 * visits.length);
    db.exec(`DELETE FROM visit_agent_paths_day WHERE bucket < ${BASE + DAY_SET}`);
    expect(rollupTotals(db)['visit_agent_path_totals']).toBe(more.length);
    expect(db.prepare('SELECT count(*) FROM visit_agent_path_totals WHERE count <= 0').pluck().get()).toBe(0);
  });

  it('upgrades a database of visit schema 8: rollups get the exact first and last times their raw rows give, the start of the bucket where retention took them', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const file = join(dir.dir, 'visits.db');
    const gptbot = (time: number) => makeVisit({ time, agent_id: 'gptbot', agent_type: 'AI Data Scraper', result: 'verified' });
    const partialHour = BASE + 32 * DAY;
    // Retention runs 30 days back from here: its cut lies between two visits of one hour.
    const now = partialHour + 30 * DAY + 30 * 60_000 + 17_000;
    const deleted = [gptbot(BASE + 3 * HOUR + 35_123), gptbot(BASE + DAY + 22 * HOUR + 22_000), gptbot(partialHour + 10 * 60_000 + 1_234)];
    const kept = [gptbot(partialHour + 45 * 60_000 + 35_123), gptbot(partialHour + DAY + 5 * HOUR + 7_007), makeVisit({ time: partialHour + DAY + 6 * HOUR + 59_999 })];
    const pending = [gptbot(partialHour + 2 * DAY + 1_001)];
    {
      const db = new Database(file);
      db.pragma('journal_mode = WAL');
      const store = openSqliteVisitStore(db, { retentionDays: 30, rollupIntervalMs: 0, retentionIntervalMs: 0, clock: { now: () => now } });
      await settled();
      await store.append('prj_m', [...deleted, ...kept]);
      expect((await store.applyRetention()).visits).toBe(deleted.length);
      // Stored before the upgrade and not folded yet: the pass after it gives them their times.
      await store.append('prj_m', pending);
      store.close();
      db.exec(`${DROP_TIMES} UPDATE schema_versions SET version = 8 WHERE component = 'visits'`);
      db.close();
    }
    const { db, store } = openFresh({ rollupIntervalMs: 0, retentionDays: 30, retentionIntervalMs: 0, clock: { now: () => now } }, { dir: dir.dir, cleanup: () => undefined });
    expect(db.prepare("SELECT version FROM schema_versions WHERE component = 'visits'").pluck().get()).toBe(VISIT_SCHEMA_VERSION);
    const seen = async (from: number, to: number) => store.seen({ projectId: 'prj_m', from, to, filter: { agent_id: 'gptbot' } });
    // Days whose raw rows are gone: the start of each day, as first and last seen were before.
    expect(await seen(BASE, BASE + 2 * DAY)).toEqual([{ agent_id: 'gptbot', first: BASE, last: BASE + DAY }]);
    // The hour retention cut: its first visit is gone (the start of the hour), its last is exact.
    expect(await seen(partialHour, partialHour + HOUR)).toEqual([{ agent_id: 'gptbot', first: partialHour, last: kept[0]!.time }]);
    // Cells whose raw rows are all kept, and visits past the watermark: exact, before and after the pass.
    expect(await seen(partialHour + DAY, partialHour + 3 * DAY)).toEqual([{ agent_id: 'gptbot', first: kept[1]!.time, last: pending[0]!.time }]);
    expect(await store.seen({ projectId: 'prj_m', from: partialHour + DAY, to: partialHour + 2 * DAY, filter: { agent_id: null } })).toEqual([{ agent_id: null, first: kept[2]!.time, last: kept[2]!.time }]);
    await store.rollUp();
    expect(await seen(BASE, partialHour + 3 * DAY)).toEqual([{ agent_id: 'gptbot', first: BASE, last: pending[0]!.time }]);
    expect(await seen(partialHour + DAY, partialHour + 3 * DAY)).toEqual([{ agent_id: 'gptbot', first: kept[1]!.time, last: pending[0]!.time }]);
    for (const width of ['minute', 'hour', 'day']) expect(db.prepare(`SELECT count(*) FROM visit_dims_${width} WHERE first > last OR first < bucket`).pluck().get(), width).toBe(0);
  });

  it('reads top paths by totals exactly as counting every pair would, for any range, filter and limit', async () => {
    const { store } = openFresh({ rollupIntervalMs: 0, retentionDays: 0 });
    await settled();
    const visits = generateVisits();
    await store.append('prj_p', visits.slice(0, 1500));
    await store.rollUp();
    // The rest stays past the watermark: read from raw rows alongside the rollups.
    await store.append('prj_p', visits.slice(1500));
    const span = 4 * DAY;
    const query = fc.record({
      from: fc.integer({ min: -DAY, max: span }),
      length: fc.integer({ min: 1, max: span + DAY }),
      limit: fc.integer({ min: 1, max: 40 }),
      agentsOnly: fc.boolean(),
      filter: fc.constantFrom(undefined, { agent_type: 'AI Data Scraper' as const }, { agent_id: null }, { path: '/docs' }, { result: 'verified' as const }),
    });
    await fc.assert(
      fc.asyncProperty(query, async ({ from, length, limit, agentsOnly, filter }) => {
        const q: PathCountsQuery = { projectId: 'prj_p', from: BASE + from, to: BASE + from + length, limit, agentsOnly, ...(filter === undefined ? {} : { filter }) };
        expect(await store.pathCounts(q)).toEqual(expectedPathCounts(visits, q));
      }),
      { numRuns: 150 },
    );
  });

  // From an upgrade audit with the real old versions: two development builds of schema 3 made
  // tables that the released schema 3 does not match. One made serve answer every append with a
  // 500 while it reported itself ready; the other failed a later migration with a bare 'no such
  // column'. Here the same tables at the last versions.
  // From an upgrade audit: a server of schema 8 (they took no lock) left running on the data
  // directory while a new one migrated added rollup cells with first and last 0, and first and last
  // seen read 1970-01-01 for good.
  it('reads rollup cells an older server added with first and last 0 as the start of their bucket', async () => {
    const { db, store } = openFresh({ rollupIntervalMs: 0 });
    const times = [BASE + 2 * HOUR + 61_234, BASE + 2 * HOUR + 62_000, BASE + DAY + 5_000];
    await store.append('prj_o', times.map((time) => makeVisit({ time, agent_id: 'gptbot', agent_type: 'AI Data Scraper', result: 'not_verifiable' })));
    await store.rollUp();
    db.exec("UPDATE visit_dims_minute SET first = 0, last = 0; UPDATE visit_dims_hour SET first = 0, last = 0; UPDATE visit_dims_day SET first = 0, last = 0");
    const minute = BASE + 2 * HOUR + 60_000;
    // Whole days, whole hours and whole minutes: each from its rollup.
    expect(await store.seen({ projectId: 'prj_o', from: BASE, to: BASE + 2 * DAY })).toEqual([{ agent_id: 'gptbot', first: BASE, last: BASE + DAY }]);
    expect(await store.seen({ projectId: 'prj_o', from: BASE + HOUR, to: BASE + 3 * HOUR })).toEqual([{ agent_id: 'gptbot', first: BASE + 2 * HOUR, last: BASE + 2 * HOUR }]);
    expect(await store.seen({ projectId: 'prj_o', from: minute, to: minute + 60_000 })).toEqual([{ agent_id: 'gptbot', first: minute, last: minute }]);
  });

  it('refuses, and leaves as it was, a database whose visits table lacks a column its schema version has', async () => {
    for (const [dropped, why] of [
      ['created', /the visits table has no column created, request_headers, response_headers, which its visit schema version has/],
      ['response_status_code', /visit schema migration 9 to 10 failed, and the database was left as it was: no such column: response_status_code/],
    ] as const) {
      const dir = tempDir();
      cleanups.push(dir.cleanup);
      const file = join(dir.dir, 'visits.db');
      const db = new Database(file);
      openSqliteVisitStore(db, { retentionDays: 0, rollupIntervalMs: 0 }).close();
      const columns = dropped === 'created' ? ['created', 'request_headers', 'response_headers'] : ['response_status_code'];
      db.exec(`${columns.map((column) => `ALTER TABLE visits DROP COLUMN ${column};`).join(' ')} UPDATE schema_versions SET version = 9 WHERE component = 'visits'`);
      expect(() => openSqliteVisitStore(db, { retentionDays: 0 }), dropped).toThrow(why);
      expect(db.prepare("SELECT version FROM schema_versions WHERE component = 'visits'").pluck().get()).toBe(9);
      // At the current version too: refused at open, not at the first append.
      db.exec(`UPDATE schema_versions SET version = ${VISIT_SCHEMA_VERSION} WHERE component = 'visits'`);
      expect(() => openSqliteVisitStore(db, { retentionDays: 0 }), dropped).toThrow(/the visits table has no column/);
      db.close();
    }
  });

  it('refuses a database with a newer visit schema, and bad options by name', () => {
    const { db } = openFresh();
    db.prepare("UPDATE schema_versions SET version = ? WHERE component = 'visits'").run(VISIT_SCHEMA_VERSION + 1);
    expect(() => openSqliteVisitStore(db)).toThrow(RangeError);
    db.prepare("UPDATE schema_versions SET version = ? WHERE component = 'visits'").run(VISIT_SCHEMA_VERSION);
    expect(() => openSqliteVisitStore(db, { retentionDays: -1 })).toThrow(/retentionDays/);
    expect(() => openSqliteVisitStore(db, { maxPendingVisits: 0 })).toThrow(/maxPendingVisits/);
    expect(() => openSqliteVisitStore(db, { aggregateRetentionDays: 1.5 })).toThrow(/aggregateRetentionDays/);
    expect(() => openSqliteVisitStore({} as never)).toThrow(TypeError);
  });

  it('is what openSqliteStore serves, with retentionDays passed through (and no retention unless asked)', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const now = BASE + 40 * DAY;
    const keeper = openSqliteStore({ dataDir: dir.dir, clock: { now: () => now } });
    await keeper.append('prj_a', [makeVisit({ time: BASE }), makeVisit({ time: now - DAY })]);
    expect(await keeper.visits.applyRetention()).toEqual({ visits: 0, rollupRows: 0, idempotencyKeys: 0 });
    keeper.close();
    const pruning = openSqliteStore({ dataDir: dir.dir, clock: { now: () => now }, retentionDays: 30 });
    cleanups.push(() => pruning.close());
    expect((await pruning.visits.applyRetention()).visits).toBe(1);
    expect(pruning.countVisits('prj_a')).toBe(1);
  });
});

describe('agentwarden serve --retention-days', () => {
  it('refuses a value that is not a whole number of days, before touching the data directory', async () => {
    for (const [args, env] of [
      [['--retention-days', 'ninety'], {}],
      [['--retention-days', '-1'], {}],
      [[], { AGENTWARDEN_RETENTION_DAYS: '1.5' }],
    ] as const) {
      const io = captureIo('', { ...env });
      expect(await serveCommand.run([...args, '--data-dir', join(tmpdir(), 'agentwarden-never-created')], io)).toBe(2);
      expect(io.err()).toMatch(/--retention-days must be an integer/);
    }
    expect(serveCommand.usage).toMatch(/--retention-days N +AGENTWARDEN_RETENTION_DAYS/);
  });
});
