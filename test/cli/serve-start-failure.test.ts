// A first `agentwarden serve` that fails to start must not cost the user its one-time secrets (the
// admin login secret and the first project's token, each printed "shown only now"): from an outside
// new-user walkthrough, where a start on a busy port printed both and then exited with EADDRINUSE,
// and the next start printed neither. Now a failed start shows nothing and keeps nothing it made,
// so the next start that listens makes them, shows them, and they work.
import { once } from 'node:events';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openAdminStore, openSqliteStore } from '../../src/adapters/node/index.js';
import { clickhouseAvailable, startClickHouse } from '../helpers/clickhouse.js';
import { startClickHouseProxy } from '../helpers/clickhouse-proxy.js';
import { CLI, GPTBOT_UA, post, runCli, spawnServe, stopServes, tempDir, writeTestCatalog, type ServeProcess } from '../server/helpers.js';

const cleanups: (() => void | Promise<void>)[] = [];
const serves: ServeProcess[] = [];
afterEach(async () => {
  await stopServes(serves.splice(0));
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npx tsup" (npm test builds it first)`);
});

const SECRET = /admin login secret, shown only now: (aws_[A-Za-z0-9_-]+)/;
const TOKEN = /access token, shown only now: (aw_[A-Za-z0-9_-]+)/;

/** A temporary directory with the test catalog, and the arguments every start here shares. */
function setup(): { dir: string; dataDir: string; args: string[] } {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  return { dir, dataDir: join(dir, 'data'), args: ['--catalog', writeTestCatalog(dir), '--verifiers', 'none', '--log', 'off'] };
}

/** Asserts a start failed (exit 1, saying why on stderr) and showed no secret at all. */
function expectFailedStartShowedNothing(result: { code: number | null; stdout: string; stderr: string }, why: RegExp): void {
  expect(result.code, result.stderr).toBe(1);
  expect(result.stderr).toMatch(why);
  expect(result.stdout).not.toContain('shown only now');
  expect(result.stdout).not.toMatch(/aws?_[A-Za-z0-9_-]{20,}/);
  expect(result.stderr).not.toMatch(/aws?_[A-Za-z0-9_-]{20,}/);
}

/**
 * Starts serve on a free port and checks it shows both secrets and that they work: the admin
 * secret logs in and lists exactly one project, the token identifies a visitor and stores a visit.
 */
async function expectNextStartShowsWorkingSecrets(args: string[]): Promise<ServeProcess> {
  const proc = await spawnServe(args);
  serves.push(proc);
  const secret = SECRET.exec(proc.stdout())?.[1];
  const token = TOKEN.exec(proc.stdout())?.[1];
  expect(secret, proc.stdout()).toBeDefined();
  expect(token, proc.stdout()).toBeDefined();
  expect(proc.firstToken).toBe(token);

  const login = await post(`${proc.url}/admin/login`, undefined, { secret });
  expect(login.status, login.text).toBe(200);
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const listed = await fetch(`${proc.url}/admin/projects`, { headers: { cookie } });
  expect(listed.status).toBe(200);
  // One project: the failed start left none behind beside the one whose token is shown.
  const { projects } = (await listed.json()) as { projects: { name: string; tokens: unknown[] }[] };
  expect(projects.map((p) => [p.name, p.tokens.length])).toEqual([['default', 1]]);

  const identified = await post(`${proc.url}/agent-identifications`, token, { request_headers: { 'user-agent': GPTBOT_UA } });
  expect(identified.status, identified.text).toBe(200);
  expect(identified.json).toMatchObject({ agent_id: 'gptbot' });
  const stored = await post(`${proc.url}/visits`, token, [{ request_path: '/after-a-failed-start', request_method: 'GET', request_headers: { 'user-agent': GPTBOT_UA } }]);
  expect(stored.status, stored.text).toBe(202);
  return proc;
}

describe('a first start that fails shows no one-time secret, and the next start shows working ones', () => {
  it('on a port another process holds (EADDRINUSE)', async () => {
    const { dataDir, args } = setup();
    const holder = createServer();
    holder.listen(0, '127.0.0.1');
    await once(holder, 'listening');
    cleanups.push(() => new Promise<void>((resolve) => holder.close(() => resolve())));
    const busy = (holder.address() as AddressInfo).port;

    const failed = await runCli(['serve', '--port', String(busy), '--data-dir', dataDir, ...args]);
    expectFailedStartShowedNothing(failed, new RegExp(`cannot listen on --host "127\\.0\\.0\\.1" --port ${busy}: .*EADDRINUSE`));
    // A second try on the same busy port: still nothing shown (nothing was made and kept hidden).
    expectFailedStartShowedNothing(await runCli(['serve', '--port', String(busy), '--data-dir', dataDir, ...args]), /EADDRINUSE/);

    const proc = await expectNextStartShowsWorkingSecrets(['--data-dir', dataDir, ...args]);
    // Shown once: a start after that one shows neither.
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    const again = await spawnServe(['--data-dir', dataDir, ...args]);
    serves.push(again);
    expect(again.stdout()).not.toContain('shown only now');
  });

  it('when the admin secret cannot be stored after the first project was made: the project is removed again', async () => {
    const { dataDir, args } = setup();
    // A data directory whose admin secret table refuses writes, as a full or failing disk would.
    mkdirSync(dataDir, { mode: 0o700 });
    openAdminStore({ dataDir }).close();
    const db = new Database(join(dataDir, 'agentwarden.db'));
    db.exec(`CREATE TRIGGER refuse_secret BEFORE INSERT ON admin_secret BEGIN SELECT RAISE(ABORT, 'the disk refused the write'); END`);
    db.close();

    const failed = await runCli(['serve', '--port', '0', '--data-dir', dataDir, ...args]);
    expectFailedStartShowedNothing(failed, /cannot create the admin login secret: the disk refused the write; the first project was removed again/);

    const fixed = new Database(join(dataDir, 'agentwarden.db'));
    fixed.exec('DROP TRIGGER refuse_secret');
    expect(fixed.prepare('SELECT count(*) AS n FROM projects').get()).toEqual({ n: 0 });
    fixed.close();
    await expectNextStartShowsWorkingSecrets(['--data-dir', dataDir, ...args]);
  });

  it('when the project cannot be removed again either: its token is printed all the same, and it works', async () => {
    const { dataDir, args } = setup();
    mkdirSync(dataDir, { mode: 0o700 });
    openSqliteStore({ dataDir }).close();
    openAdminStore({ dataDir }).close();
    const db = new Database(join(dataDir, 'agentwarden.db'));
    db.exec(`CREATE TRIGGER refuse_secret BEFORE INSERT ON admin_secret BEGIN SELECT RAISE(ABORT, 'the disk refused the write'); END`);
    db.exec(`CREATE TRIGGER refuse_removal BEFORE DELETE ON projects BEGIN SELECT RAISE(ABORT, 'the disk refused this too'); END`);
    db.close();

    const failed = await runCli(['serve', '--port', '0', '--data-dir', dataDir, ...args]);
    expect(failed.code, failed.stderr).toBe(1);
    expect(failed.stderr).toContain("cannot create the admin login secret: the disk refused the write; the first project's new token is printed all the same and stays valid");
    expect(failed.stdout).not.toMatch(SECRET);
    const token = TOKEN.exec(failed.stdout)?.[1];
    expect(token, failed.stdout).toBeDefined();

    const fixed = new Database(join(dataDir, 'agentwarden.db'));
    fixed.exec('DROP TRIGGER refuse_secret; DROP TRIGGER refuse_removal');
    fixed.close();
    const proc = await spawnServe(['--data-dir', dataDir, ...args]);
    serves.push(proc);
    expect(proc.stdout()).toMatch(SECRET);
    expect(proc.firstToken).toBeUndefined();
    expect((await post(`${proc.url}/agent-identifications`, token, { request_headers: { 'user-agent': GPTBOT_UA } })).status).toBe(200);
  });

  it.runIf(clickhouseAvailable())('when ClickHouse fails while the first project is made (--store clickhouse)', async () => {
    const { dataDir, args } = setup();
    const clickhouse = await startClickHouse();
    cleanups.push(() => clickhouse.destroy());
    const proxy = await startClickHouseProxy(clickhouse.url);
    cleanups.push(() => proxy.close());
    const store = (url: string) => ['--store', 'clickhouse', '--clickhouse-url', url, '--clickhouse-database', 'aw_start_failure'];
    // Every attempt to write the first project's row is cut off, as a connection reset would.
    proxy.dropNext((statement) => /^INSERT INTO \S*\.projects\b/i.test(statement), 1000);

    const failed = await runCli(['serve', '--port', '0', '--data-dir', dataDir, ...store(proxy.url), ...args]);
    expectFailedStartShowedNothing(failed, /cannot create the first project: /);
    expect(proxy.dropped()).toBeGreaterThan(0);

    const next = await expectNextStartShowsWorkingSecrets(['--data-dir', dataDir, ...store(clickhouse.url), ...args]);
    await stopServes([next]);

    // ClickHouse writes a project and its token apart, the token first: a start cut off at the
    // token leaves no project at all, and the next start makes one as on an empty store.
    const other = setup();
    const database = 'aw_start_failure_token';
    const otherStore = (url: string) => ['--store', 'clickhouse', '--clickhouse-url', url, '--clickhouse-database', database];
    const tokenProxy = await startClickHouseProxy(clickhouse.url);
    cleanups.push(() => tokenProxy.close());
    tokenProxy.dropNext((statement) => /^INSERT INTO \S*\.tokens\b/i.test(statement), 1000);
    const cut = await runCli(['serve', '--port', '0', '--data-dir', other.dataDir, ...otherStore(tokenProxy.url), ...other.args]);
    expectFailedStartShowedNothing(cut, /cannot create the first project: /);
    const query = async (sql: string) => {
      const response = await fetch(clickhouse.url, { method: 'POST', body: sql });
      expect(response.status, sql).toBe(200);
      return (await response.text()).trim();
    };
    expect(await query(`SELECT count() FROM ${database}.projects`)).toBe('0');
    // A store that an older version left with a project and no token (it wrote the project
    // first): the next start gives that project a token and shows it.
    await query(`INSERT INTO ${database}.projects (id, name, created) VALUES ('prj_left_without_token', 'default', '2026-01-01T00:00:00.000Z')`);
    const recovered = await expectNextStartShowsWorkingSecrets(['--data-dir', other.dataDir, ...otherStore(clickhouse.url), ...other.args]);
    expect(recovered.stdout()).toMatch(/project "default" \(prj_left_without_token\) had no access token \(a start failed while creating it\); its access token, shown only now: aw_/);
  }, 120_000);
});

// From an upgrade audit with the real old versions: a data directory or ClickHouse database that a
// newer agentwarden wrote (a downgrade) is refused, and nothing of the refused start stays behind.
describe('a start that cannot open its database', () => {
  it('of a newer visit schema (SQLite): exits 1 naming the versions, and leaves the data directory unlocked', async () => {
    const { dataDir, args } = setup();
    mkdirSync(dataDir, { mode: 0o700 });
    openSqliteStore({ dataDir }).close();
    const db = new Database(join(dataDir, 'agentwarden.db'));
    db.prepare("UPDATE schema_versions SET version = 99 WHERE component = 'visits'").run();
    db.close();

    const failed = await runCli(['serve', '--port', '0', '--data-dir', dataDir, ...args]);
    expect(failed.code, failed.stderr).toBe(1);
    expect(failed.stderr).toMatch(/visit schema version 99; this agentwarden knows up to \d+/);
    expect(existsSync(join(dataDir, 'serve.lock'))).toBe(false);
  });

  it.runIf(clickhouseAvailable())('of a newer ClickHouse schema: exits 1 naming the versions, not as a usage error', async () => {
    const { dataDir, args } = setup();
    const clickhouse = await startClickHouse();
    cleanups.push(() => clickhouse.destroy());
    await clickhouse.query('CREATE DATABASE aw_newer');
    await clickhouse.query('CREATE TABLE aw_newer.schema_migrations (version UInt32, applied String) ENGINE = MergeTree ORDER BY version');
    await clickhouse.query("INSERT INTO aw_newer.schema_migrations VALUES (99, '2027-01-01T00:00:00.000Z')");

    const failed = await runCli(['serve', '--port', '0', '--data-dir', dataDir, '--store', 'clickhouse', '--clickhouse-url', clickhouse.url, '--clickhouse-database', 'aw_newer', ...args]);
    expect(failed.code, failed.stderr).toBe(1);
    expect(failed.stderr).toMatch(/ClickHouse database aw_newer has schema version 99; this agentwarden knows up to \d+/);
    expect(failed.stderr).not.toContain('AGENTWARDEN_CLICKHOUSE_URL');
    expect(failed.stderr.trim().split('\n')).toHaveLength(1);
  }, 60_000);
});
