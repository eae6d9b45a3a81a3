// Routing: a fixed table of (path, method) compiled once under a configurable base path, answering
// found / unknown path (404) / wrong method (405 with the allowed ones).

/** The outcome of matching a request line against the route table. */
export type RouteMatch<T> =
  | { readonly kind: 'found'; readonly route: T }
  | { readonly kind: 'not-found' }
  | { readonly kind: 'method-not-allowed'; readonly allow: string };

/** A compiled route table. */
export interface Router<T> {
  match(method: string, target: string): RouteMatch<T>;
  /** The normalised base path ('' for the root), for documents that list full paths. */
  readonly basePath: string;
}

/**
 * Normalises a base path: '/' and '' mean the root; otherwise a leading '/' and no trailing one.
 * @throws {RangeError} when the base path does not start with '/' or holds characters a path cannot.
 */
export function normalizeBasePath(basePath: string): string {
  if (typeof basePath !== 'string' || !basePath.startsWith('/') || /[\s?#\\]|\/\//.test(basePath)) {
    throw new RangeError(`basePath must be a path starting with "/", got ${JSON.stringify(basePath)}`);
  }
  return basePath.replace(/\/+$/, '');
}

/**
 * Compiles routes (paths relative to the base path) into a router; a path with GET also answers HEAD.
 * @throws {RangeError} for an invalid base path.
 * @example
 * const router = createRouter('/api', { '/visits': { POST: handleVisits } });
 * router.match('GET', '/api/visits'); // { kind: 'method-not-allowed', allow: 'POST' }
 */
export function createRouter<T>(basePath: string, routes: Readonly<Record<string, Readonly<Record<string, T>>>>): Router<T> {
  const base = normalizeBasePath(basePath);
  const table = new Map<string, { methods: Map<string, T>; allow: string }>();
  for (const [path, methods] of Object.entries(routes)) {
    const names = Object.keys(methods);
    const compiled = new Map(names.map((name) => [name, methods[name]!]));
    // RFC 9110 §9.3.2: HEAD is GET without the body; the transport leaves the body out.
    if (compiled.has('GET') && !compiled.has('HEAD')) {
      compiled.set('HEAD', compiled.get('GET')!);
      names.push('HEAD');
    }
    table.set(base + path, { methods: compiled, allow: names.join(', ') });
  }
  return {
    basePath: base,
    match(method, target) {
      const query = target.indexOf('?');
      const path = query === -1 ? target : target.slice(0, query);
      const entry = table.get(path);
      if (entry === undefined) return { kind: 'not-found' };
      const route = entry.methods.get(method);
      return route === undefined ? { kind: 'method-not-allowed', allow: entry.allow } : { kind: 'found', route };
    },
  };
}
