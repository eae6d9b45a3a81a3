// The dashboard's admin API: log in and out, read the session's CSRF token, list (with visit
// counts), create, rename and delete projects, rotate and revoke their access tokens. Mounted into createApiHandler as a route table.
import {
  clientAddressFromPeer,
  createClientIpRule,
  headerValue,
  normalizeHeaders,
  openApiErrorResponses,
  jsonBodyProblem,
  longerThan,
  parseJsonBody,
  problem,
  type ApiRequest,
  type ApiResponse,
  type ClientIpRule,
  type CreatedProject,
  type FieldError,
  type Project,
  type Route,
  type RouteTable,
  summarizeProjectVisits,
  type VisitStore,
  VisitStoreUnavailableError,
} from '../../index.js';
import { classifyAddress } from './address-policy.js';
import { ADMIN_SESSION_COOKIE, type AdminStore } from './admin-store.js';
import { hasControlCharacter, hasLoneSurrogate } from './control-characters.js';

/** A project as the admin routes list it: its tokens by id and prefix, never the tokens themselves. */
export interface AdminProjectInfo extends Project {
  readonly created: string;
  readonly tokens: readonly { readonly id: string; readonly prefix: string; readonly created: string; readonly revoked: string | null }[];
}

/**
 * What the admin routes need of the project store. Each method may answer at once (the SQLite
 * store) or with a promise (the ClickHouse store, shared by several servers); the routes await both.
 */
export interface AdminProjectStore {
  createProject(name: string): CreatedProject | Promise<CreatedProject>;
  listProjects(): readonly AdminProjectInfo[] | Promise<readonly AdminProjectInfo[]>;
  issueToken(projectId: string, options: { revokeOthers: boolean }): { tokenId: string; token: string } | Promise<{ tokenId: string; token: string }>;
  revokeToken(which: { tokenId: string }): boolean | Promise<boolean>;
  renameProject(projectId: string, name: string): boolean | Promise<boolean>;
  /** Deletes the project with its tokens, settings and visits; false when there is none. */
  deleteProject(projectId: string): boolean | Promise<boolean>;
}

/** Options of `createAdminRoutes`. */
export interface AdminRoutesOptions {
  readonly admin: AdminStore;
  readonly projects: AdminProjectStore;
  /** The cookie's Path: the server's base path (default '/'). */
  readonly cookiePath?: string;
  /**
   * Mark the session cookie Secure always (behind a TLS terminator that sends no
   * X-Forwarded-Proto). Otherwise it is Secure when the request came over https as forwarding
   * headers tell.
   */
  readonly secureCookies?: boolean;
  /**
   * How the login limit finds the client address it counts attempts by, through the site's own
   * proxies, so behind a reverse proxy one client's wrong guesses do not lock out everyone else.
   * Default: the hops proxies append (`X-Forwarded-For`, `Forwarded`), walked from the right and
   * believed from a private peer (or `--trusted-proxies`), never a single-address header such as
   * `CF-Connecting-IP` that a proxy may pass on as the client wrote it (a client choosing its key
   * could lock out the admin's address, or never be counted). Give a rule naming the header when
   * your proxy sets (and overwrites) one.
   */
  readonly clientIp?: ClientIpRule;
  /** Where the projects' visits are, for the visit counts of `GET /admin/projects?visits=...`. */
  readonly visits?: VisitStore;
  /** Called after a project was deleted, to delete what other stores keep for it (its webhooks). */
  readonly onProjectDeleted?: (projectId: string) => void | Promise<void>;
  /** Milliseconds since the epoch, for visit counts (default Date.now). */
  readonly clock?: { now(): number };
}

const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' } as const;

// OpenAPI operations of the admin routes (GET /openapi.json lists them with the rest of the API).
const ADMIN = [{ adminSession: [] }];
const object = (required: string[], properties: Record<string, object>) => ({ type: 'object', required, properties });
const jsonContent = (schema: object) => ({ 'application/json': { schema } });
/** The login body's limit: `{"secret": "…"}` with a secret of at most 256 characters, escaped. */
const LOGIN_MAX_BODY_BYTES = 4096;
const CSRF = { name: 'x-csrf-token', in: 'header', required: true, description: 'The session\'s CSRF token (from login or GET /admin/session).', schema: { type: 'string' } };
const SESSION = object(['csrf_token', 'expires'], { csrf_token: { type: 'string' }, expires: { type: ['string', 'null'], format: 'date-time' } });
const TOKEN_INFO = object(['id', 'prefix', 'created', 'revoked'], { id: { type: 'string' }, prefix: { type: 'string' }, created: { type: 'string' }, revoked: { type: ['string', 'null'] } });
const PROJECT_INFO = object(['id', 'name', 'created', 'tokens'], { id: { type: 'string' }, name: { type: 'string' }, created: { type: 'string' }, tokens: { type: 'array', items: TOKEN_INFO } });
const VISIT_SUMMARY = object(['visits', 'test_visits', 'last_visit'], {
  visits: { type: 'integer', description: 'Visits of the project (by the day counts, kept past raw-visit retention); without test visits when visits=without-test.' },
  test_visits: { type: 'integer', description: "Visits by agentwarden's own test agent (\"send a test visit\")." },
  last_visit: {
    type: ['string', 'null'],
    format: 'date-time',
    description: 'The time of the newest visit counted in visits (when it happened, to the millisecond, not when it arrived); null when there is none.',
  },
});
const PROJECT_ID = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const ISSUED_TOKEN = object(['project', 'token', 'token_id'], { project: { type: 'string' }, token: { type: 'string', description: 'Shown only in this response.' }, token_id: { type: 'string' } });
const DOCS = {
  login: {
    summary: 'Logs in with the admin secret; sets the HttpOnly session cookie.',
    security: [],
    requestBody: { required: true, content: jsonContent(object(['secret'], { secret: { type: 'string' } })) },
    responses: {
      '200': { description: 'Logged in.', content: jsonContent(SESSION) },
      ...openApiErrorResponses([400, 401, 403, 405, 413, 415, 429, 500, 503], {
        // No headers: see the description.
        401: {
          description:
            'The admin secret is wrong, or none is set yet (`wrong-admin-secret`; errors[].pointer `/secret`). It comes without a WWW-Authenticate challenge, which RFC 9110 §11.6.1 asks of every 401: ' +
            'the secret is sent in the JSON body, a form login that no registered HTTP authentication scheme describes, and the Bearer challenge of the other admin routes would ask for a token this route does not take.',
        },
        403: 'The Origin header names another site, or an opaque origin ("null") (`forbidden`; errors[].header `Origin`): log in from the dashboard itself.',
        429: 'Too many login attempts from this client address (`rate-limited`).',
      }),
    },
  },
  logout: { summary: 'Ends the session.', security: ADMIN, parameters: [CSRF], responses: { '204': { description: 'Logged out; the cookie is cleared.' }, ...openApiErrorResponses([401, 403, 405, 500]) } },
  session: { summary: 'The session\'s CSRF token and expiry.', security: ADMIN, responses: { '200': { description: 'The session.', content: jsonContent(SESSION) }, ...openApiErrorResponses([401, 405, 500]) } },
  listProjects: {
    summary: 'Every project with its tokens (never the tokens themselves), and with visits= its visit count and last visit.',
    security: ADMIN,
    parameters: [
      {
        name: 'visits',
        in: 'query',
        required: false,
        description: 'Adds each project\'s visit counts: with-test counts every visit, without-test leaves out those of the test agent.',
        schema: { enum: ['with-test', 'without-test'] },
      },
    ],
    responses: {
      '200': {
        description: 'The projects.',
        content: jsonContent(object(['projects'], { projects: { type: 'array', items: { ...PROJECT_INFO, properties: { ...PROJECT_INFO.properties, visits: VISIT_SUMMARY } } } })),
      },
      ...openApiErrorResponses([400, 401, 405, 500, 503]),
    },
  },
  renameProject: {
    summary: 'Renames a project.',
    security: ADMIN,
    parameters: [PROJECT_ID, CSRF],
    requestBody: { required: true, content: jsonContent(object(['name'], { name: { type: 'string', maxLength: 200 } })) },
    responses: { '200': { description: 'Renamed.', content: jsonContent(object(['id', 'name'], { id: { type: 'string' }, name: { type: 'string' } })) }, ...openApiErrorResponses([400, 401, 403, 404, 405, 413, 415, 500, 503]) },
  },
  deleteProject: {
    summary: 'Deletes a project with its tokens, settings, webhooks and visits. Cannot be undone.',
    security: ADMIN,
    parameters: [PROJECT_ID, CSRF],
    responses: { '204': { description: 'Deleted: its tokens get 401 from now on.' }, ...openApiErrorResponses([401, 403, 404, 405, 500, 503]) },
  },
  createProject: {
    summary: 'Creates a project; its first access token is in this response only.',
    security: ADMIN,
    parameters: [CSRF],
    requestBody: { required: true, content: jsonContent(object(['name'], { name: { type: 'string', maxLength: 200 } })) },
    responses: {
      '201': { description: 'Created.', content: jsonContent(object(['id', 'name', 'token', 'token_id'], { id: { type: 'string' }, name: { type: 'string' }, token: { type: 'string' }, token_id: { type: ['string', 'null'] } })) },
      ...openApiErrorResponses([400, 401, 403, 405, 413, 415, 500, 503]),
    },
  },
  issueToken: {
    summary: 'Issues a new token for a project, revoking the others unless revoke_others is false (rotation).',
    security: ADMIN,
    parameters: [CSRF],
    requestBody: { required: true, content: jsonContent(object(['project'], { project: { type: 'string' }, revoke_others: { type: 'boolean', default: true } })) },
    responses: { '201': { description: 'The new token, shown only here.', content: jsonContent(ISSUED_TOKEN) }, ...openApiErrorResponses([400, 401, 403, 404, 405, 413, 415, 500, 503]) },
  },
  revokeToken: {
    summary: 'Revokes one token by id; it gets 401 from the next request on.',
    security: ADMIN,
    parameters: [CSRF],
    requestBody: { required: true, content: jsonContent(object(['token_id'], { token_id: { type: 'string' } })) },
    responses: {
      '200': { description: 'Revoked.', content: jsonContent(object(['token_id', 'revoked'], { token_id: { type: 'string' }, revoked: { const: true } })) },
      ...openApiErrorResponses([400, 401, 403, 404, 405, 413, 415, 500, 503]),
    },
  },
} as const;

function json(status: number, value: unknown, headers: Record<string, string> = {}): ApiResponse {
  return { status, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(value) };
}

/** The route, answering 503 with Retry-After while the project store cannot answer (ClickHouse down) rather than a bare 500. */
function storeRoute(route: Route): Route {
  return {
    ...route,
    async run(context) {
      try {
        return await route.run(context);
      } catch (error) {
        if (!(error instanceof VisitStoreUnavailableError)) throw error;
        return problem('service-unavailable', `The project store cannot answer now (${error.reason}); retry after ${error.retryAfterSeconds} s.`, {
          headers: { 'retry-after': String(error.retryAfterSeconds) },
        });
      }
    },
  };
}

/** The 403 of a login from another site (login CSRF), naming the Origin header. */
function wrongOrigin(detail: string): ApiResponse {
  return problem('forbidden', detail, { errors: [{ pointer: '', header: 'Origin', code: 'cross-origin', message: "must be this server's origin" }] });
}

function header(request: ApiRequest, name: string): string | undefined {
  return headerValue(request.headers, name);
}

/** Whether the browser reached us over https, directly or through a proxy that says so (RFC 7239 §5.4, X-Forwarded-Proto). */
function overHttps(request: ApiRequest): boolean {
  if (header(request, 'x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase() === 'https') return true;
  return /(?:^|[;,\s])proto="?https"?/i.test(header(request, 'forwarded') ?? '');
}

/** The JSON object body, or a problem naming what is wrong with it. */
function objectBody(request: ApiRequest): { ok: true; value: Record<string, unknown> } | { ok: false; response: ApiResponse } {
  // Depth 8 is ample for these flat bodies.
  const parsed = parseJsonBody(request.body, 8);
  if (!parsed.ok) return { ok: false, response: jsonBodyProblem(parsed) };
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, response: problem('validation-failed', 'The body must be a JSON object.', { errors: [{ pointer: '', code: 'type', message: 'must be an object' }] }) };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/** A required non-empty string field of at most `max` characters, without control characters or lone surrogates. */
function stringField(body: Record<string, unknown>, name: string, max: number): { ok: true; value: string } | { ok: false; response: ApiResponse } {
  const value = body[name];
  let error: FieldError | undefined;
  if (value === undefined) error = { pointer: `/${name}`, code: 'required', message: `${name} is required` };
  else if (typeof value !== 'string' || value.trim() === '') error = { pointer: `/${name}`, code: 'type', message: `${name} must be a non-empty string` };
  else if (longerThan(value, max)) error = { pointer: `/${name}`, code: 'max-length', message: `${name} must have at most ${max} characters` };
  else if (hasControlCharacter(value)) error = { pointer: `/${name}`, code: 'control-character', message: `${name} must not contain control characters or line breaks` };
  // A lone surrogate cannot be written as UTF-8: SQLite and JSON readers would store or show U+FFFD instead.
  else if (hasLoneSurrogate(value)) error = { pointer: `/${name}`, code: 'invalid-unicode', message: `${name} must be well-formed Unicode (it holds an unpaired surrogate)` };
  if (error !== undefined) return { ok: false, response: problem('validation-failed', `The field "${name}" is invalid; see errors.`, { errors: [error] }) };
  return { ok: true, value: value as string };
}

// The login limit's default headers: only those a proxy appends to, which a client cannot fill alone.
export const LOGIN_CLIENT_IP_HEADERS: readonly string[] = ['x-forwarded-for', 'forwarded'];

// The peers that are the site's own reverse proxy, whose forwarded Host is believed.
const OWN_NETWORK = new Set(['loopback', 'private', 'cgnat', 'link-local', 'unique-local']);

/**
 * The host the client asked for, as the site's own reverse proxy forwards it (X-Forwarded-Host,
 * or Forwarded's host=) when it rewrote Host (nginx's and Apache's default); undefined for a
 * request that did not come from one. A cross-site page cannot add the header without a CORS
 * preflight, which this server never grants.
 */
function forwardedHost(request: ApiRequest): string | undefined {
  if (request.remoteAddress === undefined || !OWN_NETWORK.has(classifyAddress(request.remoteAddress))) return undefined;
  const forwarded = header(request, 'x-forwarded-host')?.split(',')[0]?.trim();
  if (forwarded !== undefined && forwarded !== '') return forwarded.toLowerCase();
  const element = header(request, 'forwarded')?.split(',')[0];
  const host = element === undefined ? undefined : /(?:^|;)\s*host\s*=\s*"?([^";,\s]+)"?/i.exec(element)?.[1];
  return host?.toLowerCase();
}

/**
 * Creates the admin routes: `POST /admin/login`, `POST /admin/logout`, `GET /admin/session`,
 * `GET|POST /admin/projects`, `PATCH|DELETE /admin/projects/{id}` (rename, delete), `POST /admin/tokens`
 * (rotate) and `POST /admin/token-revocations`.
 * State-changing admin routes need the session's CSRF token (checked by the API handler).
 * @throws {TypeError} when the admin or project store is missing, or `clientIp` is not a rule.
 * @example
 * createApiHandler({ engine, projects: store, visits: store, admin, routes: [createAdminRoutes({ admin, projects: store })] });
 */
export function createAdminRoutes(options: AdminRoutesOptions): RouteTable {
  if (typeof options?.admin?.login !== 'function') throw new TypeError('admin must be an AdminStore from openAdminStore()');
  if (typeof options.projects?.createProject !== 'function') throw new TypeError('projects must be a project store with createProject, listProjects, issueToken and revokeToken');
  const { admin, projects } = options;
  const clientIp = options.clientIp ?? createClientIpRule({ headers: LOGIN_CLIENT_IP_HEADERS });
  if (typeof clientIp !== 'function') throw new TypeError(`clientIp must be a client-IP rule (createClientIpRule()), got ${String(clientIp)}`);
  const clock = options.clock ?? { now: () => Date.now() };
  const cookiePath = options.cookiePath ?? '/';
  if (!cookiePath.startsWith('/') || /[;\s]/.test(cookiePath)) throw new RangeError(`cookiePath must be a path starting with "/", got ${JSON.stringify(cookiePath)}`);

  // HttpOnly: page scripts never see the session; SameSite=Strict: no cross-site request carries it.
  const cookie = (request: ApiRequest, value: string, maxAgeSeconds: number) =>
    `${ADMIN_SESSION_COOKIE}=${value}; Path=${cookiePath}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${options.secureCookies === true || overHttps(request) ? '; Secure' : ''}`;

  const login: Route = {
    auth: 'none',
    openApi: DOCS.login,
    // A JSON body cannot be sent cross-site without a CORS preflight we never grant, so a forged
    // login form cannot post here (login CSRF); the Origin check below is the second lock.
    json: true,
    // A secret of at most 256 characters: read no more before anyone is authenticated.
    maxBodyBytes: LOGIN_MAX_BODY_BYTES,
    async run({ request }) {
      const origin = header(request, 'origin');
      const host = header(request, 'host');
      if (origin !== undefined && origin !== 'null' && host !== undefined) {
        let originHost: string | undefined;
        try {
          originHost = new URL(origin).host;
        } catch {
          originHost = undefined;
        }
        if (originHost !== host && originHost !== forwardedHost(request)) return wrongOrigin('Log in from the dashboard itself: the Origin does not match this server.');
      } else if (origin === 'null') {
        return wrongOrigin('Log in from the dashboard itself: an opaque Origin is refused.');
      }
      const body = objectBody(request);
      if (!body.ok) return body.response;
      const secret = stringField(body.value, 'secret', 256);
      if (!secret.ok) return secret.response;
      // Limited per client: the socket's address, or behind the site's own proxy the one it forwards.
      const client = clientAddressFromPeer(clientIp, normalizeHeaders(request.headers), request.remoteAddress);
      const result = await admin.login(secret.value, client ?? 'unknown');
      if (!result.ok) {
        if (result.reason === 'rate-limited') {
          return problem('rate-limited', `Too many login attempts from this address; retry after ${result.retryAfterSeconds} s.`, { headers: { 'retry-after': String(result.retryAfterSeconds) } });
        }
        // One answer for a wrong secret and for none set yet: the response tells an attacker nothing.
        // No WWW-Authenticate: no HTTP authentication scheme describes a secret in a JSON body (the OpenAPI document says so).
        return problem('wrong-admin-secret', 'The admin secret is wrong. Run "agentwarden admin reset-password" on the server to set a new one.', {
          errors: [{ pointer: '/secret', code: 'wrong', message: 'is not the admin secret' }],
        });
      }
      return json(200, { csrf_token: result.session.csrfToken, expires: new Date(result.expires).toISOString() }, { 'set-cookie': cookie(request, result.cookieValue, result.maxAgeSeconds) });
    },
  };

  return {
    '/admin/login': { POST: login },
    '/admin/logout': {
      POST: {
        auth: 'admin',
        json: false,
        openApi: DOCS.logout,
        run({ request, admin: session }) {
          if (session !== undefined) admin.logout(session.id);
          return { status: 204, headers: { 'cache-control': 'no-store', 'set-cookie': cookie(request, '', 0) } };
        },
      },
    },
    '/admin/session': {
      GET: {
        auth: 'admin',
        json: false,
        openApi: DOCS.session,
        async run({ request, admin: session }) {
          const found = await admin.authenticate(request);
          return json(200, { csrf_token: session!.csrfToken, expires: found === undefined ? null : new Date(found.expires).toISOString() });
        },
      },
    },
    '/admin/projects': {
      GET: storeRoute({
        auth: 'admin',
        json: false,
        openApi: DOCS.listProjects,
        async run({ query }) {
          const list = await projects.listProjects();
          const mode = query.get('visits');
          if (mode === null) return json(200, { projects: list });
          if (mode !== 'with-test' && mode !== 'without-test') {
            return problem('invalid-query', 'Query parameter "visits": visits must be with-test or without-test', { errors: [{ pointer: '', parameter: 'visits', code: 'enum', message: 'visits must be with-test or without-test' }] });
          }
          const visits = options.visits;
          if (visits === undefined) return problem('not-found', 'This server keeps no visits to count.');
          const now = clock.now();
          const withVisits = await Promise.all(
            list.map(async (project) => {
              const summary = await summarizeProjectVisits(visits, project.id, { now, excludeTestVisits: mode === 'without-test' });
              return { ...project, visits: { ...summary, last_visit: summary.last_visit === null ? null : new Date(summary.last_visit).toISOString() } };
            }),
          );
          return json(200, { projects: withVisits });
        },
      }),
      POST: storeRoute({
        auth: 'admin',
        json: true,
        openApi: DOCS.createProject,
        async run({ request }) {
          const body = objectBody(request);
          if (!body.ok) return body.response;
          const name = stringField(body.value, 'name', 200);
          if (!name.ok) return name.response;
          const created = await projects.createProject(name.value.trim());
          const tokenId = (await projects.listProjects()).find((p) => p.id === created.id)?.tokens[0]?.id ?? null;
          return { ...json(201, { id: created.id, name: created.name, token: created.token, token_id: tokenId }), projectId: created.id };
        },
      }),
    },
    '/admin/projects/{id}': {
      PATCH: storeRoute({
        auth: 'admin',
        json: true,
        openApi: DOCS.renameProject,
        async run({ request, params }) {
          const body = objectBody(request);
          if (!body.ok) return body.response;
          const name = stringField(body.value, 'name', 200);
          if (!name.ok) return name.response;
          const projectId = params['id']!;
          if (!(await projects.renameProject(projectId, name.value.trim()))) return problem('not-found', `There is no project ${JSON.stringify(projectId)}.`);
          return { ...json(200, { id: projectId, name: name.value.trim() }), projectId };
        },
      }),
      DELETE: storeRoute({
        auth: 'admin',
        json: false,
        openApi: DOCS.deleteProject,
        async run({ params }) {
          const projectId = params['id']!;
          if (!(await projects.deleteProject(projectId))) return problem('not-found', `There is no project ${JSON.stringify(projectId)}.`);
          await options.onProjectDeleted?.(projectId);
          return { status: 204, headers: { 'cache-control': 'no-store' }, projectId };
        },
      }),
    },
    '/admin/tokens': {
      POST: storeRoute({
        auth: 'admin',
        json: true,
        openApi: DOCS.issueToken,
        async run({ request }) {
          const body = objectBody(request);
          if (!body.ok) return body.response;
          const projectId = stringField(body.value, 'project', 200);
          if (!projectId.ok) return projectId.response;
          const revokeOthers = body.value['revoke_others'] ?? true;
          if (typeof revokeOthers !== 'boolean') {
            return problem('validation-failed', 'The field "revoke_others" is invalid; see errors.', { errors: [{ pointer: '/revoke_others', code: 'type', message: 'revoke_others must be a boolean' }] });
          }
          if (!(await projects.listProjects()).some((p) => p.id === projectId.value)) return problem('not-found', `There is no project ${JSON.stringify(projectId.value)}.`);
          const { tokenId, token } = await projects.issueToken(projectId.value, { revokeOthers });
          return { ...json(201, { project: projectId.value, token, token_id: tokenId }), projectId: projectId.value };
        },
      }),
    },
    '/admin/token-revocations': {
      POST: storeRoute({
        auth: 'admin',
        json: true,
        openApi: DOCS.revokeToken,
        async run({ request }) {
          const body = objectBody(request);
          if (!body.ok) return body.response;
          const tokenId = stringField(body.value, 'token_id', 200);
          if (!tokenId.ok) return tokenId.response;
          if (!(await projects.revokeToken({ tokenId: tokenId.value }))) return problem('not-found', `There is no live token ${JSON.stringify(tokenId.value)}.`);
          return json(200, { token_id: tokenId.value, revoked: true });
        },
      }),
    },
  };
}
