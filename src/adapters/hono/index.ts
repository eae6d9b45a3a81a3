// agentwarden/hono: Hono 4 middleware (Node, Workers, Deno, Bun) over the core's fetch middleware
// parts: the platform's address and waitUntil, the policy, the visit after the response.
import type { MiddlewareHandler } from 'hono';
import {
  checkFetchRequest,
  createAgentwarden,
  detectPlatform,
  isAgentwarden,
  lowerCaseHeaderMap,
  policyResponse,
  recordFetchResponse,
  recordsVisits,
  type Agentwarden,
  type AgentwardenOptions,
  type AgentwardenResult,
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
  readonly incoming: { readonly method?: string; readonly url?: string; readonly headers: Record<string, string | string[] | undefined>; readonly socket?: { readonly remoteAddress?: string } };
  readonly outgoing: {
    readonly statusCode: number;
    getHeaders(): Record<string, string | number | string[] | undefined>;
    on(event: 'close', listener: () => void): unknown;
    /** The response head as written (Node's, long-standing though underscored). */
    readonly _header?: unknown;
  };
}

/**
 * The response headers the application sent. @hono/node-server passes them to writeHead as an
 * object, which Node writes without keeping them for getHeaders(); then they are read back from
 * the head written, without the fields Node added itself.
 */
function sentHeaders(outgoing: NodeBindings['outgoing']): Record<string, string | number | string[] | undefined> {
  const kept = outgoing.getHeaders();
  const head = outgoing._header;
  if (typeof head !== 'string' || hasKeys(kept)) return kept;
  return parseHead(head);
}

function hasKeys(record: object): boolean {
  for (const _name in record) return true;
  return false;
}

/** Whether a character code is whitespace String#trim removes that a header value may hold (tab, space, obs-text's no-break space). */
const isBlank = (code: number) => code === 32 || code === 9 || code === 160;

/**
 * The fields node:http writes into a head itself, under these exact names, when the application
 * set none of them. @hono/node-server hands the application's headers over lower-cased (as a
 * Fetch Headers keeps them), so these spellings are Node's own. They are left out, as
 * getHeaders() leaves them out for Express and Fastify: a visit records the headers the site sent.
 */
const NODE_OWN_FIELDS = new Set(['Date', 'Connection', 'Keep-Alive', 'Transfer-Encoding']);

/**
 * The "name: value" lines of a response head after its status line (names lower-cased, values
 * trimmed, repeated names as arrays, node:http's own fields left out), read in place: this runs
 * once per response.
 */
function parseHead(head: string): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  let start = head.indexOf('\r\n') + 2;
  if (start === 1) return headers;
  for (;;) {
    let end = head.indexOf('\r\n', start);
    if (end === -1) end = head.length;
    const colon = head.indexOf(':', start);
    if (colon > start && colon < end) {
      let from = colon + 1;
      let to = end;
      while (from < to && isBlank(head.charCodeAt(from))) from++;
      while (to > from && isBlank(head.charCodeAt(to - 1))) to--;
      const raw = head.slice(start, colon);
      if (!NODE_OWN_FIELDS.has(raw)) {
        const name = raw.toLowerCase();
        const value = head.slice(from, to);
        const previous = headers[name];
        headers[name] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
      }
    }
    if (end === head.length) return headers;
    start = end + 2;
  }
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
  // On Node the request and response are read where Node keeps them (its header object, the
  // status and headers written), not through c.req.raw.headers and c.res.headers, which
  // @hono/node-server builds only when asked, at a cost larger than the whole check.
  const onNode = async (c: Parameters<typeof middleware>[0], next: Parameters<typeof middleware>[1], { incoming, outgoing }: NodeBindings) => {
    const checked = core.check({ method: incoming.method ?? c.req.method, path: incoming.url ?? '/', headers: lowerCaseHeaderMap(incoming.headers), headerRecord: incoming.headers, clientIp: incoming.socket?.remoteAddress });
    const check: RequestCheck = checked instanceof Promise ? await checked : checked;
    c.set('agentwarden', check);
    // 'on', not 'once': a response closes once, and record ignores a repeat. Without a sink
    // nothing is recorded: no listener.
    if (watch) outgoing.on('close', () => core.record(check, { status: outgoing.statusCode, headers: sentHeaders(outgoing) }));
    if (check.response !== undefined) return policyResponse(check.response);
    await next();
    return undefined;
  };
  return Object.assign(middleware, { agentwarden: core });
}

