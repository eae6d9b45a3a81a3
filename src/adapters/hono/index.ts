// agentwarden/hono: Hono 4 middleware (Node, Workers, Deno, Bun) over the core's fetch middleware
// parts: the platform's address and waitUntil, the policy, the visit after the response.
import type { MiddlewareHandler } from 'hono';
import { checkFetchRequest, createAgentwarden, detectPlatform, isAgentwarden, policyResponse, recordFetchResponse, type Agentwarden, type AgentwardenOptions, type AgentwardenResult } from '../../index.js';

/** The context variables the middleware sets: `c.get('agentwarden')`. */
export interface AgentwardenVariables {
  agentwarden: AgentwardenResult;
}

/** The middleware, with the core it runs on. */
export type AgentwardenMiddleware = MiddlewareHandler<{ Variables: AgentwardenVariables }> & { readonly agentwarden: Agentwarden };

/** `c.executionCtx` throws where the platform has none (Node, Bun, Deno). */
function executionContext(c: { readonly executionCtx: unknown }): unknown {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
}

/**
 * The agentwarden middleware for Hono. The client address comes from the platform: the socket on
 * Node (`@hono/node-server`), `server.requestIP` on Bun, `info.remoteAddr` on Deno, the
 * `CF-Connecting-IP` header Cloudflare sets on Workers; unless the `clientIp` option's trusted
 * headers give one. The result is `c.get('agentwarden')`; on Workers the visit is flushed with
 * `c.executionCtx.waitUntil`.
 * @throws {TypeError | RangeError} for a bad option (the message names it).
 * @example
 * import { Hono } from 'hono';
 * import { createHttpSink } from 'agentwarden';
 * import { agentwarden } from 'agentwarden/hono';
 * const app = new Hono();
 * app.use(agentwarden({ sink: createHttpSink({ url: 'https://agentwarden.example.com', token: '...' }) }));
 * app.get('/', (c) => c.text(c.get('agentwarden').result));
 */
export function agentwarden(options: AgentwardenOptions | Agentwarden = {}): AgentwardenMiddleware {
  const core = isAgentwarden(options) ? options : createAgentwarden(options);
  const middleware: MiddlewareHandler<{ Variables: AgentwardenVariables }> = async (c, next) => {
    const platform = detectPlatform(c.req.raw, [c.env, executionContext(c)]);
    const checked = checkFetchRequest(core, c.req.raw, platform.clientIp);
    const check = checked instanceof Promise ? await checked : checked;
    c.set('agentwarden', check);
    if (check.response !== undefined) {
      const response = policyResponse(check.response);
      recordFetchResponse(core, check, response.status, response.headers, platform);
      return response;
    }
    await next();
    // Hono turns an error thrown by a handler into c.res (its onError answer) before this runs.
    recordFetchResponse(core, check, c.res.status, c.res.headers, platform);
    return undefined;
  };
  return Object.assign(middleware, { agentwarden: core });
}

