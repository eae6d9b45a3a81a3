// The per-request core every middleware builds on (DESIGN.md §9): identify and verify a request
// once, decide by the access policy, answer /robots.txt or a denial, and after the response hand
// the visit (status, duration, decision, client address) to the sink.
import { createEngine, type Engine, type VerificationOutcome } from '../engine.js';
import type { HeadersInput } from '../identify/headers.js';
import type { IdentificationResult } from '../identify/identification.js';
import { parseClientAddress, type ClientIpRule } from '../verify/client-ip.js';
import type { VisitDecision } from '../visits/visit.js';
import { createAccessPolicy, type AccessPolicy, type AccessPolicyOptions, type PolicyResponse } from './access-policy.js';
import { platformTimers, type Timers } from './delivery-queue.js';
import { checkOptions } from './options.js';
import { createRobotsSource, type RobotsSource, type ServedRobotsTxt } from './robots-source.js';
import { assertVisitSink, createFanoutSink, guardSink, type SinkVisit, type VisitSink } from './visit-sink.js';

/** Options of `createAgentwarden` (and of every framework middleware). */
export interface AgentwardenOptions {
  /** Identifies and verifies requests; `createEngine()` (bundled catalog, no verifiers) when omitted. */
  readonly engine?: Engine;
  /** Where visits go after each response: one sink or several; none records nothing. */
  readonly sink?: VisitSink | readonly VisitSink[];
  /** The access policy; none lets every request through and records no decision. */
  readonly policy?: AccessPolicyOptions;
  /**
   * Which request headers may give the visitor's address (`createClientIpRule({ headers: [...] })`):
   * list only headers your own proxy sets. Omitted, the rule given to `createEngine({ clientIp })`
   * is used, if one was. They are believed only when the request came from one of the rule's
   * proxies (a non-public address by default; see `clientAddressFromPeer`); otherwise, or when
   * they give none, the address is the socket's or the platform's, which a client cannot forge.
   */
  readonly clientIp?: ClientIpRule;
  /** Requests to leave alone entirely (no check, no visit): health checks, static assets. */
  readonly skip?: (request: { readonly method: string; readonly path: string }) => boolean;
  readonly clock?: { now(): number };
  readonly timers?: Timers;
}

/** What the middleware learnt of a request: put on the framework's request context. */
export interface AgentwardenResult {
  /** `verified`, `verification_failed`, `not_verifiable` or `unknown_agent`. */
  readonly result: IdentificationResult;
  /** The identification fields (`agent_id`, `agent_type_name`, ...) and what verification checked. */
  readonly identification: VerificationOutcome;
  /** The visitor's address: from a trusted header, else the socket or platform. */
  readonly clientIp: string | undefined;
  /** The access policy's decision, when a rule applied. */
  readonly decision: VisitDecision | undefined;
  /** True when the middleware answered instead of the application (a denial outside report-only mode). */
  readonly blocked: boolean;
}

/** One request as a middleware hands it to `check`. */
export interface CheckRequest {
  readonly method: string;
  /** The path with its query string. */
  readonly path: string;
  /** Header lookups by lower-case name (repeated values joined with ", "). */
  readonly headers: ReadonlyMap<string, string>;
  /** The headers as sent with the visit (any case; secrets are stripped before a visit is stored, leaves the program or reaches a custom sink). */
  readonly headerRecord: HeadersInput;
  /**
   * The visitor's address as the framework or platform gives it (Express's `req.ip`, which honours
   * its `trust proxy`; `server.requestIP(req)`), used when there is no `clientIp` rule. It may be a getter.
   */
  readonly clientIp?: string | undefined;
  /**
   * The connecting address itself (`req.socket.remoteAddress`), which no header can change; it
   * decides whether a `clientIp` rule's headers are believed. Present but undefined: a socket
   * without an address (a unix socket, from a local proxy). Absent: `clientIp` is used.
   */
  readonly peer?: string | undefined;
  /**
   * Keeps the platform running background work this check starts (Workers' `ctx.waitUntil`): the
   * refresh of a robots.txt fetched from a server, which Workers would otherwise end with the response.
   */
  readonly waitUntil?: ((promise: Promise<unknown>) => void) | undefined;
}

/** A response's status and headers as `record` takes them (numbers as Node keeps content-length). */
export interface RecordedResponse {
  /**
   * The status sent. Undefined when the response is not the final one, so its status, headers
   * and duration are not known here (Next.js middleware letting a request through to the page,
   * `NextResponse.next()`): the visit then carries none of them rather than the middleware's own.
   */
  readonly status: number | undefined;
  readonly headers?: Readonly<Record<string, string | number | readonly string[] | undefined>>;
}

/** A checked request: the result, plus the answer to give instead of the application's, if any. */
export interface RequestCheck extends AgentwardenResult {
  /** A denial or `/robots.txt`; undefined: let the application answer. */
  readonly response: PolicyResponse | undefined;
}

/** The per-request core. */
export interface Agentwarden {
  readonly engine: Engine;
  /** Whether visits go anywhere (a sink was given): without one, adapters do not watch for the response at all. */
  readonly recordsVisits: boolean;
  /** Checks a request; synchronous unless a verifier has to wait (DNS, a key directory) or robots.txt is being fetched. Never throws on request input. */
  check(request: CheckRequest): RequestCheck | Promise<RequestCheck>;
  /** Hands the visit of a checked request to the sink (once; later calls are ignored). */
  record(check: RequestCheck, response: RecordedResponse): void;
  /** The sink's flush: resolves once the visits recorded so far are delivered (or given up on). */
  flush(): Promise<void>;
  /** Flushes and closes the sink. */
  close(): Promise<void>;
}

const NO_VISIT_SINK: VisitSink = { push() {}, flush: async () => {}, close: async () => {} };

/** What `record` needs of a checked request: private, so a result serialised by an application carries no headers. */
interface CheckedRequest {
  readonly method: string;
  readonly path: string;
  readonly headerRecord: HeadersInput;
  readonly started: number;
}

/** A checked request. */
class Check implements RequestCheck {
  readonly result: IdentificationResult;
  #request: CheckedRequest | undefined;
  constructor(
    readonly identification: VerificationOutcome,
    readonly clientIp: string | undefined,
    readonly decision: VisitDecision | undefined,
    readonly blocked: boolean,
    readonly response: PolicyResponse | undefined,
    request: CheckedRequest | undefined,
  ) {
    this.result = identification.result;
    this.#request = request;
  }
  /** The request data for its visit, once: undefined when it was recorded already or skipped. */
  static take(check: RequestCheck): CheckedRequest | undefined {
    if (!(check instanceof Check)) return undefined;
    const request = check.#request;
    check.#request = undefined;
    return request;
  }
}

const SKIPPED_IDENTIFICATION: VerificationOutcome = Object.freeze({ result: 'unknown_agent', verification: Object.freeze({ method: null, checks: Object.freeze([]) }) }) as VerificationOutcome;

/** The response to a robots.txt request (RFC 9309 §2.3: text/plain, UTF-8). */
function robotsResponse(robots: ServedRobotsTxt, method: string, ifNoneMatch: string | undefined): PolicyResponse {
  const headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'public, max-age=3600' };
  if (robots.etag !== undefined) {
    headers['etag'] = robots.etag;
    if (ifNoneMatch !== undefined && ifNoneMatch.split(',').some((tag) => tag.trim() === robots.etag || tag.trim() === '*')) return { status: 304, headers, body: '' };
  }
  return { status: 200, headers, body: method === 'HEAD' ? '' : robots.text };
}

/** Response headers as a visit keeps them: strings (numbers written out). */
function responseHeaders(headers: RecordedResponse['headers']): Record<string, string | readonly string[]> | undefined {
  if (headers === undefined) return undefined;
  const kept: Record<string, string | readonly string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (typeof value === 'string' || Array.isArray(value)) kept[name] = value as string | readonly string[];
    else if (typeof value === 'number') kept[name] = String(value);
  }
  return kept;
}

/**
 * Creates the per-request core that the fetch, Express, Fastify and Hono middleware share.
 * Options are validated here, once: the policy is compiled against the engine's catalog.
 * @throws {TypeError | RangeError} for a bad option (the message names it).
 * @example
 * const agentwarden = createAgentwarden({ sink: createHttpSink({ url, token }), policy: { denyVerificationFailed: true } });
 * const check = await agentwarden.check({ method: 'GET', path: '/', headers, headerRecord, clientIp: '203.0.113.7' });
 * // ... answer check.response, or run the application ...
 * agentwarden.record(check, { status: 200 });
 */
export function createAgentwarden(options: AgentwardenOptions = {}): Agentwarden {
  checkOptions(options, 'createAgentwarden');
  const engine = options.engine ?? createEngine();
  if (typeof engine?.verifyNormalized !== 'function') throw new TypeError('engine must be an engine from createEngine()');
  let sink = NO_VISIT_SINK;
  if (Array.isArray(options.sink)) sink = options.sink.length === 0 ? NO_VISIT_SINK : createFanoutSink(options.sink);
  else if (options.sink !== undefined) {
    assertVisitSink(options.sink, 'sink');
    sink = guardSink(options.sink);
  }
  if (options.clientIp !== undefined && typeof options.clientIp !== 'function') throw new TypeError('clientIp must be a client-IP rule (createClientIpRule({ headers: [...] }))');
  // The engine's own rule, when its creator gave one: a site that configured its proxy there means it here too.
  const rule = options.clientIp ?? engine.clientIp;
  const fromPeer = (rule as ClientIpRule | undefined)?.fromPeer;
  const skip = options.skip;
  if (skip !== undefined && typeof skip !== 'function') throw new TypeError('skip must be a function of { method, path }');
  const clock = options.clock ?? { now: () => Date.now() };
  if (typeof clock?.now !== 'function') throw new TypeError('clock.now must be a function');
  const policy: AccessPolicy | undefined = options.policy === undefined ? undefined : createAccessPolicy(options.policy, engine.catalog, engine.verifierNames);
  const robots: RobotsSource | undefined = policy?.robotsTxt === undefined ? undefined : createRobotsSource(policy.robotsTxt, engine, clock, options.timers ?? platformTimers);

  const finish = (request: CheckRequest, identification: VerificationOutcome, clientIp: string | undefined, started: number): Check | Promise<Check> => {
    if (robots !== undefined && (request.method === 'GET' || request.method === 'HEAD') && isRobotsPath(request.path)) {
      // /robots.txt is served to every agent, denied ones included: it is how they learn the rules.
      const served = robots.get(request.waitUntil);
      const answer = (text: ServedRobotsTxt) =>
        new Check(identification, clientIp, undefined, false, robotsResponse(text, request.method, request.headers.get('if-none-match')), { method: request.method, path: request.path, headerRecord: request.headerRecord, started });
      return served instanceof Promise ? served.then(answer) : answer(served);
    }
    const decision = policy?.decide(identification);
    const blocked = decision !== undefined && decision.action === 'deny' && !decision.report_only;
    return new Check(identification, clientIp, decision, blocked, blocked ? policy!.denial : undefined, { method: request.method, path: request.path, headerRecord: request.headerRecord, started });
  };

  return {
    engine,
    recordsVisits: sink !== NO_VISIT_SINK,
    check(request) {
      const started = clock.now();
      if (skip !== undefined && skip(request)) return new Check(SKIPPED_IDENTIFICATION, undefined, undefined, false, undefined, undefined);
      // The connecting address decides whether the rule's headers are believed: only from one of
      // the proxies the rule walks past, so a client reaching the site directly cannot name its
      // own address (nor through a framework trusting every proxy, whose req.ip is the leftmost
      // X-Forwarded-For entry). A rule of the site's own making (a bare function) is asked first,
      // the framework's address then being read only when it gives none (it may cost: req.ip).
      let clientIp: string | undefined;
      // An adapter that knows the socket says so even when it has no address (a unix socket: the
      // local proxy's); only one that does not is judged by the platform's address.
      if (fromPeer !== undefined) clientIp = fromPeer(request.headers, 'peer' in request ? request.peer : request.clientIp);
      else {
        clientIp = rule === undefined ? undefined : (rule(request.headers) ?? undefined);
        if (clientIp === undefined) {
          const socketIp = request.clientIp;
          clientIp = socketIp === undefined ? undefined : parseClientAddress(socketIp);
        }
      }
      const verdict = engine.verifyNormalized(request.headers, { method: request.method, path: request.path, clientIp: () => clientIp });
      return verdict instanceof Promise ? verdict.then((v) => finish(request, v, clientIp, started)) : finish(request, verdict, clientIp, started);
    },
    record(check, response) {
      const request = Check.take(check);
      if (request === undefined || sink === NO_VISIT_SINK) return;
      const visit: Record<string, unknown> = {
        request_path: request.path,
        request_method: request.method,
        request_headers: request.headerRecord,
        created: isoTime(request.started),
      };
      // A response handed on to a later stage: its status, headers and duration are not known here.
      if (response.status !== undefined) {
        visit['response_duration_in_milliseconds'] = Math.max(0, clock.now() - request.started);
        // RFC 9110 §15: a status the visit format accepts (a framework may report 0 for a dropped connection).
        if (Number.isInteger(response.status) && response.status >= 100 && response.status <= 599) visit['response_status_code'] = response.status;
        const headers = responseHeaders(response.headers);
        if (headers !== undefined) visit['response_headers'] = headers;
      }
      if (check.decision !== undefined) {
        visit['decision'] = check.decision;
        visit['is_blocked'] = check.blocked;
      }
      if (check.clientIp !== undefined) visit['client_ip'] = check.clientIp;
      // The sink is guarded (guardSink): a custom one that throws or rejects fails no response.
      sink.push(visit as unknown as SinkVisit, check.identification);
    },
    flush: () => sink.flush(),
    close: () => sink.close(),
  };
}

// The last second written as ISO 8601 ("2026-11-20T12:00:00."): a busy site records many visits
// each second, and Date#toISOString is a good part of recording one.
let isoSecond = Number.NaN;
let isoPrefix = '';

/** `new Date(ms).toISOString()`, with the date and time of day formatted once per second. */
function isoTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== isoSecond) {
    const text = new Date(second * 1000).toISOString();
    // Years past 9999 (or before 0) have a longer form: written in full each time.
    if (text.length !== 24) return new Date(ms).toISOString();
    isoSecond = second;
    isoPrefix = text.slice(0, 20);
  }
  return `${isoPrefix}${String(Math.floor(ms) - second * 1000).padStart(3, '0')}Z`;
}

/**
 * Whether a request path (with its query) is /robots.txt, also with its letters percent-encoded
 * (`/robots%2Etxt`: the same resource, RFC 3986 §6.2.2.2, which frameworks route to /robots.txt).
 */
function isRobotsPath(path: string): boolean {
  if (path === '/robots.txt' || path.startsWith('/robots.txt?')) return true;
  if (!path.includes('%')) return false;
  const query = path.indexOf('?');
  const decoded = (query === -1 ? path : path.slice(0, query)).replace(/%([0-9A-Fa-f]{2})/g, (escape, hex: string) => {
    const character = String.fromCharCode(Number.parseInt(hex, 16));
    return /[A-Za-z0-9._~-]/.test(character) ? character : escape;
  });
  return decoded === '/robots.txt';
}
