// The Web-standard face of the API: `fetch(request: Request): Promise<Response>`, so the same
// handler runs under Workers, Deno, Bun or any server that speaks the Fetch API.
import type { ApiHandler } from './handler.js';
import type { ApiHeaderValue } from './types.js';

/** A Fetch API handler. */
export type FetchHandler = (request: Request) => Promise<Response>;

/**
 * Wraps an API handler as a Fetch API handler. The body is read whole (the platform bounds it);
 * the API handler answers 413 past its own limit. A streamed response body is handed to the
 * platform as it is, so the platform's cancel (the client went away) reaches the stream.
 * @example
 * export default { fetch: createFetchHandler(createApiHandler({ engine, projects, visits })) };
 */
export function createFetchHandler(handler: ApiHandler): FetchHandler {
  if (typeof handler !== 'function') throw new TypeError(`handler must be a function, got ${typeof handler}`);
  return async (request) => {
    const url = new URL(request.url);
    const headers: Record<string, ApiHeaderValue> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const body = request.body === null ? undefined : new Uint8Array(await request.arrayBuffer());
    const response = await handler({ method: request.method, path: url.pathname + url.search, headers, body });
    if (response.status === 304 || request.method === 'HEAD') {
      // No body may follow (RFC 9110 §9.3.2, §15.4.5): release a stream nobody will read.
      if (typeof response.body === 'object') await response.body.cancel();
      return new Response(null, { status: response.status, headers: response.headers });
    }
    return new Response(response.body ?? null, { status: response.status, headers: response.headers });
  };
}
