// Header lookups over the platform's own header objects (a Fetch `Headers`, Node's
// IncomingHttpHeaders): the engine reads a handful of headers per request, so none is copied for it.
import type { HeadersInput } from '../identify/headers.js';

/** A read-only Map whose lookups go to the platform's object; iteration (rarely needed) builds a Map once. */
abstract class LazyHeaderMap implements ReadonlyMap<string, string> {
  #map: Map<string, string> | undefined;
  abstract get(name: string): string | undefined;
  abstract has(name: string): boolean;
  protected abstract collect(map: Map<string, string>): void;
  get size(): number {
    return this.#all().size;
  }
  forEach(callback: (value: string, key: string, map: ReadonlyMap<string, string>) => void, thisArg?: unknown): void {
    this.#all().forEach((value, key) => callback.call(thisArg, value, key, this));
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
      this.#map = new Map();
      this.collect(this.#map);
    }
    return this.#map;
  }
}

class FetchHeaderMap extends LazyHeaderMap {
  constructor(private readonly headers: Headers) {
    super();
  }
  get(name: string): string | undefined {
    return this.headers.get(name) ?? undefined;
  }
  has(name: string): boolean {
    return this.headers.has(name);
  }
  protected collect(map: Map<string, string>): void {
    this.headers.forEach((value, name) => map.set(name, value));
  }
}

/** Node keeps header names lower-case, repeated values joined, except set-cookie (an array). */
class NodeHeaderMap extends LazyHeaderMap {
  constructor(private readonly headers: HeadersInput) {
    super();
  }
  get(name: string): string | undefined {
    if (!Object.hasOwn(this.headers, name)) return undefined;
    const value = this.headers[name];
    return typeof value === 'string' ? value : Array.isArray(value) ? value.join(', ') : undefined;
  }
  has(name: string): boolean {
    return this.get(name) !== undefined;
  }
  protected collect(map: Map<string, string>): void {
    for (const name of Object.keys(this.headers)) {
      const value = this.get(name);
      if (value !== undefined) map.set(name, value);
    }
  }
}

/** A header map over a Fetch `Headers` object (lower-case lookups). */
export function fetchHeaderMap(headers: Headers): ReadonlyMap<string, string> {
  return new FetchHeaderMap(headers);
}

/**
 * A header map over headers whose names are already lower-case, as Node's `req.headers` (values a
 * string, or an array for set-cookie): lookups read the object, nothing is copied.
 */
export function lowerCaseHeaderMap(headers: HeadersInput): ReadonlyMap<string, string> {
  return new NodeHeaderMap(headers);
}
