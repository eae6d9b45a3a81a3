// The admin API as the dashboard uses it, driven through createApiHandler in process: 401 without
// a session, 403 without the CSRF token, login cookies, projects, token rotation and revocation,
// and the dashboard's static files with their security headers.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAdminRoutes } from '../../../src/adapters/node/admin-routes.js';
import { openAdminStore, type AdminStore } from '../../../src/adapters/node/admin-store.js';
import { createWebRoutes } from '../../../src/adapters/node/web-routes.js';
import { hashTokenNode, openSqliteStore, type SqliteStore } from '../../../src/adapters/node/index.js';
import { createApiHandler, createEngine, createMemoryVisitStore, type ApiHandler, type ApiRequest } from '../../../src/index.js';
import { TEST_CATALOG } from '../../server/helpers.js';
import { checkResponse, type CheckedResponse } from '../../server/schema-check.js';

let dir: string;
let store: SqliteStore;
let admin: AdminStore;
let handle: ApiHandler;
let secret: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agentwarden-admin-routes-'));
  store = openSqliteStore({ dataDir: dir });
  admin = openAdminStore({ dataDir: dir, scrypt: { N: 1024, r: 8, p: 1 }, loginLimit: { burst: 5, refillSeconds: 60 }, findProject: (id) => store.listProjects().find((p) => p.id === id) });
  secret = (await admin.ensureSecret())!;
  handle = createApiHandler({
    engine: createEngine({ catalog: TEST_CATALOG }),
    projects: store,
    visits: createMemoryVisitStore(),
    hashToken: hashTokenNode,
    rateLimit: false,
    admin,
    routes: [createAdminRoutes({ admin, projects: store })],
  });
});

afterEach(() => {
  admin.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const enc = new TextEncoder();
function call(method: string, path: string, options: { body?: unknown; headers?: Record<string, string>; remoteAddress?: string } = {}) {
  const request: ApiRequest = {
    method,
    path,
    headers: { ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
    body: options.body === undefined ? undefined : enc.encode(JSON.stringify(options.body)),
    remoteAddress: options.remoteAddress ?? '127.0.0.1',
  };
  return handle(request).then((response) => ({
    ...response,
    json: typeof response.body === 'string' && /json/.test(response.headers['content-type'] ?? '') ? JSON.parse(response.body) : undefined,
  }));
}

async function login(headers: Record<string, string> = {}): Promise<{ cookie: string; csrf: string; setCookie: string }> {
  const response = await call('POST', '/admin/login', { body: { secret }, headers });
  expect(response.status).toBe(200);
  const setCookie = response.headers['set-cookie']!;
  return { cookie: setCookie.split(';')[0]!, csrf: response.json.csrf_token, setCookie };
}

describe('admin login', () => {
  it('sets an HttpOnly, SameSite=Strict session cookie, Secure only over https', async () => {
    const plain = await login();
    expect(plain.setCookie).toMatch(/^aw_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/);
    const tls = await login({ 'x-forwarded-proto': 'https' });
    expect(tls.setCookie).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
    expect(tls.csrf).not.toBe(plain.csrf);
  });

  it('answers 401 for a wrong secret and 429 with Retry-After past the per-address limit', async () => {
    for (let i = 0; i < 5; i++) expect((await call('POST', '/admin/login', { body: { secret: 'wrong' }, remoteAddress: '203.0.113.5' })).status).toBe(401);
    const limited = await call('POST', '/admin/login', { body: { secret }, remoteAddress: '203.0.113.5' });
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('60');
    expect((await call('POST', '/admin/login', { body: { secret }, remoteAddress: '203.0.113.6' })).status).toBe(200);
  });

  it('says what a wrong secret is, and the document says what that 401 carries: no challenge, since no scheme describes a form login', async () => {
    const wrong = await call('POST', '/admin/login', { body: { secret: 'wrong' }, remoteAddress: '203.0.113.7' });
    expect(wrong.status).toBe(401);
    expect(wrong.json).toMatchObject({ type: 'urn:agentwarden:problem:wrong-admin-secret', title: 'Wrong admin secret', status: 401, errors: [{ pointer: '/secret', code: 'wrong', message: 'is not the admin secret' }] });
    expect(wrong.headers['www-authenticate']).toBeUndefined();
    const doc = (await call('GET', '/openapi.json')).json;
    expect(checkResponse(doc, '/admin/login', 'post', wrong)).toEqual([]);
    const documented = doc.paths['/admin/login'].post.responses['401'];
    expect(documented.headers).toBeUndefined();
    expect(documented.description).toContain('wrong-admin-secret');
    expect(documented.description).not.toMatch(/token \(with WWW-Authenticate/);
  });

  it('refuses a login from another origin (login CSRF) and a form-encoded body', async () => {
    const cross = await call('POST', '/admin/login', { body: { secret }, headers: { origin: 'https://evil.example', host: 'localhost:8080' } });
    expect(cross.status).toBe(403);
    expect(cross.json.errors).toEqual([{ pointer: '', header: 'Origin', code: 'cross-origin', message: "must be this server's origin" }]);
    const same = await call('POST', '/admin/login', { body: { secret }, headers: { origin: 'http://localhost:8080', host: 'localhost:8080' } });
    expect(same.status).toBe(200);
    const form = await handle({ method: 'POST', path: '/admin/login', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: enc.encode(`secret=${secret}`) });
    expect(form.status).toBe(415);
  });

  it('logout ends the session and clears the cookie', async () => {
    const { cookie, csrf } = await login();
    const out = await call('POST', '/admin/logout', { headers: { cookie, 'x-csrf-token': csrf } });
    expect(out.status).toBe(204);
    expect(out.headers['set-cookie']).toMatch(/^aw_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict/);
    expect((await call('GET', '/admin/session', { headers: { cookie } })).status).toBe(401);
  });
});

describe('admin routes', () => {
  it('answer 401 without a session and with an unknown or expired one', async () => {
    for (const [method, path] of [['GET', '/admin/projects'], ['GET', '/admin/session'], ['POST', '/admin/projects'], ['POST', '/admin/tokens'], ['POST', '/admin/token-revocations'], ['POST', '/admin/logout']] as const) {
      const response = await call(method, path, { body: method === 'POST' ? {} : undefined });
      expect(response.status, `${method} ${path}`).toBe(401);
    }
    expect((await call('GET', '/admin/projects', { headers: { cookie: 'aw_session=forged' } })).status).toBe(401);
    // Their advice is to log in, not to send a project token (which these routes do not take).
    const forged = await call('GET', '/admin/session', { headers: { cookie: 'aw_session=forged' } });
    expect(JSON.parse(forged.body as string).detail).toMatch(/log in/i);
    expect(JSON.parse(forged.body as string).detail).not.toMatch(/Bearer/);
    // A route a project token opens as well names the Authorization header it lacks.
    const read = await call('GET', '/visits?project=prj_x');
    expect(read.status).toBe(401);
    expect(read.json.errors).toEqual([{ pointer: '', header: 'Authorization', code: 'missing', message: 'is required: Bearer <token>' }]);
  });

  it('answer 403 to a state-changing request without the session\'s CSRF token', async () => {
    const { cookie, csrf } = await login();
    const other = await login();
    const attempts: Record<string, string>[] = [{ cookie }, { cookie, 'x-csrf-token': '' }, { cookie, 'x-csrf-token': other.csrf }, { cookie, 'x-csrf-token': `${csrf}x` }];
    for (const headers of attempts) {
      const response = await call('POST', '/admin/projects', { body: { name: 'x' }, headers });
      expect(response.status).toBe(403);
      expect(response.json.type).toBe('urn:agentwarden:problem:forbidden');
      // It names the header at fault, as every 4xx names its field.
      const error = headers['x-csrf-token'] === undefined ? { code: 'required', message: "is required: the session's CSRF token" } : { code: 'mismatch', message: "must be the session's CSRF token" };
      expect(response.json.errors).toEqual([{ pointer: '', header: 'X-CSRF-Token', ...error }]);
    }
    expect(store.listProjects()).toHaveLength(0);
    // Reads need no CSRF token, and the session answers its own.
    const session = await call('GET', '/admin/session', { headers: { cookie } });
    expect(session.status).toBe(200);
    expect(session.json.csrf_token).toBe(csrf);
  });

  it('create a project whose token is shown once and works at once', async () => {
    const { cookie, csrf } = await login();
    const created = await call('POST', '/admin/projects', { body: { name: 'example.com' }, headers: { cookie, 'x-csrf-token': csrf } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: 'example.com', token: expect.stringMatching(/^aw_/), token_id: expect.stringMatching(/^tok_/) });
    const listed = await call('GET', '/admin/projects', { headers: { cookie } });
    expect(listed.json.projects).toHaveLength(1);
    expect(JSON.stringify(listed.json)).not.toContain(created.json.token);
    expect(listed.json.projects[0].tokens[0]).toMatchObject({ prefix: created.json.token.slice(0, 7), revoked: null });
    const identify = await call('POST', '/agent-identifications', { body: { request_headers: { 'user-agent': 'GPTBot/1.2' } }, headers: { authorization: `Bearer ${created.json.token}` } });
    expect(identify.status).toBe(200);
    const invalid = await call('POST', '/admin/projects', { body: { name: '  ' }, headers: { cookie, 'x-csrf-token': csrf } });
    expect(invalid.status).toBe(400);
    expect(invalid.json.errors[0]).toMatchObject({ pointer: '/name', code: 'type' });
  });

  it('rotate a token (the old one gets 401 at once) and revoke one by id', async () => {
    const { cookie, csrf } = await login();
    const headers = { cookie, 'x-csrf-token': csrf };
    const created = (await call('POST', '/admin/projects', { body: { name: 'example.com' }, headers })).json;
    const identify = (token: string) => call('POST', '/agent-identifications', { body: { request_headers: {} }, headers: { authorization: `Bearer ${token}` } });
    expect((await identify(created.token)).status).toBe(200);
    const rotated = await call('POST', '/admin/tokens', { body: { project: created.id }, headers });
    expect(rotated.status).toBe(201);
    expect((await identify(created.token)).status).toBe(401);
    expect((await identify(rotated.json.token)).status).toBe(200);
    const second = (await call('POST', '/admin/tokens', { body: { project: created.id, revoke_others: false }, headers })).json;
    expect((await identify(rotated.json.token)).status).toBe(200);
    const revoked = await call('POST', '/admin/token-revocations', { body: { token_id: second.token_id }, headers });
    expect(revoked.status).toBe(200);
    expect((await identify(second.token)).status).toBe(401);
    expect((await identify(rotated.json.token)).status).toBe(200);
    expect((await call('POST', '/admin/token-revocations', { body: { token_id: second.token_id }, headers })).status).toBe(404);
    expect((await call('POST', '/admin/tokens', { body: { project: 'prj_nope' }, headers })).status).toBe(404);
  });

  it('let an admin session preview robots.txt for a project (with the CSRF token)', async () => {
    const { cookie, csrf } = await login();
    const project = store.createProject('example.com');
    const body = { agent_types: ['AI Data Scraper'] };
    expect((await call('POST', `/robots-txts?project=${project.id}`, { body, headers: { cookie } })).status).toBe(403);
    const preview = await call('POST', `/robots-txts?project=${project.id}`, { body, headers: { cookie, 'x-csrf-token': csrf } });
    expect(preview.status).toBe(200);
    expect(preview.body).toContain('User-agent: GPTBot\nDisallow: /');
  });

  it('are answered as the document says on the routes a token or a session opens: the CSRF 403, the project 400 and 404', async () => {
    const { cookie, csrf } = await login();
    const project = store.createProject('example.com');
    const doc = (await call('GET', '/openapi.json')).json;
    for (const [method, path, body] of [
      ['POST', '/robots-txts', { agent_types: ['AI Data Scraper'] }],
      ['PUT', '/project-settings', { robots: null }],
      ['POST', '/test-visits', {}],
    ] as const) {
      const operation = doc.paths[path][method.toLowerCase()];
      expect(operation.security, `${method} ${path}`).toEqual([{ bearer: [] }, { adminSession: [] }]);
      const forbidden = await call(method, `${path}?project=${project.id}`, { body, headers: { cookie } });
      expect(forbidden.status).toBe(403);
      expect(forbidden.json.errors).toEqual([expect.objectContaining({ header: 'X-CSRF-Token', code: 'required' })]);
      expect(operation.responses['403'].description, `${method} ${path}`).toContain('X-CSRF-Token');
      expect(checkResponse(doc, path, method.toLowerCase(), forbidden)).toEqual([]);
      // With the CSRF token, a session must name a project that exists.
      const unnamed = await call(method, path, { body, headers: { cookie, 'x-csrf-token': csrf } });
      expect(unnamed.status).toBe(400);
      expect(checkResponse(doc, path, method.toLowerCase(), unnamed)).toEqual([]);
      const unknown = await call(method, `${path}?project=prj_nope`, { body, headers: { cookie, 'x-csrf-token': csrf } });
      expect(unknown.status).toBe(404);
      expect(checkResponse(doc, path, method.toLowerCase(), unknown)).toEqual([]);
    }
  });
});

describe('admin routes in the OpenAPI document', () => {
  it('are listed, and real admin responses match their documented schemas', async () => {
    const doc = (await call('GET', '/openapi.json')).json;
    for (const [path, method] of [
      ['/admin/login', 'post'],
      ['/admin/logout', 'post'],
      ['/admin/session', 'get'],
      ['/admin/projects', 'get'],
      ['/admin/projects', 'post'],
      ['/admin/tokens', 'post'],
      ['/admin/token-revocations', 'post'],
    ] as const) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
    expect(doc.components.securitySchemes.adminSession).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'aw_session' });
    // The dashboard's static pages are not API operations.
    expect(doc.paths['/ui/']).toBeUndefined();

    const session = await login();
    const headers = { cookie: session.cookie, 'x-csrf-token': session.csrf };
    const check = (path: string, method: string, response: CheckedResponse) => expect(checkResponse(doc, path, method, response)).toEqual([]);
    check('/admin/session', 'get', await call('GET', '/admin/session', { headers }));
    const created = await call('POST', '/admin/projects', { body: { name: 'docs.example' }, headers });
    check('/admin/projects', 'post', created);
    check('/admin/projects', 'get', await call('GET', '/admin/projects', { headers }));
    const issued = await call('POST', '/admin/tokens', { body: { project: created.json.id, revoke_others: false }, headers });
    check('/admin/tokens', 'post', issued);
    check('/admin/token-revocations', 'post', await call('POST', '/admin/token-revocations', { body: { token_id: issued.json.token_id }, headers }));
    const wrong = await call('POST', '/admin/projects', { body: { name: 7 }, headers });
    expect(wrong.status).toBe(400);
    expect(doc.paths['/admin/projects'].post.responses['400']).toBeDefined();
  });
});

describe('dashboard files', () => {
  it('are served with their types, ETags, a strict CSP and no framing; / redirects to /ui/', async () => {
    const web = mkdtempSync(join(tmpdir(), 'agentwarden-web-'));
    try {
      writeFileSync(join(web, 'index.html'), '<!doctype html><title>t</title>');
      writeFileSync(join(web, 'app.js'), 'console.log(1)');
      writeFileSync(join(web, 'app.css'), 'body{}');
      const serve = createApiHandler({ engine: createEngine({ catalog: TEST_CATALOG }), projects: store, visits: createMemoryVisitStore(), routes: [createWebRoutes({ dir: web, basePath: '/aw' })], basePath: '/aw' });
      const page = await serve({ method: 'GET', path: '/aw/ui/', headers: {} });
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.headers['content-security-policy']).toContain("script-src 'self'");
      expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
      expect(page.headers['x-frame-options']).toBe('DENY');
      expect((await serve({ method: 'GET', path: '/aw/ui/app.js', headers: {} })).headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect((await serve({ method: 'GET', path: '/aw/ui/app.css', headers: {} })).headers['content-type']).toBe('text/css; charset=utf-8');
      const script = await serve({ method: 'GET', path: '/aw/ui/app.js', headers: {} });
      expect(script.headers['etag']).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
      expect((await serve({ method: 'GET', path: '/aw/ui/app.js', headers: { 'if-none-match': script.headers['etag']! } })).status).toBe(304);
      expect(await serve({ method: 'GET', path: '/aw/', headers: {} })).toMatchObject({ status: 302, headers: { location: '/aw/ui/' } });
      expect(await serve({ method: 'GET', path: '/aw/ui', headers: {} })).toMatchObject({ status: 302, headers: { location: '/aw/ui/' } });
    } finally {
      rmSync(web, { recursive: true, force: true });
    }
  });

  it('refuse to start without a built file', () => {
    expect(() => createWebRoutes({ dir: join(tmpdir(), 'agentwarden-no-such-dir') })).toThrow(/index.html is missing: build the dashboard/);
  });
});
