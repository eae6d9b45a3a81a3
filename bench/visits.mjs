// Visit ingestion: `agentwarden serve` (SQLite store, web-bot-auth + ip-ranges verifiers) loaded by
// autocannon with batches of 100 realistic visits (browser and crawler headers as sent, referrals,
// status codes, durations, created times), against a bare loop that only JSON.parse's the same
// bodies in this process; then where a batch's time goes, stage by stage, in process.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { createApiHandler, createEngine, createVisitEnricher, parseVisit } from '../dist/index.js';
import { createNodeVerifiers, hashTokenNode, openSqliteStore } from '../dist/node.js';
import { median, pinToCpu, prng, throughput, throughputAsync } from './harness.mjs';
import { start } from './http.mjs';

const ROUNDS = Number(process.env.BENCH_VISITS_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_VISITS_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_VISITS_CONNECTIONS ?? 8);
const BATCH_SIZE = 100;
const BODIES = 20;
const GOAL = 50_000;

// ---- The corpus: what a site's SDK sends. Browser headers as Chrome 131, Edge 131, Firefox 133
// and Safari 18 send them on a navigation or a fetch(); crawler headers as the operators' bots send
// them, from their published addresses (and some spoofers). About 60% of visits are browsers.

const pick = (random, list) => list[Math.floor(random() * list.length)];
const weighted = (random, entries) => {
  let r = random() * entries.reduce((sum, [weight]) => sum + weight, 0);
  for (const [weight, value] of entries) if ((r -= weight) < 0) return value;
  return entries.at(-1)[1];
};
const int = (random, lo, hi) => lo + Math.floor(random() * (hi - lo + 1));
const publicIpv4 = (random) => `${pick(random, [24, 31, 46, 73, 81, 88, 92, 98, 104, 151, 176, 185, 188, 212])}.${int(random, 0, 255)}.${int(random, 0, 255)}.${int(random, 1, 254)}`;
const clientIp = (random) => (random() < 0.15 ? `2a02:${int(random, 0x1000, 0xffff).toString(16)}:${int(random, 0, 0xffff).toString(16)}::${int(random, 1, 0xfff).toString(16)}` : publicIpv4(random));

const CHROMIUM = [
  {
    ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    brands: '"Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"',
    platform: '"Windows"',
    mobile: '?0',
  },
  {
    ua: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    brands: '"Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"',
    platform: '"macOS"',
    mobile: '?0',
  },
  {
    ua: 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
    brands: '"Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"',
    platform: '"Android"',
    mobile: '?1',
  },
  {
    ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
    brands: '"Microsoft Edge";v="131", "Chromium";v="131", "Not_A Brand";v="24"',
    platform: '"Windows"',
    mobile: '?0',
  },
];
const FIREFOX = ['Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0', 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'];
const SAFARI = [
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
];
const LANGUAGES = ['en-US,en;q=0.9', 'en-GB,en;q=0.9', 'de-DE,de;q=0.9,en-US;q=0.8,en;q=0.7', 'fr-FR,fr;q=0.9,en-US;q=0.8,en;q=0.7', 'es-ES,es;q=0.9', 'ja,en-US;q=0.9,en;q=0.8'];

const SLUGS = ['how-we-cut-cold-starts', 'postgres-vs-sqlite-for-analytics', 'robots-txt-for-ai-crawlers', 'a-year-of-edge-functions', 'release-notes-4-2', 'designing-rate-limits'];
const DOCS = ['getting-started/install', 'getting-started/quickstart', 'api/authentication', 'api/visits', 'guides/nextjs', 'guides/cloudflare-workers', 'reference/cli'];
const pagePath = (random) =>
  weighted(random, [
    [8, '/'],
    [4, '/pricing'],
    [2, '/about'],
    [3, '/blog'],
    [12, `/blog/${pick(random, SLUGS)}`],
    [14, `/docs/${pick(random, DOCS)}`],
    [6, `/products/${int(random, 1000, 9999)}`],
    [2, `/search?q=${pick(random, ['pricing', 'sqlite', 'webhooks', 'sso'])}`],
    [1, `/blog/${pick(random, SLUGS)}?ref=newsletter`],
  ]);

// Humans arriving from AI answers carry the product's referer, and often its utm_source.
const referral = (random, site) =>
  weighted(random, [
    [30, undefined],
    [25, 'https://www.google.com/'],
    [20, `https://${site}/`],
    [6, 'https://chatgpt.com/'],
    [4, 'https://www.perplexity.ai/'],
    [3, 'https://www.bing.com/'],
    [2, 'https://gemini.google.com/'],
    [2, 'https://news.ycombinator.com/'],
    [2, 'https://t.co/'],
  ]);

function browserVisit(random, site) {
  const api = random() < 0.15;
  let path = api ? `/api/v1/${pick(random, ['items', 'cart', 'session', 'events'])}?page=${int(random, 1, 20)}` : pagePath(random);
  const referer = api ? `https://${site}${pagePath(random)}` : referral(random, site);
  if (referer === 'https://chatgpt.com/' && random() < 0.7) path += `${path.includes('?') ? '&' : '?'}utm_source=chatgpt.com`;
  const ip = clientIp(random);
  const family = weighted(random, [
    [62, 'chromium'],
    [12, 'firefox'],
    [26, 'safari'],
  ]);
  const h = { host: site };
  if (family === 'chromium') {
    const c = pick(random, CHROMIUM);
    h['sec-ch-ua'] = c.brands;
    h['sec-ch-ua-mobile'] = c.mobile;
    h['sec-ch-ua-platform'] = c.platform;
    if (!api) h['upgrade-insecure-requests'] = '1';
    h['user-agent'] = c.ua;
    h.accept = api ? 'application/json, text/plain, */*' : 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7';
  } else {
    h['user-agent'] = pick(random, family === 'firefox' ? FIREFOX : SAFARI);
    h.accept = api ? 'application/json, text/plain, */*' : 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    if (family === 'firefox' && !api) h['upgrade-insecure-requests'] = '1';
  }
  h['sec-fetch-site'] = api ? 'same-origin' : referer === undefined ? 'none' : referer.includes(site) ? 'same-origin' : 'cross-site';
  h['sec-fetch-mode'] = api ? 'cors' : 'navigate';
  if (!api) h['sec-fetch-user'] = '?1';
  h['sec-fetch-dest'] = api ? 'empty' : 'document';
  if (referer !== undefined) h.referer = referer;
  h['accept-encoding'] = family === 'safari' ? 'gzip, deflate, br' : 'gzip, deflate, br, zstd';
  h['accept-language'] = pick(random, LANGUAGES);
  h.priority = api ? 'u=1, i' : 'u=0, i';
  // Behind a CDN and the site's own proxy: the visitor first, then the CDN edge.
  h['x-forwarded-for'] = `${ip}, ${pick(random, ['172.70.', '162.158.'])}${int(random, 0, 255)}.${int(random, 1, 254)}`;
  h['x-forwarded-proto'] = 'https';
  h['cf-connecting-ip'] = ip;
  const status = api ? weighted(random, [[90, 200], [6, 401], [4, 500]]) : weighted(random, [[84, 200], [9, 304], [3, 301], [4, 404]]);
  return { method: api && random() < 0.3 ? 'POST' : 'GET', path, headers: h, status, html: !api };
}

// name, share of all visits, user agent, accept, extra headers, published addresses (a prefix
// ending in "." is completed with random bytes).
const CRAWLERS = [
  ['Googlebot', 9, 'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', { from: 'googlebot(at)googlebot.com' }, ['66.249.66.', '66.249.68.']],
  ['Googlebot desktop', 3, 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/131.0.6778.69 Safari/537.36', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', { from: 'googlebot(at)googlebot.com' }, ['66.249.66.']],
  ['bingbot', 5, 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/131.0.0.0 Safari/537.36', '*/*', { from: 'bingbot(at)microsoft.com', 'cache-control': 'no-cache', pragma: 'no-cache' }, ['157.55.39.', '207.46.13.', '40.77.167.']],
  ['GPTBot', 6, 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.2; +https://openai.com/gptbot', '*/*', {}, ['132.196.86.', '172.182.204.']],
  ['OAI-SearchBot', 2, 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot', '*/*', {}, ['135.234.64.']],
  ['ChatGPT-User', 2, 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot', 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8', {}, ['104.210.139.194', '104.210.139.201', '104.210.139.230']],
  ['ClaudeBot', 5, 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)', '*/*', {}, ['216.73.216.', '216.73.217.']],
  ['PerplexityBot', 1, 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)', '*/*', {}, ['107.20.236.150', '3.224.62.45', '18.210.92.235']],
  ['AhrefsBot', 4, 'Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)', '*/*', {}, ['54.36.148.', '5.39.1.']],
  ['Bytespider', 1, 'Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)', '*/*', {}, ['47.128.']],
  ['meta-externalagent', 1, 'meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)', '*/*', {}, ['57.141.0.']],
  ['python-requests', 1, 'python-requests/2.32.3', '*/*', { connection: 'keep-alive' }, ['34.']],
];

function crawlerVisit(random, site) {
  const [, , ua, accept, extra, prefixes] = weighted(
    random,
    CRAWLERS.map((crawler) => [crawler[1], crawler]),
  );
  // Crawlers fetch robots.txt and sitemaps often, and pages without a referer.
  const path = weighted(random, [
    [6, '/robots.txt'],
    [5, '/sitemap.xml'],
    [2, '/feed.xml'],
    [87, pagePath(random)],
  ]);
  const prefix = pick(random, prefixes);
  // About one crawler visit in twelve comes from somewhere else: a spoofer or a proxy.
  let address = prefix;
  while (address.endsWith('.')) address += address.split('.').length === 4 ? int(random, 1, 254) : `${int(random, 0, 255)}.`;
  const ip = random() < 0.08 ? publicIpv4(random) : address;
  const h = { host: site, 'user-agent': ua, accept, 'accept-encoding': 'gzip, deflate, br', ...extra, 'x-forwarded-for': ip, 'x-forwarded-proto': 'https', 'cf-connecting-ip': ip };
  const status = path === '/robots.txt' ? 200 : weighted(random, [[80, 200], [8, 304], [5, 301], [6, 404], [1, 503]]);
  return { method: 'GET', path, headers: h, status, html: !path.endsWith('.txt') && !path.endsWith('.xml') };
}

/** One batch as a site's SDK flushes it: visits of the last ~10 s, oldest first. */
function batch(random, now) {
  const site = 'www.example.com';
  const created = Array.from({ length: BATCH_SIZE }, () => now - Math.floor(random() * 10_000)).sort((a, b) => a - b);
  return created.map((time) => {
    const v = random() < 0.6 ? browserVisit(random, site) : crawlerVisit(random, site);
    const contentType = v.path.endsWith('.txt') ? 'text/plain; charset=utf-8' : v.path.endsWith('.xml') ? 'application/xml' : v.html ? 'text/html; charset=utf-8' : 'application/json';
    const responseHeaders = { 'content-type': contentType, 'cache-control': v.html ? 'public, max-age=0, must-revalidate' : 'no-store' };
    if (v.status === 200) responseHeaders['content-length'] = String(int(random, 600, 90_000));
    if (v.status === 301) responseHeaders.location = `https://${site}${v.path}/`;
    // Durations are log-normal: most answers are fast, a tail is slow.
    const duration = Math.round(Math.exp(2.5 + 1.1 * gaussian(random)) * 100) / 100;
    return {
      request_path: v.path,
      request_method: v.method,
      request_headers: v.headers,
      response_status_code: v.status,
      response_headers: responseHeaders,
      response_duration_in_milliseconds: v.status === 304 ? Math.min(duration, 5) : duration,
      created: new Date(time).toISOString(),
    };
  });
}

function gaussian(random) {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** The bodies every measurement uses: the same bytes for the server, the bare loop and the stages. */
export function visitBodies(count = BODIES, seed = 6) {
  const random = prng(seed);
  const now = Date.now();
  return Array.from({ length: count }, () => JSON.stringify(batch(random, now)));
}

// ---- Measurements.

/**
 * CPU seconds (user + system) a process has used, from /proc (Linux; undefined elsewhere). On a
 * machine shared with other work the server's wall-clock rate depends on its share of the CPU;
 * CPU time per visit does not, so it gives the rate one dedicated core would reach.
 */
function cpuSeconds(pid) {
  const file = `/proc/${pid}/stat`;
  if (!existsSync(file)) return undefined;
  // Fields after the ")" closing the command name; utime and stime are fields 14 and 15, in
  // USER_HZ ticks, which Linux fixes at 100 per second for user space.
  const stat = readFileSync(file, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function load(url, token, bodies, seconds) {
  const result = await autocannon({
    url: `${url}/visits`,
    connections: CONNECTIONS,
    duration: seconds,
    // Each connection cycles through the distinct bodies.
    requests: bodies.map((body) => ({ method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body })),
  });
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0) throw new Error(`${bad} failed requests against ${url}/visits`);
  return { visitsPerSecond: result.requests.average * BATCH_SIZE, acknowledged: result['2xx'] * BATCH_SIZE };
}

/** Microseconds per visit of each pipeline stage, measured on the same bodies in this process. */
async function stages(bodies, dir) {
  const engine = createEngine({ verifiers: createNodeVerifiers({ methods: ['web-bot-auth', 'ip-ranges'] }) });
  const enrich = createVisitEnricher({ engine });
  const store = openSqliteStore({ dataDir: join(dir, 'stages') });
  const { id: projectId, token } = store.createProject('bench');
  const parsedBodies = bodies.map((body) => JSON.parse(body));
  const visits = parsedBodies.map((items) => items.map((item) => parseVisit(item).visit));
  const enriched = await Promise.all(visits.map((batchOfVisits) => enrich(batchOfVisits)));
  const handler = createApiHandler({ engine, projects: store, visits: store, hashToken: hashTokenNode, rateLimit: false });
  // The same handler over a store whose append does nothing: the whole pipeline but SQLite.
  const noStore = Object.assign(Object.create(store), { append: async (_projectId, batchOfVisits) => batchOfVisits });
  const pipeline = createApiHandler({ engine, projects: store, visits: noStore, hashToken: hashTokenNode, rateLimit: false });
  const requests = bodies.map((body) => ({
    method: 'POST',
    path: '/visits',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
    body: Buffer.from(body),
  }));
  const options = { runs: 3, minMs: 400, warmup: 2 };
  const perVisit = (batchesPerSecond) => 1e6 / (batchesPerSecond * BATCH_SIZE);
  const rows = [
    ['JSON.parse', await throughput((body) => JSON.parse(body).length, bodies, options)],
    ['parseVisit x100', await throughput((items) => items.every((item) => parseVisit(item).ok), parsedBodies, options)],
    ['enrich (identify + verify + client IP + referral)', await throughputAsync(async (batchOfVisits) => (await enrich(batchOfVisits)).length, visits, options)],
    ['store.append (SQLite; one batch of 100 per call, awaited)', await throughputAsync(async (batchOfVisits) => (await store.append(projectId, batchOfVisits)).length, enriched, options)],
    ['whole handler (auth, parse, limits, validate, enrich, append, JSON)', await throughputAsync(async (request) => (await handler(request)).status === 202, requests, options)],
    ['the same handler with a no-op append (all but SQLite)', await throughputAsync(async (request) => (await pipeline(request)).status === 202, requests, options)],
  ];
  store.close();
  return rows.map(([name, rate]) => [name, perVisit(rate)]);
}

export async function run() {
  const bodies = visitBodies();
  const kib = bodies.reduce((sum, body) => sum + body.length, 0) / bodies.length / 1024;
  const dir = mkdtempSync(join(tmpdir(), 'agentwarden-bench-visits-'));
  try {
    const data = join(dir, 'data');
    const ours = await start(['dist/cli.js', 'serve', '--port', '0', '--data-dir', data, '--rate-limit', '0', '--verifiers', 'web-bot-auth,ip-ranges'], join(dir, 'ours.log'));
    // "On one core": the server (SQLite writes on its main thread) gets CPU 1, this process and
    // its load generator CPU 0, so they do not take turns on one core or spread over two.
    const pinned = (await pinToCpu(ours.child.pid, 1)) && (await pinToCpu(process.pid, 0));
    const rates = [];
    const bareRates = [];
    const cpuPerVisit = [];
    let acknowledged = 0;
    try {
      acknowledged += (await load(ours.url, ours.token, bodies, 1)).acknowledged;
      for (let r = 0; r < ROUNDS; r++) {
        // In turns with the server, so machine noise hits both alike.
        bareRates.push((await throughput((body) => JSON.parse(body).length, bodies, { runs: 1, minMs: 1000 })) * BATCH_SIZE);
        const cpuBefore = cpuSeconds(ours.child.pid);
        const result = await load(ours.url, ours.token, bodies, SECONDS);
        const cpuAfter = cpuSeconds(ours.child.pid);
        rates.push(result.visitsPerSecond);
        acknowledged += result.acknowledged;
        if (cpuBefore !== undefined && cpuAfter !== undefined) cpuPerVisit.push(((cpuAfter - cpuBefore) * 1e6) / result.acknowledged);
      }
    } finally {
      ours.child.kill('SIGTERM');
      await new Promise((resolve) => ours.child.once('exit', resolve));
    }
    // Every acknowledged visit must be in SQLite, or the rate would not be one of stored visits.
    // Autocannon stops with one request per connection unanswered, which may be stored as well.
    const db = new Database(join(data, 'agentwarden.db'), { readonly: true });
    const stored = db.prepare('SELECT count(*) AS n FROM visits').get().n;
    db.close();
    const unanswered = (ROUNDS + 1) * CONNECTIONS * BATCH_SIZE;
    if (stored < acknowledged || stored > acknowledged + unanswered) throw new Error(`${acknowledged} visits acknowledged but ${stored} stored`);
    const ingest = median(rates);
    const bareRate = median(bareRates);
    console.log(`POST /visits, batches of ${BATCH_SIZE} realistic visits (${kib.toFixed(1)} KiB each, ${BODIES} distinct), ${CONNECTIONS} connections, median of ${ROUNDS} x ${SECONDS}s`);
    console.log(pinned ? '  (server pinned to CPU 1, load generator and JSON.parse loop to CPU 0)' : '  (not pinned: taskset or a second CPU is missing; the server shares the CPUs with the load generator)');
    console.log(`  agentwarden serve -> SQLite   ${Math.round(ingest)} visits/s  (runs: ${rates.map(Math.round).join(', ')}; ${acknowledged} acknowledged, all in SQLite)`);
    console.log(`  bare JSON.parse loop          ${Math.round(bareRate)} visits/s  (runs: ${bareRates.map(Math.round).join(', ')})`);
    console.log(`  ratio ours/bare ${(ingest / bareRate).toFixed(3)}; goal >= ${GOAL} visits/s: ${ingest >= GOAL ? 'met' : 'NOT met'}`);
    if (cpuPerVisit.length > 0) {
      const us = median(cpuPerVisit);
      console.log(`  server CPU ${us.toFixed(1)} us per visit (runs: ${cpuPerVisit.map((v) => v.toFixed(1)).join(', ')}) = ${Math.round(1e6 / us)} visits/s per dedicated core; goal ${1e6 / us >= GOAL ? 'met' : 'NOT met'}`);
    }
    if (existsSync('/proc/loadavg')) console.log(`  (load average of the machine: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`);
    console.log('in process, microseconds per visit by stage:');
    for (const [name, us] of await stages(bodies, dir)) console.log(`  ${us.toFixed(2).padStart(7)} us  ${name}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
