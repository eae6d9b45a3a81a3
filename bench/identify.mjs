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

// The per-byte scan limit: copy the header's bytes out of the string and read each one once,
// in one dependent chain, through a case-folding table, counting word ends so the loop cannot be
// optimised away. A matcher that walks the header once this way cannot be faster; ours walks two
// halves interleaved, so its bare walk can come in just under it. Printed beside ours as a yardstick.
const FOLD = new Uint8Array(256);
for (let c = 0; c < 128; c++) if (/[A-Za-z0-9_.-]/.test(String.fromCharCode(c))) FOLD[c] = c >= 65 && c <= 90 ? c | 0x20 : c;
const encoder = new TextEncoder();
let scratch = new Uint8Array(1024);
function byteScan(ua) {
  if (ua.length * 3 > scratch.length) scratch = new Uint8Array(ua.length * 3);
  const buf = scratch;
  const fold = FOLD;
  const length = encoder.encodeInto(ua, buf).written;
  let words = 0;
  let previous = 0;
  for (let i = 0; i < length; i++) {
    const folded = fold[buf[i]];
    if (folded === 0 && previous !== 0) words++;
    previous = folded;
  }
  return words + (previous !== 0 ? 1 : 0) > 1;
}

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
  const identifySync = await paired('identifySync, uncached (full record)', () => throughput((item) => uncached.identifySync(item).result !== 'unknown_agent', items, opts), isbotRate);
  const scanFloor = await paired('bare byte-scan loop (the floor)', () => throughput(byteScan, corpus, opts), isbotRate);
  console.log(`  => identifySync ${identifySync.ratio.toFixed(1)}x isbot beside the byte-scan floor's ${scanFloor.ratio.toFixed(1)}x: identification at ${((100 * identifySync.ratio) / scanFloor.ratio).toFixed(0)}% of the floor's speed`);
  const engineUncached = await paired('engine.identify, uncached (full result)', () => throughputAsync(async (item) => (await uncached.identify(item)).result !== 'unknown_agent', items, opts), isbotRate);
  const batches = [];
  for (let i = 0; i < items.length; i += 100) batches.push(items.slice(i, i + 100));
  const perBatch = (engine) => async () => (await throughputAsync(async (batch) => (await engine.identifyMany(batch)).length > 0, batches, opts)) * (items.length / batches.length);
  const batchUncached = await paired('engine.identifyMany x100, uncached', perBatch(uncached), isbotRate);
  const engineCached = await paired('engine.identify, cached', () => throughputAsync(async (item) => (await cached.identify(item)).result !== 'unknown_agent', items, opts), isbotRate);
  const found = corpus.filter((ua) => match(ua) !== undefined).length;
  console.log(`  identified ${found}/${corpus.length}; isbot flagged ${corpus.filter((ua) => isbot(ua)).length}/${corpus.length}`);
  return { matcher, browsersOnly, identifySync, scanFloor, engineUncached, batchUncached, engineCached };
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
