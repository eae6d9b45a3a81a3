// The transport-agnostic REST API (DESIGN.md §7): routing, auth, content negotiation, limits and
// errors live here once; transports only turn their requests into ApiRequest and back.
import type { Engine, VerificationOutcome } from '../engine.js';
import { headerMapOf } from '../identify/headers.js';
import { createIdentificationSerializer, type Identification } from '../identify/identification.js';
import { RobotsOptionsError } from '../robots/errors.js';
import type { RobotsTxtOptions } from '../robots/options.js';
import type { Visit } from '../visits/visit.js';
import { createVisitEnricher } from '../visits/enrich.js';
import { VisitStoreUnavailableError, type StoreHealth, type VisitStore } from '../visits/visit-store.js';
import { authFailureDetail, bearerChallenge, readBearer, type AuthFailure } from './auth.js';
import { readItems, validateRequestItem, type RequestItem } from './items.js';
import { jsonBodyProblem, parseJsonBody } from './json-body.js';
import { resolveLimits, type ApiLimits } from './limits.js';
import { createOpenApiDocument } from './openapi.js';
import { pointerTo, type FieldError } from '../field-error.js';
import { headerProblem, notJsonProblem, problem, unsupportedMediaType } from './problem.js';
import { JSON_NO_STORE_HEADERS, withSecurityHeaders } from './security-headers.js';
import type { Project, ProjectLookup, TokenRecord } from './projects.js';
import { createRateLimiter, type RateLimiter } from './rate-limit.js';
import { createReadinessProbe } from './readiness.js';
import { readProblem } from './read-query.js';
import { headerValue, isJsonMediaType } from './request-headers.js';
import { createRouter } from './router.js';
import { constantTimeEqual, sha256Hex, type TokenHasher } from './token.js';
import type { AdminAuthenticator, AdminSession, CredentialCheck, Route, RouteContext, RouteTable } from './route.js';
import { createMemoryProjectSettingsStore, createProjectRequestRules, type ProjectRequestRules, type ProjectSettingsStore } from './project-settings.js';
import { createProjectSettingsRoutes } from './settings-routes.js';
import { createVisitIngest } from './visit-ingest.js';
import { createWordPressRoutes } from './wordpress-routes.js';
import { createVisitRoutes, type EventStreamOptions } from './visit-routes.js';
import { createAnalyticsRoutes } from './analytics-routes.js';
import { createCatalogRoutes } from './catalog-routes.js';
import { createClientIpRule, remoteAddrPeerRule, type ClientIpRule } from '../verify/client-ip.js';
import type { ApiRequest, ApiResponse } from './types.js';

/** A function from a plain request to a plain response; it never rejects. */
export type ApiHandler = (request: ApiRequest) => Promise<ApiResponse>;

/** Options of `createApiHandler`. */
export interface ApiHandlerOptions {
  readonly engine: Engine;
  /** Finds the project a token opens. */
  readonly projects: ProjectLookup;
  /** Where accepted visits go. */
  readonly visits: VisitStore;
  /** Size limits; DESIGN.md §7 defaults for any not given. */
  readonly limits?: Partial<ApiLimits>;
  /** Path prefix every route lives under (default '/'). */
  readonly basePath?: string;
  /** Per-token token bucket (default 1,000 requests/s, burst 2,000); `false` disables it. */
  readonly rateLimit?: false | { readonly ratePerSecond: number; readonly burst: number };
  /** Token hash function (default SHA-256 through Web Crypto); must match the project store's. */
  readonly hashToken?: TokenHasher;
  /** Milliseconds since the epoch, for the rate limiter. */
  readonly clock?: { now(): number };
  /** More routes (read APIs, admin, web pages), merged into the table; a path and method defined twice is an error. */
  readonly routes?: readonly RouteTable[];
  /** Admin sessions, for 'admin' and 'token-or-admin' routes; without it those accept tokens only. */
  readonly admin?: AdminAuthenticator;
  /** Called with every unexpected error, which is answered as a bare 500; log it here. */
  readonly onError?: (error: unknown, request: ApiRequest) => void;
  /** Per-project settings (robots rules, client-IP rule); in memory when omitted. */
  readonly settings?: ProjectSettingsStore;
  /** The client-IP rule of projects without their own, for their identification and verification items and visits (default `createClientIpRule()`). */
  readonly clientIp?: ClientIpRule;
  /**
   * Called when the store's readiness changes (`GET /readyz`): not ready, with why (it may name
   * hosts or files, so it goes to the log, never into an answer), or ready again.
   */
  readonly onReadinessChange?: (health: StoreHealth) => void;
  /**
   * Also ask the store every `everyMs` ms, so a change reaches onReadinessChange while no balancer
   * polls `GET /readyz` (an outage is logged all the same); until `signal` aborts.
   */
  readonly watchReadiness?: { readonly everyMs: number; readonly signal?: AbortSignal };
  /** `GET /visits/stream`: heartbeat interval (default 15,000 ms), `retry:` hint (default 3,000 ms), and the caps on open streams and on the events they keep for slow readers. */
  readonly eventStream?: EventStreamOptions;
}


/** Builds the check of the credential a request was authenticated by. */
type CredentialChecker = (request: ApiRequest, project: Project | undefined, session: AdminSession | undefined) => CredentialCheck;

/** What a route's function receives; a class so the per-request object is cheap and the query parsed only when read. */
class Context implements RouteContext {
  #query: URLSearchParams | undefined;
  constructor(
    readonly request: ApiRequest,
    readonly path: string,
    private readonly queryAt: number,
    readonly project: Project | undefined,
    readonly admin: AdminSession | undefined,
    readonly params: Readonly<Record<string, string>>,
    private readonly checker: CredentialChecker,
  ) {}
  get query(): URLSearchParams {
    return (this.#query ??= parseQuery(this.request.path, this.queryAt));
  }
  // Built only for the routes that ask (event streams).
  get credential(): CredentialCheck {
    return this.checker(this.request, this.project, this.admin);
  }
}

function parseQuery(path: string, queryAt: number): URLSearchParams {
  return new URLSearchParams(queryAt === -1 ? '' : path.slice(queryAt + 1));
}

/** The first query parameter named more than once, if any. */
function repeatedParameter(path: string, queryAt: number): string | undefined {
  const seen = new Set<string>();
  for (const name of parseQuery(path, queryAt).keys()) {
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

/**
 * The first query parameter whose name or value is not percent-encoded UTF-8 ("%FF", "%C0%AF",
 * "%zz"), if any: URLSearchParams would read it as U+FFFD or verbatim, and a filter would then
 * match what the client never asked for.
 */
function misencodedParameter(path: string, queryAt: number): string | undefined {
  const query = path.slice(queryAt + 1);
  if (!query.includes('%')) return undefined;
  for (const pair of query.split('&')) {
    if (!pair.includes('%')) continue;
    try {
      decodeURIComponent(pair);
    } catch {
      const eq = pair.indexOf('=');
      return new URLSearchParams(`${eq === -1 ? pair : pair.slice(0, eq)}=`).keys().next().value ?? '';
    }
  }
  return undefined;
}

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

/** A token found valid: its project and hash (the rate-limit key), until when it is believed without asking the store. */
interface CachedToken {
  readonly project: Project;
  readonly key: string;
  readonly until: number;
}

const TOKEN_CACHE_MS = 1000;
// Owners of request bodies besides projects, for the transport's per-owner share; the parentheses
// keep them apart from project ids (prj_…).
const ADMIN_BODY_OWNER = '(admin)';
const ANONYMOUS_BODY_OWNER = '(anonymous)';
const TOKEN_CACHE_MAX = 10_000;

// RFC 9110 §9.2.1: methods that change nothing, so they need no CSRF token.
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);


function json(status: number, value: unknown, projectId?: string): ApiResponse {
  return { status, headers: JSON_NO_STORE_HEADERS, body: JSON.stringify(value), projectId };
}

/** Whether an If-None-Match list names this ETag (RFC 9110 §13.1.2: weak comparison, or "*"). */
function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
  return header.split(',').some((part) => {
    const tag = part.trim();
    return tag === '*' || (tag.startsWith('W/') ? tag.slice(2) : tag) === opaque;
  });
}

/** Whether a route answered with a promise (or any thenable) rather than a response. */
function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown }).then === 'function';
}

/** The response with the project it was authenticated as, for access logs. */
function withProject(response: ApiResponse, project: Project): ApiResponse {
  return response.projectId === undefined ? { ...response, projectId: project.id } : response;
}

// What errors[] says of the Authorization header for each failure; the detail says more.
const AUTHORIZATION_ERRORS: Record<AuthFailure, string> = {
  missing: 'is required: Bearer <token>',
  'misspelled-header': 'is required: Bearer <token>',
  'wrong-scheme': 'must use the Bearer scheme',
  malformed: 'must hold a bearer token',
  'unknown-token': 'names no valid token',
};

function unauthorized(reason: AuthFailure, header?: string): ApiResponse {
  return headerProblem('unauthorized', authFailureDetail({ reason, header }), { header: 'Authorization', code: reason, message: AUTHORIZATION_ERRORS[reason] }, { 'www-authenticate': bearerChallenge(reason) });
}

function validationProblem(errors: FieldError[], tooLarge: FieldError[]): ApiResponse | undefined {
  if (tooLarge.length > 0) return problem('payload-too-large', 'An item is past the size limits.', { errors: tooLarge });
  if (errors.length > 0) return problem('validation-failed', 'The request body has invalid fields; see errors.', { errors });
  return undefined;
}

/**
 * Creates the API handler. Configuration is validated here, once.
 * @throws {TypeError | RangeError} for a missing engine/store or an invalid limit, base path or rate limit.
 * @example
 * const handle = createApiHandler({ engine: createEngine(), projects, visits: createMemoryVisitStore() });
 * const response = await handle({ method: 'GET', path: '/healthz', headers: {} });
 */
export function createApiHandler(options: ApiHandlerOptions): ApiHandler {
  if (typeof options?.engine?.identify !== 'function') throw new TypeError('engine must be an engine from createEngine()');
  if (typeof options.projects?.findByTokenHash !== 'function') throw new TypeError('projects must have findByTokenHash(hash)');
  if (typeof options.visits?.append !== 'function') throw new TypeError('visits must be a VisitStore with append(projectId, visits)');
  const { engine, projects, visits } = options;
  const limits = resolveLimits(options.limits);
  const hashToken = options.hashToken ?? sha256Hex;
  if (typeof hashToken !== 'function') throw new TypeError(`hashToken must be a function, got ${typeof hashToken}`);
  const limiter: RateLimiter | undefined =
    options.rateLimit === false ? undefined : createRateLimiter({ ...(options.rateLimit ?? { ratePerSecond: 1000, burst: 2000 }), clock: options.clock });
  const onError = options.onError ?? (() => undefined);
  const enrich = createVisitEnricher({ engine, clock: options.clock });
  const settings = options.settings ?? createMemoryProjectSettingsStore();
  const defaultClientIp = options.clientIp ?? createClientIpRule();
  if (typeof defaultClientIp !== 'function') throw new TypeError(`clientIp must be a function of the headers, got ${String(defaultClientIp)}`);
  // Each project may read the visitor address its own way (its proxies) and names its own hosts
  // (Web Bot Auth); compiled once per project and read again every few seconds, so rules saved
  // through another server apply here too.
  const requestRules = createProjectRequestRules(settings, defaultClientIp, options.clock === undefined ? {} : { clock: options.clock });
  const serverRules: ProjectRequestRules = { clientIp: defaultClientIp };
  const enrichWith = (ruleOf: (rules: ProjectRequestRules) => ClientIpRule) => async (projectId: string, parsed: readonly Visit[]) => {
    const pending = requestRules.rulesFor(projectId);
    const rules = pending instanceof Promise ? await pending : pending;
    return enrich(parsed, ruleOf(rules), rules.siteAuthorities);
  };
  const enrichFor = enrichWith((rules) => rules.clientIp);

  const parseBody = (request: ApiRequest): { ok: true; value: unknown } | { ok: false; response: ApiResponse } => {
    const parsed = parseJsonBody(request.body, limits.maxJsonDepth);
    return parsed.ok ? parsed : { ok: false, response: jsonBodyProblem(parsed) };
  };

  const readiness = createReadinessProbe(visits, { ...(options.clock === undefined ? {} : { clock: options.clock }), onChange: options.onReadinessChange, ...(options.watchReadiness === undefined ? {} : { watch: options.watchReadiness }) });

  const ingestVisits = createVisitIngest({ visits, limits, enrich: enrichFor, parseBody, ...(options.clock === undefined ? {} : { clock: options.clock }) });
  // The WordPress plugin records the socket address it saw as Remote-Addr, which no visitor can
  // set there: its visits are judged with that address as the peer (remoteAddrPeerRule).
  const remoteAddrRules = new WeakMap<ClientIpRule, ClientIpRule>();
  const enrichWordPress = enrichWith(({ clientIp }) => {
    let rule = remoteAddrRules.get(clientIp);
    if (rule === undefined) remoteAddrRules.set(clientIp, (rule = remoteAddrPeerRule(clientIp)));
    return rule;
  });
  const ingestWordPress = createVisitIngest({ visits, limits, enrich: enrichWordPress, parseBody, ...(options.clock === undefined ? {} : { clock: options.clock }) });

  const requestItems = (request: ApiRequest): { ok: true; single: boolean; items: RequestItem[] } | { ok: false; response: ApiResponse } => {
    const body = parseBody(request);
    if (!body.ok) return body;
    const read = readItems(body.value, limits);
    if (!read.ok) return read;
    const errors: FieldError[] = [];
    const tooLarge: FieldError[] = [];
    const items = read.items.map((item, i) => validateRequestItem(item, read.single ? '' : pointerTo('', i), limits, errors, tooLarge));
    const failure = validationProblem(errors, tooLarge);
    return failure === undefined ? { ok: true, single: read.single, items: items as RequestItem[] } : { ok: false, response: failure };
  };

  /**
   * A POST route taking one item or an array of them, answering in the same shape and order.
   * `answer` may answer synchronously: a single item answered at once then needs no promise here.
   * Each item is answered with the project's rules (client address, site hosts), as its visits
   * are: the same request gets the same verdict here and when it is stored. The rules are cached
   * per project, so nearly always at hand; a settings store that cannot be read leaves the
   * server's defaults.
   */
  const itemsRoute = <T>(answer: (item: RequestItem, rules: ProjectRequestRules) => T | Promise<T>, serialize: (result: T) => string = JSON.stringify): Route => {
    const answerItems = (items: readonly RequestItem[], single: boolean, rules: ProjectRequestRules, projectId: string | undefined): ApiResponse | Promise<ApiResponse> => {
      if (single) {
        const result = answer(items[0]!, rules);
        return result instanceof Promise
          ? result.then((value: T): ApiResponse => ({ status: 200, headers: JSON_NO_STORE_HEADERS, body: serialize(value), projectId }))
          : { status: 200, headers: JSON_NO_STORE_HEADERS, body: serialize(result), projectId };
      }
      const batch = (results: readonly T[]): ApiResponse => ({ status: 200, headers: JSON_NO_STORE_HEADERS, body: `[${results.map((result) => serialize(result)).join(',')}]`, projectId });
      const answers = items.map((item) => answer(item, rules));
      // A batch whose answers all came at once is answered at once too.
      return answers.some((value) => value instanceof Promise) ? Promise.all(answers).then(batch) : batch(answers as T[]);
    };
    return {
      auth: 'token',
      json: true,
      run({ request, project }) {
        const body = requestItems(request);
        if (!body.ok) return body.response;
        const projectId = project?.id;
        const rules = projectId === undefined ? serverRules : requestRules.rulesFor(projectId);
        if (rules instanceof Promise) {
          return rules.catch(() => serverRules).then((loaded) => answerItems(body.items, body.single, loaded, projectId));
        }
        return answerItems(body.items, body.single, rules, projectId);
      },
    };
  };
  const identificationJson = createIdentificationSerializer();
  // verifyNormalized reads the parsed header object in place and answers synchronously unless a
  // verifier has to wait; the serializer writes only the identification fields of its answer.
  // Signatures may cover the method and path (RFC 9421 §2.2), so the chain sees them, and an
  // address the caller sent comes before anything a header claims.
  const verifyItem = (item: RequestItem, rules: ProjectRequestRules): VerificationOutcome | Promise<VerificationOutcome> => {
    const sent = item.client_ip;
    return engine.verifyNormalized(headerMapOf(item.request_headers), {
      id: item.id,
      method: item.request_method,
      path: item.request_path,
      clientIp: sent === undefined ? rules.clientIp : () => sent,
      siteAuthorities: rules.siteAuthorities,
    });
  };

  let openApi: string | undefined;
  const routes: Record<string, Readonly<Record<string, Route>>> = {
    '/agent-identifications': { POST: itemsRoute<Identification>(verifyItem, identificationJson) },
    '/agent-verifications': { POST: itemsRoute(verifyItem) },
    '/robots-txts': {
      POST: {
        auth: 'token-or-admin',
        json: true,
        run({ request, project }) {
          const body = parseBody(request);
          if (!body.ok) return body.response;
          let rendered;
          try {
            // DESIGN.md §5: the engine validates agent_types and paths; every issue comes back at a pointer.
            rendered = engine.renderRobotsTxt(body.value as RobotsTxtOptions);
          } catch (error) {
            if (!(error instanceof RobotsOptionsError)) throw error;
            const errors = error.issues.map((issue) => ({ pointer: issue.path, code: issue.code, message: issue.message }));
            return problem('validation-failed', 'The robots.txt options are invalid; see errors.', { errors });
          }
          // Clients refetch daily: the ETag lets them revalidate with If-None-Match for a bodiless 304.
          const headers = { etag: rendered.etag, 'cache-control': 'no-cache' };
          if (ifNoneMatchHits(headerValue(request.headers, 'if-none-match'), rendered.etag)) return { status: 304, headers, projectId: project?.id };
          return { status: 200, headers: { ...headers, 'content-type': 'text/plain; charset=utf-8' }, body: rendered.text, projectId: project?.id };
        },
      },
    },
    '/visits': {
      POST: { auth: 'token', json: true, run: ({ request, project }) => ingestVisits(request, project!.id) },
    },
    '/openapi.json': {
      GET: {
        auth: 'none',
        json: false,
        run() {
          openApi ??= JSON.stringify(createOpenApiDocument({ basePath: router.basePath, limits, extraPaths: documentedExtraRoutes() }));
          return { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' }, body: openApi };
        },
      },
    },
    '/healthz': {
      GET: { auth: 'none', json: false, run: () => json(200, { status: 'ok' }) },
    },
    '/readyz': {
      GET: {
        auth: 'none',
        json: false,
        async run() {
          const { status } = await readiness();
          if (status === 'ok') return json(200, { status: 'ready', checks: { store: status } });
          return { ...json(503, { status: 'not_ready', checks: { store: status } }), headers: { ...JSON_NO_STORE_HEADERS, 'retry-after': '5' } };
        },
      },
    },
  };
  const readRoutes = createVisitRoutes({ engine, visits, settings, enrich: enrichFor, clock: options.clock, maxJsonDepth: limits.maxJsonDepth, eventStream: options.eventStream });
  const settingsRoutes = createProjectSettingsRoutes({ settings, requestRules, catalog: engine.catalog, maxJsonDepth: limits.maxJsonDepth });
  const analyticsRoutes = createAnalyticsRoutes({ engine, visits, clock: options.clock });
  const catalogRoutes = createCatalogRoutes(engine.catalog);
  const wordPressRoutes = createWordPressRoutes({ ingest: ingestWordPress, limits, visits, catalog: engine.catalog });
  for (const table of [readRoutes, settingsRoutes, analyticsRoutes, catalogRoutes, wordPressRoutes, ...(options.routes ?? [])]) {
    for (const [path, methods] of Object.entries(table)) {
      for (const method of Object.keys(methods)) {
        if (routes[path]?.[method] !== undefined) throw new RangeError(`routes: ${method} ${path} is defined twice`);
      }
      routes[path] = { ...routes[path], ...methods };
    }
  }
  const router = createRouter<Route>(options.basePath ?? '/', routes);
  // Routes added through `options.routes` that describe themselves join the OpenAPI document.
  const documentedExtraRoutes = () => {
    const paths: Record<string, Record<string, unknown>> = {};
    for (const table of options.routes ?? []) {
      for (const [path, methods] of Object.entries(table)) {
        for (const [method, route] of Object.entries(methods)) if (route.openApi !== undefined) (paths[path] ??= {})[method.toLowerCase()] = route.openApi;
      }
    }
    return paths;
  };
  const admin = options.admin;

  // Tokens found valid in the last second, by their text: the hot path then neither hashes nor
  // asks the store. Only hits are kept (a flood of wrong tokens cannot fill it), it is bounded,
  // and it is dropped whenever the store reports a token change (rotation, revocation).
  const tokenCache = new Map<string, CachedToken>();
  let cachedVersion = projects.tokensVersion?.();
  const now = options.clock === undefined ? () => Date.now() : () => options.clock!.now();

  // The last Authorization value and its token: a client sends the same one with every request.
  let lastAuthorization: string | undefined;
  let lastToken = '';
  /** The bearer token of a request, or undefined when it has none (readBearer says why). */
  const bearerToken = (headers: ApiRequest['headers']): string | undefined => {
    const header = headers['authorization'];
    if (header === lastAuthorization && header !== undefined) return lastToken;
    const bearer = readBearer(headers);
    if (!bearer.ok) return undefined;
    // Only a plain string value decides the token alone (a list is joined, another case is scanned).
    if (typeof header === 'string') {
      lastAuthorization = header;
      lastToken = bearer.token;
    }
    return bearer.token;
  };

  /** The cached answer for a token seen valid within the last second, without a promise; undefined to ask the store. */
  const cachedToken = (request: ApiRequest): CachedToken | undefined => {
    const version = projects.tokensVersion?.();
    if (version !== cachedVersion) {
      tokenCache.clear();
      cachedVersion = version;
      return undefined;
    }
    const token = bearerToken(request.headers);
    if (token === undefined) return undefined;
    const cached = tokenCache.get(token);
    return cached !== undefined && cached.until > now() ? cached : undefined;
  };

  /** The store's record of a token and the token's hash; no record for a token the store does not hold. @throws what the store throws. */
  const lookUpToken = async (token: string): Promise<{ record: TokenRecord | undefined; hash: string }> => {
    const hash = await hashToken(token);
    const record = await projects.findByTokenHash(hash);
    return { record: record !== undefined && constantTimeEqual(record.tokenHash, hash) ? record : undefined, hash };
  };

  const authenticate = async (request: ApiRequest): Promise<{ ok: true; project: Project; key: string } | { ok: false; response: ApiResponse }> => {
    const bearer = readBearer(request.headers);
    if (!bearer.ok) return { ok: false, response: unauthorized(bearer.reason, bearer.header) };
    const time = now();
    let found: { record: TokenRecord | undefined; hash: string };
    try {
      found = await lookUpToken(bearer.token);
    } catch (error) {
      if (!(error instanceof VisitStoreUnavailableError)) throw error;
      // The store cannot say whether the token is valid: not a 401 (the client would drop a good
      // token) but a 503 it retries, as for the append (DESIGN.md §6).
      return {
        ok: false,
        response: problem('service-unavailable', `The project store cannot check tokens now (${error.reason}); retry after ${error.retryAfterSeconds} s.`, {
          headers: { 'retry-after': String(error.retryAfterSeconds) },
        }),
      };
    }
    const { record, hash } = found;
    if (record === undefined) {
      tokenCache.delete(bearer.token);
      return { ok: false, response: unauthorized('unknown-token') };
    }
    if (tokenCache.size >= TOKEN_CACHE_MAX) tokenCache.clear();
    tokenCache.set(bearer.token, { project: record.project, key: hash, until: time + TOKEN_CACHE_MS });
    return { ok: true, project: record.project, key: hash };
  };

  /** An admin session, checked for CSRF on state-changing methods, and the project it names with ?project=. */
  const authenticateAdmin = async (
    request: ApiRequest,
    query: URLSearchParams,
    needsProject: boolean,
  ): Promise<{ ok: true; session: AdminSession; project: Project | undefined } | { ok: false; response: ApiResponse }> => {
    const session = admin === undefined ? undefined : await admin.authenticate(request);
    if (admin === undefined || session === undefined) {
      const challenge = { 'www-authenticate': bearerChallenge('missing') };
      // A route a token opens lacks its Authorization; an admin-only one, a session cookie.
      const response = needsProject
        ? headerProblem(
            'unauthorized',
            'Send the project access token as "Authorization: Bearer <token>", or log in to the dashboard: the admin session cookie is missing, expired or invalid.',
            { header: 'Authorization', code: 'missing', message: AUTHORIZATION_ERRORS.missing },
            challenge,
          )
        : problem('unauthorized', 'Log in to the dashboard (POST /admin/login): the admin session cookie is missing, expired or invalid.', { headers: challenge });
      return { ok: false, response };
    }
    if (!SAFE_METHODS.has(request.method)) {
      const sent = headerValue(request.headers, 'x-csrf-token');
      if (sent === undefined || !constantTimeEqual(sent, session.csrfToken)) {
        const error = sent === undefined ? { header: 'X-CSRF-Token', code: 'required', message: "is required: the session's CSRF token" } : { header: 'X-CSRF-Token', code: 'mismatch', message: "must be the session's CSRF token" };
        return { ok: false, response: headerProblem('forbidden', 'State-changing admin requests must send the session\'s CSRF token in "X-CSRF-Token".', error) };
      }
    }
    if (!needsProject) return { ok: true, session, project: undefined };
    const projectId = query.get('project');
    if (projectId === null || projectId === '') {
      return { ok: false, response: problem('validation-failed', 'Name the project with the "project" query parameter.', { errors: [{ pointer: '', parameter: 'project', code: 'required', message: 'project is required' }] }) };
    }
    const project = await admin.findProject(projectId);
    if (project === undefined) return { ok: false, response: problem('not-found', `There is no project ${JSON.stringify(projectId)}.`) };
    return { ok: true, session, project };
  };

  // Any token write or session end through this server's stores: a stream then asks at once.
  // Both numbers only grow, so their sum changes whenever either does.
  const credentialChanges = () => (projects.tokensVersion?.() ?? 0) + (admin?.sessionsVersion?.() ?? 0);

  /**
   * Asks the stores again whether a request's token or admin session still opens its project (a
   * token revoked, rotated away or of a deleted project; a session logged out, expired or ended by
   * a new secret; a project an admin named deleted). The token cache is not consulted: it would
   * vouch for a revoked token for up to a second more.
   */
  const credentialCheck: CredentialChecker = (request, project, session) => ({
    changes: credentialChanges,
    async check() {
      try {
        if (session !== undefined) {
          if ((await admin?.authenticate(request))?.id !== session.id) return 'revoked';
          return project === undefined || (await admin!.findProject(project.id)) !== undefined ? 'valid' : 'revoked';
        }
        if (project === undefined) return 'valid';
        const bearer = readBearer(request.headers);
        if (!bearer.ok) return 'revoked';
        const { record } = await lookUpToken(bearer.token);
        return record?.project.id === project.id ? 'valid' : 'revoked';
      } catch (error) {
        // A store that cannot answer says nothing about the credential: the stream keeps the
        // standing it had (and asks again later) rather than ending for every client at once.
        if (!(error instanceof VisitStoreUnavailableError)) onError(error, request);
        return 'unknown';
      }
    },
  });

  // The request path is handled synchronously until something has to wait (a token the cache does
  // not hold, an admin session, a store, a verifier): a request answered at once costs one promise,
  // the handler's own, instead of one per await on the way.
  const dispatch = (request: ApiRequest): ApiResponse | Promise<ApiResponse> => {
    const match = router.match(request.method, request.path);
    if (match.kind === 'not-found') return problem('not-found', `There is no resource at ${JSON.stringify(request.path.split('?')[0])}.`);
    if (match.kind === 'method-not-allowed') {
      return problem('method-not-allowed', `${JSON.stringify(request.method)} is not allowed here; allowed: ${match.allow}.`, { headers: { allow: match.allow } });
    }
    const route = match.route;
    const params = match.params ?? NO_PARAMS;
    const queryAt = request.path.indexOf('?');
    // token-or-admin: a request with an Authorization header is a token request, whatever cookies it carries.
    const useAdmin = route.auth === 'admin' || (route.auth === 'token-or-admin' && headerValue(request.headers, 'authorization') === undefined && admin !== undefined);
    if (useAdmin) {
      return authenticateAdmin(request, parseQuery(request.path, queryAt), route.auth === 'token-or-admin').then((auth) =>
        auth.ok ? serve(route, request, queryAt, params, auth.project, auth.session) : auth.response,
      );
    }
    if (route.auth === 'none') return serve(route, request, queryAt, params, undefined, undefined);
    const cached = cachedToken(request);
    if (cached !== undefined) return admit(route, request, queryAt, params, cached);
    return authenticate(request).then((auth) => (auth.ok ? admit(route, request, queryAt, params, auth) : auth.response));
  };

  /** A token request past authentication: spends its rate limit, then runs the route. */
  const admit = (route: Route, request: ApiRequest, queryAt: number, params: Readonly<Record<string, string>>, auth: { project: Project; key: string }): ApiResponse | Promise<ApiResponse> => {
    const decision = limiter?.take(auth.key);
    if (decision !== undefined && !decision.ok) {
      return {
        ...problem('rate-limited', `This token is over its rate limit; retry after ${decision.retryAfterSeconds} s.`, {
          headers: { 'retry-after': String(decision.retryAfterSeconds) },
        }),
        projectId: auth.project.id,
      };
    }
    // "?project=" picks a project for an admin session; a token has one, and naming another must
    // not look like reading it.
    if (queryAt !== -1 && request.path.includes('project=', queryAt)) {
      const named = parseQuery(request.path, queryAt).getAll('project');
      if (named.some((id) => id !== auth.project.id)) {
        return problem('forbidden', `This token belongs to project ${JSON.stringify(auth.project.id)}; the "project" query parameter names another. A token reaches only its own project.`, {
          errors: [{ pointer: '', parameter: 'project', code: 'other-project', message: 'must be the token\'s own project, or left out' }],
        });
      }
    }
    return serve(route, request, queryAt, params, auth.project, undefined);
  };

  /** An authenticated request: the media type of JSON routes, then the body, then the route. */
  const serve = (
    route: Route,
    request: ApiRequest,
    queryAt: number,
    params: Readonly<Record<string, string>>,
    project: Project | undefined,
    session: AdminSession | undefined,
  ): ApiResponse | Promise<ApiResponse> => {
    if (queryAt !== -1) {
      // No parameter takes several values: a repeated one is ambiguous, not "the first wins".
      const repeated = repeatedParameter(request.path, queryAt);
      if (repeated !== undefined) {
        return problem('invalid-query', `The query parameter ${JSON.stringify(repeated.slice(0, 64))} is given more than once; give it once.`, {
          errors: [{ pointer: '', parameter: repeated, code: 'repeated', message: 'must be given at most once' }],
        });
      }
      const misencoded = misencodedParameter(request.path, queryAt);
      if (misencoded !== undefined) {
        return problem('invalid-query', `The query parameter ${JSON.stringify(misencoded.slice(0, 64))} is not percent-encoded UTF-8 (RFC 3986 §2.1); encode its bytes as UTF-8.`, {
          errors: [{ pointer: '', parameter: misencoded, code: 'encoding', message: 'must be percent-encoded UTF-8' }],
        });
      }
    }
    if (route.json) {
      const contentType = headerValue(request.headers, 'content-type');
      if (!isJsonMediaType(contentType)) {
        return notJsonProblem(contentType);
      }
      // A compressed body would reach the JSON parser still compressed (RFC 9110 §15.5.16: 415
      // with Accept-Encoding for an unsupported coding).
      const coding = headerValue(request.headers, 'content-encoding')?.trim().toLowerCase();
      if (coding !== undefined && coding !== '' && coding !== 'identity') {
        return unsupportedMediaType('Content-Encoding', `Send the body without a content coding; got Content-Encoding ${JSON.stringify(coding.slice(0, 64))}.`, 'identity');
      }
    }
    // The body is read only now, once the request is routed, authenticated and within its rate limit.
    const readBody = request.readBody;
    if (readBody !== undefined) {
      // Whose share of the transport's body cap it takes: a project's bodies cannot crowd out another's.
      const owner = session !== undefined ? ADMIN_BODY_OWNER : (project?.id ?? ANONYMOUS_BODY_OWNER);
      return readBody(route.maxBodyBytes, owner).then((read) => {
        if (!read.ok) return read.response;
        const { method, path, headers, remoteAddress } = request;
        return run(route, { method, path, headers, body: read.body, remoteAddress }, queryAt, params, project, session);
      });
    }
    return run(route, request, queryAt, params, project, session);
  };

  /** A request with its body: the body limit of JSON routes, then the route itself. */
  const run = (
    route: Route,
    request: ApiRequest,
    queryAt: number,
    params: Readonly<Record<string, string>>,
    project: Project | undefined,
    session: AdminSession | undefined,
  ): ApiResponse | Promise<ApiResponse> => {
    if (route.json) {
      const size = request.body?.byteLength ?? 0;
      const maxBodyBytes = route.maxBodyBytes === undefined ? limits.maxBodyBytes : Math.min(route.maxBodyBytes, limits.maxBodyBytes);
      if (size > maxBodyBytes) {
        return problem('payload-too-large', `The body has ${size} bytes; at most ${maxBodyBytes} are accepted.`, {
          errors: [{ pointer: '', code: 'max-body-bytes', message: `at most ${maxBodyBytes} bytes` }],
        });
      }
    }
    const path = (queryAt === -1 ? request.path : request.path.slice(0, queryAt)).slice(router.basePath.length);
    const response = route.run(new Context(request, path, queryAt, project, session, params, credentialCheck));
    if (project === undefined) return response;
    return isThenable(response) ? Promise.resolve(response).then((answered) => withProject(answered, project)) : withProject(response, project);
  };

  const fail = (error: unknown, request: ApiRequest): ApiResponse => {
    // A store that cannot answer now is a 503 with Retry-After on any route (project settings, the
    // admin's project list), as on the read APIs; not a bug to log.
    if (error instanceof VisitStoreUnavailableError) return readProblem(error)!;
    // The body never carries the error: internals go to the log only (STYLE.md, Errors).
    onError(error, request);
    return problem('internal-error', 'An unexpected error occurred. It has been logged.');
  };

  // Every answer leaves through here, so every one gets the security headers, whichever route or
  // module built it (problem() adds them itself, for the transports' own refusals).
  return (request) => {
    let response: ApiResponse | PromiseLike<ApiResponse>;
    try {
      response = dispatch(request);
    } catch (error) {
      return Promise.resolve(fail(error, request));
    }
    return isThenable(response) ? Promise.resolve(response).then(withSecurityHeaders, (error: unknown) => fail(error, request)) : Promise.resolve(withSecurityHeaders(response));
  };
}
