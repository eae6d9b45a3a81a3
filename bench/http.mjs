// HTTP throughput of `agentwarden serve` against a bare node:http server that parses the same
// JSON and answers a fixed JSON, both child processes loaded by autocannon in turns (medians),
// with the CPU time each server spent per request (user + system, from /proc). Both run on
// node:http: the ratio is what our handler path costs on top of the least a JSON API does.
// Also batches of 100 items: identified items per second.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { median, pinToCpu } from './harness.mjs';

const root = join(import.meta.dirname, '..');
const ROUNDS = Number(process.env.BENCH_HTTP_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 4);
const CONNECTIONS = 32;
// Reverse DNS is left out: it would send queries to the system resolver, off this machine.
// Extra `serve` flags, e.g. BENCH_HTTP_SERVE_ARGS="--log off" to measure without access logs.
const SERVE_ARGS = (process.env.BENCH_HTTP_SERVE_ARGS ?? '').split(' ').filter(Boolean);

// A bare server doing the least any JSON API must: read the body, JSON.parse it, answer JSON.
const BARE = `
const http = require('node:http');
const answer = JSON.stringify({ result: 'not_verifiable', agent_id: 'gptbot', agent_token: 'GPTBot', agent_url: 'https://platform.openai.com/docs/bots', agent_type_name: 'AI Data Scraper', operator_name: 'OpenAI' });
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body;
    try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { res.writeHead(400); res.end(); return; }
    // With Content-Length (node:http would use chunked coding after writeHead without one).
    const out = Array.isArray(body) ? '[' + body.map(() => answer).join(',') + ']' : answer;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  });
});
server.listen(0, '127.0.0.1', () => console.log('agentwarden listening on http://127.0.0.1:' + server.address().port));
`;

const UAS = [
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
];
// What an SDK sends per request: the visitor's UA, IP headers and referer.
const item = (i) => ({
  id: `req-${i}`,
  request_headers: {
    'user-agent': UAS[i % UAS.length],
    accept: 'text/html,application/xhtml+xml',
    'x-forwarded-for': `203.0.113.${i % 250}`,
    referer: 'https://example.com/',
  },
});
const SINGLE = JSON.stringify(item(0));
const BATCH = JSON.stringify(Array.from({ length: 100 }, (_, i) => item(i)));

// Servers write their stdout (the access log) to a file, as in production: piping it into this
// process would make the load generator pay for reading the logs.
export async function start(args, logFile) {
  const fd = openSync(logFile, 'w');
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', fd, 'inherit'] });
  closeSync(fd);
  let exited = false;
  child.once('exit', () => (exited = true));
  for (let waited = 0; waited < 15_000; waited += 20) {
    const out = readFileSync(logFile, 'utf8');
    const url = /agentwarden listening on (http:\/\/\S+)/.exec(out)?.[1];
    if (url !== undefined) return { child, url, token: /shown only now: (aw_\S+)/.exec(out)?.[1] };
    if (exited) throw new Error(`server exited: ${out}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start: ${readFileSync(logFile, 'utf8')}`);
}

// Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux).
const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a process has used, or undefined without /proc. */
function cpuSeconds(pid) {
  const file = `/proc/${pid}/stat`;
  if (!existsSync(file)) return undefined;
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const stat = readFileSync(file, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Requests per second and the server's CPU microseconds per request over one load run. */
async function load(server, token, body, seconds) {
  const cpuBefore = cpuSeconds(server.child.pid);
  const rate = await loadRate(server.url, token, body, seconds);
  const cpuAfter = cpuSeconds(server.child.pid);
  return { rate, cpuUs: cpuBefore === undefined ? undefined : ((cpuAfter - cpuBefore) * 1e6) / (rate * seconds) };
}

async function loadRate(url, token, body, seconds) {
  const result = await autocannon({
    url: `${url}/agent-identifications`,
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
    connections: CONNECTIONS,
    duration: seconds,
  });
  const bad = result.non2xx + result.errors;
  if (bad > 0) throw new Error(`${bad} failed requests against ${url}`);
  return result.requests.average;
}

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'agentwarden-bench-'));
  const ours = await start(['dist/cli.js', 'serve', '--port', '0', '--data-dir', join(dir, 'data'), '--rate-limit', '1000000000', '--verifiers', 'web-bot-auth,ip-ranges', ...SERVE_ARGS], join(dir, 'ours.log'));
  const bare = await start(['-e', BARE], join(dir, 'bare.log'));
  // Each server (loaded in turns, never together) gets CPU 1 to itself and autocannon CPU 0:
  // unpinned, the two processes take turns on both CPUs and the ratio moves with the scheduler.
  const pinned = (await pinToCpu(ours.child.pid, 1)) && (await pinToCpu(bare.child.pid, 1)) && (await pinToCpu(process.pid, 0));
  try {
    // Warm up both (JIT, caches), then alternate so machine noise hits both alike.
    await load(bare, 'x', SINGLE, 1);
    await load(ours, ours.token, SINGLE, 1);
    const header = `${CONNECTIONS} connections, median of ${ROUNDS} x ${SECONDS}s${pinned ? ' (each server pinned to CPU 1, autocannon to CPU 0)' : ' (not pinned: taskset or a second CPU is missing)'}`;
    const cpu = (runs) => (runs[0].cpuUs === undefined ? 'n/a' : `${median(runs.map((run) => run.cpuUs)).toFixed(1)} µs CPU/request`);
    const measure = async (body) => {
      const oursRuns = [];
      const bareRuns = [];
      for (let r = 0; r < ROUNDS; r++) {
        bareRuns.push(await load(bare, 'x', body, SECONDS));
        oursRuns.push(await load(ours, ours.token, body, SECONDS));
      }
      return { oursRuns, bareRuns, o: median(oursRuns.map((run) => run.rate)), b: median(bareRuns.map((run) => run.rate)) };
    };
    const rates = (runs) => runs.map((run) => Math.round(run.rate)).join(', ');

    const single = await measure(SINGLE);
    console.log(`http single item, ${header}`);
    console.log(`  agentwarden serve POST /agent-identifications  ${Math.round(single.o)} req/s, ${cpu(single.oursRuns)}  (runs: ${rates(single.oursRuns)})`);
    console.log(`  bare node:http JSON parse + fixed JSON          ${Math.round(single.b)} req/s, ${cpu(single.bareRuns)}  (runs: ${rates(single.bareRuns)})`);
    console.log(`  ratio ours/bare ${(single.o / single.b).toFixed(2)} (goal >= 0.80)`);

    const batch = await measure(BATCH);
    console.log(`http batches of 100 items (${(BATCH.length / 1024).toFixed(1)} KiB)`);
    console.log(`  agentwarden serve  ${Math.round(batch.o * 100)} identified items/s (${Math.round(batch.o)} req/s, ${cpu(batch.oursRuns)})`);
    console.log(`  bare node:http     ${Math.round(batch.b * 100)} items/s parsed and answered (${Math.round(batch.b)} req/s, ${cpu(batch.bareRuns)})`);
    console.log(`  ratio ours/bare ${(batch.o / batch.b).toFixed(2)}`);
  } finally {
    ours.child.kill('SIGTERM');
    bare.child.kill('SIGTERM');
    await new Promise((resolve) => ours.child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
