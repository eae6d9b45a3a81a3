// The plain fetch middleware (Workers `fetch`, Next.js middleware, `Deno.serve`, `Bun.serve`, Hono):
// wraps a `(request) => Response` handler with agentwarden's check, policy and visit recording.
import { createAgentwarden, type Agentwarden, type AgentwardenOptions, type AgentwardenResult, type RequestCheck } from './agentwarden.js';
import type { PolicyResponse } from './access-policy.js';
import { fetchHeaderMap } from './header-maps.js';

/** What the platform knows of a request beyond the Request itself. */
export interface FetchPlatform {
  /** The client's address as the platform saw the connection. */
  readonly clientIp?: string | undefined;
  /** Keeps the isolate alive until the promise settles (Workers `ctx.waitUntil`, Next.js `event.waitUntil`). */
  readonly waitUntil?: ((promise: Promise<unknown>) => void) | undefined;
}

/** Calls the application. */
export type FetchNext = (request: Request) => Response | Promise<Response>;

/** The middleware: checks, answers or calls `next`, records the visit. */
export type FetchMiddleware = ((request: Request, next: FetchNext, platform?: FetchPlatform) => Promise<Response>) & { readonly agentwarden: Agentwarden };

const results = new WeakMap<Request, AgentwardenResult>();

/**
 * What the middleware learnt of this request (the Request object it handed to the application).
 * @example
 * const result = agentwardenResult(request);
 * if (result?.result === 'verified') { ... }
 */
export function agentwardenResult(request: Request): AgentwardenResult | undefined {
  return results.get(request);
}

/** A policy answer as a Fetch Response. */
export function policyResponse(response: PolicyResponse): Response {
  // 304 and friends carry no body (RFC 9110 §15.4.5).
  // A copy of the (frozen) headers: @hono/node-server adds Content-Length to the object it is given.
  return new Response(response.status === 304 || response.body === '' ? null : response.body, { status: response.status, headers: { ...response.headers } });
}

/** Response headers as a visit keeps them. */
function headersOf(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {};
  headers.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}

/**
 * Records the visit of a checked Fetch request once its response is known, and with `waitUntil`
 * (Workers, Next.js) flushes the sink within the request's lifetime. `headers` is undefined when
 * the application threw. Exported for the framework adapters built on Request objects (Hono).
 */
export function recordFetchResponse(agentwarden: Agentwarden, check: RequestCheck, status: number, headers: Headers | undefined, platform: FetchPlatform | undefined): void {
  if (!recordsVisits(agentwarden)) return;
  if (headers === undefined) agentwarden.record(check, { status });
  // Next.js middleware's NextResponse.next() and rewrite() (and Vercel's next()) hand the request
  // on: the page answers later, with a status this response does not have.
  else if (headers.has('x-middleware-next') || headers.has('x-middleware-rewrite')) agentwarden.record(check, { status: undefined });
  else agentwarden.record(check, { status, headers: headersOf(headers) });
  if (platform?.waitUntil !== undefined) platform.waitUntil(agentwarden.flush());
}

/**
 * Checks a Fetch request: the check and the request data the visit needs. Exported for the
 * framework adapters built on Request objects (Hono).
 */
export function checkFetchRequest(agentwarden: Agentwarden, request: Request, clientIp: string | undefined): RequestCheck | Promise<RequestCheck> {
  const url = new URL(request.url);
  const headerRecord = headersOf(request.headers);
  // Fetch requests built by a platform may lack Host; the visit keeps it (signatures cover @authority).
  if (headerRecord['host'] === undefined) headerRecord['host'] = url.host;
  return agentwarden.check({ method: request.method, path: url.pathname + url.search, headers: fetchHeaderMap(request.headers), headerRecord, clientIp });
}

/**
 * Creates the fetch middleware: `middleware(request, next, platform?)`. Per request it checks
 * once (identification, verification, the policy), answers a denial or `/robots.txt` itself, else
 * calls `next`; after the response it records the visit. With `platform.waitUntil` (Workers,
 * Next.js) the sink is flushed within the request's lifetime, since an isolate may be evicted
 * before a timer fires. `options` may also be an existing `createAgentwarden()` core, to share it.
 * @throws {TypeError | RangeError} for a bad option (the message names it).
 * @example
 * const middleware = createFetchMiddleware({ sink: createHttpSink({ url, token }) });
 * Deno.serve((request, info) => middleware(request, app, { clientIp: info.remoteAddr.hostname }));
 */
export function createFetchMiddleware(options: AgentwardenOptions | Agentwarden = {}): FetchMiddleware {
  const agentwarden = isAgentwarden(options) ? options : createAgentwarden(options);
  const after = (check: RequestCheck, status: number, headers: Headers | undefined, platform: FetchPlatform | undefined) => recordFetchResponse(agentwarden, check, status, headers, platform);
  const handle = async (request: Request, next: FetchNext, platform?: FetchPlatform): Promise<Response> => {
    const checked = checkFetchRequest(agentwarden, request, platform?.clientIp);
    const check = checked instanceof Promise ? await checked : checked;
    results.set(request, check);
    if (check.response !== undefined) {
      const response = policyResponse(check.response);
      after(check, response.status, response.headers, platform);
      return response;
    }
    let response: Response;
    try {
      response = await next(request);
    } catch (error) {
      after(check, 500, undefined, platform);
      throw error;
    }
    after(check, response.status, response.headers, platform);
    return response;
  };
  return Object.assign(handle, { agentwarden });
}

/**
 * Whether a core's visits go anywhere, so that an adapter watches for the response only then; a
 * core that does not say (one made by hand) is taken to record them.
 */
export function recordsVisits(core: Agentwarden): boolean {
  return core.recordsVisits !== false;
}

/** Whether `value` is a core made by `createAgentwarden` rather than options for one. */
export function isAgentwarden(value: unknown): value is Agentwarden {
  return typeof (value as Agentwarden)?.check === 'function' && typeof (value as Agentwarden)?.record === 'function';
}

/**
 * What a platform's extra handler arguments say: Workers `(request, env, ctx)`, `Deno.serve`'s
 * `(request, info)`, `Bun.serve`'s `(request, server)`, Next.js middleware `(request, event)`,
 * and Hono on Node (`env.incoming`). On Cloudflare Workers the address is the `CF-Connecting-IP`
 * header, which Cloudflare sets itself and a client cannot forge there.
 */
export function detectPlatform(request: Request, args: readonly unknown[]): FetchPlatform {
  let clientIp: string | undefined;
  let waitUntil: ((promise: Promise<unknown>) => void) | undefined;
  for (const arg of args) {
    if (typeof arg !== 'object' || arg === null) continue;
    const value = arg as {
      waitUntil?: unknown;
      remoteAddr?: { hostname?: unknown };
      requestIP?: unknown;
      incoming?: { socket?: { remoteAddress?: unknown } };
    };
    if (typeof value.waitUntil === 'function' && waitUntil === undefined) waitUntil = (promise) => (value.waitUntil as (p: Promise<unknown>) => void).call(value, promise);
    if (clientIp !== undefined) continue;
    if (typeof value.remoteAddr?.hostname === 'string') clientIp = value.remoteAddr.hostname;
    else if (typeof value.requestIP === 'function') {
      const address = (value.requestIP as (r: Request) => { address?: unknown } | null).call(value, request)?.address;
      if (typeof address === 'string') clientIp = address;
    } else if (typeof value.incoming?.socket?.remoteAddress === 'string') clientIp = value.incoming.socket.remoteAddress;
  }
  if (clientIp === undefined) {
    const ip = (request as { ip?: unknown }).ip;
    if (typeof ip === 'string') clientIp = ip;
    else if (onCloudflareWorkers()) clientIp = request.headers.get('cf-connecting-ip') ?? undefined;
  }
  return { clientIp, waitUntil };
}

function onCloudflareWorkers(): boolean {
  return (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent === 'Cloudflare-Workers';
}

/**
 * Wraps a fetch handler: the platform's arguments (Workers `env, ctx`; Deno's `info`; Bun's
 * `server`; Next.js's `event`) pass through unchanged and tell the client address and
 * `waitUntil`. The result is on `agentwardenResult(request)` inside the handler.
 * @throws {TypeError | RangeError} for a bad option (the message names it).
 * @example
 * // Cloudflare Workers
 * export default { fetch: withAgentwarden(app.fetch, { sink: createHttpSink({ url, token }), policy: { denyVerificationFailed: true } }) };
 * // Deno / Bun
 * Deno.serve(withAgentwarden(handler, options));
 * Bun.serve({ fetch: withAgentwarden(handler, options) });
 */
export function withAgentwarden<R extends Request, A extends unknown[]>(
  handler: (request: R, ...args: A) => Response | Promise<Response>,
  options: AgentwardenOptions | Agentwarden = {},
): ((request: R, ...args: A) => Promise<Response>) & { readonly agentwarden: Agentwarden } {
  if (typeof handler !== 'function') throw new TypeError(`handler must be a fetch handler function, got ${typeof handler}`);
  const middleware = createFetchMiddleware(options);
  // The handler gets the very request it was given (a platform's own kind: Next.js's NextRequest).
  const wrapped = (request: R, ...args: A) => middleware(request, (req) => handler(req as R, ...args), detectPlatform(request, args));
  return Object.assign(wrapped, { agentwarden: middleware.agentwarden });
}
