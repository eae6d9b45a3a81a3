// robots.txt rendering speed: all 17 types cold (fresh engine, first render) and memoized, in µs,
// next to a naive join of the same tokens as the floor (run `npx tsup` first).
import { AGENT_TYPES, createEngine } from '../dist/index.js';
import { median } from './harness.mjs';

const COLD_SAMPLES = 15;
const BATCHES = 9;
const CALLS = 2000;
const options = { agent_types: [...AGENT_TYPES] };
const withExtras = { agent_types: [...AGENT_TYPES], disallow: ['/', '/private'], allow: '/public', comments: true, markers: true };
const micros = (start) => Number(process.hrtime.bigint() - start) / 1e3;

function cold(opts) {
  const samples = [];
  const creates = [];
  for (let i = 0; i < COLD_SAMPLES; i++) {
    const t0 = process.hrtime.bigint();
    const engine = createEngine();
    creates.push(micros(t0));
    const start = process.hrtime.bigint();
    globalThis.__benchSink = engine.renderRobotsTxt(opts).bytes;
    samples.push(micros(start));
  }
  return { render: median(samples), create: median(creates) };
}

function memoized(opts) {
  const engine = createEngine();
  engine.renderRobotsTxt(opts);
  const perCall = [];
  for (let b = 0; b < BATCHES; b++) {
    // A fresh options object per call, as a server parsing JSON bodies would pass.
    const inputs = Array.from({ length: CALLS }, () => structuredClone(opts));
    const start = process.hrtime.bigint();
    for (const input of inputs) globalThis.__benchSink = engine.renderRobotsTxt(input).bytes;
    perCall.push(micros(start) / CALLS);
  }
  return median(perCall);
}

// The floor: the seed format by string joins over the catalog, no validation, encoding or hashing.
function naive(engine) {
  const samples = [];
  for (let i = 0; i < 200; i++) {
    const start = process.hrtime.bigint();
    const text = AGENT_TYPES.flatMap((type) => engine.catalog.agentsOfType(type).flatMap((a) => a.robots_tokens))
      .map((token) => `User-agent: ${token}\nDisallow: /\n`)
      .join('\n');
    globalThis.__benchSink = text.length;
    samples.push(micros(start));
  }
  return median(samples);
}

const engine = createEngine();
const text = engine.renderRobotsTxt(options);
const extras = engine.renderRobotsTxt(withExtras);
console.log(`robots.txt: ${engine.catalog.agents.length} agents; all 17 types = ${text.bytes} bytes (${extras.bytes} with 2 disallow, 1 allow, comments, markers)`);
console.log(`median µs; cold = fresh engine, first render (validate, build, hash); memoized = median of ${BATCHES} x ${CALLS} calls\n`);
const a = cold(options);
const b = cold(withExtras);
const floor = naive(engine);
console.log(`${'case'.padEnd(36)}${'µs'.padStart(10)}`);
console.log(`${'createEngine (not in the render)'.padEnd(36)}${a.create.toFixed(0).padStart(10)}`);
console.log(`${'cold, all types'.padEnd(36)}${a.render.toFixed(1).padStart(10)}`);
console.log(`${'cold, all types + extras'.padEnd(36)}${b.render.toFixed(1).padStart(10)}`);
console.log(`${'memoized, all types'.padEnd(36)}${memoized(options).toFixed(2).padStart(10)}`);
console.log(`${'memoized, all types + extras'.padEnd(36)}${memoized(withExtras).toFixed(2).padStart(10)}`);
console.log(`${'naive join (floor, no checks)'.padEnd(36)}${floor.toFixed(1).padStart(10)}`);
console.log(`cold / naive: ${(a.render / floor).toFixed(2)}`);
