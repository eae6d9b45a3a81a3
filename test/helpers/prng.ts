// A tiny deterministic PRNG (mulberry32) for tests: the same data on every run and store, and a
// failing randomised run can be replayed from its seed.

/** Returns a function giving numbers in [0, 1), determined by `seed`. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
