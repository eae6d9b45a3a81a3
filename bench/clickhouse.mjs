// The ClickHouse store: ingestion through two `agentwarden serve --store clickhouse` servers into
// one private ClickHouse vs one server into SQLite, in the same run (autocannon, batches of 100 visits
// as SDKs send them; BENCH_CLICKHOUSE_BATCH changes it);
// then stats, path-count and timeline query times over a large generated table (INSERT ... SELECT
// FROM numbers(), default 10 million visits; BENCH_CLICKHOUSE_ROWS changes it).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { openClickHouseVisitStore } from '../dist/clickhouse.js';
import { median } from './harness.mjs';

const ROUNDS = Number(process.env.BENCH_CLICKHOUSE_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_CLICKHOUSE_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CLICKHOUSE_CONNECTIONS ?? 8);
const ROWS = Number(process.env.BENCH_CLICKHOUSE_ROWS ?? 10_000_000);
const BATCH_SIZE = Number(process.env.BENCH_CLICKHOUSE_BATCH ?? 100);
const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');
const BINARY = ['/usr/sbin/clickhouse-server', '/usr/bin/clickhouse-server'].find((path) => existsSync(path));

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A private ClickHouse on loopback (the same configuration as test/helpers/clickhouse.ts). */
async function startClickHouse(dir) {
  const http = await freePort();
  const tcp = await freePort();
  mkdirSync(join(dir, 'log'), { recursive: true });
  writeFileSync(
    join(dir, 'config.xml'),
    `<?xml version="1.0"?><yandex><logger><level>warning</level><log>${dir}/log/server.log</log><errorlog>${dir}/log/error.log</errorlog><console>0</console></logger>
<http_port>${http}</http_port><tcp_port>${tcp}</tcp_port><listen_host>127.0.0.1</listen_host><path>${dir}/data/</path><tmp_path>${dir}/data/tmp/</tmp_path>
<user_files_path>${dir}/data/user_files/</user_files_path><format_schema_path>${dir}/data/format_schemas/</format_schema_path><users_config>${dir}/users.xml</users_config>
<default_profile>default</default_profile><default_database>default</default_database><timezone>UTC</timezone><keep_alive_timeout>10</keep_alive_timeout>
<mark_cache_size>268435456</mark_cache_size><uncompressed_cache_size>268435456</uncompressed_cache_size><mlock_executable>false</mlock_executable></yandex>`,
  );
  writeFileSync(
    join(dir, 'users.xml'),
    `<?xml version="1.0"?><yandex><profiles><default><max_memory_usage>4000000000</max_memory_usage></default></profiles>
<users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
<quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas></yandex>`,
  );
  const child = spawn(BINARY, [`--config-file=${join(dir, 'config.xml')}`], { cwd: dir, stdio: 'ignore' });
  const url = `http://127.0.0.1:${http}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${url}/?query=SELECT%201`)).ok) break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const query = async (sql) => {
    const response = await fetch(url, { method: 'POST', body: sql });
    const text = await response.text();
    if (!response.ok) throw new Error(`ClickHouse: ${text}`);
    return text;
  };
  return { url, query, stop: () => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGKILL'))) };
}

/** `agentwarden serve` on a free port; resolves with its URL and first-start token once it listens. */
function serve(args) {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--log', 'off', '--verifiers', 'none', '--rate-limit', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk) => (err += chunk));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const url = /agentwarden listening on (\S+)/.exec(out)?.[1];
      if (url !== undefined) {
        child.removeAllListeners('exit');
        resolve({ url, token: /shown only now: (aw_\S+)/.exec(out)?.[1], stop: () => new Promise((done) => (child.once('exit', done), child.kill('SIGTERM'))) });
      }
    });
  });
}

const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)',
];
const bodies = Array.from({ length: 8 }, (_, b) =>
  JSON.stringify(
    Array.from({ length: BATCH_SIZE }, (_, i) => ({
      request_path: `/blog/post-${(b * BATCH_SIZE + i) % 37}?ref=${i}`,
      request_method: 'GET',
      request_headers: { 'user-agent': USER_AGENTS[(b + i) % USER_AGENTS.length], accept: 'text/html', 'x-forwarded-for': `203.0.113.${i + 1}` },
      response_status_code: 200,
      response_duration_in_milliseconds: 12,
    })),
  ),
);

let keys = 0;
/**
 * Visits per second acknowledged (202) by the servers, loaded together for SECONDS; `keyed` sends
 * every batch with an Idempotency-Key of its own, as a batching client does.
 */
async function load(servers, keyed = false) {
  const results = await Promise.all(
    servers.map(({ url, token }) =>
      autocannon({
        url: `${url}/visits`,
        connections: CONNECTIONS,
        duration: SECONDS,
        requests: bodies.map((body) => ({
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body,
          ...(keyed ? { setupRequest: (request) => ({ ...request, headers: { ...request.headers, 'idempotency-key': `bench-${process.pid}-${keys++}` } }) } : {}),
        })),
      }),
    ),
  );
  const bad = results.reduce((sum, r) => sum + r.non2xx + r.errors + r.timeouts, 0);
  if (bad > 0) throw new Error(`${bad} failed requests`);
  return results.reduce((sum, r) => sum + (r['2xx'] * BATCH_SIZE) / SECONDS, 0);
}

async function ingestion(clickhouse, dir) {
  const sqlite = await serve(['--data-dir', join(dir, 'sqlite')]);
  const first = await serve(['--data-dir', join(dir, 'ch1'), '--store', 'clickhouse', '--clickhouse-url', clickhouse.url, '--clickhouse-database', 'bench_ingest']);
  const second = await serve(['--data-dir', join(dir, 'ch2'), '--store', 'clickhouse', '--clickhouse-url', clickhouse.url, '--clickhouse-database', 'bench_ingest']);
  const shared = { url: second.url, token: first.token };
  try {
    const rates = { sqlite: [], clickhouseOne: [], clickhouseTwo: [], sqliteKeyed: [], clickhouseOneKeyed: [], clickhouseTwoKeyed: [] };
    await load([sqlite]);
    await load([first, shared]);
    await load([first, shared], true);
    for (let round = 0; round < ROUNDS; round++) {
      rates.sqlite.push(await load([sqlite]));
      rates.sqliteKeyed.push(await load([sqlite], true));
      rates.clickhouseOne.push(await load([first]));
      rates.clickhouseOneKeyed.push(await load([first], true));
      rates.clickhouseTwo.push(await load([first, shared]));
      rates.clickhouseTwoKeyed.push(await load([first, shared], true));
    }
    const sqliteRate = median(rates.sqlite);
    const oneRate = median(rates.clickhouseOne);
    const twoRate = median(rates.clickhouseTwo);
    const keyedRatio = (keyed, plain) => `${Math.round(median(keyed)).toLocaleString('en-US')} visits/s with a key per batch (ratio to no key ${(median(keyed) / plain).toFixed(2)})`;
    const parts = (await clickhouse.query("SELECT count() FROM system.parts WHERE database = 'bench_ingest' AND table = 'visits' AND active")).trim();
    console.log(`ingestion, batches of ${BATCH_SIZE}, ${CONNECTIONS} connections per server, ${SECONDS} s, median of ${ROUNDS}:`);
    console.log(`  one server, SQLite:                 ${Math.round(sqliteRate).toLocaleString('en-US')} visits/s`);
    console.log(`  one server, ClickHouse:             ${Math.round(oneRate).toLocaleString('en-US')} visits/s`);
    console.log(`  two servers, one ClickHouse:        ${Math.round(twoRate).toLocaleString('en-US')} visits/s  (ratio to SQLite ${(twoRate / sqliteRate).toFixed(2)})`);
    console.log(`  one server, SQLite:                 ${keyedRatio(rates.sqliteKeyed, sqliteRate)}`);
    console.log(`  one server, ClickHouse:             ${keyedRatio(rates.clickhouseOneKeyed, oneRate)}`);
    console.log(`  two servers, one ClickHouse:        ${keyedRatio(rates.clickhouseTwoKeyed, twoRate)}`);
    console.log(`  active parts after the run: ${parts} (group commit keeps inserts few and large)`);
  } finally {
    await Promise.all([sqlite.stop(), first.stop(), second.stop()]);
  }
}

async function timed(fn, runs = 5) {
  await fn();
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return median(times);
}

async function queries(clickhouse) {
  const store = await openClickHouseVisitStore({ url: clickhouse.url, database: 'bench_query' });
  const DAY = 86_400_000;
  // Thirty days up to now, as a live project's table is: the timeline's first window is the last hour.
  const end = Math.floor(Date.now() / 60_000) * 60_000;
  const start = end - 30 * DAY;
  const span = Math.floor((30 * DAY) / ROWS);
  // Generated rows as the store writes them: 40% catalog agents over 7 ids, 1,000 paths, 30 days.
  const loadStarted = performance.now();
  // Columns named: later migrations add columns with defaults (status).
  await clickhouse.query(`INSERT INTO bench_query.visits (project_id, id, received, time, path, request_path, agent_id, agent_type, result, referral, visit)
    SELECT 'prj_bench' AS project_id,
      concat(lower(hex(toUInt64(${start} + number * ${span}))), '0000', 'b0b0b0b0b0b0') AS id,
      toUInt64(${start} + number * ${span}) AS received, received AS time,
      concat('/p/', toString(number % 1000)) AS path, concat(path, if(number % 5 = 0, '?q=1', '')) AS request_path,
      if(number % 10 < 6, '', ['gptbot', 'googlebot', 'claudebot', 'bingbot', 'perplexitybot', 'ahrefsbot', 'bytespider'][number % 7 + 1]) AS agent_id,
      if(number % 10 < 6, '', ['AI Data Scraper', 'Search Engine Crawler', 'AI Data Scraper', 'Search Engine Crawler', 'AI Search Crawler', 'SEO Crawler', 'AI Data Scraper'][number % 7 + 1]) AS agent_type,
      if(number % 10 < 6, 'unknown_agent', ['verified', 'not_verifiable', 'verification_failed'][number % 3 + 1]) AS result,
      if(number % 10 < 6 AND number % 13 = 0, 'chatgpt', '') AS referral,
      concat('{"request_path":"', request_path, '","request_method":"GET","request_headers":{"user-agent":"bench"},"received":', toString(received), ',"time":', toString(received), ',"agent_id":null,"agent_type":null,"result":"unknown_agent","client_ip":null,"referral":null}') AS visit
    FROM numbers(${ROWS})`);
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  const bytes = (await clickhouse.query("SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 'bench_query' AND active")).trim();
  console.log(`\nquery times over ${ROWS.toLocaleString('en-US')} visits of one project (30 days), median of 5 after a warm-up:`);
  console.log(`  loaded with INSERT ... SELECT FROM numbers() in ${loadSeconds.toFixed(1)} s; ${(Number(bytes) / 1e6).toFixed(0)} MB on disk (visits + counts)`);
  const p = 'prj_bench';
  const rows = [
    ['stats by agent, 30 days by day (pre-aggregated counts)', () => store.stats({ projectId: p, from: start, to: end, interval: 'day', by: 'agent' })],
    ['stats by agent, 30 days by day (raw visits: unaligned `to`)', () => store.stats({ projectId: p, from: start, to: end - 1, interval: 'day', by: 'agent' })],
    ['stats by agent_type, 7 days by hour, filter result=verified (counts)', () => store.stats({ projectId: p, from: end - 7 * DAY, to: end, interval: 'hour', by: 'agent_type', filter: { result: 'verified' } })],
    ['stats by path, 30 days by day (raw visits)', () => store.stats({ projectId: p, from: start, to: end, interval: 'day', by: 'path' })],
    ['stats by agent, last 24 h by minute (counts)', () => store.stats({ projectId: p, from: end - DAY, to: end, interval: 'minute', by: 'agent' })],
    ['path counts, 30 days, agents only, top 100', () => store.pathCounts({ projectId: p, from: start, to: end, agentsOnly: true, limit: 100 })],
    ['path counts, last 24 h, agents only, top 100 (reads from the id of `from`)', () => store.pathCounts({ projectId: p, from: end - DAY, to: end, agentsOnly: true, limit: 100 })],
    ['stats by path, last 24 h by hour (raw visits from the id of `from`)', () => store.stats({ projectId: p, from: end - DAY, to: end, interval: 'hour', by: 'path' })],
    ['timeline, newest 50', () => store.timeline({ projectId: p, limit: 50 })],
    ['timeline, 50 before a cursor mid-table', async () => store.timeline({ projectId: p, limit: 50, before: (await store.timeline({ projectId: p, limit: 1 }))[0].id.replace(/^.{12}/, (start + 15 * DAY).toString(16).padStart(12, '0')) })],
  ];
  const check = await store.stats({ projectId: p, from: start, to: end, interval: 'day', by: 'agent' });
  if (check.total !== ROWS) throw new Error(`expected ${ROWS} visits in the stats, got ${check.total}`);
  for (const [name, fn] of rows) console.log(`  ${name.padEnd(78)} ${(await timed(fn)).toFixed(1).padStart(8)} ms`);
  await store.close();
}

/** Runs the benchmark (called by bench/run.mjs). */
export async function run() {
  if (BINARY === undefined) {
    console.log('clickhouse-server is not installed: skipped (apt-get install clickhouse-server)');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'aw-bench-clickhouse-'));
  const clickhouse = await startClickHouse(dir);
  try {
    await ingestion(clickhouse, dir);
    await queries(clickhouse);
  } finally {
    await clickhouse.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
