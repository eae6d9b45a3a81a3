// Checks of embedding options at creation: wrong types are TypeErrors, bad values RangeErrors, and
// every message names the option (STYLE.md "Errors").

/**
 * Checks that `options` is an object.
 * @throws {TypeError} naming `factory` when it is not.
 */
export function checkOptions(options: unknown, factory: string): asserts options is object {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`${factory} takes an options object, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}`);
  }
}

/**
 * An integer option: `fallback` when undefined, else an integer from `min` up.
 * @throws {TypeError} when it is not a number; {RangeError} when it is not an integer >= min.
 */
export function integerOption(value: unknown, name: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number, got ${typeof value}`);
  if (!Number.isSafeInteger(value) || value < min) throw new RangeError(`${name} must be an integer >= ${min}, got ${value}`);
  return value;
}
