// The admin routes over a project store that answers with promises (as the ClickHouse store does):
// every route awaits it, so projects, rotation and revocation work as over SQLite, and a store
// that is down answers 503 with Retry-After instead of a bare 500.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAdminRoutes, type AdminProjectStore } from '../../../src/adapters/node/admin-routes.js';
import { openAdminStore, type AdminStore } from '../../../src/adapters/node/admin-store.js';
import { hashTokenNode, openSqliteStore, type SqliteStore } from '../../../src/adapters/node/index.js';
import { createApiHandler, createEngine, createMemoryVisitStore, VisitStoreUnavailableError, type ApiHandler, type ProjectLookup } from '../../../src/index.js';
import { TEST_CATALOG } from '../../server/helpers.js';

let dir: string;
let sqlite: SqliteStore;
let admin: AdminStore;
let secret: string;
let down: boolean;

/** The SQLite store behind promises that settle on a later tick, failing while `down` as ClickHouse would. */
function asyncStore(store: SqliteStore): AdminProjectStore & ProjectLookup {
  const later = async <T>(answer: () => T): Promise<T> => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    if (down) throw new VisitStoreUnavailableError('unavailable', 3, 'ClickHouse is unreachable');
    return answer();
  };
  return {
    findByTokenHash: (hash) => later(() => store.findByTokenHash(hash)),
    // As the ClickHouse store, it reports its own token changes, so the API drops cached tokens at once.
    tokensVersion: () => store.tokensVersion!(),
    createProject: (name) => later(() => store.createProject(name)),
    listProjects: () => later(() => store.listProjects()),
    issueToken: (projectId, options) => later(() => store.issueToken(projectId, options)),
    revokeToken: (which) => later(() => store.revokeToken(which)),
    renameProject: (projectId, name) => later(() => store.renameProject(projectId, name)),
    deleteProject: (projectId) => later(() => store.deleteProject(projectId)),
  };
}

function handlerOver(projects: AdminProjectStore & ProjectLookup): ApiHandler {
  return createApiHandler({
    engine: createEngine({ catalog: TEST_CATALOG }),
    projects,
    visits: createMemoryVisitStore(),
    hashToken: hashTokenNode,
    rateLimit: false,
    admin,
    routes: [createAdminRoutes({ admin, projects })],
  });
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agentwarden-admin-async-'));
  sqlite = openSqliteStore({ dataDir: dir });
  admin = openAdminStore({ dataDir: dir, scrypt: { N: 1024, r: 8, p: 1 } });
  secret = (await admin.ensureSecret())!;
  down = false;
});

afterEach(() => {
  admin.close();
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
});

const enc = new TextEncoder();
async function call(handle: ApiHandler, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await handle({
    method,
    path,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : enc.encode(JSON.stringify(body)),
    remoteAddress: '127.0.0.1',
  });
  return { ...response, json: typeof response.body === 'string' && response.body !== '' ? JSON.parse(response.body) : undefined };
}

async function login(handle: ApiHandler) {
  const response = await call(handle, 'POST', '/admin/login', { secret });
  expect(response.status).toBe(200);
  return { cookie: response.headers['set-cookie']!.split(';')[0]!, 'x-csrf-token': response.json.csrf_token as string };
}

describe('admin routes over an asynchronous project store', () => {
  it('create, list, rotate and revoke, and the tokens work at once', async () => {
    const handle = handlerOver(asyncStore(sqlite));
    const session = await login(handle);
    const created = await call(handle, 'POST', '/admin/projects', { name: 'async.example' }, session);
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: 'async.example', token: expect.stringMatching(/^aw_/), token_id: expect.stringMatching(/^tok_/) });
    const listed = await call(handle, 'GET', '/admin/projects', undefined, { cookie: session.cookie });
    expect(listed.status).toBe(200);
    expect(listed.json.projects).toEqual([expect.objectContaining({ id: created.json.id, name: 'async.example', tokens: [expect.objectContaining({ id: created.json.token_id, revoked: null })] })]);
    const identify = (token: string) => call(handle, 'POST', '/agent-identifications', { request_headers: { 'user-agent': 'GPTBot/1.2' } }, { authorization: `Bearer ${token}` });
    expect((await identify(created.json.token)).status).toBe(200);

    const rotated = await call(handle, 'POST', '/admin/tokens', { project: created.json.id }, session);
    expect(rotated.status).toBe(201);
    expect((await identify(created.json.token)).status).toBe(401);
    expect((await identify(rotated.json.token)).status).toBe(200);
    expect((await call(handle, 'POST', '/admin/tokens', { project: 'prj_missing' }, session)).status).toBe(404);

    const revoked = await call(handle, 'POST', '/admin/token-revocations', { token_id: rotated.json.token_id }, session);
    expect(revoked.status).toBe(200);
    expect(revoked.json).toEqual({ token_id: rotated.json.token_id, revoked: true });
    expect((await call(handle, 'POST', '/admin/token-revocations', { token_id: rotated.json.token_id }, session)).status).toBe(404);
  });

  it('answer 503 with Retry-After while the store is down, and work again after', async () => {
    const handle = handlerOver(asyncStore(sqlite));
    const session = await login(handle);
    down = true;
    for (const [method, path, body] of [
      ['GET', '/admin/projects', undefined],
      ['POST', '/admin/projects', { name: 'x' }],
      ['POST', '/admin/tokens', { project: 'prj_x' }],
      ['POST', '/admin/token-revocations', { token_id: 'tok_x' }],
    ] as const) {
      const response = await call(handle, method, path, body, session);
      expect(response.status, `${method} ${path}`).toBe(503);
      expect(response.headers['retry-after']).toBe('3');
    }
    down = false;
    expect((await call(handle, 'POST', '/admin/projects', { name: 'after.example' }, session)).status).toBe(201);
  });
});
