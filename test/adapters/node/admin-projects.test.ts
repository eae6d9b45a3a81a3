// Project administration over the SQLite store, as the dashboard's projects page uses it: rename,
// delete (its tokens, settings, visits and every rollup row go too, other projects keep theirs),
// and the visit count and last visit of each project with and without test visits.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAdminRoutes } from '../../../src/adapters/node/admin-routes.js';
import { openAdminStore, type AdminStore } from '../../../src/adapters/node/admin-store.js';
import { hashTokenNode, openSqliteStore, type SqliteStore } from '../../../src/adapters/node/index.js';
import { createApiHandler, createEngine, type ApiHandler } from '../../../src/index.js';
import { adminSession, apiCaller } from '../../helpers/admin-api.js';
import { checkResponse } from '../../server/schema-check.js';

const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const NOW = Date.parse('2026-03-10T12:00:00Z');

let dir: string;
let store: SqliteStore;
let admin: AdminStore;
let handle: ApiHandler;
let deletedHooks: string[];
let clockNow: number;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agentwarden-admin-projects-'));
  clockNow = NOW - 3 * 86_400_000;
  const clock = { now: () => clockNow };
  store = openSqliteStore({ dataDir: dir, clock });
  admin = openAdminStore({ dataDir: dir, scrypt: { N: 1024, r: 8, p: 1 }, findProject: (id) => store.listProjects().find((p) => p.id === id) });
  deletedHooks = [];
  handle = createApiHandler({
    // The bundled catalog: it knows the test agent that "send a test visit" uses.
    engine: createEngine(),
    projects: store,
    visits: store,
    settings: store,
    hashToken: hashTokenNode,
    rateLimit: false,
    admin,
    clock,
    routes: [createAdminRoutes({ admin, projects: store, visits: store, clock, onProjectDeleted: (id) => void deletedHooks.push(id) })],
  });
});

afterEach(() => {
  admin.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = apiCaller(() => handle);
const session = () => adminSession(admin, call);

const visit = (ua: string, path: string, minutesAgo: number) => ({
  request_path: path,
  request_method: 'GET',
  request_headers: { 'user-agent': ua },
  response_status_code: 200,
  created: new Date(clockNow - minutesAgo * 60_000).toISOString(),
});

describe('projects in the admin API', () => {
  it('rename a project: listed and found under the new name, 404 for an unknown one, 400 for an empty name or one with control characters', async () => {
    const headers = await session();
    const project = store.createProject('old.example');
    const renamed = await call('PATCH', `/admin/projects/${project.id}`, { body: { name: ' new.example ' }, headers });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toEqual({ id: project.id, name: 'new.example' });
    expect(store.listProjects().find((p) => p.id === project.id)!.name).toBe('new.example');
    expect((await call('PATCH', '/admin/projects/prj_nope', { body: { name: 'x' }, headers })).status).toBe(404);
    const empty = await call('PATCH', `/admin/projects/${project.id}`, { body: { name: '' }, headers });
    expect(empty.status).toBe(400);
    expect(empty.json.errors[0].pointer).toBe('/name');
    // A name shows in lists, CSV files and webhook payloads: control characters and line breaks are refused.
    for (const name of ['a\u0000b', 'line\nbreak', 'tab\tname', 'esc\u001b[31m', 'sep\u2028x', 'c1\u0085']) {
      const refused = await call('PATCH', `/admin/projects/${project.id}`, { body: { name }, headers });
      expect(refused.status, JSON.stringify(name)).toBe(400);
      expect(refused.json.errors[0]).toMatchObject({ pointer: '/name', code: 'control-character' });
    }
    const created = await call('POST', '/admin/projects', { body: { name: 'new\r\nproject' }, headers });
    expect(created.status).toBe(400);
    expect(store.listProjects().find((p) => p.id === project.id)!.name).toBe('new.example');
    // State-changing: without the CSRF token it is refused.
    expect((await call('PATCH', `/admin/projects/${project.id}`, { body: { name: 'y' }, headers: { cookie: headers.cookie } })).status).toBe(403);
  });

  it('refuse a project name holding a lone surrogate (UTF-8 cannot store it), on create and on rename', async () => {
    const headers = await session();
    const project = store.createProject('kept.example');
    for (const name of ['\ud800', 'a\udc00b', 'x\ud83d']) {
      const created = await call('POST', '/admin/projects', { body: { name }, headers });
      expect(created.status, JSON.stringify(name)).toBe(400);
      expect(created.headers['content-type']).toBe('application/problem+json');
      expect(created.json.errors, JSON.stringify(name)).toEqual([expect.objectContaining({ pointer: '/name', code: 'invalid-unicode' })]);
      const renamed = await call('PATCH', `/admin/projects/${project.id}`, { body: { name }, headers });
      expect(renamed.status, JSON.stringify(name)).toBe(400);
      expect(renamed.json.errors[0]).toMatchObject({ pointer: '/name', code: 'invalid-unicode' });
    }
    expect(store.listProjects().map((p) => p.name)).toEqual(['kept.example']);
    // A surrogate pair is one character, and welcome.
    const emoji = await call('POST', '/admin/projects', { body: { name: 'shop \ud83d\uded2' }, headers });
    expect(emoji.status).toBe(201);
    expect(emoji.json.name).toBe('shop \u{1f6d2}');
  });

  it('delete a project: its token gets 401, its visits, rollups, keys and settings are gone, the other project keeps all of its own', async () => {
    const headers = await session();
    const doomed = store.createProject('doomed.example');
    const kept = store.createProject('kept.example');
    for (const project of [doomed, kept]) {
      const auth = { authorization: `Bearer ${project.token}` };
      expect((await call('POST', '/visits', { body: [visit(GPTBOT, '/a', 30), visit(GPTBOT, '/b', 20)], headers: { ...auth, 'idempotency-key': 'batch-1' } })).status).toBe(202);
      expect((await call('PUT', '/project-settings', { body: { robots: { agent_types: ['AI Data Scraper'] } }, headers: auth })).status).toBe(200);
    }
    // Folded into the hour and day tables, so those rows must go too.
    await store.visits.rollUp();
    const rowsOf = (projectId: string) => {
      const db = new Database(store.file, { readonly: true });
      try {
        const tables = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((t) => t.name);
        const counts: Record<string, number> = {};
        for (const table of tables) {
          const columns = db.prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('${table}')`).all().map((c) => c.name);
          const key = columns.includes('project_id') ? 'project_id' : table === 'projects' ? 'id' : undefined;
          if (key === undefined) continue;
          const n = db.prepare<[string], { n: number }>(`SELECT count(*) AS n FROM "${table}" WHERE ${key} = ?`).get(projectId)!.n;
          if (n > 0) counts[table] = n;
        }
        return counts;
      } finally {
        db.close();
      }
    };
    const before = rowsOf(doomed.id);
    expect(before).toMatchObject({ visits: 2, projects: 1, tokens: 1, project_settings: 1, visit_idempotency_keys: 1, visit_dims_day: expect.any(Number), visit_agent_paths_day: expect.any(Number) });

    const deleted = await call('DELETE', `/admin/projects/${doomed.id}`, { headers });
    expect(deleted.status).toBe(204);
    expect(deletedHooks).toEqual([doomed.id]);
    expect(rowsOf(doomed.id)).toEqual({});
    expect(rowsOf(kept.id)).toEqual(before);
    expect((await call('POST', '/visits', { body: [visit(GPTBOT, '/c', 1)], headers: { authorization: `Bearer ${doomed.token}` } })).status).toBe(401);
    expect((await call('POST', '/visits', { body: [visit(GPTBOT, '/c', 1)], headers: { authorization: `Bearer ${kept.token}` } })).status).toBe(202);
    expect((await call('GET', `/visits?project=${doomed.id}`, { headers })).status).toBe(404);
    expect((await call('DELETE', `/admin/projects/${doomed.id}`, { headers })).status).toBe(404);
    expect((await call('GET', '/admin/projects', { headers })).json.projects.map((p: { id: string }) => p.id)).toEqual([kept.id]);
  });

  it('delete a project whose visits still wait for the group commit: none is left behind', async () => {
    const project = store.createProject('busy.example');
    const pending = call('POST', '/visits', { body: [visit(GPTBOT, '/late', 1)], headers: { authorization: `Bearer ${project.token}` } });
    // The append is queued for the next commit when the deletion runs in this same turn.
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.deleteProject(project.id)).toBe(true);
    await pending;
    expect(store.countVisits(project.id)).toBe(0);
  });

  it('list each project with its visit count and last visit, test visits counted or left out', async () => {
    const headers = await session();
    const project = store.createProject('counted.example');
    const empty = store.createProject('quiet.example');
    clockNow = NOW;
    const auth = { authorization: `Bearer ${project.token}` };
    // One visit happened before the project was created (a backfill with `created`): it counts too.
    expect((await call('POST', '/visits', { body: [visit(GPTBOT, '/old', 4 * 24 * 60), visit(GPTBOT, '/a', 2 * 24 * 60), visit(GPTBOT, '/b', 90)], headers: auth })).status).toBe(202);
    // "Send a test visit": the newest visit of the project is the test agent's.
    expect((await call('POST', `/test-visits?project=${project.id}`, { headers })).status).toBe(202);
    await store.visits.rollUp();

    const withTest = await call('GET', '/admin/projects?visits=with-test', { headers });
    expect(withTest.status).toBe(200);
    const counted = (body: { projects: { id: string; visits: unknown }[] }, id: string) => body.projects.find((p) => p.id === id)!.visits;
    expect(counted(withTest.json, project.id)).toEqual({ visits: 4, test_visits: 1, last_visit: new Date(NOW).toISOString() });
    expect(counted(withTest.json, empty.id)).toEqual({ visits: 0, test_visits: 0, last_visit: null });
    const withoutTest = await call('GET', '/admin/projects?visits=without-test', { headers });
    expect(counted(withoutTest.json, project.id)).toEqual({ visits: 3, test_visits: 1, last_visit: new Date(NOW - 90 * 60_000).toISOString() });
    // Without the parameter the list stays as cheap as before.
    expect((await call('GET', '/admin/projects', { headers })).json.projects[0].visits).toBeUndefined();
    const bad = await call('GET', '/admin/projects?visits=some', { headers });
    expect(bad.status).toBe(400);
    // A query parameter is named as one, as on the read APIs.
    expect(bad.json.errors).toEqual([expect.objectContaining({ pointer: '', parameter: 'visits' })]);

    const doc = (await call('GET', '/openapi.json')).json;
    expect(checkResponse(doc, '/admin/projects', 'get', withoutTest)).toEqual([]);
    expect(doc.paths['/admin/projects/{id}'].patch).toBeDefined();
    expect(doc.paths['/admin/projects/{id}'].delete).toBeDefined();
  });
});
