// Per-project client-IP rules on servers sharing one settings store: a rule saved through one
// server applies on the others within the cache's TTL (fake clock), at once on the server that
// saved it, and a store outage keeps the last rule rather than failing visits.
import { describe, expect, it } from 'vitest';
import {
  createApiHandler,
  createClientIpRule,
  createEngine,
  createMemoryProjectSettingsStore,
  createMemoryProjectStore,
  createMemoryVisitStore,
  createProjectRequestRules,
  type ApiHandler,
  type ProjectRequestRules,
  type ProjectSettings,
  type ProjectSettingsStore,
} from '../../src/index.js';
import { TEST_CATALOG } from '../server/helpers.js';

const TTL_MS = 5000;
// Headers of one visit: a proxy sets X-Real-IP; the default rule reads CF-Connecting-IP first.
const HEADERS = { 'user-agent': 'test', 'cf-connecting-ip': '198.51.100.1', 'x-real-ip': '203.0.113.9' };
// The same headers as a rule reads them (lower-case names).
const HEADER_MAP: ReadonlyMap<string, string> = new Map(Object.entries(HEADERS));

function fakeClock(start = Date.UTC(2026, 10, 21, 12)) {
  let time = start;
  return { now: () => time, advance: (ms: number) => void (time += ms) };
}

function body(value: unknown) {
  return new TextEncoder().encode(JSON.stringify(value));
}

describe('client-IP rules shared by several servers', () => {
  it('reach another server within the TTL of its cache, and the saving server at once', async () => {
    const clock = fakeClock();
    const projects = createMemoryProjectStore();
    const { id, token } = await projects.createProject('shared.example');
    // What several servers over one ClickHouse share: projects, settings and visits.
    const settings = createMemoryProjectSettingsStore();
    const visits = createMemoryVisitStore();
    const server = () => createApiHandler({ engine: createEngine({ catalog: TEST_CATALOG }), projects, visits, settings, clock, rateLimit: false });
    const a = server();
    const b = server();
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const postVisit = async (handle: ApiHandler, path: string) => {
      const response = await handle({ method: 'POST', path: '/visits', headers: auth, body: body({ request_path: path, request_method: 'GET', request_headers: HEADERS, created: new Date(clock.now()).toISOString() }) });
      expect(response.status).toBe(202);
    };
    const clientIpOf = async (path: string) => (await visits.timeline({ projectId: id, limit: 100 })).find((v) => v.request_path === path)?.client_ip;

    // Both servers compile the default rule for the project.
    await postVisit(a, '/a-before');
    await postVisit(b, '/b-before');
    expect(await clientIpOf('/b-before')).toBe('198.51.100.1');

    const saved = await a({ method: 'PUT', path: '/project-settings', headers: auth, body: body({ client_ip: { headers: ['x-real-ip'] } }) });
    expect(saved.status).toBe(200);
    await postVisit(a, '/a-after');
    expect(await clientIpOf('/a-after')).toBe('203.0.113.9');

    clock.advance(TTL_MS + 1);
    await postVisit(b, '/b-after-ttl');
    expect(await clientIpOf('/b-after-ttl')).toBe('203.0.113.9');
  });
});

describe('createProjectRequestRules', () => {
  const projectRule = (headers: string[]): ProjectSettings => ({ robots: null, client_ip: { headers } });

  it('reads the settings again once a rule is older than ttlMs, not before', async () => {
    const clock = fakeClock();
    const store = createMemoryProjectSettingsStore();
    let reads = 0;
    const counting: ProjectSettingsStore = {
      getProjectSettings: (projectId) => (reads++, store.getProjectSettings(projectId)),
      putProjectSettings: (projectId, value) => store.putProjectSettings(projectId, value),
    };
    const rules = createProjectRequestRules(counting, createClientIpRule(), { ttlMs: 3000, clock });
    expect((await rules.rulesFor('prj_1')).clientIp(HEADER_MAP)).toBe('198.51.100.1');
    store.putProjectSettings('prj_1', projectRule(['x-real-ip']));
    clock.advance(2999);
    // Still fresh: answered synchronously from the cache, without a read.
    const fresh = rules.rulesFor('prj_1');
    expect(fresh).not.toBeInstanceOf(Promise);
    expect((fresh as ProjectRequestRules).clientIp(HEADER_MAP)).toBe('198.51.100.1');
    expect(reads).toBe(1);
    clock.advance(1);
    expect((await rules.rulesFor('prj_1')).clientIp(HEADER_MAP)).toBe('203.0.113.9');
    expect(reads).toBe(2);
  });

  it('drops the rule at once on invalidate, and shares one read among concurrent callers', async () => {
    const clock = fakeClock();
    const store = createMemoryProjectSettingsStore();
    let reads = 0;
    const slow: ProjectSettingsStore = {
      getProjectSettings: async (projectId) => {
        reads++;
        await new Promise((resolve) => setTimeout(resolve, 5));
        return store.getProjectSettings(projectId);
      },
      putProjectSettings: (projectId, value) => store.putProjectSettings(projectId, value),
    };
    const rules = createProjectRequestRules(slow, createClientIpRule(), { clock });
    const [first, second] = await Promise.all([rules.rulesFor('prj_1'), rules.rulesFor('prj_1')]);
    expect(first).toBe(second);
    expect(reads).toBe(1);
    store.putProjectSettings('prj_1', projectRule(['x-real-ip']));
    rules.invalidate('prj_1');
    expect((await rules.rulesFor('prj_1')).clientIp(HEADER_MAP)).toBe('203.0.113.9');
  });

  it('keeps the last rule when the store fails at refresh time, and fails a first read', async () => {
    const clock = fakeClock();
    let down = false;
    const store: ProjectSettingsStore = {
      getProjectSettings: async () => {
        if (down) throw new Error('store down');
        return projectRule(['x-real-ip']);
      },
      putProjectSettings: () => undefined,
    };
    const rules = createProjectRequestRules(store, createClientIpRule(), { ttlMs: 1000, clock });
    expect((await rules.rulesFor('prj_1')).clientIp(HEADER_MAP)).toBe('203.0.113.9');
    down = true;
    clock.advance(1000);
    expect((await rules.rulesFor('prj_1')).clientIp(HEADER_MAP)).toBe('203.0.113.9');
    await expect(Promise.resolve(rules.rulesFor('prj_2'))).rejects.toThrow('store down');
    down = false;
    clock.advance(1000);
    expect((await rules.rulesFor('prj_2')).clientIp(HEADER_MAP)).toBe('203.0.113.9');
  });

  it('refuses a bad ttlMs or maxProjects, naming it', () => {
    const store = createMemoryProjectSettingsStore();
    expect(() => createProjectRequestRules(store, createClientIpRule(), { ttlMs: 0 })).toThrow(/ttlMs must be a positive integer, got 0/);
    expect(() => createProjectRequestRules(store, createClientIpRule(), { maxProjects: 1.5 })).toThrow(/maxProjects must be a positive integer, got 1.5/);
  });
});
