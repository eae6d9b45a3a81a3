// The plain fetch middleware (Workers `fetch`, Next.js middleware, `Deno.serve`, `Bun.serve`, Hono):
// wraps a `(request) => Response` handler with agentwarden's check, policy and visit recording.
import { createAgentwarden, type Agentwarden, type AgentwardenOptions, type AgentwardenResult, type RecordedResponse, type RequestCheck } from './agentwarden.js';
import type { PolicyResponse } from './access-policy.js';
import { fetchHeaderMap } from './header-maps.js';

/** What the platform knows of a request beyond the Request itself. */
export interface FetchPlatform {
  /** The client's address as the platform saw the connection. */
  readonly clientIp?: string | undefined;
  /** Keeps the isolate alive until the promise settles (Workers `ctx.waitUntil`, Next.js `event.waitUntil`). */
  readonly waitUntil?: ((promise: Promise<unknown>) => void) | undefined;
  /**
   * Settles once the response has been sent, or abandoned by the client (Deno's `info.completed`):
   * the visit's duration then runs until the body ended, as on Node. Elsewhere it runs until the
   * handler answered, since Workers and Bun do not say when a streamed body ends.
   */
  readonly completed?: Promise<unknown> | undefined;
  /** The platform upgrades a WebSocket beside the response (Bun's `server.upgrade`), which is then none or a placeholder. */
  readonly upgradesBesideResponse?: boolean | undefined;
}

/**
 * Calls the application. A handler may answer no Response where the platform allows it: Bun's
 * after `server.upgrade(request)`.
 */
export type FetchNext<T extends Response | undefined = Response> = (request: Request) => T | Promise<T>;

/** The middleware: checks, answers or calls `next`, records the visit. */
export type FetchMiddleware = (<T extends Response | undefined = Response>(request: Request, next: FetchNext<T>, platform?: FetchPlatform) => Promise<T | Response>) & {
  readonly agentwarden: Agentwarden;
};

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

/** How a fetch handler's turn ended: its Response, none (Bun's WebSocket upgrade), or a throw. */
export type FetchOutcome = Response | undefined | 'threw';

/**
 * Records the visit of a checked Fetch request once its response is known (with `completed`, once
 * it has been sent), and with `waitUntil` (Workers, Next.js) flushes the sink within the request's
 * lifetime. Exported for the framework adapters built on Request objects (Hono).
 */
export function recordFetchResponse(agentwarden: Agentwarden, check: RequestCheck, request: Request, outcome: FetchOutcome, platform?: FetchPlatform): void;
/**
 * The earlier form, `(status, headers)`: `headers` undefined when the application threw. Kept
 * for adapters written against it.
 * @deprecated pass the Request and the handler's outcome, which also records Bun's upgrades and clients that left.
 */
export function recordFetchResponse(agentwarden: Agentwarden, check: RequestCheck, status: number, headers: Headers | undefined, platform?: FetchPlatform): void;
export function recordFetchResponse(agentwarden: Agentwarden, check: RequestCheck, requestOrStatus: Request | number, outcome: FetchOutcome | Headers | undefined, platform?: FetchPlatform): void {
  if (!recordsVisits(agentwarden)) return;
  const response =
    typeof requestOrStatus === 'number' ? statusRecord(requestOrStatus, outcome as Headers | undefined) : fetchResponseRecord(requestOrStatus, outcome as FetchOutcome, platform);
  const completed = platform?.completed;
  if (completed === undefined) agentwarden.record(check, response);
  else {
    const record = () => agentwarden.record(check, response);
    void completed.then(record, record);
  }
  if (platform?.waitUntil !== undefined) platform.waitUntil(completed === undefined ? agentwarden.flush() : completed.then(agentwarden.flush, agentwarden.flush));
  else if (onCloudflareWorkers()) warnOnceWithoutWaitUntil();
}

/** What a visit keeps of a status and the headers answered with it (none: the application threw). */
function statusRecord(status: number, headers: Headers | undefined): RecordedResponse {
  if (headers === undefined) return { status };
  // Next.js middleware's NextResponse.next() and rewrite() (and Vercel's next()) hand the request
  // on: the page answers later, with a status this response does not have.
  if (headers.has('x-middleware-next') || headers.has('x-middleware-rewrite')) return { status: undefined };
  return { status, headers: headersOf(headers) };
}

/** What a visit keeps of a fetch handler's answer. */
function fetchResponseRecord(request: Request, outcome: FetchOutcome, platform: FetchPlatform | undefined): RecordedResponse {
  if (outcome === 'threw') return { status: 500 };
  const upgraded = platform?.upgradesBesideResponse === true && isWebSocketUpgrade(request);
  // No Response: Bun upgraded the WebSocket (101), or the platform answers an error of its own.
  if (typeof outcome?.status !== 'number') return { status: upgraded ? 101 : 0 };
  // Hono's WebSocket helper for Bun answers an empty 200 once Bun has upgraded the connection.
  if (upgraded && outcome.status === 200 && outcome.body === null) return { status: 101 };
  // A client that left before the answer never got it (Bun aborts the request's signal; Deno's
  // signal is read only through \`completed\`, since it aborts on every response there).
  if (platform?.completed === undefined && request.signal?.aborted === true) return { status: 0 };
  return statusRecord(outcome.status, outcome.headers);
}

function isWebSocketUpgrade(request: Request): boolean {
  return request.headers.get('upgrade')?.toLowerCase() === 'websocket';
}

/**
 * Checks a Fetch request: the check and the request data the visit needs. Exported for the
 * framework adapters built on Request objects (Hono).
 */
export function checkFetchRequest(agentwarden: Agentwarden, request: Request, platform?: FetchPlatform | string): RequestCheck | Promise<RequestCheck> {
  // The earlier form took the client address itself.
  if (typeof platform === 'string') platform = { clientIp: platform };
  const url = new URL(request.url);
  const headerRecord = headersOf(request.headers);
  // Fetch requests built by a platform may lack Host; the visit keeps it (signatures cover @authority).
  if (headerRecord['host'] === undefined) headerRecord['host'] = url.host;
  return agentwarden.check({
    method: request.method,
    path: url.pathname + url.search,
    headers: fetchHeaderMap(request.headers),
    headerRecord,
    clientIp: platform?.clientIp,
    waitUntil: platform?.waitUntil,
  });
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
  const handle = async <T extends Response | undefined>(request: Request, next: FetchNext<T>, platform?: FetchPlatform): Promise<T | Response> => {
    const checked = checkFetchRequest(agentwarden, request, platform);
    const check = checked instanceof Promise ? await checked : checked;
    results.set(request, check);
    if (check.response !== undefined) {
      const response = policyResponse(check.response);
      recordFetchResponse(agentwarden, check, request, response, platform);
      return response;
    }
    let response: T;
    try {
      response = await next(request);
    } catch (error) {
      recordFetchResponse(agentwarden, check, request, 'threw', platform);
      throw error;
    }
    recordFetchResponse(agentwarden, check, request, response, platform);
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
 * header, which Cloudflare's edge sets itself and a client cannot forge there; a request that
 * did not come through the edge (self-hosted workerd, which has no `request.cf`) gets none.
 */
export function detectPlatform(request: Request, args: readonly unknown[]): FetchPlatform {
  let clientIp: string | undefined;
  let waitUntil: ((promise: Promise<unknown>) => void) | undefined;
  let completed: Promise<unknown> | undefined;
  let upgradesBesideResponse = false;
  for (const arg of args) {
    if (typeof arg !== 'object' || arg === null) continue;
    const value = arg as {
      waitUntil?: unknown;
      remoteAddr?: { hostname?: unknown };
      completed?: unknown;
      requestIP?: unknown;
      upgrade?: unknown;
      incoming?: { socket?: { remoteAddress?: unknown } };
    };
    if (typeof value.waitUntil === 'function' && waitUntil === undefined) waitUntil = (promise) => (value.waitUntil as (p: Promise<unknown>) => void).call(value, promise);
    if (value.completed instanceof Promise && value.remoteAddr !== undefined) completed = value.completed;
    if (typeof value.upgrade === 'function' && typeof value.requestIP === 'function') upgradesBesideResponse = true;
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
    else if (onCloudflareWorkers() && typeof (request as { cf?: unknown }).cf === 'object') clientIp = request.headers.get('cf-connecting-ip') ?? undefined;
  }
  return { clientIp, waitUntil, completed, upgradesBesideResponse };
}

let cloudflareWorkers: boolean | undefined;

function onCloudflareWorkers(): boolean {
  cloudflareWorkers ??= (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent === 'Cloudflare-Workers';
  return cloudflareWorkers;
}

let warnedWithoutWaitUntil = false;

/**
 * Workers end a request's timers and fetches with its response: without `ctx.waitUntil` a visit
 * waits in the sink until a later request's batch fills, and the isolate may be gone by then.
 */
function warnOnceWithoutWaitUntil(): void {
  if (warnedWithoutWaitUntil) return;
  warnedWithoutWaitUntil = true;
  console.warn("agentwarden: no ctx.waitUntil on Cloudflare Workers, so visits are sent only as batches fill and may be lost; pass the handler's ctx (fetch(request, env, ctx)) or Hono's c.executionCtx");
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
export function withAgentwarden<R extends Request, A extends unknown[], T extends Response | undefined = Response>(
  handler: (request: R, ...args: A) => T | Promise<T>,
  options: AgentwardenOptions | Agentwarden = {},
): ((request: R, ...args: A) => Promise<T | Response>) & { readonly agentwarden: Agentwarden } {
  if (typeof handler !== 'function') throw new TypeError(`handler must be a fetch handler function, got ${typeof handler}`);
  const middleware = createFetchMiddleware(options);
  // The handler gets the very request it was given (a platform's own kind: Next.js's NextRequest).
  const wrapped = (request: R, ...args: A) => middleware(request, (req) => handler(req as R, ...args), detectPlatform(request, args));
  return Object.assign(wrapped, { agentwarden: middleware.agentwarden });
}
