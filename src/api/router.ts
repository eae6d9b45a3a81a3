// Routing: a fixed table of (path, method) compiled once under a configurable base path, answering
// found / unknown path (404) / wrong method (405 with the allowed ones).

/** The outcome of matching a request line against the route table. */
export type RouteMatch<T> =
  | { readonly kind: 'found'; readonly route: T; readonly params?: Readonly<Record<string, string>> }
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

// A path segment `{name}` of a route matches one non-empty segment of the request path.
const PARAMETER = /^\{([a-z_]+)\}$/;

/**
 * Compiles routes (paths relative to the base path) into a router; a path with GET also answers HEAD.
 * A segment written `{name}` matches any one segment, percent-decoded into `params.name`; exact
 * paths win over such templates (`/visits/stream` over `/visits/{id}`).
 * @throws {RangeError} for an invalid base path.
 * @example
 * const router = createRouter('/api', { '/visits': { POST: handleVisits }, '/visits/{id}': { GET: oneVisit } });
 * router.match('GET', '/api/visits'); // { kind: 'method-not-allowed', allow: 'POST' }
 * router.match('GET', '/api/visits/42'); // { kind: 'found', route: oneVisit, params: { id: '42' } }
 */
export function createRouter<T>(basePath: string, routes: Readonly<Record<string, Readonly<Record<string, T>>>>): Router<T> {
  const base = normalizeBasePath(basePath);
  type Entry = { methods: Map<string, T>; allow: string };
  const table = new Map<string, Entry>();
  const templates: { segments: readonly (string | { name: string })[]; entry: Entry }[] = [];
  for (const [path, methods] of Object.entries(routes)) {
    const names = Object.keys(methods);
    const compiled = new Map(names.map((name) => [name, methods[name]!]));
    // RFC 9110 §9.3.2: HEAD is GET without the body; the transport leaves the body out.
    if (compiled.has('GET') && !compiled.has('HEAD')) {
      compiled.set('HEAD', compiled.get('GET')!);
      names.push('HEAD');
    }
    const entry = { methods: compiled, allow: names.join(', ') };
    if (!path.includes('{')) table.set(base + path, entry);
    else templates.push({ segments: (base + path).split('/').map((segment) => (PARAMETER.test(segment) ? { name: PARAMETER.exec(segment)![1]! } : segment)), entry });
  }
  const matchTemplate = (path: string): { entry: Entry; params: Record<string, string> } | undefined => {
    if (templates.length === 0) return undefined;
    const parts = path.split('/');
    for (const { segments, entry } of templates) {
      if (segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let matched = true;
      for (let i = 0; i < segments.length && matched; i++) {
        const segment = segments[i]!;
        const part = parts[i]!;
        if (typeof segment === 'string') matched = segment === part;
        else {
          const value = decodeSegment(part);
          matched = value !== undefined && value !== '';
          if (matched) params[segment.name] = value!;
        }
      }
      if (matched) return { entry, params };
    }
    return undefined;
  };
  return {
    basePath: base,
    match(method, target) {
      const query = target.indexOf('?');
      const path = query === -1 ? target : target.slice(0, query);
      const exact = table.get(path);
      const found = exact === undefined ? matchTemplate(path) : { entry: exact, params: undefined };
      if (found === undefined) return { kind: 'not-found' };
      const route = found.entry.methods.get(method);
      if (route === undefined) return { kind: 'method-not-allowed', allow: found.entry.allow };
      return found.params === undefined ? { kind: 'found', route } : { kind: 'found', route, params: found.params };
    },
  };
}

/** A percent-decoded path segment (RFC 3986 §2.1); undefined when its escapes are not UTF-8. */
function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
