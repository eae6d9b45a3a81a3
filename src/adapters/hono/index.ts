// agentwarden/hono: Hono 4 middleware (Node, Workers, Deno, Bun) over the core's fetch middleware
// parts: the platform's address and waitUntil, the policy, the visit after the response.
import type { MiddlewareHandler } from 'hono';
import {
  checkFetchRequest,
  createAgentwarden,
  detectPlatform,
  isAgentwarden,
  lowerCaseHeaderMap,
  originFormPath,
  policyResponse,
  recordFetchResponse,
  recordNodeResponse,
  recordsVisits,
  type Agentwarden,
  type AgentwardenOptions,
  type AgentwardenResult,
  type NodeRequestLike,
  type NodeResponseLike,
  type RequestCheck,
} from '../../index.js';

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

/** What @hono/node-server puts in `c.env`: Node's own request and response. */
interface NodeBindings {
  readonly incoming: NodeRequestLike & { readonly method?: string; readonly url?: string; readonly headers: Record<string, string | string[] | undefined>; readonly socket?: { readonly remoteAddress?: string; readonly destroyed?: boolean } | null };
  readonly outgoing: NodeResponseLike;
}

function nodeBindings(env: unknown): NodeBindings | undefined {
  const bindings = env as Partial<NodeBindings> | undefined;
  return typeof bindings?.incoming?.headers === 'object' && typeof bindings.outgoing?.getHeaders === 'function' ? (bindings as NodeBindings) : undefined;
}

/**
 * The agentwarden middleware for Hono. The client address comes from the platform: the socket on
 * Node (`@hono/node-server`), `server.requestIP` on Bun, `info.remoteAddr` on Deno, the
 * `CF-Connecting-IP` header Cloudflare sets on Workers; the `clientIp` option's headers are
 * believed only when that address is one of the rule's proxies. The result is
 * `c.get('agentwarden')`; on Workers the visit is flushed with `c.executionCtx.waitUntil`.
 * @throws {TypeError | RangeError} for a bad option (the message names it).
 * @example
 * import { Hono } from 'hono';
 * import { createHttpSink } from 'agentwarden';
 * import { agentwarden } from 'agentwarden/hono';
 * // use() chained to new Hono(): the app's type then knows c.get('agentwarden').
 * const app = new Hono().use(agentwarden({ sink: createHttpSink({ url: 'https://agentwarden.example.com', token: '...' }) }));
 * app.get('/', (c) => c.text(c.get('agentwarden').result));
 */
export function agentwarden(options: AgentwardenOptions | Agentwarden = {}): AgentwardenMiddleware {
  const core = isAgentwarden(options) ? options : createAgentwarden(options);
  const watch = recordsVisits(core);
  const middleware: MiddlewareHandler<{ Variables: AgentwardenVariables }> = async (c, next) => {
    const node = nodeBindings(c.env);
    if (node !== undefined) return onNode(c, next, node);
    const platform = detectPlatform(c.req.raw, [c.env, executionContext(c)]);
    const checked = checkFetchRequest(core, c.req.raw, platform);
    const check = checked instanceof Promise ? await checked : checked;
    c.set('agentwarden', check);
    if (check.response !== undefined) {
      const response = policyResponse(check.response);
      recordFetchResponse(core, check, c.req.raw, response, platform);
      return response;
    }
    try {
      await next();
    } catch (error) {
      // Hono hands only Errors to onError (and an onError may throw): the rest pass through here, and Hono answers 500.
      recordFetchResponse(core, check, c.req.raw, 'threw', platform);
      throw error;
    }
    // Hono turns an Error thrown by a handler into c.res (its onError answer) before this runs. A
    // handler that answered nothing leaves the context unfinalized, which Hono then answers with a
    // 500; reading c.res here would make its placeholder 200.
    recordFetchResponse(core, check, c.req.raw, c.finalized ? c.res : 'threw', platform);
    return undefined;
  };
  // On Node the request and response are read where Node keeps them (its header object, the
  // status and headers written), not through c.req.raw.headers and c.res.headers, which
  // @hono/node-server builds only when asked, at a cost larger than the whole check.
  const onNode = async (c: Parameters<typeof middleware>[0], next: Parameters<typeof middleware>[1], { incoming, outgoing }: NodeBindings) => {
    const checked = core.check({ method: incoming.method ?? c.req.method, path: originFormPath(incoming.url ?? '/'), headers: lowerCaseHeaderMap(incoming.headers), headerRecord: incoming.headers, clientIp: incoming.socket?.remoteAddress });
    const check: RequestCheck = checked instanceof Promise ? await checked : checked;
    c.set('agentwarden', check);
    // Without a sink nothing is recorded: no listener. @hono/node-server writes the application's
    // headers to Node as an object, which recordNodeResponse reads back from the head written.
    if (watch) recordNodeResponse(core, check, incoming, outgoing);
    if (check.response !== undefined) return policyResponse(check.response);
    await next();
    return undefined;
  };
  return Object.assign(middleware, { agentwarden: core });
}

