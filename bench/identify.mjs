// Identification throughput vs isbot on the same mixed corpus (~70% browsers, ~30% bots).
// isbot answers yes/no; ours returns the full agent record.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { isbot } from 'isbot';
import { createEngine } from '../dist/index.js';
import { fmt, prng, shuffle, throughput, throughputAsync } from './harness.mjs';

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

export async function run() {
  console.log(`identify: corpus ${corpus.length} UAs (${browsers.length} browsers, ${bots.length} bots), mean length ${Math.round(corpus.reduce((n, s) => n + s.length, 0) / corpus.length)}`);
  const peer = throughput((ua) => isbot(ua), corpus);
  const ours = throughput((ua) => match(ua) !== undefined, corpus);
  const engineUncached = await throughputAsync(async (item) => (await uncached.identify(item)).result !== 'unknown_agent', items);
  const engineCached = await throughputAsync(async (item) => (await cached.identify(item)).result !== 'unknown_agent', items);
  const found = corpus.filter((ua) => match(ua) !== undefined).length;
  console.log(`  isbot (yes/no)                         ${fmt(peer)}`);
  console.log(`  agentwarden matcher, uncached (record)  ${fmt(ours)}   ratio ours/isbot = ${(ours / peer).toFixed(1)}x`);
  console.log(`  engine.identify, uncached (full result) ${fmt(engineUncached)}   ratio = ${(engineUncached / peer).toFixed(1)}x`);
  console.log(`  engine.identify, cached                 ${fmt(engineCached)}   ratio = ${(engineCached / peer).toFixed(1)}x`);
  console.log(`  identified ${found}/${corpus.length}; isbot flagged ${corpus.filter((ua) => isbot(ua)).length}/${corpus.length}`);
  return { isbot: peer, matcher: ours, engineUncached, engineCached };
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
