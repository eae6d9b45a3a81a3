// Shared benchmark helpers: warm up, several timed runs, medians; peers measured in the same process.

/** Median of a list of numbers. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * A fresh pass loop for each measured function. A shared loop would see several callees at one
 * call site, so V8 would inline whichever ran first and deoptimize for the rest, and the order
 * of measurements would decide the result. `new Function` gives each its own feedback.
 */
function passLoop() {
  return new Function('fn', 'items', 'let sink = 0; for (let i = 0; i < items.length; i++) if (fn(items[i])) sink++; return sink;');
}

/** Warm-up passes, then `runs` timed runs of at least `minMs` each; items per second, median. */
async function timeRuns(pass, count, { runs = 5, minMs = 500, warmup = 3 } = {}) {
  let sink = 0;
  for (let w = 0; w < warmup; w++) sink += await pass();
  const rates = [];
  for (let r = 0; r < runs; r++) {
    let done = 0;
    const start = process.hrtime.bigint();
    let elapsed = 0;
    do {
      sink += await pass();
      done += count;
      elapsed = Number(process.hrtime.bigint() - start) / 1e6;
    } while (elapsed < minMs);
    rates.push((done / elapsed) * 1000);
  }
  globalThis.__benchSink = sink;
  return median(rates);
}

/** Items per second of a synchronous function over a list of inputs (median of timed runs). */
export function throughput(fn, items, options) {
  const pass = passLoop();
  return timeRuns(() => pass(fn, items), items.length, options);
}

/** Like throughput, for a function returning a promise (awaited one at a time). */
export function throughputAsync(fn, items, options) {
  const pass = async () => {
    let sink = 0;
    for (const item of items) if (await fn(item)) sink++;
    return sink;
  };
  return timeRuns(pass, items.length, options);
}

/** Deterministic PRNG (mulberry32) so corpora are the same on every run. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Shuffles in place with the given PRNG. */
export function shuffle(list, random) {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [list[i], list[j]] = [list[j], list[i]];
  }
  return list;
}

/** Formats a rate. */
export function fmt(rate) {
  return rate >= 1e6 ? `${(rate / 1e6).toFixed(2)} M/s` : `${(rate / 1e3).toFixed(1)} k/s`;
}

/**
 * Pins a process (all its threads) to one CPU with Linux `taskset`, so a server measured against
 * a load generator on the same machine gets exactly one core and the generator another. Returns
 * false, changing nothing, where taskset or a second CPU is missing.
 */
export async function pinToCpu(pid, cpu) {
  const { cpus } = await import('node:os');
  const { spawnSync } = await import('node:child_process');
  // The machine's CPUs, not availableParallelism(): that counts this process's own affinity, which
  // an earlier bench in the same run has already narrowed to CPU 0 (its load generator's).
  if (cpus().length < 2) return false;
  const result = spawnSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
  return result.status === 0;
}
