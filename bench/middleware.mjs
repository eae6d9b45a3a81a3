// The middleware's cost to a site: the same Express 5, Fastify 5 and Hono 4 app (GET /page, a small
// text answer) with and without agentwarden's middleware (identification, IP-range verification of
// the address a trusted X-Forwarded-For gives, the visit to an HTTP sink), each a child process
// pinned to CPU 1, loaded by autocannon on CPU 0 in turns; requests per second and the ratio, and
// the ratio of the same middleware with no sink, which shows how much of the cost is the sink's,
// and of a middleware that does nothing, which shows the framework's own cost of having one (Hono
// leaves its single-handler fast path for its async compose).
// The sink posts its batches to a receiver in this process that reads and discards them: the
// agentwarden server's own cost is measured by the sink part below and by bench/visits.mjs. This
// process's CPU per request (autocannon's, and the receiver's on the side with the middleware) is
// printed too: it runs on CPU 0, so it is not counted in the app's CPU per request.
//
// Then the HTTP sink alone: its delivery rate to a local `agentwarden serve` (SQLite) against plain
// fetch() posting the same batches, and its memory while that server is down or slow.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import autocannon from 'autocannon';
import { createHttpSink } from '../dist/index.js';
import { createNodeHttpSink } from '../dist/node.js';
import { median, pinToCpu } from './harness.mjs';
import { start } from './http.mjs';

const root = join(import.meta.dirname, '..');
const dist = (file) => pathToFileURL(join(root, 'dist', file)).href;
const ROUNDS = Number(process.env.BENCH_MIDDLEWARE_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_MIDDLEWARE_SECONDS ?? 4);
const CONNECTIONS = 16;
const GOAL = 0.9;
// BENCH_MIDDLEWARE_FRAMEWORKS=express,hono measures only those; BENCH_MIDDLEWARE_PROFILE=<dir>
// writes a CPU profile of each app there, with and without the middleware (node --cpu-prof:
// <framework>-ours.cpuprofile, <framework>-bare.cpuprofile), when it stops.
const FRAMEWORKS = process.env.BENCH_MIDDLEWARE_FRAMEWORKS?.split(',');
const PROFILE_DIR = process.env.BENCH_MIDDLEWARE_PROFILE;

// The middleware as a site would configure it behind its proxy: the bundled IP lists, the visit
// to an HTTP sink (Node's, as the README's snippets; default batching: 500 visits or 30 s),
// spoofed agents denied.
const SETUP = `
import { createClientIpRule, createEngine } from '${dist('index.js')}';
import { createNodeHttpSink, createNodeVerifiers } from '${dist('node.js')}';
const options = {
  engine: createEngine({ verifiers: createNodeVerifiers({ methods: ['ip-ranges'] }) }),
  clientIp: createClientIpRule({ headers: ['x-forwarded-for'] }),
  // WITH_SINK=0: the same middleware recording nothing, to show what the sink's part is.
  sink: process.env.WITH_SINK === '0' ? [] : createNodeHttpSink({ url: process.env.SINK_URL, token: 'bench', onError: (e) => console.error(e) }),
  policy: { denyVerificationFailed: true },
};
const withMiddleware = process.env.WITH_MIDDLEWARE === '1';
// WITH_MIDDLEWARE=noop: a middleware that does nothing, the framework's own cost of having one.
const noopMiddleware = process.env.WITH_MIDDLEWARE === 'noop';
const port = (address) => console.log('agentwarden listening on http://127.0.0.1:' + address);
// Exit normally on SIGTERM, so that --cpu-prof (BENCH_MIDDLEWARE_PROFILE) writes its profile.
process.once('SIGTERM', () => process.exit(0));
`;

const APPS = {
  express: `${SETUP}
import express from 'express';
import { agentwarden } from '${dist('express.js')}';
const app = express();
if (withMiddleware) app.use(agentwarden(options));
if (noopMiddleware) app.use((req, res, next) => next());
app.get('/page', (req, res) => res.type('text').send('hello'));
const server = app.listen(0, '127.0.0.1', () => port(server.address().port));
`,
  // With any plugin registered, Fastify's plugin loader calls process.nextTick often enough at
  // startup for V8 (Node 20) to give nextTick its type feedback before the first full GC; that GC
  // drops the tick objects' hidden classes, and the object literal in nextTick then stays on V8's
  // slow (megamorphic) path: about 0.7 µs more per call, 9 calls a request, so some 6 µs of the
  // gap below is V8's state, not the middleware's work. The app without the middleware registers
  // no plugin and keeps the fast state (a long-running one can lose it too: four full GCs while
  // it was idle did).
  fastify: `${SETUP}
import Fastify from 'fastify';
import { agentwarden } from '${dist('fastify.js')}';
const app = Fastify();
if (withMiddleware) await app.register(agentwarden, options);
if (noopMiddleware) app.addHook('onRequest', (request, reply, done) => done());
app.get('/page', async () => 'hello');
await app.listen({ port: 0, host: '127.0.0.1' });
port(app.server.address().port);
`,
  hono: `${SETUP}
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { agentwarden } from '${dist('hono.js')}';
const app = new Hono();
if (withMiddleware) app.use(agentwarden(options));
// Any middleware takes Hono off its single-handler fast path onto its async compose.
if (noopMiddleware) app.use(async (c, next) => {
  await next();
});
app.get('/page', (c) => c.text('hello'));
serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => port(info.port));
`,
};

// What reaches a site: browsers (60%) and crawlers, as a proxy forwards them. Googlebot comes from
// Google's published range (verified), GPTBot from elsewhere (spoofed: denied with 403), ClaudeBot
// from Anthropic's range, bingbot from an address its lists do not cover.
const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const SAFARI = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';
const VISITORS = [
  [BROWSER, '81.2.69.160'],
  [SAFARI, '2a02:1810:4d02:6100::12'],
  [BROWSER, '92.40.171.3'],
  ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', '66.249.64.5'],
  ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)', '203.0.113.9'],
  [SAFARI, '176.12.8.44'],
  ['Mozilla/5.0 (compatible; ClaudeBot/1.0; +claudebot@anthropic.com)', '216.73.216.10'],
  [BROWSER, '24.48.12.9'],
  ['Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)', '198.51.100.7'],
  [BROWSER, '88.12.200.1'],
];
const REQUESTS = VISITORS.map(([ua, ip]) => ({
  method: 'GET',
  path: '/page',
  headers: { 'user-agent': ua, 'x-forwarded-for': ip, accept: 'text/html,application/xhtml+xml', 'accept-language': 'en-US,en;q=0.9', cookie: 'session=abc123' },
}));

/** CPU seconds (user + system) a process has used so far, from Linux's /proc; undefined elsewhere. */
function cpuSeconds(pid) {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th, in clock ticks (100 a second).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Loads `app` for `seconds`: requests per second, and the app's CPU time per request. On a
 * machine shared with other work the rate moves with whatever else runs; CPU time per request
 * counts only the app's own work, so its ratio is the steadier measure of the middleware's cost.
 */
async function load(app, seconds) {
  const before = cpuSeconds(app.child.pid);
  const ownBefore = process.cpuUsage();
  const result = await autocannon({ url: `${app.url}/page`, requests: REQUESTS, connections: CONNECTIONS, duration: seconds });
  const after = cpuSeconds(app.child.pid);
  const own = process.cpuUsage(ownBefore);
  // GPTBot is spoofed (1 request in 10): 403 from the middleware, 200 without it.
  if (result.errors > 0 || result['5xx'] > 0) throw new Error(`${result.errors} errors, ${result['5xx']} 5xx against ${app.url}`);
  return {
    rate: result.requests.average,
    cpuMicros: before === undefined || after === undefined ? Number.NaN : ((after - before) * 1e6) / result.requests.total,
    // This process (autocannon, and the sink's receiver while the app with the middleware runs), on CPU 0.
    loaderMicros: (own.user + own.system) / result.requests.total,
  };
}

/** A receiver that reads each batch and answers 202, counting the visits it saw (not parsing them). */
async function discardingReceiver() {
  let batches = 0;
  const server = createServer((req, res) => {
    req.on('data', () => {});
    req.on('end', () => {
      batches++;
      res.writeHead(202, { 'content-type': 'application/json' }).end('{"accepted":0,"rejected":[]}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, batches: () => batches, close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))) };
}

async function startApp(source, env, logFile, profileName) {
  const fd = openSync(logFile, 'w');
  const flags = PROFILE_DIR === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${profileName}.cpuprofile`];
  const child = spawn(process.execPath, [...flags, '--input-type=module', '-e', source], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  for (let waited = 0; waited < 15_000; waited += 20) {
    const url = /agentwarden listening on (http:\/\/\S+)/.exec(readFileSync(logFile, 'utf8'))?.[1];
    if (url !== undefined) return { child, url };
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  child.kill('SIGKILL');
  throw new Error(`app did not start: ${readFileSync(logFile, 'utf8')}`);
}

async function stop(child) {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function overhead(dir) {
  const receiver = await discardingReceiver();
  const cpu0 = await pinToCpu(process.pid, 0);
  console.log(
    `middleware overhead: GET /page, ${CONNECTIONS} connections, median of ${ROUNDS} x ${SECONDS}s, each app on CPU 1 and autocannon on CPU 0${cpu0 ? '' : ' (not pinned: taskset or a second CPU is missing)'}`,
  );
  const ratios = {};
  try {
    for (const [name, source] of Object.entries(APPS).filter(([name]) => FRAMEWORKS === undefined || FRAMEWORKS.includes(name))) {
      // Every app started is stopped, also when a later one fails to start.
      const started = [];
      const launch = async (env, label) => {
        const app = await startApp(source, env, join(dir, `${name}-${label}.log`), `${name}-${label}`);
        started.push(app);
        await pinToCpu(app.child.pid, 1);
        return app;
      };
      try {
        const bare = await launch({ WITH_MIDDLEWARE: '0', SINK_URL: receiver.url }, 'bare');
        const ours = await launch({ WITH_MIDDLEWARE: '1', SINK_URL: receiver.url }, 'ours');
        const unsunk = await launch({ WITH_MIDDLEWARE: '1', WITH_SINK: '0' }, 'nosink');
        const noop = await launch({ WITH_MIDDLEWARE: 'noop', WITH_SINK: '0' }, 'noop');
        await load(bare, 1);
        await load(ours, 1);
        await load(unsunk, 1);
        await load(noop, 1);
        const bareRuns = [];
        const oursRuns = [];
        const unsunkRuns = [];
        const noopRuns = [];
        for (let r = 0; r < ROUNDS; r++) {
          bareRuns.push(await load(bare, SECONDS));
          oursRuns.push(await load(ours, SECONDS));
          unsunkRuns.push(await load(unsunk, SECONDS));
          noopRuns.push(await load(noop, SECONDS));
        }
        const b = median(bareRuns.map((run) => run.rate));
        const o = median(oursRuns.map((run) => run.rate));
        const bCpu = median(bareRuns.map((run) => run.cpuMicros));
        const oCpu = median(oursRuns.map((run) => run.cpuMicros));
        ratios[name] = { rate: o / b, cpu: bCpu / oCpu };
        console.log(
          `  ${name.padEnd(8)} without ${String(Math.round(b)).padStart(6)} req/s  with ${String(Math.round(o)).padStart(6)} req/s  ratio ${(o / b).toFixed(2)} (goal >= ${GOAL})  (runs without: ${bareRuns.map((run) => Math.round(run.rate)).join(', ')}; with: ${oursRuns.map((run) => Math.round(run.rate)).join(', ')})`,
        );
        console.log(`  ${''.padEnd(8)} CPU per request without ${bCpu.toFixed(1)} µs, with ${oCpu.toFixed(1)} µs: ratio ${(bCpu / oCpu).toFixed(2)} (goal >= ${GOAL}; the middleware's own cost ${(oCpu - bCpu).toFixed(1)} µs)`);
        console.log(
          `  ${''.padEnd(8)} CPU 0 per request (autocannon, and the receiver of the sink's batches): without ${median(bareRuns.map((run) => run.loaderMicros)).toFixed(1)} µs, with ${median(oursRuns.map((run) => run.loaderMicros)).toFixed(1)} µs`,
        );
        // The same middleware with no sink (identification, verification, the policy): the rest of the cost is the visit's serialising and sending.
        const u = median(unsunkRuns.map((run) => run.rate));
        const uCpu = median(unsunkRuns.map((run) => run.cpuMicros));
        console.log(
          `  ${''.padEnd(8)} without the sink ${String(Math.round(u)).padStart(6)} req/s: ratio ${(u / b).toFixed(2)}, CPU per request ${uCpu.toFixed(1)} µs (the HTTP sink's part ${(oCpu - uCpu).toFixed(1)} µs)`,
        );
        // The framework's own cost of any middleware, beside which ours can be judged.
        const n = median(noopRuns.map((run) => run.rate));
        console.log(
          `  ${''.padEnd(8)} a no-op middleware ${String(Math.round(n)).padStart(6)} req/s: ratio ${(n / b).toFixed(2)}; ours against it ${(o / n).toFixed(2)}, without the sink ${(u / n).toFixed(2)}`,
        );
      } finally {
        for (const app of started) await stop(app.child);
      }
    }
    console.log(`  the sink delivered ${receiver.batches()} batches to the receiver`);
  } finally {
    await receiver.close();
  }
  return ratios;
}

// ---- The HTTP sink alone.

const visit = (i) => ({
  request_path: `/articles/${i % 5000}`,
  request_method: 'GET',
  request_headers: { 'user-agent': VISITORS[i % VISITORS.length][0], accept: 'text/html,application/xhtml+xml', 'accept-language': 'en-US,en;q=0.9', 'x-forwarded-for': VISITORS[i % VISITORS.length][1] },
  response_status_code: 200,
  response_headers: { 'content-type': 'text/html; charset=utf-8' },
  response_duration_in_milliseconds: 12,
  created: new Date(Date.UTC(2026, 10, 20, 12, 0, 0) + i).toISOString(),
});

async function deliveryRate(dir) {
  const COUNT = Number(process.env.BENCH_SINK_VISITS ?? 100_000);
  const BATCH = 500;
  const server = await start(['dist/cli.js', 'serve', '--port', '0', '--data-dir', join(dir, 'data'), '--rate-limit', '1000000000', '--verifiers', 'ip-ranges'], join(dir, 'server.log'));
  await pinToCpu(server.child.pid, 1);
  try {
    // The peer: plain fetch() posting the same batches one after another, as a hand-written client would.
    const peerStart = performance.now();
    for (let i = 0; i < COUNT; i += BATCH) {
      const body = JSON.stringify(Array.from({ length: BATCH }, (_, j) => visit(i + j)));
      const response = await fetch(`${server.url}/visits`, { method: 'POST', headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' }, body });
      if (response.status !== 202) throw new Error(`plain POST answered ${response.status}`);
      await response.text();
    }
    const peerRate = COUNT / ((performance.now() - peerStart) / 1000);

    /** Pushes every visit into a sink made by `create` and waits for them all to be delivered: visits per second. */
    const sinkRate = async (create) => {
      const sink = create({ url: server.url, token: server.token, maxBatchVisits: BATCH, maxQueueVisits: COUNT, maxQueueBytes: 1024 * 1024 * 1024 });
      const started = performance.now();
      for (let i = 0; i < COUNT; i++) sink.push(visit(i));
      await sink.flush();
      const rate = COUNT / ((performance.now() - started) / 1000);
      const stats = sink.stats();
      await sink.close();
      if (stats.delivered !== COUNT) throw new Error(`the sink delivered ${stats.delivered} of ${COUNT} (dropped ${stats.dropped}): ${stats.lastError}`);
      return { rate, stats };
    };
    const core = await sinkRate(createHttpSink);
    const node = await sinkRate(createNodeHttpSink);
    console.log(`HTTP sink delivery to agentwarden serve (SQLite, on CPU 1), ${COUNT} visits in batches of ${BATCH}, Idempotency-Key on each`);
    for (const [label, { rate, stats }] of [['createHttpSink (fetch)', core], ['createNodeHttpSink', node]]) {
      console.log(`  ${label.padEnd(22)} ${Math.round(rate)} visits/s delivered (${stats.delivered} delivered, ${stats.dropped} dropped, ${stats.retries} retries): ratio to plain fetch ${(rate / peerRate).toFixed(2)}`);
    }
    console.log(`  plain fetch loop       ${Math.round(peerRate)} visits/s (same batches, no key)`);
  } finally {
    await stop(server.child);
  }
}

/** Memory in use after a full collection, in MiB: the heap and the array buffers outside it (the sink queues visits' bytes there). */
function heapMiB(gc) {
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return (heapUsed + arrayBuffers) / 1024 / 1024;
}

async function memoryUnderOutage() {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  setFlagsFromString('--no-expose-gc');
  // Down: nothing listens (connection refused). Slow: every request is held 5 s, then refused with 503.
  const slow = createServer((req, res) => {
    req.on('data', () => {});
    const timer = setTimeout(() => res.writeHead(503, { 'retry-after': '1' }).end(), 5_000);
    res.on('close', () => clearTimeout(timer));
  });
  await new Promise((resolve) => slow.listen(0, '127.0.0.1', resolve));
  const closedPort = await new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
  const TOTAL = Number(process.env.BENCH_SINK_OUTAGE_VISITS ?? 400_000);
  const STEP = TOTAL / 8;
  const before = heapMiB(gc);
  try {
    for (const [label, url] of [
      ['down (connection refused)', `http://127.0.0.1:${closedPort}`],
      ['slow (5 s, then 503)', `http://127.0.0.1:${slow.address().port}`],
    ]) {
      const sink = createHttpSink({ url, token: 'bench', flushIntervalMs: 1_000, closeTimeoutMs: 0, onError: () => {} });
      const samples = [];
      for (let pushed = 0; pushed < TOTAL; ) {
        for (const end = pushed + STEP; pushed < end; pushed++) sink.push(visit(pushed));
        // Let timers and sockets run between bursts, as a live site would.
        await new Promise((resolve) => setTimeout(resolve, 200));
        samples.push(`${pushed / 1000}k: ${(heapMiB(gc) - before).toFixed(1)}`);
      }
      const stats = sink.stats();
      await sink.close();
      console.log(`HTTP sink memory while the server is ${label}: memory held above the start (heap and array buffers, MiB, after a full GC) as visits are pushed (default limits: 10,000 visits / 16 MiB queued)`);
      console.log(`  ${samples.join('  ')}`);
      console.log(`  queued ${stats.queued}, in flight ${stats.inFlight}, dropped ${stats.dropped} (oldest first), delivered ${stats.delivered}`);
    }
  } finally {
    slow.closeAllConnections();
    await new Promise((resolve) => slow.close(resolve));
  }
}

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'agentwarden-bench-middleware-'));
  try {
    await overhead(dir);
    await deliveryRate(dir);
    await memoryUnderOutage();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
