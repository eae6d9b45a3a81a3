// The dashboard over `agentwarden serve --store clickhouse`: each server has its own admin secret
// and sessions (its data directory), while the projects an admin creates or rotates live in the
// shared ClickHouse, so their tokens work on every server at once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseAvailable, startClickHouse, type ClickHouseServer } from '../../helpers/clickhouse.js';
import { BROWSER_UA, post, spawnServe, stopServes, writeTestCatalog, type ServeProcess } from '../../server/helpers.js';

const available = clickhouseAvailable();
const DATABASE = 'aw_dashboard';

/** An admin session on one server: its cookie and CSRF token. */
interface Session {
  readonly cookie: string;
  readonly csrf: string;
}

function visitBody(path: string) {
  return { request_path: path, request_method: 'GET', request_headers: { 'user-agent': BROWSER_UA }, created: new Date().toISOString() };
}

async function login(server: ServeProcess): Promise<Session> {
  const secret = /admin login secret, shown only now: (aws_[A-Za-z0-9_-]+)/.exec(server.stdout())?.[1];
  expect(secret, server.stdout()).toBeDefined();
  const response = await post(`${server.url}/admin/login`, undefined, { secret });
  expect(response.status, response.text).toBe(200);
  const cookie = response.headers.get('set-cookie')!.split(';')[0]!;
  return { cookie, csrf: response.json.csrf_token };
}

async function adminPost(server: ServeProcess, session: Session, path: string, body: unknown) {
  return post(`${server.url}${path}`, undefined, body, { cookie: session.cookie, 'x-csrf-token': session.csrf });
}

async function adminGet(server: ServeProcess, session: Session, path: string) {
  const response = await fetch(`${server.url}${path}`, { headers: { cookie: session.cookie } });
  return { status: response.status, text: await response.text() };
}

describe.runIf(available)('the dashboard over a shared ClickHouse', () => {
  let clickhouse: ClickHouseServer;
  let dir: string;
  let a: ServeProcess;
  let b: ServeProcess;

  const serve = (name: string) =>
    spawnServe(['--store', 'clickhouse', '--clickhouse-url', clickhouse.url, '--clickhouse-database', DATABASE, '--data-dir', join(dir, name), '--catalog', writeTestCatalog(dir), '--verifiers', 'none', '--rate-limit', '0', '--log', 'off']);

  beforeAll(async () => {
    clickhouse = await startClickHouse();
    dir = mkdtempSync(join(tmpdir(), 'aw-ch-dashboard-'));
    a = await serve('a');
    b = await serve('b');
  });
  afterAll(async () => {
    await stopServes([a, b]);
    await clickhouse?.destroy();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('serves the dashboard page at /ui/ on every server', async () => {
    for (const server of [a, b]) {
      expect(server.stdout()).toContain(`agentwarden dashboard: ${server.url}/ui/`);
      const page = await fetch(`${server.url}/ui/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toMatch(/<html/i);
    }
  });

  it('creates a project through one server\'s admin API whose token works on the other at once', async () => {
    const session = await login(a);
    // Without the CSRF token, nothing is created.
    expect((await post(`${a.url}/admin/projects`, undefined, { name: 'x' }, { cookie: session.cookie })).status).toBe(403);
    const created = await adminPost(a, session, '/admin/projects', { name: 'dashboard.example' });
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({ name: 'dashboard.example', token: expect.stringMatching(/^aw_/), token_id: expect.stringMatching(/^tok_/) });
    const { id, token } = created.json as { id: string; token: string };

    expect((await post(`${b.url}/visits`, token, visitBody('/from-dashboard'))).status).toBe(202);
    expect((await clickhouse.query(`SELECT count() FROM ${DATABASE}.visits WHERE project_id = '${id}' AND request_path = '/from-dashboard'`)).trim()).toBe('1');

    // The other server's own admin (its own secret and sessions) sees the project in ClickHouse.
    const other = await login(b);
    const listed = await adminGet(b, other, '/admin/projects');
    expect(listed.status).toBe(200);
    const projects = JSON.parse(listed.text).projects as { id: string; name: string; tokens: { id: string; prefix: string; revoked: string | null }[] }[];
    expect(projects.map((p) => p.name)).toEqual(['default', 'dashboard.example']);
    expect(projects[1]!.tokens).toEqual([expect.objectContaining({ id: created.json.token_id, prefix: token.slice(0, 7), revoked: null })]);
    // A session on one server is not one on the other.
    expect((await adminGet(b, session, '/admin/projects')).status).toBe(401);

    // Admin reads naming the project find it in ClickHouse.
    const settings = await adminGet(b, other, `/project-settings?project=${id}`);
    expect(settings.status, settings.text).toBe(200);
    const timeline = await adminGet(a, session, `/visits?project=${id}&limit=10`);
    expect(timeline.status, timeline.text).toBe(200);
    expect(timeline.text).toContain('/from-dashboard');
  });

  it('rotates and revokes tokens through the admin API for every server', async () => {
    const session = await login(a);
    const created = await adminPost(a, session, '/admin/projects', { name: 'rotate.example' });
    expect(created.status).toBe(201);
    const { id, token: first } = created.json as { id: string; token: string };
    const rotated = await adminPost(a, session, '/admin/tokens', { project: id });
    expect(rotated.status, rotated.text).toBe(201);
    const second = rotated.json.token as string;
    // Servers trust a token they checked for at most a second (the API's cache, then the store's).
    await new Promise((resolve) => setTimeout(resolve, 2100));
    for (const server of [a, b]) {
      expect((await post(`${server.url}/visits`, first, visitBody('/rotated'))).status).toBe(401);
      expect((await post(`${server.url}/visits`, second, visitBody('/rotated'))).status).toBe(202);
    }
    const revoked = await adminPost(a, session, '/admin/token-revocations', { token_id: rotated.json.token_id });
    expect(revoked.status, revoked.text).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    for (const server of [a, b]) expect((await post(`${server.url}/visits`, second, visitBody('/revoked'))).status).toBe(401);
    expect((await adminPost(a, session, '/admin/token-revocations', { token_id: rotated.json.token_id })).status).toBe(404);
  });
});
