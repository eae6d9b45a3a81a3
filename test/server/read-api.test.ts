// The read APIs over the real node server on 127.0.0.1 with the SQLite store: stats, top paths
// and timeline pages of a data set with known counts, robots violations end to end from saved
// settings, settings kept in the database across a reopen, project isolation, what a settings
// update refuses (unknown client_ip members, oversized lists, secret or malformed header names) and
// the 404 of an agent id that names no agent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHandler, createCatalog, createEngine } from '../../src/index.js';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { hashTokenNode, openSqliteStore, startNodeServer } from '../../src/adapters/node/index.js';
import { DATA_SET, NOW, READ_CATALOG } from '../api/read-fixtures.js';
import { post, startTestServer, tempDir, type TestServer } from './helpers.js';

let api: TestServer;
let tokenA: string;
let tokenB: string;

async function get(path: string, token: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined };
}

async function put(path: string, token: string, body: unknown) {
  const response = await fetch(`${api.url}${path}`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, json: (await response.json()) as any };
}

beforeAll(async () => {
  api = await startTestServer({ engine: createEngine({ catalog: READ_CATALOG }), clock: { now: () => NOW } });
  tokenA = api.store.createProject('a').token;
  tokenB = api.store.createProject('b').token;
  expect((await post(`${api.url}/visits`, tokenA, DATA_SET)).json).toEqual({ accepted: 10, rejected: [] });
});
afterAll(async () => api.stop());

describe('read APIs on the SQLite store', () => {
  it('counts the data set by agent per hour exactly', async () => {
    const res = await get('/stats?from=2026-11-21T09:00:00Z&to=2026-11-21T12:00:00Z&by=agent', tokenA);
    expect(res.status).toBe(200);
    expect(res.json.series.map((s: any) => [s.key, s.total, s.agent_name])).toEqual([
      ['gptbot', 4, 'GPTBot'],
      [null, 3, null],
      ['claudebot', 2, 'ClaudeBot'],
      ['googlebot', 1, 'Googlebot'],
    ]);
    expect(res.json.buckets).toEqual([
      { start: '2026-11-21T09:00:00.000Z', counts: [1, 0, 1, 0], other: 0 },
      { start: '2026-11-21T10:00:00.000Z', counts: [2, 1, 0, 1], other: 0 },
      { start: '2026-11-21T11:00:00.000Z', counts: [1, 2, 1, 0], other: 0 },
    ]);
    const byReferral = await get('/stats?from=2026-11-21T09:00:00Z&to=2026-11-21T12:00:00Z&by=referral&interval=day', tokenA);
    expect(byReferral.json.series).toEqual([
      { key: null, total: 8 },
      { key: 'chatgpt', total: 2 },
    ]);
  });

  it('pages the timeline and filters it', async () => {
    const first = await get('/visits?limit=4', tokenA);
    const second = await get(`/visits?limit=4&after=${first.json.next}`, tokenA);
    const third = await get(`/visits?limit=4&after=${second.json.next}`, tokenA);
    const paths = [...first.json.visits, ...second.json.visits, ...third.json.visits].map((v: any) => v.request_path);
    expect(paths).toEqual(['/', '/pricing', '/public', '/private/b?x=1', '/private/a', '/pricing', '/private/a', '/private/a', '/private/b?x=1', '/private/a']);
    expect(third.json.next).toBeNull();
    expect((await get('/visits?referral=chatgpt', tokenA)).json.visits).toHaveLength(2);
    expect((await get('/visits?agent_type=AI+Data+Scraper&path=/private/a', tokenA)).json.visits).toHaveLength(3);
  });

  it('refuses a repeated query parameter instead of taking the first', async () => {
    for (const path of ['/visits?limit=10&limit=20', '/stats?by=agent&interval=day&by=path', '/visits?format=csv&format=json', '/stats/top-paths?limit=5&limit=5']) {
      const answer = await get(path, tokenA);
      expect(answer.status, path).toBe(400);
      expect(answer.json.errors).toEqual([expect.objectContaining({ parameter: path.match(/[?&]([a-z]+)=[^&]*&.*\1=/)![1], code: 'repeated' })]);
      // A query error like any other, not a body's.
      expect(answer.json.type).toBe((await get('/visits?limit=x', tokenA)).json.type);
    }
    expect((await get('/visits?limit=10&after=', tokenA)).status).toBe(200);
  });

  it('answers CSV when Accept prefers it, by its quality values (RFC 9110 §12.5.1)', async () => {
    const typeFor = async (accept: string) => (await get('/visits?limit=1', tokenA, { accept })).headers.get('content-type');
    for (const accept of ['text/csv', 'text/csv, application/json', 'application/json;q=0.5, text/csv', 'TEXT/CSV;Q=0.9, */*;q=0.1']) expect(await typeFor(accept), accept).toMatch(/^text\/csv/);
    for (const accept of ['text/csv;q=0, application/json', 'application/json, text/csv;q=0.5', 'text/html,application/xhtml+xml,*/*;q=0.8', '*/*', 'text/csv;q=0']) expect(await typeFor(accept), accept).toMatch(/^application\/json/);
  });

  it('refuses a time that is no calendar date or hour (Date.parse would roll it over), by name', async () => {
    for (const [path, parameter] of [['/stats?from=2026-02-30T00:00:00Z', 'from'], ['/stats/top-paths?from=2026-02-31', 'from'], ['/robots-violations?to=2026-04-31T10:00:00Z', 'to'], ['/stats?to=2026-11-21T24:00:00Z', 'to'], ['/stats?from=2026-13-01', 'from']] as const) {
      const answer = await get(path, tokenA);
      expect(answer.status, path).toBe(400);
      expect(answer.json.errors, path).toEqual([expect.objectContaining({ parameter })]);
    }
    // A leap day is a day.
    expect((await get('/stats?from=2024-02-29T00:00:00Z&to=2024-03-01', tokenA)).status).toBe(200);
  });

  it('names every stats CSV column apart, whatever the paths (a path need not start with "/")', async () => {
    const tokenC = api.store.createProject('c').token;
    const at = '2026-11-21T10:00:00.000Z';
    const body = ['other', 'start', '(none)', '/x'].map((request_path) => ({ request_path, request_method: 'GET', request_headers: { 'user-agent': 'Mozilla/5.0' }, created: at }));
    const posted = await fetch(`${api.url}/visits`, { method: 'POST', headers: { authorization: `Bearer ${tokenC}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(posted.status).toBe(202);
    const csv = await get('/stats?by=path&interval=day&from=2026-11-21&to=2026-11-22&format=csv', tokenC);
    const header = csv.text.split('\r\n')[0]!.split(',');
    expect(new Set(header).size).toBe(header.length);
    expect(header[0]).toBe('start');
    expect(header.at(-1)).toBe('other');
    expect(header.slice(1, -1).sort()).toEqual(['(key)(none)', '(key)other', '(key)start', '/x']);
  });

  it('refuses a range longer than the totals count by naming from, on the routes that take no interval', async () => {
    for (const path of ['/stats/operators?from=1970-01-01T00:00:00Z', '/stats/status-codes?from=1970-01-01T00:00:00Z']) {
      const answer = await get(path, tokenA);
      expect(answer.status, path).toBe(400);
      expect(answer.json.errors, path).toEqual([expect.objectContaining({ parameter: 'from' })]);
      expect(answer.json.detail, path).toMatch(/spans more than \d+ days/);
    }
  });

  it('refuses a query parameter that is not percent-encoded UTF-8, by name, instead of reading it as U+FFFD', async () => {
    const queryError = (await get('/visits?limit=x', tokenA)).json.type;
    for (const [path, parameter] of [['/visits?path=/rep%FF', 'path'], ['/stats?path=/a%C0%AF', 'path'], ['/visits?limit=1&ag%FFent=x', 'ag\uFFFDent'], ['/visits?path=/%zz', 'path']] as const) {
      const answer = await get(path, tokenA);
      expect(answer.status, path).toBe(400);
      expect(answer.json.type, path).toBe(queryError);
      expect(answer.json.errors, path).toEqual([expect.objectContaining({ pointer: '', parameter, code: 'encoding' })]);
    }
    // U+FFFD itself, sent as its UTF-8 bytes, is a character like any other.
    expect((await get('/visits?path=/rep%EF%BF%BD', tokenA)).status).toBe(200);
  });

  it('lists top paths and exports them as CSV', async () => {
    const res = await get('/stats/top-paths?agent=gptbot', tokenA);
    expect(res.json.paths.map((p: any) => [p.path, p.count, p.last])).toEqual([
      ['/private/a', 3, '2026-11-21T10:01:00.000Z'],
      ['/public', 1, '2026-11-21T11:30:00.000Z'],
    ]);
    const csv = await get('/stats/top-paths?agent=gptbot', tokenA, { accept: 'text/csv' });
    expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename="top-paths-prj_[A-Za-z0-9_-]+\.csv"$/);
    expect(csv.text.split('\r\n')).toHaveLength(4);
  });

  it('reports robots violations from the saved settings, and only for the project that saved them', async () => {
    expect((await get('/robots-violations', tokenA)).json.violations).toEqual([]);
    const saved = await put('/project-settings', tokenA, { robots: { agent_types: ['AI Data Scraper', 'Search Engine Crawler'], disallow: ['/private/'], allow: ['/private/b'] } });
    expect(saved.status).toBe(200);
    const res = await get('/robots-violations?from=2026-11-21T00:00:00Z&to=2026-11-21T12:00:00Z', tokenA);
    expect(res.json.violations.map((v: any) => [v.agent_id, v.path, v.count, v.rule])).toEqual([
      ['gptbot', '/private/a', 3, '/private/'],
      ['googlebot', '/private/a', 1, '/private/'],
    ]);
    expect((await get('/robots-violations', tokenB)).json).toMatchObject({ robots: null, violations: [] });
    expect((await get('/project-settings', tokenB)).json).toEqual({ robots: null, client_ip: {}, site_hosts: [] });
    const bad = await put('/project-settings', tokenB, { client_ip: { trusted_proxies: ['300.0.0.0/8'] } });
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].pointer).toBe('/client_ip/trusted_proxies/0');
  });

  it('counts violations by the per-agent rules the robots.txt says: one scraper allowed, another agent by name with its own paths', async () => {
    const saved = await put('/project-settings', tokenA, {
      robots: { agent_types: ['AI Data Scraper'], disallow: ['/private/'], allow_agents: ['ClaudeBot'], disallow_agents: [{ agent: 'Googlebot', disallow: '/private/a' }] },
    });
    expect(saved.status).toBe(200);
    // Saved canonical: catalog ids, paths only where a rule has its own.
    expect(saved.json.robots).toEqual({ agent_types: ['AI Data Scraper'], disallow: ['/private/'], disallow_agents: [{ agent: 'googlebot', disallow: ['/private/a'] }], allow_agents: ['claudebot'] });
    const res = await get('/robots-violations?from=2026-11-21T00:00:00Z&to=2026-11-21T12:00:00Z', tokenA);
    // ClaudeBot visited /private/b twice but is allowed by name; Googlebot broke its own rule.
    expect(res.json.violations.map((v: any) => [v.agent_id, v.path, v.count, v.rule])).toEqual([
      ['gptbot', '/private/a', 3, '/private/'],
      ['googlebot', '/private/a', 1, '/private/a'],
    ]);
    // One agent's view says where its rule comes from.
    expect((await get('/robots-violations?agent=claudebot', tokenA)).json).toMatchObject({ agent_rule: { source: 'allow_agents', disallow: [], allow: ['/'] }, violations: [] });
    expect((await get('/robots-violations?agent=googlebot', tokenA)).json.agent_rule).toEqual({ source: 'disallow_agents', disallow: ['/private/a'], allow: [] });
    // The robots.txt written from the saved rules says the same.
    const text = await (await fetch(`${api.url}/robots-txts`, { method: 'POST', headers: { authorization: `Bearer ${tokenA}`, 'content-type': 'application/json' }, body: JSON.stringify(saved.json.robots) })).text();
    expect(text).toBe('User-agent: ClaudeBot\nAllow: /\n\nUser-agent: GPTBot\nDisallow: /private/\n\nUser-agent: Googlebot\nDisallow: /private/a\n');
    // An unknown agent is refused at its pointer; the saved rules stay.
    const unknown = await put('/project-settings', tokenA, { robots: { agent_types: ['AI Data Scraper'], allow_agents: ['ClaudeBot', 'NoSuchBot'] } });
    expect(unknown.status).toBe(400);
    expect(unknown.json.errors.map((e: any) => [e.pointer, e.code])).toEqual([['/robots/allow_agents/1', 'unknown-agent']]);
    expect((await get('/project-settings', tokenA)).json.robots.allow_agents).toEqual(['claudebot']);
  });
});

describe('PUT /project-settings refuses what would not mean what it says', () => {
  it('refuses an unknown member at its pointer, in client_ip (a typo must not reset the rule) and at the top level (a typo must not answer 200 and change nothing)', async () => {
    const { token } = api.store.createProject('settings-keys');
    expect((await put('/project-settings', token, { client_ip: { headers: ['x-real-ip'] } })).status).toBe(200);
    const typo = await put('/project-settings', token, { client_ip: { zzz: 1 } });
    expect(typo.status).toBe(400);
    expect(typo.json.errors.map((e: any) => [e.pointer, e.code])).toEqual([['/client_ip/zzz', 'unknown-field']]);
    // RFC 6901 escapes in the pointer; every unknown member is named, next to other errors.
    const several = await put('/project-settings', token, { client_ip: { 'trusted/proxies': 1, 'head~ers': ['x'], trusted_proxies: -1 } });
    expect(several.json.errors.map((e: any) => [e.pointer, e.code])).toEqual([
      ['/client_ip/trusted~1proxies', 'unknown-field'],
      ['/client_ip/head~0ers', 'unknown-field'],
      ['/client_ip/trusted_proxies', 'invalid-count'],
    ]);
    expect((await get('/project-settings', token)).json.client_ip).toEqual({ headers: ['x-real-ip'] });
    // ProjectSettingsUpdate is closed too: a misspelt member saves nothing (an outside check sent "site_hostz").
    const extra = await put('/project-settings', token, { client_ip: { trusted_proxies: 1 }, site_hostz: ['shop.example'] });
    expect(extra.status).toBe(400);
    expect(extra.json.errors.map((e: any) => [e.pointer, e.code])).toEqual([['/site_hostz', 'unknown-field']]);
    expect((await get('/project-settings', token)).json).toEqual({ robots: null, client_ip: { headers: ['x-real-ip'] }, site_hosts: [] });
  });

  it('caps client_ip.headers at 20 names and trusted_proxies at 100 CIDRs, naming the list', async () => {
    const { token } = api.store.createProject('settings-caps');
    const names = (n: number) => Array.from({ length: n }, (_, i) => `x-client-ip-${i}`);
    const cidrs = (n: number) => Array.from({ length: n }, (_, i) => `10.${Math.floor(i / 256) % 256}.${i % 256}.0/24`);
    expect((await put('/project-settings', token, { client_ip: { headers: names(20), trusted_proxies: cidrs(100) } })).status).toBe(200);
    for (const [body, pointer] of [
      [{ client_ip: { headers: names(21) } }, '/client_ip/headers'],
      [{ client_ip: { headers: names(10_000) } }, '/client_ip/headers'],
      [{ client_ip: { trusted_proxies: cidrs(101) } }, '/client_ip/trusted_proxies'],
      [{ client_ip: { trusted_proxies: cidrs(20_000) } }, '/client_ip/trusted_proxies'],
    ] as const) {
      const refused = await put('/project-settings', token, body);
      expect(refused.status, pointer).toBe(400);
      expect(refused.json.errors, pointer).toEqual([expect.objectContaining({ pointer, code: 'max-items' })]);
    }
    expect((await get('/project-settings', token)).json.client_ip.headers).toHaveLength(20);
  });

  it('refuses secret headers and names that are not RFC 9110 field names as client-IP headers', async () => {
    const { token } = api.store.createProject('settings-headers');
    for (const name of ['authorization', 'Cookie', 'proxy-authorization', 'set-cookie', 'x-api-key', 'X-Amz-Security-Token', 'x-client-secret']) {
      const refused = await put('/project-settings', token, { client_ip: { headers: ['x-real-ip', name] } });
      expect(refused.status, name).toBe(400);
      expect(refused.json.errors, name).toEqual([expect.objectContaining({ pointer: '/client_ip/headers/1', code: 'secret-header' })]);
    }
    for (const name of ['', 'x real ip', 'x-ip:', 'x-ip\r\nx-y', 'x-\u00e9', '(x)', 'x/ip', 'x-ip\u0000']) {
      const refused = await put('/project-settings', token, { client_ip: { headers: [name] } });
      expect(refused.status, JSON.stringify(name)).toBe(400);
      expect(refused.json.errors, JSON.stringify(name)).toEqual([expect.objectContaining({ pointer: '/client_ip/headers/0', code: 'invalid-header-name' })]);
    }
    const typed = await put('/project-settings', token, { client_ip: { headers: [42], trusted_proxies: ['10.0.0.0/8', null] } });
    expect(typed.json.errors.map((e: any) => [e.pointer, e.code])).toEqual([
      ['/client_ip/headers/0', 'type'],
      ['/client_ip/trusted_proxies/1', 'type'],
    ]);
    // Every tchar is allowed (RFC 9110 §5.6.2), and the name is saved lower-case.
    const saved = await put('/project-settings', token, { client_ip: { headers: ["X-Real-IP", "x!#$%&'*+.^_`|~0-9"] } });
    expect(saved.status).toBe(200);
    expect(saved.json.client_ip.headers).toEqual(['x-real-ip', "x!#$%&'*+.^_`|~0-9"]);
    expect((await get('/project-settings', token)).json.client_ip).toEqual({ headers: ['x-real-ip', "x!#$%&'*+.^_`|~0-9"] });
  });
});

describe('GET /stats/agents/{id}', () => {
  it('answers 404 for an id that is no agent id or that the catalog and the project both do not know; catalog and unlisted agents answer', async () => {
    const expectNotFound = async (path: string) => {
      const res = await get(path, tokenA);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toBe('application/problem+json');
      expect(res.json, path).toMatchObject({ status: 404, type: 'urn:agentwarden:problem:not-found' });
    };
    for (const id of ['%00', 'gptbot%00', 'GPTBot', 'no-such-bot', 'unlisted:', 'unlisted:a%0Ab', '%20gptbot', 'x'.repeat(200)]) await expectNotFound(`/stats/agents/${id}`);
    expect((await get('/stats/agents/gptbot', tokenA)).json).toMatchObject({ agent_id: 'gptbot', agent_name: 'GPTBot', visits: 4 });
    // A catalog agent that never came, and an unlisted agent the catalog can name, answer with zero counts.
    expect((await get('/stats/agents/claudebot', tokenB)).json).toEqual({ agent_id: 'claudebot', agent_name: 'ClaudeBot', visits: 0, results: {}, first_seen: null, last_seen: null });
    expect((await get('/stats/agents/unlisted:DCPbot', tokenB)).json).toEqual({ agent_id: 'unlisted:DCPbot', agent_name: 'DCPbot', visits: 0, results: {}, first_seen: null, last_seen: null });
  });

  it('answers for an agent the catalog no longer names while the project has its visits', async () => {
    const project = api.store.createProject('unlisted-history');
    const created = new Date(NOW - 60_000).toISOString();
    const ua = 'Mozilla/5.0 (compatible; DCPbot/1.0; +https://dcp.example/bot)';
    expect((await post(`${api.url}/visits`, project.token, [{ request_path: '/', request_method: 'GET', request_headers: { 'user-agent': ua }, created }])).json).toEqual({ accepted: 1, rejected: [] });
    // The same store behind a server whose catalog names no unlisted agents.
    const handler = createApiHandler({
      engine: createEngine({ catalog: createCatalog(READ_CATALOG, { unlistedAgents: false }) }),
      projects: api.store,
      visits: api.store,
      settings: api.store,
      hashToken: hashTokenNode,
      rateLimit: false,
      clock: { now: () => NOW },
    });
    const strict = await startNodeServer({ handler, port: 0, log: () => {}, accessLog: () => {} });
    try {
      const seen = await fetch(`${strict.url}/stats/agents/unlisted:DCPbot`, { headers: { authorization: `Bearer ${project.token}` } });
      expect(seen.status).toBe(200);
      expect(await seen.json()).toMatchObject({ agent_id: 'unlisted:DCPbot', agent_name: null, visits: 1 });
      expect((await fetch(`${strict.url}/stats/agents/unlisted:Otherbot`, { headers: { authorization: `Bearer ${project.token}` } })).status).toBe(404);
    } finally {
      await strict.close();
    }
  });
});

describe('project settings in SQLite', () => {
  it('are added to a database of the first schema by migration 2', () => {
    const { dir, cleanup } = tempDir();
    try {
      const store = openSqliteStore({ dataDir: dir });
      const { id } = store.createProject('p');
      store.close();
      // Back to schema 1: no settings table.
      const db = new Database(join(dir, 'agentwarden.db'));
      db.exec('DROP TABLE project_settings');
      db.pragma('user_version = 1');
      db.close();
      const upgraded = openSqliteStore({ dataDir: dir });
      expect(upgraded.getProjectSettings(id)).toBeUndefined();
      upgraded.putProjectSettings(id, { robots: null, client_ip: { trusted_proxies: 1 } });
      expect(upgraded.getProjectSettings(id)).toEqual({ robots: null, client_ip: { trusted_proxies: 1 } });
      upgraded.close();
    } finally {
      cleanup();
    }
  });

  it('are kept across a reopen of the database', () => {
    const { dir, cleanup } = tempDir();
    try {
      const store = openSqliteStore({ dataDir: dir });
      const { id } = store.createProject('p');
      expect(store.getProjectSettings(id)).toBeUndefined();
      const settings = { robots: { agent_types: ['AI Agent' as const], disallow: ['/x'], allow: [] }, client_ip: { headers: ['x-real-ip'] } };
      store.putProjectSettings(id, settings);
      store.putProjectSettings(id, { ...settings, client_ip: { trusted_proxies: 2 } });
      store.close();
      const reopened = openSqliteStore({ dataDir: dir });
      expect(reopened.getProjectSettings(id)).toEqual({ ...settings, client_ip: { trusted_proxies: 2 } });
      reopened.close();
    } finally {
      cleanup();
    }
  });
});
