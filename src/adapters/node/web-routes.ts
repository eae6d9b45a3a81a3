// The dashboard's static files (built from src/web/ into dist/web/ at build time) as routes under
// /ui/, with content types, ETags and the security headers that keep the page locked down.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ApiResponse, Route, RouteTable } from '../../index.js';

/** The prefix every dashboard page lives under (relative to the base path). */
export const DASHBOARD_PATH = '/ui/';

/** The files the dashboard build writes, with their media types. */
const ASSETS: readonly (readonly [string, string])[] = [
  ['index.html', 'text/html; charset=utf-8'],
  ['app.js', 'text/javascript; charset=utf-8'],
  ['app.css', 'text/css; charset=utf-8'],
];

// A strict policy: scripts and styles only from this origin (no inline code, no CDN), fetches
// and EventSource only to this origin, no framing (clickjacking), no plugins, no <base> tricks.
// (CSP Level 3; styles set through the CSSOM, as the chart library does, are not inline styles.)
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  // For browsers that predate frame-ancestors.
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
} as const;

/**
 * Where the built dashboard is: `dist/web/` beside the bundled CLI, or, when running from the
 * sources (tests, tsx), the repository's `dist/web/`. Undefined when it has not been built.
 */
export function findWebDirectory(): string | undefined {
  // CJS bundles have __dirname and no import.meta.url; ESM has the reverse.
  const here = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 'web'), join(here, '..', '..', '..', 'dist', 'web')];
  return candidates.find((dir) => existsSync(join(dir, 'index.html')));
}

/**
 * Creates the routes serving the dashboard: `GET /ui/` (the page), `/ui/app.js`, `/ui/app.css`,
 * and `GET /` and `GET /ui` redirecting to `/ui/`. Files are read once, here.
 * @throws {Error} when a built file is missing from `dir` (run the build).
 * @example
 * createApiHandler({ ..., routes: [createWebRoutes({ dir: findWebDirectory()! })] });
 */
export function createWebRoutes(options: { readonly dir: string; readonly basePath?: string }): RouteTable {
  if (typeof options?.dir !== 'string') throw new TypeError(`dir must be the built dashboard directory, got ${JSON.stringify(options?.dir)}`);
  const base = (options.basePath ?? '/').replace(/\/+$/, '');
  const route = (file: string, type: string): Route => {
    const path = join(options.dir, file);
    if (!existsSync(path)) throw new Error(`${path} is missing: build the dashboard with "npm run build"`);
    const body = readFileSync(path, 'utf8');
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    // no-cache: revalidate each time (a cheap 304 by ETag), so an upgrade never mixes old and new files.
    const headers = { 'content-type': type, 'cache-control': 'no-cache', etag, ...SECURITY_HEADERS };
    return {
      auth: 'none',
      json: false,
      run({ request }): ApiResponse {
        const match = request.headers['if-none-match'];
        if (typeof match === 'string' && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) return { status: 304, headers };
        return { status: 200, headers, body };
      },
    };
  };
  const redirect: Route = {
    auth: 'none',
    json: false,
    run: () => ({ status: 302, headers: { location: `${base}${DASHBOARD_PATH}`, 'cache-control': 'no-cache' } }),
  };
  const table: Record<string, Record<string, Route>> = { '/': { GET: redirect }, '/ui': { GET: redirect } };
  for (const [file, type] of ASSETS) table[file === 'index.html' ? DASHBOARD_PATH : `${DASHBOARD_PATH}${file}`] = { GET: route(file, type) };
  return table;
}
