// SQLite visit store: append throughput in-process (the rollup pass folding them every 1,000 ms),
// then stats/pathCounts latency over 1,000,000 visits (30 days) appended in batches of 100. Run
// `npx tsup --silent && node bench/visits-stats.mjs` (VISITS=200000 for a quicker run). Prints ms per query (wall and CPU): the median of several runs.
// COMPARE_MEMORY=1 also loads the in-memory reference store and checks SQLite answers the same.
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createMemoryVisitStore } from '../dist/index.js';
import { openSqliteVisitStore } from '../dist/node.js';
import { median, prng as random } from './harness.mjs';

const TOTAL = Number(process.env.VISITS ?? 1_000_000);
const BATCH = 100;
const DAYS = 30;
const DAY = 86_400_000;
const END = Date.UTC(2026, 10, 1);
const START = END - DAYS * DAY;

const next = random(42);
// Skewed choice: low indexes much more frequent, as real traffic is (a few agents and pages dominate).
const skewed = (n) => Math.floor(n * next() ** 2.5);

const TYPES = ['AI Data Scraper', 'AI Search Crawler', 'AI Assistant', 'Search Engine Crawler', 'SEO Crawler', 'Fetcher', 'Scraper', 'Archiver'];
const AGENTS = Array.from({ length: 60 }, (_, i) => ({ id: `agent-${i}`, type: TYPES[i % TYPES.length] }));
const RESULTS = ['verified', 'not_verifiable', 'verification_failed'];
const REFERRALS = ['chatgpt', 'perplexity', 'gemini', 'claude', 'copilot'];
const PATHS = Array.from({ length: 400 }, (_, i) => (i === 0 ? '/' : `/section-${i % 20}/page-${i}`));

// The i-th visit: times advance through the 30 days as live traffic arrives (a few seconds of jitter).
function visit(i) {
  const human = next() < 0.4;
  const agent = human ? undefined : AGENTS[skewed(AGENTS.length)];
  const time = Math.max(START, Math.min(END - 1, START + Math.floor((i / TOTAL) * DAYS * DAY + (next() - 0.5) * 10_000)));
  const path = PATHS[skewed(PATHS.length)] + (next() < 0.1 ? `?page=${1 + skewed(5)}` : '');
  return {
    request_path: path,
    request_method: 'GET',
    request_headers: { 'user-agent': human ? 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/131.0.0.0' : `Mozilla/5.0 (compatible; ${agent.id}/1.0)`, accept: '*/*' },
    // A few 404s and redirects, from the index (no draw from the generator: the rest of the data stays as it was).
    response_status_code: i % 23 === 0 ? 404 : i % 37 === 0 ? 301 : 200,
    response_duration_in_milliseconds: Math.floor(next() * 50),
    received: time + 500,
    time,
    agent_id: agent?.id ?? null,
    agent_type: agent?.type ?? null,
    result: human ? 'unknown_agent' : RESULTS[skewed(3)],
    client_ip: `203.0.113.${Math.floor(next() * 255)}`,
    referral: human && next() < 0.2 ? REFERRALS[skewed(REFERRALS.length)] : null,
  };
}

// BENCH_DB=/path/file.db keeps the database, and a second run skips the appends (query tuning).
const dir = process.env.BENCH_DB === undefined ? mkdtempSync(join(tmpdir(), 'agentwarden-bench-visits-')) : undefined;
const file = process.env.BENCH_DB ?? join(dir, 'visits.db');
const reuse = process.env.BENCH_DB !== undefined && existsSync(file);
const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
// The rollup pass runs here every 1,000 ms of the append loop (as the store's own timer would), so
// its cost is inside the append numbers.
const store = openSqliteVisitStore(db, { retentionDays: 0, retentionIntervalMs: 0, rollupIntervalMs: 0 });
const project = 'prj_bench';

try {
  console.log(`SQLite visit store: ${TOTAL.toLocaleString('en')} visits over ${DAYS} days, batches of ${BATCH}`);
  const batchAt = (i) => Array.from({ length: Math.min(BATCH, TOTAL - i) }, (_, j) => visit(i + j));

  if (!reuse) {
    // Append: one batch at a time (each its own transaction), as a single client would. Building
    // the batch is outside the timing.
    let ms = 0;
    let cpu = 0;
    let rollupMs = 0;
    let sinceRollup = 0;
    const timed = async (fn) => {
      const c = process.cpuUsage();
      const t = performance.now();
      await fn();
      const wall = performance.now() - t;
      ms += wall;
      const used = process.cpuUsage(c);
      cpu += (used.user + used.system) / 1000;
      return wall;
    };
    for (let i = 0; i < TOTAL; i += BATCH) {
      const batch = batchAt(i);
      sinceRollup += await timed(() => store.append(project, batch));
      if (sinceRollup >= 1000) {
        rollupMs += await timed(() => store.rollUp());
        sinceRollup = 0;
      }
    }
    rollupMs += await timed(() => store.rollUp());
    console.log(
      `append, one batch in flight (rollup pass included): ${Math.round(TOTAL / (ms / 1000)).toLocaleString('en')} visits/s wall, ${Math.round(TOTAL / (cpu / 1000)).toLocaleString('en')} visits/s of CPU (${store.commits().toLocaleString('en')} transactions, ${(ms / 1000).toFixed(1)} s, of which rollup pass ${(rollupMs / 1000).toFixed(1)} s)`,
    );
    console.log(`database: ${(statSync(file).size / 1e6).toFixed(0)} MB + WAL ${(statSync(`${file}-wal`).size / 1e6).toFixed(0)} MB`);

    // Append with group commit: 20 batches of 100 arriving in one turn share a transaction.
    const extra = Array.from({ length: Math.min(1000, Math.ceil(TOTAL / BATCH)) }, (_, b) => batchAt(b * BATCH));
    const commitsBefore = store.commits();
    const t0 = performance.now();
    let last = t0;
    for (let i = 0; i < extra.length; i += 20) {
      await Promise.all(extra.slice(i, i + 20).map((batch) => store.append('prj_bench_group', batch)));
      if (performance.now() - last >= 1000) {
        await store.rollUp();
        last = performance.now();
      }
    }
    await store.rollUp();
    ms = performance.now() - t0;
    const extraCount = extra.reduce((n, b) => n + b.length, 0);
    console.log(`append, 20 batches in flight (group commit): ${Math.round(extraCount / (ms / 1000)).toLocaleString('en')} visits/s (${(store.commits() - commitsBefore).toLocaleString('en')} transactions for ${extra.length} appends)`);

    // Live traffic: times advance with the visits (50,000 a second), as at the ingestion goal, so
    // the rollup pass folds many visits into each cell. Appends plus passes, CPU of this process.
    const LIVE = Math.min(TOTAL, 200_000);
    const live = Array.from({ length: LIVE / BATCH }, (_, b) => batchAt(b * BATCH).map((v, j) => ({ ...v, time: END + Math.floor((b * BATCH + j) / 50), received: END + Math.floor((b * BATCH + j) / 50) + 500 })));
    for (const inFlight of [1, 20]) {
      const c = process.cpuUsage();
      const t = performance.now();
      let last = t;
      for (let i = 0; i < live.length; i += inFlight) {
        await Promise.all(live.slice(i, i + inFlight).map((batch) => store.append(`prj_live_${inFlight}`, batch)));
        if (performance.now() - last >= 1000) {
          await store.rollUp();
          last = performance.now();
        }
      }
      await store.rollUp();
      const used = process.cpuUsage(c);
      console.log(
        `append, live traffic, ${inFlight} batch${inFlight === 1 ? '' : 'es'} in flight (rollup pass included): ${Math.round(LIVE / ((performance.now() - t) / 1000)).toLocaleString('en')} visits/s wall, ${Math.round(LIVE / ((used.user + used.system) / 1e6)).toLocaleString('en')} visits/s of CPU`,
      );
    }

    db.pragma('wal_checkpoint(TRUNCATE)');
  }

  // Wall time, and CPU time of this process (what the query costs, whatever else the machine runs).
  const time = async (fn, runs = 7) => {
    await fn();
    const wall = [];
    const cpu = [];
    for (let i = 0; i < runs; i++) {
      const c = process.cpuUsage();
      const s = performance.now();
      await fn();
      wall.push(performance.now() - s);
      const used = process.cpuUsage(c);
      cpu.push((used.user + used.system) / 1000);
    }
    return { wall: median(wall), cpu: median(cpu) };
  };
  const rows = [];
  const measure = async (label, fn) => {
    const result = await fn();
    const { wall, cpu } = await time(fn);
    rows.push({ query: label, 'wall ms': wall.toFixed(1), 'cpu ms': cpu.toFixed(1), visits: result.total ?? result.length });
  };
  for (const by of ['agent', 'agent_type', 'result', 'referral', 'path']) {
    for (const interval of ['hour', 'day']) {
      await measure(`stats by ${by}, ${interval}, 30 days`, () => store.stats({ projectId: project, from: START, to: END, interval, by }));
    }
  }
  const now = END - 3 * 3_600_000 - 17_123; // an unaligned "now": raw rows answer the last seconds
  await measure('stats by agent, hour, 30 days to an unaligned now', () => store.stats({ projectId: project, from: now - DAYS * DAY, to: now, interval: 'hour', by: 'agent' }));
  await measure('stats by agent, minute, last 24 h', () => store.stats({ projectId: project, from: now - DAY, to: now, interval: 'minute', by: 'agent' }));
  await measure('stats by path, minute, last 24 h (raw rows)', () => store.stats({ projectId: project, from: now - DAY, to: now, interval: 'minute', by: 'path' }));
  await measure('stats by agent_type, day, 30 days, filter agent_id', () => store.stats({ projectId: project, from: START, to: END, interval: 'day', by: 'agent_type', filter: { agent_id: 'agent-1' } }));
  await measure('stats by agent, hour, 30 days, filter path', () => store.stats({ projectId: project, from: START, to: END, interval: 'hour', by: 'agent', filter: { path: '/' } }));
  await measure('pathCounts, 30 days, agents only', () => store.pathCounts({ projectId: project, from: START, to: END, agentsOnly: true }));
  // What the dashboard asks: top 20 (the API's default) over ranges ending at an unaligned now.
  await measure('top 20 paths, 30 days to an unaligned now', () => store.pathCounts({ projectId: project, from: now - DAYS * DAY, to: now, agentsOnly: true, limit: 20 }));
  await measure('top 20 paths, last 7 days to an unaligned now', () => store.pathCounts({ projectId: project, from: now - 7 * DAY, to: now, agentsOnly: true, limit: 20 }));
  await measure('top 1000 paths, last 7 days to an unaligned now', () => store.pathCounts({ projectId: project, from: now - 7 * DAY, to: now, agentsOnly: true }));
  await measure('top 1000 paths, last 24 h (no whole day: every pair counted)', () => store.pathCounts({ projectId: project, from: now - DAY, to: now, agentsOnly: true }));
  await measure('top 100 paths of AI Data Scrapers, 30 days', () => store.pathCounts({ projectId: project, from: START, to: END, agentsOnly: true, filter: { agent_type: 'AI Data Scraper' }, limit: 100 }));
  // The dashboard's status codes, top pages and landing pages.
  await measure('stats by status, hour, last 24 h', () => store.stats({ projectId: project, from: now - DAY, to: now, interval: 'hour', by: 'status' }));
  await measure('stats by status, day, 30 days', () => store.stats({ projectId: project, from: START, to: END, interval: 'day', by: 'status' }));
  await measure('stats by status of agent-1, hour, 30 days', () => store.stats({ projectId: project, from: START, to: END, interval: 'hour', by: 'status', filter: { agent_id: 'agent-1' } }));
  await measure('stats by agent, day, 30 days, filter status 404', () => store.stats({ projectId: project, from: START, to: END, interval: 'day', by: 'agent', filter: { status: 404 } }));
  await measure('top 404 paths of agent-1, 30 days (raw rows)', () => store.pathCounts({ projectId: project, from: START, to: END, filter: { agent_id: 'agent-1', status: 404 }, limit: 10 }));
  await measure('top pages of all agents, hour, last 24 h', () => store.stats({ projectId: project, from: now - DAY, to: now, interval: 'hour', by: 'path', filter: { has_agent: true } }));
  await measure('top pages of all agents, day, 30 days', () => store.stats({ projectId: project, from: START, to: END, interval: 'day', by: 'path', filter: { has_agent: true } }));
  await measure('landing pages of AI referrals, hour, last 24 h', () => store.stats({ projectId: project, from: now - DAY, to: now, interval: 'hour', by: 'path', filter: { has_referral: true } }));
  await measure('landing pages of AI referrals, day, 30 days', () => store.stats({ projectId: project, from: START, to: END, interval: 'day', by: 'path', filter: { has_referral: true } }));
  await measure('one visit by id', async () => [await store.getVisit(project, '12345')]);
  await measure('timeline, newest 100', () => store.timeline({ projectId: project, limit: 100 }));
  await measure('timeline, 100 of agent-5', () => store.timeline({ projectId: project, limit: 100, filter: { agent_id: 'agent-5' } }));
  await measure('timeline, 100 of agent-59 (0.4% of visits)', () => store.timeline({ projectId: project, limit: 100, filter: { agent_id: 'agent-59' } }));
  await measure(`timeline, 100 of path ${PATHS[399]} (0.1%)`, () => store.timeline({ projectId: project, limit: 100, filter: { path: PATHS[399] } }));

  // Stats while visits wait for the rollup pass: they are counted from raw rows past the watermark.
  if (!reuse) {
    const waiting = Array.from({ length: 200 }, (_, b) => batchAt(b * BATCH).map((v) => ({ ...v, time: v.time + (DAYS - 1) * DAY })));
    for (const batch of waiting) await store.append(project, batch);
    await measure('stats by agent, hour, 30 days, 20,000 visits not rolled up', () => store.stats({ projectId: project, from: START, to: END, interval: 'hour', by: 'agent' }));
    await measure('stats by path, hour, 30 days, 20,000 visits not rolled up', () => store.stats({ projectId: project, from: START, to: END, interval: 'hour', by: 'path' }));
    await measure('pathCounts, 30 days, 20,000 visits not rolled up', () => store.pathCounts({ projectId: project, from: START, to: END, agentsOnly: true }));
    const c = process.cpuUsage();
    const t = performance.now();
    const folded = await store.rollUp();
    const used = process.cpuUsage(c);
    console.log(`rollup pass: ${folded.toLocaleString('en')} visits in ${(performance.now() - t).toFixed(0)} ms wall, ${((used.user + used.system) / 1000).toFixed(0)} ms CPU`);
  }
  console.table(rows);

  // The in-memory reference store on the same visits: every answer must be the same.
  if (process.env.COMPARE_MEMORY === '1') {
    const memory = createMemoryVisitStore();
    const all = store.list(project);
    for (let i = 0; i < all.length; i += 10_000) await memory.append(project, all.slice(i, i + 10_000));
    const queries = [];
    for (const by of ['agent', 'agent_type', 'result', 'referral', 'path']) {
      for (const interval of ['hour', 'day']) queries.push({ projectId: project, from: START, to: END, interval, by }, { projectId: project, from: now - 2 * DAY, to: now, interval, by, limit: 3 });
      queries.push({ projectId: project, from: now - DAY, to: now, interval: 'minute', by, filter: { agent_type: 'Fetcher' } });
    }
    let same = 0;
    for (const query of queries) if (JSON.stringify(await memory.stats(query)) === JSON.stringify(await store.stats(query))) same++;
    const paths = { projectId: project, from: START + 5_000, to: now, agentsOnly: true };
    const pathsSame = JSON.stringify(await memory.pathCounts(paths)) === JSON.stringify(await store.pathCounts(paths));
    console.log(`in-memory store agrees on ${same} of ${queries.length} stats queries; pathCounts equal: ${pathsSame}`);
    console.log(`in-memory store, stats by path, hour, 30 days: ${(await time(() => memory.stats(queries[20]), 3)).wall.toFixed(1)} ms`);
  }
} finally {
  store.close();
  db.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
}
