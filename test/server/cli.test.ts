// `agentwarden serve` and `agentwarden project` as real processes (dist/cli.js): first start,
// a Known Agents style client end to end, project commands against a running server, SIGTERM
// under load losing no acknowledged visit, and acknowledged visits surviving kill -9.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadIpRangeLists, openSqliteStore } from '../../src/adapters/node/index.js';
import { outdatedIpRangeLists } from '../../src/adapters/node/ip-ranges-loader.js';
import { CLI, GPTBOT_UA, post, runCli, spawnServe, tempDir, writeTestCatalog, type ServeProcess } from './helpers.js';

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npx tsup" (npm test builds it first)`);
});

async function serve(args: string[] = [], env: Record<string, string> = {}): Promise<{ proc: ServeProcess; dir: string }> {
  const { dir, cleanup } = tempDir();
  const proc = await spawnServe(['--data-dir', dir, '--catalog', writeTestCatalog(dir), ...args], env);
  cleanups.push(cleanup, async () => {
    if (proc.child.exitCode === null) {
      proc.child.kill('SIGKILL');
      await proc.exited;
    }
  });
  return { proc, dir };
}

const visit = (path: string) => ({ request_path: path, request_method: 'GET', request_headers: { 'user-agent': GPTBOT_UA } });

/** The JSON lines of a serve process's log, parsed. */
function logEntries(proc: ServeProcess): Record<string, unknown>[] {
  return proc
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

describe('agentwarden serve', () => {
  it('verifies with the bundled IP lists: a genuine GPTBot address passes, a spoofer fails', async () => {
    const { dir, cleanup } = tempDir();
    // The bundled catalog, where GPTBot has ip_ranges; reverse DNS stays off (no network here).
    const proc = await spawnServe(['--data-dir', dir, '--verifiers', 'ip-ranges', '--log', 'off']);
    cleanups.push(cleanup, async () => {
      if (proc.child.exitCode === null) {
        proc.child.kill('SIGKILL');
        await proc.exited;
      }
    });
    const verify = async (address: string): Promise<unknown> =>
      (await post(`${proc.url}/agent-verifications`, proc.firstToken!, { request_path: '/', request_headers: { 'user-agent': GPTBOT_UA, 'x-forwarded-for': address } })).json;
    expect(await verify('132.196.86.7')).toMatchObject({
      result: 'verified',
      agent_id: 'gptbot',
      verification: { method: 'ip-ranges', checks: [{ method: 'ip-ranges', outcome: 'pass', reason: 'ip-in-range' }] },
    });
    expect(await verify('203.0.113.7')).toMatchObject({ result: 'verification_failed', verification: { method: 'ip-ranges', checks: [{ outcome: 'fail', reason: 'ip-not-in-range' }] } });
  });

  it('reads the IP lists of --ip-ranges-dir over the bundled ones of the same name, and names only the lists still out of date', async () => {
    const { dir, cleanup } = tempDir();
    const lists = join(dir, 'ip-ranges');
    mkdirSync(lists);
    // A GPTBot list refreshed today, holding an address the bundled one does not.
    writeFileSync(join(lists, 'openai-gptbot.json'), JSON.stringify({ creationTime: new Date().toISOString(), prefixes: [{ ipv4Prefix: '203.0.113.0/24' }] }));
    const proc = await spawnServe(['--data-dir', join(dir, 'data'), '--verifiers', 'ip-ranges', '--ip-ranges-dir', lists]);
    cleanups.push(cleanup, async () => {
      if (proc.child.exitCode === null) {
        proc.child.kill('SIGKILL');
        await proc.exited;
      }
    });
    const verify = async (address: string, ua = GPTBOT_UA): Promise<unknown> => (await post(`${proc.url}/agent-verifications`, proc.firstToken!, { request_path: '/', request_headers: { 'user-agent': ua, 'x-forwarded-for': address } })).json;
    expect(await verify('203.0.113.7')).toMatchObject({ result: 'verified', agent_id: 'gptbot' });
    expect(await verify('132.196.86.7')).toMatchObject({ result: 'verification_failed' });
    // The other agents keep the bundled lists.
    expect(await verify('66.249.66.1', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)')).toMatchObject({ result: 'verified', agent_id: 'googlebot' });
    const warning = proc
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
      .find((entry) => entry.msg === 'IP lists out of date');
    expect(warning?.lists?.map((list: { name: string }) => list.name) ?? []).not.toContain('openai-gptbot.json');
    // The lists still out of date are the bundled copies the directory lacks, and it says so.
    expect(warning?.detail).toContain(`now ${lists}, and the bundled copy of each list it lacks`);
  });

  it('rejects an unknown verifier name', async () => {
    const result = await runCli(['serve', '--verifiers', 'ip-ranges,telepathy']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/"telepathy" is not one of web-bot-auth, ip-ranges, reverse-dns/);
  });

  it('creates a project on first start, prints its token once, and serves a Known Agents client', async () => {
    const { proc, dir } = await serve(['--log-requests']);
    expect(proc.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const token = proc.firstToken!;
    expect(token).toMatch(/^aw_[A-Za-z0-9_-]{43}$/);
    // What the SDKs send: Bearer token and JSON, nothing else; they check only response.ok.
    const client = (path: string, body: unknown) =>
      fetch(`${proc.url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const identified = await client('/agent-identifications', { request_headers: { 'User-Agent': GPTBOT_UA } });
    expect(identified.ok).toBe(true);
    expect(await identified.json()).toMatchObject({ result: 'not_verifiable', agent_id: 'gptbot' });
    expect((await client('/agent-verifications', { request_headers: { 'User-Agent': GPTBOT_UA }, request_path: '/' })).ok).toBe(true);
    const robots = await client('/robots-txts', { agent_types: ['AI Data Scraper'], disallow: '/' });
    expect(await robots.text()).toContain('User-agent: GPTBot\nDisallow: /\n');
    const visits = await client('/visits', [{ ...visit('/x'), node_package_version: '1.8.0' }]);
    expect(visits.status).toBe(202);

    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    // Request logs are JSON lines (flushed at shutdown), one per request, without the token.
    const lines = proc.stdout().split('\n').filter((line) => line.startsWith('{'));
    const requests = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'request');
    expect(requests.map((entry) => `${entry.path} ${entry.status}`)).toEqual(['/agent-identifications 200', '/agent-verifications 200', '/robots-txts 200', '/visits 202']);
    expect(lines.join('\n')).not.toContain(token.slice(3));
    expect(lines.at(-1)).toContain('"msg":"stopped"');
    // Second start on the same directory: no new project, no token printed.
    const again = await spawnServe(['--data-dir', dir, '--catalog', writeTestCatalog(dir)]);
    cleanups.push(async () => {
      again.child.kill('SIGKILL');
      await again.exited;
    });
    expect(again.firstToken).toBeUndefined();
    expect((await post(`${again.url}/agent-identifications`, token, { request_headers: {} })).status).toBe(200);
    // By default the log holds the start-up summary and shutdown, not a line per request (a
    // dashboard polling every few seconds would bury the errors).
    for (let i = 0; i < 3; i++) await fetch(`${again.url}/healthz`);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
    const entries = logEntries(again);
    expect(entries.filter((entry) => entry.msg === 'request')).toEqual([]);
    expect(entries.find((entry) => entry.msg === 'started')).toMatchObject({ url: again.url, store: 'sqlite', verifiers: ['web-bot-auth', 'ip-ranges', 'reverse-dns'], log_requests: false });
    expect(entries.at(-1)).toMatchObject({ msg: 'stopped' });
    // The bundled IP lists published over 30 days ago are named, with how to refresh them.
    const outdated = outdatedIpRangeLists(loadIpRangeLists(), Date.now(), 30);
    const warning = entries.find((entry) => entry.msg === 'IP lists out of date');
    if (outdated.length === 0) expect(warning).toBeUndefined();
    else expect(warning).toMatchObject({ level: 'warn', lists: outdated, detail: expect.stringContaining('agentwarden refresh-ip-ranges') });
    expect(again.stderr()).toBe('');
  });

  // From an upgrade audit: a version that kept every visit upgraded to one with --retention-days
  // 90 deleted the older raw visits at its first start and said nothing.
  it('says in its log what retention deleted: raw visits older than --retention-days, whose counts stay', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const store = openSqliteStore({ dataDir: dir });
    const { id } = store.createProject('old history');
    const old = Date.now() - 100 * 86_400_000;
    const visit = (time: number) => ({ request_path: '/', request_method: 'GET', request_headers: { 'user-agent': GPTBOT_UA }, received: time, time, agent_id: 'gptbot', agent_type: 'AI Data Scraper', result: 'not_verifiable', client_ip: null, referral: null }) as const;
    await store.append(id, [visit(old), visit(old + 1000), visit(Date.now() - 1000)]);
    store.close();
    const proc = await spawnServe(['--data-dir', dir, '--catalog', writeTestCatalog(dir), '--retention-days', '90']);
    cleanups.push(async () => {
      proc.child.kill('SIGKILL');
      await proc.exited;
    });
    // The pass runs at open, beside the start; its line is written within 50 ms of its end, while
    // the server runs (read from the lines written whole so far).
    const written = () => logEntries({ ...proc, stdout: () => proc.stdout().slice(0, proc.stdout().lastIndexOf('\n') + 1) });
    for (let waited = 0; !written().some((entry) => entry.msg === 'retention deleted') && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    const entries = written();
    expect(entries.find((entry) => entry.msg === 'retention deleted')).toMatchObject({ level: 'info', visits: 2, detail: expect.stringContaining('older than 90 days') });
    // A new data directory was created, not migrated.
    expect(entries.filter((entry) => entry.msg === 'migrating')).toEqual([]);
  });

  it('says in its log, before the migration, that it migrates the stored visits', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    openSqliteStore({ dataDir: dir }).close();
    const db = new Database(join(dir, 'agentwarden.db'));
    db.prepare("UPDATE schema_versions SET version = 9 WHERE component = 'visits'").run();
    db.close();
    const proc = await spawnServe(['--data-dir', dir, '--catalog', writeTestCatalog(dir)]);
    cleanups.push(async () => {
      proc.child.kill('SIGKILL');
      await proc.exited;
    });
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    const messages = logEntries(proc).map((entry) => entry.msg);
    expect(messages.indexOf('migrating')).toBeGreaterThanOrEqual(0);
    expect(messages.indexOf('migrating')).toBeLessThan(messages.indexOf('started'));
    expect(logEntries(proc).find((entry) => entry.msg === 'migrating')).toMatchObject({ level: 'info', store: 'sqlite', from: 9, to: expect.any(Number) });
  });

  it('reads AGENTWARDEN_* variables and the base path', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const proc = await spawnServe(['--catalog', writeTestCatalog(dir)], { AGENTWARDEN_DATA_DIR: dir, AGENTWARDEN_BASE_PATH: '/ka' });
    cleanups.push(async () => {
      proc.child.kill('SIGKILL');
      await proc.exited;
    });
    expect(proc.url).toMatch(/\/ka$/);
    expect((await fetch(`${proc.url}/healthz`)).status).toBe(200);
    expect(existsSync(`${dir}/agentwarden.db`)).toBe(true);
  });

  it('names what is wrong in a catalog file or an IP list, without the usage text after it', async () => {
    const { dir, cleanup } = tempDir();
    try {
      writeFileSync(join(dir, 'catalog.json'), '{"version": 1, "agents": [ {"id": }]}');
      const notJson = await runCli(['serve', '--catalog', join(dir, 'catalog.json'), '--data-dir', join(dir, 'data')]);
      expect(notJson.code).toBe(2);
      expect(notJson.stderr).toMatch(/^agentwarden serve: cannot read --catalog ".*catalog\.json": Unexpected token '}'.* is not valid JSON\n/);
      expect(notJson.stderr).not.toContain('Usage:');
      mkdirSync(join(dir, 'ranges'));
      writeFileSync(join(dir, 'ranges', 'openai-gptbot.json'), JSON.stringify({ creationTime: '2026-11-01T00:00:00Z', prefixes: [{ ipv4Prefix: '20.1 2.46.224/28' }] }));
      const badList = await runCli(['serve', '--ip-ranges-dir', join(dir, 'ranges'), '--data-dir', join(dir, 'data')]);
      expect(badList.code).toBe(2);
      expect(badList.stderr).toContain('IP list "openai-gptbot.json": ipv4Prefix "20.1 2.46.224/28" is not a valid CIDR');
      expect(badList.stderr).not.toContain('Usage:');
      // Nothing was created for a server that did not start.
      expect(existsSync(join(dir, 'data'))).toBe(false);
    } finally {
      cleanup();
    }
  });

  it('refuses bad flags with exit code 2', async () => {
    const result = await runCli(['serve', '--port', 'eighty']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--port must be an integer/);
    expect((await runCli(['serve', '--prot', '1'])).stderr).toMatch(/unknown option --prot/);
    const share = await runCli(['serve', '--max-buffered-body-bytes', '1000', '--max-buffered-body-bytes-per-project', '2000']);
    expect(share.code).toBe(2);
    expect(share.stderr).toContain('--max-buffered-body-bytes-per-project must be at most --max-buffered-body-bytes (1000), got 2000');
  });
});

describe('agentwarden project', () => {
  it('creates, lists, rotates and revokes tokens that a running server honours, each project isolated', async () => {
    const { proc, dir } = await serve();
    const created = await runCli(['project', 'create', '--name', 'blog', '--data-dir', dir]);
    expect(created.code).toBe(0);
    const blog = JSON.parse(created.stdout) as { id: string; name: string; token: string };
    expect(blog).toEqual({ id: expect.stringMatching(/^prj_/), name: 'blog', token: expect.stringMatching(/^aw_[A-Za-z0-9_-]{43}$/) });

    expect((await post(`${proc.url}/visits`, blog.token, visit('/blog-only'))).status).toBe(202);
    expect((await post(`${proc.url}/visits`, proc.firstToken, visit('/default-only'))).status).toBe(202);

    const listed = await runCli(['project', 'list', '--data-dir', dir]);
    const projects = JSON.parse(listed.stdout) as { id: string; name: string; tokens: { id: string; prefix: string; revoked: string | null }[] }[];
    expect(projects.map((p) => p.name)).toEqual(['default', 'blog']);
    expect(listed.stdout).not.toContain(blog.token);
    expect(projects[1]!.tokens[0]!.prefix).toBe(blog.token.slice(0, 7));

    const reader = openSqliteStore({ dataDir: dir });
    try {
      expect(reader.listVisits(blog.id).map((v) => v.request_path)).toEqual(['/blog-only']);
      expect(reader.listVisits(projects[0]!.id).map((v) => v.request_path)).toEqual(['/default-only']);
    } finally {
      reader.close();
    }

    const rotated = JSON.parse((await runCli(['project', 'rotate-token', '--project', blog.id, '--data-dir', dir])).stdout) as { token: string; token_id: string };
    // Changes by another process reach the server within its 1 s token cache.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await post(`${proc.url}/agent-identifications`, blog.token, { request_headers: {} })).status).toBe(401);
    expect((await post(`${proc.url}/agent-identifications`, rotated.token, { request_headers: {} })).status).toBe(200);

    const revoked = await runCli(['project', 'revoke-token', '--token-id', rotated.token_id, '--data-dir', dir]);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ revoked: true });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const after = await post(`${proc.url}/agent-identifications`, rotated.token, { request_headers: {} });
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await runCli(['project', 'revoke-token', '--token-id', rotated.token_id, '--data-dir', dir])).code).toBe(1);
    expect((await runCli(['project', 'create', '--data-dir', dir])).code).toBe(2);
    const controlName = await runCli(['project', 'create', '--name', 'blog\nforged line', '--data-dir', dir]);
    expect(controlName.code).toBe(2);
    expect(controlName.stderr).toMatch(/control characters/);
  });
});

describe('durability', () => {
  it('SIGTERM during load: every acknowledged visit is stored and the process exits 0', async () => {
    const { proc, dir } = await serve(['--log', 'off']);
    const token = proc.firstToken!;
    const acknowledged: string[] = [];
    let stopped = false;
    const worker = async (w: number) => {
      for (let i = 0; !stopped || i < 3; i++) {
        const path = `/w${w}/${i}`;
        try {
          const res = await fetch(`${proc.url}/visits`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify([visit(path), visit(`${path}/b`)]),
          });
          if (res.status === 202) acknowledged.push(path, `${path}/b`);
          await res.arrayBuffer();
        } catch {
          return; // refused or reset once the server stops accepting: never acknowledged
        }
      }
    };
    const workers = Array.from({ length: 8 }, (_, w) => worker(w));
    // SIGTERM once the load is real (some visits acknowledged), however slow the machine is.
    for (let waited = 0; acknowledged.length <= 20 && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    proc.child.kill('SIGTERM');
    stopped = true;
    await Promise.all(workers);
    expect(await proc.exited).toBe(0);
    expect(acknowledged.length).toBeGreaterThan(20);
    const store = openSqliteStore({ dataDir: dir });
    try {
      const stored = new Set(store.listVisits(store.listProjects()[0]!.id).map((v) => v.request_path));
      expect(acknowledged.filter((path) => !stored.has(path))).toEqual([]);
    } finally {
      store.close();
    }
  });

  it('GET /readyz says not ready while another process holds the database, logs why once (before any balancer asks), and ready again after a write goes through', async () => {
    const { proc, dir } = await serve();
    expect((await fetch(`${proc.url}/readyz`)).status).toBe(200);
    const readinessLines = () =>
      proc
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line))
        .filter((entry) => entry.msg === 'not ready' || entry.msg === 'ready again');
    // Another process (a backup, the CLI) holds the write lock past the 5 s busy timeout.
    const other = new Database(join(dir, 'agentwarden.db'));
    other.exec('BEGIN IMMEDIATE');
    let refused: number;
    let notReady: Response;
    try {
      const posted = post(`${proc.url}/visits`, proc.firstToken, visit('/locked'));
      // The visit waits for the lock on a timer: the server answers everything else meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const started = Date.now();
      expect((await fetch(`${proc.url}/healthz`)).status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1000);
      refused = (await posted).status;
      // serve asks its store every 5 s: the outage is logged with nobody polling GET /readyz.
      for (const until = Date.now() + 7000; readinessLines().length < 1 && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(readinessLines()).toEqual([expect.objectContaining({ level: 'warn', msg: 'not ready', store: 'unavailable' })]);
      notReady = await fetch(`${proc.url}/readyz`);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(refused).toBe(503);
    expect(notReady.status).toBe(503);
    expect(notReady.headers.get('retry-after')).toBe('5');
    expect(await notReady.json()).toEqual({ status: 'not_ready', checks: { store: 'unavailable' } });
    expect((await post(`${proc.url}/visits`, proc.firstToken, visit('/unlocked'))).status).toBe(202);
    // The last answer is reused for a second.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await fetch(`${proc.url}/readyz`)).status).toBe(200);
    // The log is written in batches, a few times a second.
    for (const until = Date.now() + 3000; readinessLines().length < 2 && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(readinessLines()).toEqual([
      expect.objectContaining({ level: 'warn', msg: 'not ready', store: 'unavailable', detail: expect.stringContaining('SQLITE_BUSY') }),
      expect.objectContaining({ level: 'info', msg: 'ready again', store: 'ok' }),
    ]);
  }, 20_000);

  it('kill -9 right after a 202 loses nothing acknowledged', async () => {
    const { proc, dir } = await serve(['--log', 'off']);
    const res = await post(`${proc.url}/visits`, proc.firstToken, Array.from({ length: 50 }, (_, i) => visit(`/k${i}`)));
    expect(res.status).toBe(202);
    proc.child.kill('SIGKILL');
    await proc.exited;
    const store = openSqliteStore({ dataDir: dir });
    try {
      expect(store.countVisits()).toBe(50);
    } finally {
      store.close();
    }
  });
});
