// The headers every API answer carries, whatever its media type: JSON, problem+json, CSV, event
// streams and robots.txt text hold what visitors and bots sent (paths, user agents, headers), so a
// browser must never read one as anything else or run it as a page.
import type { ApiResponse } from './types.js';

/**
 * `nosniff`: a browser takes the declared media type and never guesses HTML or script from the
 * bytes (Fetch §3.5, X-Content-Type-Options). The policy lets an answer that is opened as a
 * document (a link to /visits/{id}, a CSV opened in a tab) load nothing, run nothing and be framed
 * by no page (CSP Level 3 `default-src 'none'`, `frame-ancestors 'none'`); it does not affect the
 * dashboard, which reads these answers with fetch and EventSource under its own policy.
 */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
});

/**
 * The head of a JSON answer no cache keeps, security headers included: one shared object, so the
 * routes that answer with it (most of them) leave withSecurityHeaders nothing to copy.
 */
export const JSON_NO_STORE_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'application/json', 'cache-control': 'no-store', ...API_SECURITY_HEADERS });

/**
 * The response with the API's security headers; a header the response sets itself stands (the
 * dashboard's pages send their own policy). A response that already has them all is returned as
 * it is, with no copy.
 * @example
 * withSecurityHeaders({ status: 200, headers: { 'content-type': 'application/json' }, body: '{}' });
 */
export function withSecurityHeaders(response: ApiResponse): ApiResponse {
  const headers = response.headers;
  for (const name in API_SECURITY_HEADERS) {
    if (!(name in headers)) return { ...response, headers: { ...API_SECURITY_HEADERS, ...headers } };
  }
  return response;
}
