// Identification throughput vs isbot on the same mixed corpus (~70% browsers, ~30% bots).
// isbot answers yes/no; ours returns the full agent record.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { isbot } from 'isbot';
import { createEngine } from '../dist/index.js';
import { fmt, median, prng, shuffle, throughput, throughputAsync } from './harness.mjs';

const require = createRequire(import.meta.url);
const root = join(import.meta.dirname, '..');

const browsers = [
  ...new Set(JSON.parse(readFileSync(join(dirname(require.resolve('user-agents')), 'user-agents.json'), 'utf8')).map((r) => r.userAgent)),
];
const botPool = [
  ...new Set(JSON.parse(readFileSync(join(root, 'data/sources/crawler-user-agents/crawler-user-agents.json'), 'utf8')).flatMap((e) => e.instances)),
];
const random = prng(42);
const bots = shuffle([...botPool], random).slice(0, Math.round((browsers.length * 3) / 7));
const corpus = shuffle([...browsers, ...bots], random);

const uncached = createEngine({ cache: false });
const cached = createEngine();
const match = uncached.catalog.matchUserAgent;
const items = corpus.map((ua) => ({ request_headers: { 'user-agent': ua } }));

/** Measures ours and the peer alternately, `rounds` times, so load changes hit both; median ratio. */
async function paired(label, ours, peer, rounds = 5) {
  const ratios = [];
  const oursRates = [];
  const peerRates = [];
  for (let r = 0; r < rounds; r++) {
    const p = await peer();
    const o = await ours();
    peerRates.push(p);
    oursRates.push(o);
    ratios.push(o / p);
  }
  const result = { ours: median(oursRates), peer: median(peerRates), ratio: median(ratios) };
  console.log(`  ${label.padEnd(40)} ${fmt(result.ours).padStart(10)}  vs isbot ${fmt(result.peer).padStart(10)}  ratio ${result.ratio.toFixed(1)}x`);
  return result;
}

export async function run() {
  console.log(`identify: corpus ${corpus.length} UAs (${browsers.length} browsers, ${bots.length} bots), mean length ${Math.round(corpus.reduce((n, s) => n + s.length, 0) / corpus.length)}; median of paired runs`);
  const opts = { runs: 1, minMs: 400 };
  const isbotRate = () => throughput((ua) => isbot(ua), corpus, opts);
  const matcher = await paired('matcher, uncached (agent record)', () => throughput((ua) => match(ua) !== undefined, corpus, opts), isbotRate);
  const browsersOnly = await paired('matcher, browser UAs only', () => throughput((ua) => match(ua) !== undefined, browsers, opts), () => throughput((ua) => isbot(ua), browsers, opts));
  const engineUncached = await paired('engine.identify, uncached (full result)', () => throughputAsync(async (item) => (await uncached.identify(item)).result !== 'unknown_agent', items, opts), isbotRate);
  const batches = [];
  for (let i = 0; i < items.length; i += 100) batches.push(items.slice(i, i + 100));
  const perBatch = (engine) => async () => (await throughputAsync(async (batch) => (await engine.identifyMany(batch)).length > 0, batches, opts)) * (items.length / batches.length);
  const batchUncached = await paired('engine.identifyMany x100, uncached', perBatch(uncached), isbotRate);
  const engineCached = await paired('engine.identify, cached', () => throughputAsync(async (item) => (await cached.identify(item)).result !== 'unknown_agent', items, opts), isbotRate);
  const found = corpus.filter((ua) => match(ua) !== undefined).length;
  console.log(`  identified ${found}/${corpus.length}; isbot flagged ${corpus.filter((ua) => isbot(ua)).length}/${corpus.length}`);
  return { matcher, browsersOnly, engineUncached, batchUncached, engineCached };
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
