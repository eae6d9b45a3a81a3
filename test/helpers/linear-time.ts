// How a matcher's cost grows with the header: crafted headers must cost time linear in their length.

/**
 * How many times more `call` costs on a header of `unit` repeated to 16,000 characters (node:http's
 * header limit) than on one of 2,000: about 8 when linear, 64 when quadratic. Each size is warmed
 * first, then timed as the least of nine runs of three calls, so a pause elsewhere does not count.
 * A `prefix` (a rule's start: "' or a") and `suffix` frame the run, so one match attempt reads it all.
 */
export function costGrowth(call: (header: string) => unknown, unit: string, prefix = '', suffix = ''): number {
  const header = (length: number) => prefix + unit.repeat(Math.ceil(length / unit.length)).slice(0, length) + suffix;
  const cost = (ua: string): number => {
    let least = Infinity;
    for (let run = 0; run < 9; run++) {
      const started = performance.now();
      for (let i = 0; i < 3; i++) call(ua);
      least = Math.min(least, performance.now() - started);
    }
    return least;
  };
  const small = header(2_000);
  const large = header(16_000);
  cost(small);
  cost(large);
  return cost(large) / cost(small);
}
