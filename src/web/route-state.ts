// The view in the URL: the hash holds the page and its query (`#/p/ID/analytics?range=7d&tz=utc`),
// so a copied link shows the same view. Pages read their parameters here and write them back
// without a navigation; links to other pages carry the view parameters (range, time zone) along.

/** Parameters that describe how to look rather than what to look at: links carry them along. */
const VIEW_PARAMS = ['range', 'from', 'to', 'tz'] as const;

/** The page path segments (decoded) and the query of the current hash. */
export interface HashRoute {
  readonly segments: readonly string[];
  readonly params: URLSearchParams;
}

/** Reads `#/a/b?x=1` into its segments and query. */
export function parseHash(hash: string): HashRoute {
  const body = hash.startsWith('#') ? hash.slice(1) : hash;
  const question = body.indexOf('?');
  const path = question === -1 ? body : body.slice(0, question);
  const segments = path
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        return segment;
      }
    });
  return { segments, params: new URLSearchParams(question === -1 ? '' : body.slice(question + 1)) };
}

/** The current hash route. */
export function currentRoute(): HashRoute {
  return parseHash(window.location.hash);
}

/** The current page's parameters. */
export function currentParams(): URLSearchParams {
  return currentRoute().params;
}

/**
 * A hash link to a page: path segments are encoded, empty parameters left out, and the current
 * view parameters (range, time zone) carried along unless `params` sets them.
 * @example
 * href(['p', project.id, 'agents', 'gptbot']); // "#/p/prj_1/agents/gptbot?range=7d"
 */
export function href(segments: readonly string[], params: Record<string, string | undefined> = {}, carryView = true): string {
  const query = new URLSearchParams();
  if (carryView) {
    const current = currentParams();
    for (const name of VIEW_PARAMS) {
      const value = current.get(name);
      if (value !== null && value !== '' && !(name in params)) query.set(name, value);
    }
  }
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') query.set(name, value);
  const text = query.toString();
  return `#/${segments.map(encodeURIComponent).join('/')}${text === '' ? '' : `?${text}`}`;
}

/**
 * Writes parameters into the current URL without navigating (undefined or '' removes one), so
 * the address bar always holds a link to what is shown.
 */
export function updateParams(changes: Record<string, string | undefined>): void {
  const { segments, params } = currentRoute();
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined || value === '') params.delete(name);
    else params.set(name, value);
  }
  const text = params.toString();
  const hash = `#/${segments.map(encodeURIComponent).join('/')}${text === '' ? '' : `?${text}`}`;
  if (hash !== window.location.hash) window.history.replaceState(window.history.state, '', hash);
}
