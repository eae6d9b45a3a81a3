// Alerts through the admin API over SQLite, delivering to a real receiver on loopback: a webhook's
// secret is shown once (and stored encrypted), a new agent's first visit arrives signed, "send
// test" and the delivery log, URL rules (https; http only to loopback when allowed; no private
// addresses, no control characters or lone surrogates), deleting a webhook, and a deleted project
// taking its webhooks along.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createAdminRoutes,
  createNodeAlerts,
  createWebhookRoutes,
  hashTokenNode,
  openAdminStore,
  openSqliteStore,
  openWebhookStore,
  webhookUrlProblem,
  type AdminStore,
  type SqliteStore,
  type WebhookStore,
} from '../../../src/adapters/node/index.js';
import { createApiHandler, createEngine, type AlertService, type ApiHandler } from '../../../src/index.js';
import { adminSession, apiCaller } from '../../helpers/admin-api.js';
import { checkResponse } from '../../server/schema-check.js';
import { independentlyVerified, startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.js';

const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const CLAUDEBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';

let dir: string;
let store: SqliteStore;
let admin: AdminStore;
let webhooks: WebhookStore;
let alerts: AlertService;
let handle: ApiHandler;
let receiver: WebhookReceiver;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agentwarden-webhooks-'));
  store = openSqliteStore({ dataDir: dir });
  admin = openAdminStore({ dataDir: dir, scrypt: { N: 1024, r: 8, p: 1 }, findProject: (id) => store.listProjects().find((p) => p.id === id) });
  webhooks = openWebhookStore({ dataDir: dir });
  receiver = await startWebhookReceiver();
  const engine = createEngine();
  const findProject = (id: string) => store.listProjects().find((p) => p.id === id);
  alerts = createNodeAlerts({ webhooks, visits: store, settings: store, catalog: engine.catalog, findProject, allowLoopback: true });
  await alerts.start();
  handle = createApiHandler({
    engine,
    projects: store,
    visits: store,
    settings: store,
    hashToken: hashTokenNode,
    rateLimit: false,
    admin,
    routes: [
      createAdminRoutes({ admin, projects: store, visits: store, onProjectDeleted: async (id) => { webhooks.deleteProject(id); await alerts.webhookRemoved(id); } }),
      createWebhookRoutes({ webhooks, alerts, findProject, urlProblem: (url) => webhookUrlProblem(url, { allowLoopback: true }) }),
    ],
  });
});

afterEach(async () => {
  alerts.close();
  webhooks.close();
  admin.close();
  store.close();
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = apiCaller(() => handle);
const session = () => adminSession(admin, call);
const visit = (ua: string, path = '/') => ({ request_path: path, request_method: 'GET', request_headers: { 'user-agent': ua } });

describe('webhooks in the admin API', () => {
  it('deliver a signed agent.first_visit for a new agent only, to a real receiver; the secret is shown once and stored encrypted', async () => {
    const headers = await session();
    const project = store.createProject('example.com');
    const auth = { authorization: `Bearer ${project.token}` };
    // GPTBot visited before the webhook existed: it is known, not new.
    expect((await call('POST', '/visits', { body: [visit(GPTBOT)], headers: auth })).status).toBe(202);

    const created = await call('POST', `/admin/projects/${project.id}/webhooks`, { body: { url: receiver.url, events: ['agent.first_visit', 'robots.violation'] }, headers });
    expect(created.status).toBe(201);
    const secret: string = created.json.secret;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const listed = await call('GET', `/admin/projects/${project.id}/webhooks`, { headers });
    expect(listed.json.webhooks).toEqual([{ id: created.json.id, url: receiver.url, events: ['agent.first_visit', 'robots.violation'], created: created.json.created, latest_delivery: null }]);
    expect(listed.json.rules['visits.spoofed_rise']).toContain('At least 10 visits failing verification within 10 minutes');
    // Never again in clear: not in the listing, not in the database file, whose key lives in its own owner-only file.
    expect(JSON.stringify(listed.json)).not.toContain(secret);
    const db = new Database(join(dir, 'agentwarden.db'), { readonly: true });
    const stored = db.prepare<[], { secret: string }>('SELECT secret FROM webhooks').get()!.secret;
    db.close();
    expect(stored).not.toContain(secret.slice(6));
    expect(stored).toMatch(/^v1\./);
    expect(readFileSync(join(dir, 'agentwarden.db')).includes(Buffer.from(secret.slice(6)))).toBe(false);
    expect(statSync(join(dir, 'webhook-secrets.key')).mode & 0o777).toBe(0o600);

    expect((await call('POST', '/visits', { body: [visit(GPTBOT, '/again'), visit(CLAUDEBOT, '/docs'), visit(CLAUDEBOT, '/more')], headers: auth })).status).toBe(202);
    await alerts.idle();
    const [delivered] = await receiver.waitFor(1);
    expect(receiver.received).toHaveLength(1);
    expect(delivered!.headers['agentwarden-event']).toBe('agent.first_visit');
    expect(independentlyVerified(secret, delivered!.headers['agentwarden-signature'], delivered!.body)).toBe(true);
    // The example the settings page shows verifies it too, and refuses a changed body.
    const example: string = listed.json.signature.example;
    const verifyExample = new Function('createHmac', 'timingSafeEqual', 'Buffer', `${example.replace(/^import .*$/m, '')}\nreturn verifyAgentwarden;`)(createHmac, timingSafeEqual, Buffer);
    expect(verifyExample(secret, delivered!.headers['agentwarden-signature'], delivered!.body)).toBe(true);
    expect(verifyExample(secret, delivered!.headers['agentwarden-signature'], `${delivered!.body} `)).toBe(false);
    const event = JSON.parse(delivered!.body);
    expect(event).toMatchObject({ type: 'agent.first_visit', project: { id: project.id, name: 'example.com' }, data: { agent: { id: 'claudebot', name: 'ClaudeBot', operator: 'Anthropic' }, visit: { request_path: '/docs' } } });

    const log = await call('GET', `/admin/projects/${project.id}/webhooks/${created.json.id}/deliveries`, { headers });
    expect(log.json.deliveries).toHaveLength(1);
    expect(log.json.deliveries[0]).toMatchObject({ event_type: 'agent.first_visit', event_id: event.id, state: 'delivered', attempts: 1, last_status: 200, last_error: null });
    const doc = (await call('GET', '/openapi.json')).json;
    expect(checkResponse(doc, '/admin/projects/{id}/webhooks/{webhook}/deliveries', 'get', log)).toEqual([]);
    expect(checkResponse(doc, '/admin/projects/{id}/webhooks', 'post', created)).toEqual([]);
    // The listing, now with a latest delivery, and the rules, signature and retries it states.
    expect(checkResponse(doc, '/admin/projects/{id}/webhooks', 'get', listed)).toEqual([]);
    expect(checkResponse(doc, '/admin/projects/{id}/webhooks', 'get', await call('GET', `/admin/projects/${project.id}/webhooks`, { headers }))).toEqual([]);
  });

  it('deliver robots.violation when an agent fetches a path the saved rules disallow for it', async () => {
    const headers = await session();
    const project = store.createProject('example.com');
    const auth = { authorization: `Bearer ${project.token}` };
    await call('PUT', '/project-settings', { body: { robots: { agent_types: ['AI Data Scraper'], disallow: ['/private/'] } }, headers: auth });
    await call('POST', '/visits', { body: [visit(GPTBOT, '/public')], headers: auth });
    const created = (await call('POST', `/admin/projects/${project.id}/webhooks`, { body: { url: receiver.url, events: ['robots.violation'] }, headers })).json;
    await call('POST', '/visits', { body: [visit(GPTBOT, '/public/a'), visit(GPTBOT, '/private/report')], headers: auth });
    await alerts.idle();
    const [violation] = await receiver.waitFor(1);
    expect(receiver.received).toHaveLength(1);
    expect(violation!.headers['agentwarden-event']).toBe('robots.violation');
    expect(independentlyVerified(created.secret, violation!.headers['agentwarden-signature'], violation!.body)).toBe(true);
    expect(JSON.parse(violation!.body)).toMatchObject({ type: 'robots.violation', data: { agent: { id: 'gptbot' }, path: '/private/report', rule: 'Disallow: /private/' } });
  });

  it('send a test event on demand and log a failing receiver with its status', async () => {
    const headers = await session();
    const project = store.createProject('example.com');
    const created = (await call('POST', `/admin/projects/${project.id}/webhooks`, { body: { url: receiver.url, events: ['visits.spoofed_rise'] }, headers })).json;
    const test = await call('POST', `/admin/projects/${project.id}/webhooks/${created.id}/tests`, { headers });
    expect(test.status).toBe(200);
    expect(test.json.delivery).toMatchObject({ event_type: 'webhook.test', state: 'delivered', attempts: 1, last_status: 200 });
    expect(independentlyVerified(created.secret, receiver.received[0]!.headers['agentwarden-signature'], receiver.received[0]!.body)).toBe(true);
    receiver.script(500);
    const failing = await call('POST', `/admin/projects/${project.id}/webhooks/${created.id}/tests`, { headers });
    expect(failing.json.delivery).toMatchObject({ state: 'pending', attempts: 1, last_status: 500, last_error: 'answered 500' });
    expect(Date.parse(failing.json.delivery.next_attempt) - Date.parse(failing.json.delivery.last_attempt)).toBeGreaterThanOrEqual(8000);
    const listed = (await call('GET', `/admin/projects/${project.id}/webhooks`, { headers })).json;
    expect(listed.webhooks[0].latest_delivery).toMatchObject({ state: 'pending', last_status: 500 });
    expect(webhooks.pending()).toHaveLength(1);
    // Without the CSRF token nothing is sent.
    expect((await call('POST', `/admin/projects/${project.id}/webhooks/${created.id}/tests`, { headers: { cookie: headers.cookie } })).status).toBe(403);
    expect((await call('POST', `/admin/projects/${project.id}/webhooks/whk_nope/tests`, { headers })).status).toBe(404);
  });

  it('refuse URLs the sender would refuse, and bad event lists, naming the field', async () => {
    const headers = await session();
    const project = store.createProject('example.com');
    const create = (body: unknown) => call('POST', `/admin/projects/${project.id}/webhooks`, { body, headers });
    for (const url of ['http://hooks.example.com/x', 'https://10.0.0.7/x', 'https://169.254.169.254/x', 'https://[::ffff:192.168.1.1]/x', 'https://user:pw@hooks.example.com/x', 'ftp://hooks.example.com/x', 'http://192.168.1.5/x', 'not a url']) {
      const refused = await create({ url, events: ['agent.first_visit'] });
      expect(refused.status, url).toBe(400);
      expect(refused.json.errors[0], url).toMatchObject({ pointer: '/url', code: 'refused' });
    }
    expect((await create({ url: 'https://hooks.example.com/x', events: [] })).json.errors[0].pointer).toBe('/events');
    expect((await create({ url: 'https://hooks.example.com/x', events: ['agent.first_visit', 'nope'] })).json.errors[0].pointer).toBe('/events/1');
    expect((await create({ events: ['agent.first_visit'] })).json.errors[0]).toMatchObject({ pointer: '/url', code: 'required' });
    expect((await create({ url: 'https://hooks.example.com/x', events: ['agent.first_visit'] })).status).toBe(201);
    // The same URL again would deliver every alert twice.
    const twice = await create({ url: 'https://hooks.example.com/x', events: ['robots.violation'] });
    expect(twice.status).toBe(400);
    expect(twice.json.errors[0]).toMatchObject({ pointer: '/url', code: 'duplicate' });
    expect((await call('POST', '/admin/projects/prj_nope/webhooks', { body: { url: 'https://hooks.example.com/x', events: ['agent.first_visit'] }, headers })).status).toBe(404);
    // Without --webhooks-allow-loopback even the loopback receiver is refused.
    expect(webhookUrlProblem(receiver.url)).toMatch(/not https/);
    expect(webhookUrlProblem('https://127.0.0.1/x')).toMatch(/loopback/);
    expect(webhookUrlProblem('https://hooks.example.com/x')).toBeUndefined();
  });

  it('refuse URLs with control characters or lone surrogates (the URL parser would drop CR/LF and tabs, storing one URL and delivering to another)', async () => {
    const headers = await session();
    const project = store.createProject('example.com');
    const create = (body: unknown) => call('POST', `/admin/projects/${project.id}/webhooks`, { body, headers });
    for (const url of ['https://hooks.example.com/\r\nX: y', 'https://hooks.example.com/a\tb', 'https://hooks.example.com/\u0000', 'https://hooks.example.com/\u007f', 'https://hooks.example.com/\u0085', 'https://hooks.example.com/\u2028', '\nhttps://hooks.example.com/x']) {
      const refused = await create({ url, events: ['agent.first_visit'] });
      expect(refused.status, JSON.stringify(url)).toBe(400);
      expect(refused.headers['content-type']).toBe('application/problem+json');
      expect(refused.json.errors, JSON.stringify(url)).toEqual([expect.objectContaining({ pointer: '/url', code: 'control-character' })]);
    }
    for (const url of ['https://hooks.example.com/\ud800', 'https://hooks.example.com/\udc00x']) {
      const refused = await create({ url, events: ['agent.first_visit'] });
      expect(refused.status, JSON.stringify(url)).toBe(400);
      expect(refused.json.errors, JSON.stringify(url)).toEqual([expect.objectContaining({ pointer: '/url', code: 'invalid-unicode' })]);
    }
    // Event names are a closed list: a name with a line break is not among them.
    expect((await create({ url: 'https://hooks.example.com/x', events: ['agent.first_visit\r\n'] })).json.errors[0]).toMatchObject({ pointer: '/events/0', code: 'enum' });
    expect(webhooks.list(project.id)).toEqual([]);
    // Any other caller of the store is refused too.
    expect(() => webhooks.create(project.id, 'https://hooks.example.com/\r\nX: y', ['agent.first_visit'])).toThrow(RangeError);
    expect(() => webhooks.create(project.id, 'https://hooks.example.com/\ud800', ['agent.first_visit'])).toThrow(RangeError);
    // A well-formed non-ASCII URL is kept as given.
    const ok = await create({ url: 'https://hooks.example.com/caf\u00e9/\ud83d\ude00', events: ['agent.first_visit'] });
    expect(ok.status).toBe(201);
    expect(webhooks.list(project.id).map((hook) => hook.url)).toEqual(['https://hooks.example.com/caf\u00e9/\ud83d\ude00']);
  });

  it('delete a webhook (nothing more is sent) and a project with its webhooks', async () => {
    const headers = await session();
    const project = store.createProject('example.com');
    const auth = { authorization: `Bearer ${project.token}` };
    const created = (await call('POST', `/admin/projects/${project.id}/webhooks`, { body: { url: receiver.url, events: ['agent.first_visit'] }, headers })).json;
    expect((await call('DELETE', `/admin/projects/${project.id}/webhooks/${created.id}`, { headers })).status).toBe(204);
    expect((await call('DELETE', `/admin/projects/${project.id}/webhooks/${created.id}`, { headers })).status).toBe(404);
    await call('POST', '/visits', { body: [visit(CLAUDEBOT)], headers: auth });
    await alerts.idle();
    expect(receiver.received).toHaveLength(0);

    await call('POST', `/admin/projects/${project.id}/webhooks`, { body: { url: receiver.url, events: ['agent.first_visit'] }, headers });
    expect(webhooks.list(project.id)).toHaveLength(1);
    expect((await call('DELETE', `/admin/projects/${project.id}`, { headers })).status).toBe(204);
    expect(webhooks.list(project.id)).toHaveLength(0);
  });
});
