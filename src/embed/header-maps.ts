// Header lookups over the platform's own header objects (a Fetch `Headers`, Node's
// IncomingHttpHeaders): the engine reads a handful of headers per request, so none is copied for it.
import { LazyHeaderMap, type HeadersInput } from '../identify/headers.js';

class FetchHeaderMap extends LazyHeaderMap {
  constructor(private readonly headers: Headers) {
    super();
  }
  // A Fetch Headers holds no HTTP/2 pseudo-header and throws on asking for one (`:authority`,
  // which the Web Bot Auth verifier reads before Host): such a name is simply absent.
  get(name: string): string | undefined {
    return name.charCodeAt(0) === 58 ? undefined : (this.headers.get(name) ?? undefined);
  }
  has(name: string): boolean {
    return name.charCodeAt(0) !== 58 && this.headers.has(name);
  }
  protected each(visit: (value: string, name: string, map: ReadonlyMap<string, string>) => void): void {
    this.headers.forEach((value, name) => visit(value, name, this));
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
  protected each(visit: (value: string, name: string, map: ReadonlyMap<string, string>) => void): void {
    // hasOwnProperty, not Object.hasOwn: V8 answers it inside for-in from its key cache.
    const headers = this.headers;
    for (const name in headers) {
      if (!Object.prototype.hasOwnProperty.call(headers, name)) continue;
      const value = headers[name];
      if (typeof value === 'string') visit(value, name, this);
      else if (Array.isArray(value)) visit(value.join(', '), name, this);
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
