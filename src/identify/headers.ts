// Request headers as clients send them (any case, string or string[]) turned into one
// lower-case map, the only form the rest of the engine reads.

/** Headers as accepted from callers: names in any case, values string or string[]. */
export type HeadersInput = Readonly<Record<string, string | readonly string[] | undefined>>;

// The Fetch `Headers` class, looked up once: in Node the global is an accessor that costs more
// than reading a header record's few names.
let headersClass: typeof Headers | null | undefined;
function isFetchHeaders(input: object): input is Headers {
  // A plain record (the common input) is no Headers, without asking the class.
  const prototype: unknown = Object.getPrototypeOf(input);
  if (prototype === Object.prototype || prototype === null) return false;
  if (headersClass === undefined) headersClass = typeof Headers === 'undefined' ? null : Headers;
  return headersClass !== null && input instanceof headersClass;
}

/** Whether `toLowerCase` leaves a name as it is (a check, no new string, for ASCII names). */
function isLowerCase(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    if (code >= 65 && code <= 90) return false;
    if (code >= 128) return name.toLowerCase() === name;
  }
  return true;
}

/**
 * Lower-cases names and joins repeated values with ", " (RFC 9110 §5.3 field combination).
 * Non-string values are ignored, so hostile input can never throw here.
 */
export function normalizeHeaders(input: HeadersInput | Headers | undefined | null): Map<string, string> {
  const headers = new Map<string, string>();
  if (input === undefined || input === null || typeof input !== 'object') return headers;
  if (isFetchHeaders(input)) {
    input.forEach((value, name) => add(headers, name.toLowerCase(), value));
    return headers;
  }
  // Until a name needs lower-casing, each key set is distinct from the next (object keys are
  // unique), so there is no earlier value to join: the common, already lower-case input (a
  // stored visit's headers) costs no lookups.
  let mixedCase = false;
  const names = Object.keys(input);
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    const value = (input as Record<string, unknown>)[name];
    let joined: string;
    if (typeof value === 'string') joined = value;
    else if (Array.isArray(value)) {
      const strings = value.filter((item): item is string => typeof item === 'string');
      if (strings.length === 0) continue;
      joined = strings.join(', ');
    } else continue;
    const key = name.toLowerCase();
    if (key !== name) mixedCase = true;
    if (mixedCase) add(headers, key, joined);
    else headers.set(key, joined);
  }
  return headers;
}

function add(headers: Map<string, string>, key: string, value: string): void {
  const previous = headers.get(key);
  headers.set(key, previous === undefined ? value : `${previous}, ${value}`);
}

/**
 * A read-only Map whose lookups go to an object the caller already has (a header record, a Fetch
 * `Headers`, Node's IncomingHttpHeaders): the engine reads a handful of headers per request, so
 * none is copied for it; iteration (rarely needed) builds a Map once.
 */
export abstract class LazyHeaderMap implements ReadonlyMap<string, string> {
  #map: Map<string, string> | undefined;
  abstract get(name: string): string | undefined;
  abstract has(name: string): boolean;
  /** Calls `visit` with each header, read where the object keeps it. */
  protected abstract each(visit: (value: string, name: string, map: ReadonlyMap<string, string>) => void): void;
  get size(): number {
    return this.#all().size;
  }
  // Reads the headers in place: looking at every value once (the attack probe check) needs no Map.
  forEach(callback: (value: string, key: string, map: ReadonlyMap<string, string>) => void, thisArg?: unknown): void {
    if (this.#map !== undefined) this.#map.forEach((value, key) => callback.call(thisArg, value, key, this));
    else this.each(thisArg === undefined ? callback : (value, key) => callback.call(thisArg, value, key, this));
  }
  entries(): MapIterator<[string, string]> {
    return this.#all().entries();
  }
  keys(): MapIterator<string> {
    return this.#all().keys();
  }
  values(): MapIterator<string> {
    return this.#all().values();
  }
  [Symbol.iterator](): MapIterator<[string, string]> {
    return this.#all().entries();
  }
  #all(): Map<string, string> {
    if (this.#map === undefined) {
      const map = new Map<string, string>();
      this.each((value, name) => map.set(name, value));
      this.#map = map;
    }
    return this.#map;
  }
}

/**
 * A read-only Map over a header record whose names are already lower-case and whose values are
 * strings (a parsed visit's headers): lookups read the record, so no Map is built for the few
 * headers identification reads.
 */
class HeaderRecordMap extends LazyHeaderMap {
  constructor(private readonly record: Readonly<Record<string, string>>) {
    super();
  }
  get(name: string): string | undefined {
    // Most names asked for are absent: one load answers those.
    const value = this.record[name];
    return value !== undefined && Object.hasOwn(this.record, name) ? value : undefined;
  }
  has(name: string): boolean {
    return Object.hasOwn(this.record, name);
  }
  protected each(visit: (value: string, name: string, map: ReadonlyMap<string, string>) => void): void {
    // headerMapOf checked that every name is lower-case and every value a string. (V8 runs
    // hasOwnProperty inside for-in from its key cache; Object.hasOwn there costs ten times more.)
    const record = this.record;
    for (const name in record) if (Object.prototype.hasOwnProperty.call(record, name)) visit(record[name]!, name, this);
  }
}

/**
 * The headers as `normalizeHeaders` gives them, read in place when they already are in that
 * form (lower-case names, string values), as parsed visits' headers are: building a Map of
 * twenty headers costs more than everything identification then reads from it.
 * @example
 * headerMapOf({ 'user-agent': 'GPTBot/1.2' }).get('user-agent'); // 'GPTBot/1.2'
 */
export function headerMapOf(input: HeadersInput | undefined | null): ReadonlyMap<string, string> {
  if (input === undefined || input === null || typeof input !== 'object' || isFetchHeaders(input)) return normalizeHeaders(input);
  // for-in (cheaper than Object.keys here) also visits inherited names: those only send a
  // record to the slow path, and the view reads own properties alone, as normalizeHeaders does.
  for (const name in input) {
    if (typeof input[name] !== 'string' || !isLowerCase(name)) return normalizeHeaders(input);
  }
  return new HeaderRecordMap(input as Readonly<Record<string, string>>);
}
