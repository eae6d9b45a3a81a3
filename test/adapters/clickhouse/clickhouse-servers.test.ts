// Two `agentwarden serve --store clickhouse` processes over one real ClickHouse: a token from one
// works on the other, visits posted to both give identical reads from both, the live stream of one
// carries visits posted to the other, and a ClickHouse outage under load answers 503 + Retry-After,
// loses nothing acknowledged, and recovers when ClickHouse returns.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseAvailable, startClickHouse, type ClickHouseServer } from '../../helpers/clickhouse.js';
import { BROWSER_UA, GPTBOT_UA, post, runCli, spawnServe, stopServes, writeTestCatalog, type ServeProcess } from '../../server/helpers.js';

const available = clickhouseAvailable();
const DATABASE = 'aw_servers';

function visitBody(path: string, userAgent: string, created: number) {
  return { request_path: path, request_method: 'GET', request_headers: { 'user-agent': userAgent }, created: new Date(created).toISOString() };
}

async function get(url: string, token: string) {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, text: await response.text() };
}

describe.runIf(available)('several servers over one ClickHouse', () => {
  let clickhouse: ClickHouseServer;
  let dir: string;
  let a: ServeProcess;
  let b: ServeProcess;
  let token: string;

  const serve = (name: string) =>
    spawnServe(
      ['--store', 'clickhouse', '--data-dir', join(dir, name), '--catalog', writeTestCatalog(dir), '--verifiers', 'none', '--rate-limit', '0', '--log', 'off'],
      // The URL and database through the environment, the store kind as a flag: both ways are read.
      { AGENTWARDEN_CLICKHOUSE_URL: clickhouse.url, AGENTWARDEN_CLICKHOUSE_DATABASE: DATABASE },
    );

  beforeAll(async () => {
    clickhouse = await startClickHouse();
    dir = mkdtempSync(join(tmpdir(), 'aw-ch-servers-'));
    a = await serve('a');
    // The first server created the shared database and the first project; the second finds it.
    b = await serve('b');
    token = a.firstToken!;
  });
  afterAll(async () => {
    await stopServes([a, b]);
    await clickhouse?.destroy();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('shares the project: the token printed by one server works on the other, and no second project is made', async () => {
    expect(token).toMatch(/^aw_/);
    expect(b.firstToken).toBeUndefined();
    const response = await post(`${b.url}/visits`, token, visitBody('/token-check', BROWSER_UA, Date.now()));
    expect(response.status).toBe(202);
    expect((await clickhouse.query(`SELECT count() FROM ${DATABASE}.projects`)).trim()).toBe('1');
    expect((await post(`${b.url}/visits`, 'aw_' + 'x'.repeat(43), visitBody('/', BROWSER_UA, Date.now()))).status).toBe(401);
  });

  it('manages projects in ClickHouse from the CLI: a new token works on both servers, a rotated one on neither', async () => {
    const env = { AGENTWARDEN_CLICKHOUSE_URL: clickhouse.url, AGENTWARDEN_CLICKHOUSE_DATABASE: DATABASE };
    const created = await runCli(['project', 'create', '--store', 'clickhouse', '--name', 'cli.example'], env);
    expect(created.code, created.stderr).toBe(0);
    const project = JSON.parse(created.stdout);
    for (const server of [a, b]) expect((await post(`${server.url}/visits`, project.token, visitBody('/cli', BROWSER_UA, Date.now()))).status).toBe(202);
    const rotated = await runCli(['project', 'rotate-token', '--store', 'clickhouse', '--project', project.id], env);
    expect(rotated.code, rotated.stderr).toBe(0);
    const { token: fresh } = JSON.parse(rotated.stdout);
    // Servers trust a token they checked for at most a second (the API's cache, then the store's).
    await new Promise((resolve) => setTimeout(resolve, 2100));
    for (const server of [a, b]) {
      expect((await post(`${server.url}/visits`, project.token, visitBody('/cli', BROWSER_UA, Date.now()))).status).toBe(401);
      expect((await post(`${server.url}/visits`, fresh, visitBody('/cli', BROWSER_UA, Date.now()))).status).toBe(202);
    }
    const listed = JSON.parse((await runCli(['project', 'list', '--store', 'clickhouse'], env)).stdout);
    expect(listed.map((p: { name: string }) => p.name)).toEqual(['default', 'cli.example']);
  });

  it('answers stats, paths and the timeline identically from both servers for visits posted to both', async () => {
    const minute = Math.floor(Date.now() / 60_000) * 60_000 - 10 * 60_000;
    const posts: Promise<{ status: number }>[] = [];
    for (let i = 0; i < 30; i++) posts.push(post(`${a.url}/visits`, token, visitBody(`/both/a${i % 3}`, GPTBOT_UA, minute + i * 1000)));
    for (let i = 0; i < 20; i++) posts.push(post(`${b.url}/visits`, token, [visitBody(`/both/b${i % 2}?q=${i}`, BROWSER_UA, minute + i * 1000)]));
    expect((await Promise.all(posts)).map((r) => r.status)).toEqual(Array(50).fill(202));
    const range = `from=${minute}&to=${minute + 60_000}`;
    for (const path of [`/stats?${range}&interval=minute&by=agent`, `/stats?${range}&interval=minute&by=path`, `/stats/top-paths?${range}`, `/visits?limit=100&path=/both/a1`]) {
      const [fromA, fromB] = await Promise.all([get(`${a.url}${path}`, token), get(`${b.url}${path}`, token)]);
      expect(fromA.status, `${path}: ${fromA.text}`).toBe(200);
      expect(fromB.text, path).toBe(fromA.text);
    }
    const stats = JSON.parse((await get(`${b.url}/stats?${range}&interval=minute&by=agent`, token)).text);
    expect(stats.total).toBe(50);
    expect(stats.series.map((s: { key: string | null; total: number }) => [s.key, s.total])).toEqual([
      ['gptbot', 30],
      [null, 20],
    ]);
  });

  it('streams visits posted to one server to live clients of the other within 2 s', async () => {
    const controller = new AbortController();
    const response = await fetch(`${b.url}/visits/stream`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, signal: controller.signal });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    try {
      // The stream is open, and subscribed, once its first bytes (the retry hint) arrive.
      text += decoder.decode((await reader.read()).value);
      const started = Date.now();
      expect((await post(`${a.url}/visits`, token, visitBody('/live/from-a', GPTBOT_UA, Date.now()))).status).toBe(202);
      const deadline = setTimeout(() => controller.abort(), 2000);
      try {
        while (!text.includes('/live/from-a')) {
          const { value, done } = await reader.read();
          if (done) break;
          text += decoder.decode(value, { stream: true });
        }
      } catch {
        // Aborted at the deadline: the assertion below says what was missing.
      } finally {
        clearTimeout(deadline);
      }
      expect(text).toContain('"request_path":"/live/from-a"');
      expect(Date.now() - started).toBeLessThan(2000);
      // Delivered once, not once per poll.
      expect(text.split('/live/from-a').length - 1).toBe(1);
    } finally {
      controller.abort();
    }
  });

  it('stores a batch sent with one Idempotency-Key once: to either server, to both at once, and after a server restarts', async () => {
    const body = ['/idem/1', '/idem/2', '/idem/3'].map((path) => visitBody(path, GPTBOT_UA, Date.now()));
    const first = await post(`${a.url}/visits`, token, body, { 'idempotency-key': 'batch-A' });
    expect(first.status).toBe(202);
    const fromB = await post(`${b.url}/visits`, token, body, { 'idempotency-key': 'batch-A' });
    expect(fromB.status).toBe(202);
    expect(fromB.text).toBe(first.text);
    expect(fromB.headers.get('idempotent-replayed')).toBe('true');
    // Another body under the key is refused, by either server.
    expect((await post(`${b.url}/visits`, token, body.slice(1), { 'idempotency-key': 'batch-A' })).status).toBe(422);

    // Both servers at once, each retrying as a client does (409 and 503 carry Retry-After).
    const both = ['/idem/both/1', '/idem/both/2'].map((path) => visitBody(path, GPTBOT_UA, Date.now()));
    const send = async (server: ServeProcess) => {
      for (let i = 0; ; i++) {
        const response = await post(`${server.url}/visits`, token, both, { 'idempotency-key': 'batch-B' });
        if ((response.status !== 409 && response.status !== 503) || i === 60) return response;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const answers = await Promise.all([send(a), send(b), send(a), send(b)]);
    expect(answers.map((answer) => answer.status)).toEqual([202, 202, 202, 202]);
    expect(new Set(answers.map((answer) => answer.text)).size).toBe(1);

    // Both at once again, each pair of retries sent together after the Retry-After given (clients
    // in step): one of the first two stores the batch, and the next pair is answered from it.
    const step = [visitBody('/idem/step/1', GPTBOT_UA, Date.now())];
    const rounds: number[][] = [];
    for (let round = 0; round < 3; round++) {
      const pair = await Promise.all([a, b].map((server) => post(`${server.url}/visits`, token, step, { 'idempotency-key': 'batch-C' })));
      rounds.push(pair.map((answer) => answer.status));
      if (pair.every((answer) => answer.status === 202)) {
        expect(pair[0]!.text).toBe(pair[1]!.text);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 1000 * Math.max(...pair.map((answer) => Number(answer.headers.get('retry-after') ?? 1)))));
    }
    expect(rounds[0]).toContain(202);
    expect(rounds.at(-1)).toEqual([202, 202]);

    // A server restarted between the first try and the retry answers from ClickHouse.
    await stopServes([a]);
    a = await serve('a');
    const afterRestart = await post(`${a.url}/visits`, token, body, { 'idempotency-key': 'batch-A' });
    expect(afterRestart.status).toBe(202);
    expect(afterRestart.text).toBe(first.text);
    const counts = (await clickhouse.query(`SELECT request_path, count() FROM ${DATABASE}.visits WHERE request_path LIKE '/idem/%' GROUP BY request_path ORDER BY request_path FORMAT TSV`)).trim();
    expect(counts.split('\n')).toEqual(['/idem/1\t1', '/idem/2\t1', '/idem/3\t1', '/idem/both/1\t1', '/idem/both/2\t1', '/idem/step/1\t1']);
  });

  it('answers 503 with Retry-After while ClickHouse is down, loses nothing acknowledged, and recovers', async () => {
    const acknowledged: string[] = [];
    const refused: { status: number; retryAfter: string | null }[] = [];
    let phase: 'before' | 'down' | 'after' = 'before';
    let running = true;
    let sequence = 0;
    const recoveredOn = new Set<string>();
    const worker = async (server: ServeProcess, name: string) => {
      while (running) {
        const paths = Array.from({ length: 5 }, () => `/load/${name}/${sequence++}`);
        const response = await post(`${server.url}/visits`, token, paths.map((path) => visitBody(path, GPTBOT_UA, Date.now()))).catch(() => undefined);
        if (response === undefined) continue;
        if (response.status === 202) {
          acknowledged.push(...paths);
          if (phase === 'after') recoveredOn.add(name);
        } else {
          refused.push({ status: response.status, retryAfter: response.headers.get('retry-after') });
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    };
    const workers = [worker(a, 'a1'), worker(a, 'a2'), worker(b, 'b1'), worker(b, 'b2')];
    await new Promise((resolve) => setTimeout(resolve, 700));
    const beforeOutage = acknowledged.length;
    await clickhouse.stop('SIGKILL');
    phase = 'down';
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const duringOutage = acknowledged.length;
    await clickhouse.start();
    phase = 'after';
    const until = Date.now() + 10_000;
    while (recoveredOn.size < 4 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    running = false;
    await Promise.all(workers);

    expect(beforeOutage).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused) {
      expect(answer.status).toBe(503);
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    // Both servers took visits again once ClickHouse was back.
    expect([...recoveredOn].sort()).toEqual(['a1', 'a2', 'b1', 'b2']);
    expect(acknowledged.length).toBeGreaterThan(duringOutage);
    // Every acknowledged visit is in ClickHouse (a refused one may be there too: the client retries).
    const stored = new Set((await clickhouse.query(`SELECT request_path FROM ${DATABASE}.visits WHERE request_path LIKE '/load/%' FORMAT TSV`)).trim().split('\n'));
    expect(acknowledged.filter((path) => !stored.has(path))).toEqual([]);
  });

  it('answers every POST /visits 503 within its bounds while ClickHouse is stopped (not down), stores none it called not stored, and recovers when it wakes', async () => {
    const paths = Array.from({ length: 6 }, (_, i) => `/hang/${i}`);
    // The token known to the server already, as on any server that has taken visits.
    expect((await post(`${a.url}/visits`, token, [visitBody('/hang/before', GPTBOT_UA, Date.now())])).status).toBe(202);
    expect((await fetch(`${b.url}/readyz`)).status).toBe(200);
    clickhouse.pause();
    let answers: { path: string; status: number; type: string; ms: number }[];
    let readiness: { status: number; body: string; ms: number };
    try {
      // A balancer's readiness check takes the server out of rotation within its deadline, once
      // the answer from before the pause (reused for a second) is out of date.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const started = Date.now();
      const readyz = await fetch(`${b.url}/readyz`);
      readiness = { status: readyz.status, body: await readyz.text(), ms: Date.now() - started };
      answers = await Promise.all(
        paths.map(async (path) => {
          const started = Date.now();
          const response = await post(`${a.url}/visits`, token, [visitBody(path, GPTBOT_UA, Date.now())]);
          return { path, status: response.status, type: JSON.parse(response.text).type as string, ms: Date.now() - started };
        }),
      );
    } finally {
      clickhouse.resume();
    }
    // The token and the project's client-IP rule, known but out of date, are each asked for again
    // for at most 2 s, then used as known; the INSERT in flight is given up after 10 s (outcome
    // unknown), the rows behind it after 5 s (not stored).
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(answer.ms).toBeLessThan(17_000);
    }
    expect(answers.some((answer) => answer.type.endsWith(':service-unavailable') && answer.ms < 12_000)).toBe(true);
    let recovered = 0;
    for (const until = Date.now() + 15_000; recovered !== 202 && Date.now() < until; ) {
      recovered = (await post(`${a.url}/visits`, token, [visitBody('/hang/after', GPTBOT_UA, Date.now())])).status;
      if (recovered !== 202) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(recovered).toBe(202);
    expect(readiness.status).toBe(503);
    expect(readiness.ms).toBeLessThan(3500);
    expect(JSON.parse(readiness.body)).toEqual({ status: 'not_ready', checks: { store: 'unavailable' } });
    // Ready again once ClickHouse answers; a failed INSERT keeps a server out until one goes through.
    expect((await fetch(`${a.url}/readyz`)).status).toBe(200);
    const stored = new Set((await clickhouse.query(`SELECT request_path FROM ${DATABASE}.visits WHERE request_path LIKE '/hang/%' FORMAT TSV`)).trim().split('\n'));
    expect(answers.filter((answer) => answer.type.endsWith(':service-unavailable') && stored.has(answer.path))).toEqual([]);
  }, 60_000);
});

describe('serve --store flags', () => {
  it('refuses an unknown store and a ClickHouse store without a URL, naming the flag', async () => {
    const unknown = await runCli(['serve', '--store', 'postgres', '--port', '0']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--store must be sqlite or clickhouse, got "postgres"');
    const noUrl = await runCli(['serve', '--port', '0'], { AGENTWARDEN_STORE: 'clickhouse', AGENTWARDEN_CLICKHOUSE_URL: '' });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('--store clickhouse needs --clickhouse-url');
    const badDatabase = await runCli(['project', 'list', '--store', 'clickhouse', '--clickhouse-url', 'http://127.0.0.1:1', '--clickhouse-database', 'no-dashes']);
    expect(badDatabase.code).not.toBe(0);
    expect(badDatabase.stderr).toContain('database must be letters, digits and _');
  });
});
