// The REST interface over the real node server on 127.0.0.1 through fetch: every endpoint's
// contract (Known Agents shapes), every error status with its problem+json body, project
// isolation and token rotation, each response checked against the served OpenAPI document.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryVisitStore } from '../../src/index.js';
import { checkResponse, checkSchema } from './schema-check.js';
import { BROWSER_UA, GPTBOT_UA, post, startTestServer, type TestServer } from './helpers.js';

let api: TestServer;
let tokenA: string;
let tokenB: string;
let projectA: string;
let projectB: string;
let openapi: Record<string, any>;

beforeAll(async () => {
  api = await startTestServer();
  ({ token: tokenA, id: projectA } = api.store.createProject('site-a'));
  ({ token: tokenB, id: projectB } = api.store.createProject('site-b'));
  openapi = (await (await fetch(`${api.url}/openapi.json`)).json()) as Record<string, any>;
});
afterAll(async () => api.stop());

/**
 * Asserts the OpenAPI document describes a response: its status for that path and method, its
 * media type, every member of its body, and the contract headers it sends.
 */
function expectDocumented(path: string, method: string, response: { status: number; headers: Headers; json: unknown }) {
  expect(checkResponse(openapi, path, method, response)).toEqual([]);
}

/** Asserts a problem+json body with the given status and the RFC 9457 members. */
function expectProblem(response: { status: number; headers: Headers; json: any }, status: number) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  expect(response.json).toMatchObject({ status, type: expect.stringMatching(/^urn:agentwarden:problem:/), title: expect.any(String), detail: expect.any(String) });
}

describe('POST /agent-identifications', () => {
  it('answers one object with every field for a known agent, echoing id', async () => {
    const res = await post(`${api.url}/agent-identifications`, tokenA, { id: 'req-1', request_headers: { 'User-Agent': GPTBOT_UA } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.json).toEqual({
      id: 'req-1',
      result: 'not_verifiable',
      agent_id: 'gptbot',
      agent_token: 'GPTBot',
      agent_url: 'https://platform.openai.com/docs/bots',
      agent_type_name: 'AI Data Scraper',
      operator_name: 'OpenAI',
    });
    expectDocumented('/agent-identifications', 'post', res);
  });

  it('answers an array in input order; unknown_agent items carry only id and result', async () => {
    const res = await post(`${api.url}/agent-identifications`, tokenA, [
      { id: 'a', request_headers: { 'user-agent': BROWSER_UA } },
      { id: 'b', request_headers: { 'User-Agent': ['Googlebot/2.1 (+http://www.google.com/bot.html)'] } },
      { request_headers: { 'USER-AGENT': GPTBOT_UA } },
      { id: 'd', request_headers: {} },
    ]);
    expect(res.status).toBe(200);
    expect(res.json).toHaveLength(4);
    expect(res.json[0]).toEqual({ id: 'a', result: 'unknown_agent' });
    expect(res.json[1]).toMatchObject({ id: 'b', agent_id: 'googlebot' });
    expect(res.json[2]).toMatchObject({ agent_id: 'gptbot' });
    expect(res.json[2]).not.toHaveProperty('id');
    expect(res.json[3]).toEqual({ id: 'd', result: 'unknown_agent' });
    expectDocumented('/agent-identifications', 'post', res);
  });

  it('accepts and ignores unknown fields, and answers [] to []', async () => {
    const res = await post(`${api.url}/agent-identifications`, tokenA, { request_headers: { 'user-agent': GPTBOT_UA }, node_package_version: '1.8.0', created: 'x' });
    expect(res.status).toBe(200);
    expect(res.json).not.toHaveProperty('node_package_version');
    const empty = await post(`${api.url}/agent-identifications`, tokenA, []);
    expect(empty.status).toBe(200);
    expect(empty.json).toEqual([]);
  });
});

describe('POST /agent-verifications', () => {
  it('answers the identification fields plus the checks made, single and array', async () => {
    const single = await post(`${api.url}/agent-verifications`, tokenA, { request_headers: { 'user-agent': GPTBOT_UA }, request_path: '/', request_method: 'GET' });
    expect(single.status).toBe(200);
    expect(single.json).toEqual(expect.objectContaining({ result: 'not_verifiable', agent_id: 'gptbot', verification: { method: null, checks: [] } }));
    expectDocumented('/agent-verifications', 'post', single);
    const many = await post(`${api.url}/agent-verifications`, tokenA, [{ id: 'x', request_headers: { 'user-agent': BROWSER_UA } }, { request_headers: { 'user-agent': GPTBOT_UA } }]);
    expect(many.json.map((r: any) => r.result)).toEqual(['unknown_agent', 'not_verifiable']);
    expect(many.json[0].id).toBe('x');
    expectDocumented('/agent-verifications', 'post', many);
  });
});

describe('POST /visits', () => {
  const visit = (path: string) => ({
    request_path: path,
    request_method: 'GET',
    request_headers: { 'User-Agent': GPTBOT_UA, Cookie: 'session=1', Authorization: 'Bearer secret', 'X-Auth-Token': 't', Referer: 'https://chatgpt.com/' },
    response_status_code: 200,
    response_headers: { 'Content-Type': 'text/html', 'Set-Cookie': ['a=1'] },
    response_duration_in_milliseconds: 12.5,
    created: '2026-11-21T10:00:00+01:00',
    mcp_request_method: 'tools/call',
  });

  it('202s a single visit, storing it normalised with secret headers stripped', async () => {
    const res = await post(`${api.url}/visits`, tokenA, visit('/single'));
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ accepted: 1, rejected: [] });
    expectDocumented('/visits', 'post', res);
    const stored = api.store.listVisits(projectA).find((v) => v.request_path === '/single')!;
    expect(stored.request_headers).toEqual({ 'user-agent': GPTBOT_UA, referer: 'https://chatgpt.com/' });
    expect(stored.response_headers).toEqual({ 'content-type': 'text/html' });
    expect(stored.created).toBe('2026-11-21T09:00:00.000Z');
    expect(stored.response_status_code).toBe(200);
  });

  it('202s an array, rejecting invalid items by index with JSON pointers', async () => {
    const res = await post(`${api.url}/visits`, tokenA, [visit('/a'), { request_path: 3, request_method: 'GET', request_headers: {} }, visit('/c'), 'nope', { ...visit('/e'), created: 'yesterday' }]);
    expect(res.status).toBe(202);
    expect(res.json.accepted).toBe(2);
    expect(res.json.rejected.map((r: any) => r.index)).toEqual([1, 3, 4]);
    expect(res.json.rejected[0].errors).toEqual([{ pointer: '/1/request_path', code: 'type', message: expect.any(String) }]);
    expect(res.json.rejected[1].errors[0].pointer).toBe('/3');
    expect(res.json.rejected[2].errors[0].pointer).toBe('/4/created');
    expectDocumented('/visits', 'post', res);
    const paths = api.store.listVisits(projectA).map((v) => v.request_path);
    expect(paths).toEqual(expect.arrayContaining(['/a', '/c']));
    expect(paths).not.toContain('/e');
  });

  it('400s when no visit is valid, listing every error', async () => {
    const res = await post(`${api.url}/visits`, tokenA, [{ request_method: 'GET' }]);
    expectProblem(res, 400);
    expect(res.json.errors.map((e: any) => e.pointer)).toEqual(['/0/request_path', '/0/request_headers']);
    expectDocumented('/visits', 'post', res);
  });
});

describe('POST /robots-txts', () => {
  it('answers text/plain with an ETag, and 304 to If-None-Match', async () => {
    const res = await post(`${api.url}/robots-txts`, tokenA, { agent_types: ['AI Data Scraper'], disallow: '/private', extra: 1 });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.text).toBe('User-agent: ClaudeBot\nDisallow: /private\n\nUser-agent: GPTBot\nDisallow: /private\n');
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"[^"]+"$/);
    expectDocumented('/robots-txts', 'post', { ...res, json: res.text });
    const again = await post(`${api.url}/robots-txts`, tokenA, { agent_types: ['AI Data Scraper'], disallow: '/private' }, { 'if-none-match': `W/"other", ${etag}` });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    const changed = await post(`${api.url}/robots-txts`, tokenA, { agent_types: ['Headless Agent', 'AI Data Scraper'] }, { 'if-none-match': etag });
    expect(changed.status).toBe(200);
  });

  it('400s unknown or missing agent types and bad paths, naming each by pointer', async () => {
    const res = await post(`${api.url}/robots-txts`, tokenA, { agent_types: ['AI Data Scraper', 'Robots From Mars'], disallow: 'private\nUser-agent: *' });
    expectProblem(res, 400);
    expect(res.json.errors.map((e: any) => e.pointer)).toEqual(expect.arrayContaining(['/agent_types/1', '/disallow']));
    // The rejected value never reaches robots text; messages quote it escaped, without a raw line break.
    for (const error of res.json.errors) expect(error.message).not.toMatch(/[\r\n]/);
    expectDocumented('/robots-txts', 'post', res);
    const empty = await post(`${api.url}/robots-txts`, tokenA, { agent_types: [] });
    expectProblem(empty, 400);
    const missing = await post(`${api.url}/robots-txts`, tokenA, [{ agent_types: ['AI Agent'] }]);
    expectProblem(missing, 400);
  });

  it('refuses a list past 100 entries with a 400 at its pointer, as the document\'s maxItems says', async () => {
    const schema = openapi['components']['schemas']['RobotsTxtRequest'];
    const types = (n: number) => Array(n).fill('AI Data Scraper');
    const paths = (n: number) => Array.from({ length: n }, (_, i) => `/p${i}`);
    for (const [field, list] of [['agent_types', types], ['disallow', paths], ['allow', paths], ['disallow_agents', (n: number) => Array(n).fill('gptbot')], ['allow_agents', (n: number) => Array(n).fill('claudebot')]] as const) {
      const within = { agent_types: ['AI Data Scraper'], [field]: list(100) };
      expect((await post(`${api.url}/robots-txts`, tokenA, within)).status, field).toBe(200);
      expect(checkSchema(within, schema, openapi), field).toEqual([]);
      const past = { agent_types: ['AI Data Scraper'], [field]: list(101) };
      const refused = await post(`${api.url}/robots-txts`, tokenA, past);
      expectProblem(refused, 400);
      expect(refused.json.errors, field).toEqual([expect.objectContaining({ pointer: `/${field}`, code: 'too-many' })]);
      // disallow and allow are a path or a list: their oneOf then matches neither.
      expect(checkSchema(past, schema, openapi), field).toEqual([expect.stringMatching(new RegExp(`^/${field}: (more items than maxItems|matches 0 of oneOf)`))]);
    }
  });

  it('takes disallow_agents and allow_agents (ids or robots tokens) beside agent_types; an unknown agent is a 400 at its index', async () => {
    const res = await post(`${api.url}/robots-txts`, tokenA, { agent_types: ['AI Data Scraper'], allow_agents: ['claudebot'], disallow_agents: [{ agent: 'Googlebot', disallow: ['/search'] }] });
    expect(res.status).toBe(200);
    expect(res.text).toBe('User-agent: ClaudeBot\nAllow: /\n\nUser-agent: GPTBot\nDisallow: /\n\nUser-agent: Googlebot\nDisallow: /search\n');
    const bad = await post(`${api.url}/robots-txts`, tokenA, { agent_types: ['AI Data Scraper'], disallow_agents: ['GPTBot', 'Robot From Mars'], allow_agents: [{ agent: 7 }] });
    expectProblem(bad, 400);
    expect(bad.json.errors.map((e: any) => [e.pointer, e.code])).toEqual([
      ['/disallow_agents/1', 'unknown-agent'],
      ['/allow_agents/0/agent', 'invalid-type'],
    ]);
    expectDocumented('/robots-txts', 'post', bad);
  });
});

describe('public endpoints', () => {
  it('GET /healthz answers ok without a token', async () => {
    const res = await fetch(`${api.url}/healthz`);
    expect(res.status).toBe(200);
    expectDocumented('/healthz', 'get', { status: res.status, headers: res.headers, json: await res.json() });
  });

  it('GET /readyz answers ready without a token while the store takes visits', async () => {
    const res = await fetch(`${api.url}/readyz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const json = await res.json();
    expect(json).toEqual({ status: 'ready', checks: { store: 'ok' } });
    expectDocumented('/readyz', 'get', { status: res.status, headers: res.headers, json });
  });

  it('GET /openapi.json is OpenAPI 3.1, and every documented operation is served', async () => {
    expect(openapi['openapi']).toBe('3.1.0');
    expect(Object.keys(openapi['paths']).sort()).toEqual([
      '/agent-identifications',
      '/agent-verifications',
      '/agents',
      '/agents/{id}',
      '/healthz',
      '/logs/wordpress',
      '/openapi.json',
      '/project-settings',
      '/readyz',
      '/robots-txts',
      '/robots-violations',
      '/stats',
      '/stats/agents/{id}',
      '/stats/operators',
      '/stats/status-codes',
      '/stats/top-paths',
      '/test-visits',
      '/user',
      '/user-agent-strings-lists',
      '/visits',
      '/visits/stream',
      '/visits/{id}',
    ]);
    // Path parameters take values that exist: a catalog agent, a stored visit.
    const stored = await post(`${api.url}/test-visits`, tokenA, {});
    const examples: Record<string, string> = { '/agents/{id}': '/agents/gptbot', '/stats/agents/{id}': '/stats/agents/gptbot', '/visits/{id}': `/visits/${stored.json.id}` };
    for (const [path, operations] of Object.entries(openapi['paths'] as Record<string, object>)) {
      for (const method of Object.keys(operations)) {
        const res = await fetch(`${api.url}${examples[path] ?? path}`, { method: method.toUpperCase(), headers: { authorization: `Bearer ${tokenA}`, 'content-type': 'application/json' }, body: method === 'get' ? undefined : '{}' });
        expect([404, 405], `${method} ${path}`).not.toContain(res.status);
        // The event stream never ends by itself: release it.
        await res.body?.cancel();
      }
    }
  });
});

describe('read APIs, checked against the OpenAPI document', () => {
  const get = async (path: string, token = tokenA) => {
    const res = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, headers: res.headers, json: (await res.json()) as any };
  };
  const send = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${api.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${tokenA}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, json: (await res.json()) as any };
  };

  beforeAll(async () => {
    await post(`${api.url}/visits`, tokenA, [
      { request_path: '/private/x?q=1', request_method: 'GET', request_headers: { 'user-agent': GPTBOT_UA }, response_status_code: 200, response_duration_in_milliseconds: 3 },
      { request_path: '/pricing', request_method: 'GET', request_headers: { 'user-agent': BROWSER_UA, referer: 'https://perplexity.ai/' } },
    ]);
  });

  it('GET /visits, with every field of a stored visit', async () => {
    const res = await get('/visits?limit=2');
    expect(res.status).toBe(200);
    expect(res.json.visits).toHaveLength(2);
    expect(res.json.visits[0]).toMatchObject({ request_path: '/pricing', agent_id: null, referral: 'perplexity', result: 'unknown_agent' });
    expectDocumented('/visits', 'get', res);
    expectDocumented('/visits', 'get', await get('/visits?agent=none&referral=none&result=verified'));
    const bad = await get('/visits?limit=5000');
    expectProblem(bad, 400);
    expect(bad.json.errors).toEqual([{ pointer: '', parameter: 'limit', code: 'invalid', message: expect.any(String) }]);
    expectDocumented('/visits', 'get', bad);
    expectDocumented('/visits', 'get', await get('/visits', 'aw_wrong'));
  });

  it('GET /visits/stream answers an event stream', async () => {
    const res = await fetch(`${api.url}/visits/stream`, { headers: { authorization: `Bearer ${tokenA}` } });
    const documented = openapi['paths']['/visits/stream'].get.responses[String(res.status)];
    expect(Object.keys(documented.content)).toContain(res.headers.get('content-type')!.split(';')[0]);
    await res.body!.cancel();
    const bad = await fetch(`${api.url}/visits/stream?last_event_id=x`, { headers: { authorization: `Bearer ${tokenA}` } });
    expectDocumented('/visits/stream', 'get', { status: bad.status, headers: bad.headers, json: await bad.json() });
  });

  it('GET /stats by every dimension', async () => {
    for (const by of ['agent', 'agent_type', 'result', 'path', 'referral', 'status']) {
      const res = await get(`/stats?by=${by}&interval=day`);
      expect(res.status).toBe(200);
      expect(res.json.total).toBeGreaterThanOrEqual(2);
      expectDocumented('/stats', 'get', res);
    }
    expectDocumented('/stats', 'get', await get('/stats?interval=fortnight'));
  });

  it('GET /stats/top-paths, GET/PUT /project-settings and GET /robots-violations', async () => {
    const top = await get('/stats/top-paths');
    expect(top.json.paths).toContainEqual(expect.objectContaining({ agent_id: 'gptbot', path: '/private/x?q=1', count: 1 }));
    expectDocumented('/stats/top-paths', 'get', top);
    expectDocumented('/project-settings', 'get', await get('/project-settings'));
    expectDocumented('/robots-violations', 'get', await get('/robots-violations'));
    const saved = await send('PUT', '/project-settings', { robots: { agent_types: ['AI Data Scraper'], disallow: '/private/' }, client_ip: { headers: ['x-real-ip'], trusted_proxies: ['10.0.0.0/8'] } });
    expect(saved.status).toBe(200);
    expectDocumented('/project-settings', 'put', saved);
    const violations = await get('/robots-violations');
    expect(violations.json.violations).toContainEqual(expect.objectContaining({ agent_id: 'gptbot', path: '/private/x?q=1', count: 1, rule: '/private/' }));
    expect(violations.json.violations.every((v: any) => v.path.startsWith('/private/'))).toBe(true);
    expectDocumented('/robots-violations', 'get', violations);
    const byName = await send('PUT', '/project-settings', { robots: { agent_types: [], disallow_agents: [{ agent: 'GPTBot', disallow: '/private/' }], allow_agents: ['claudebot'] } });
    expectDocumented('/project-settings', 'put', byName);
    expectDocumented('/robots-violations', 'get', await get('/robots-violations?agent=gptbot'));
    expectDocumented('/robots-violations', 'get', await get('/robots-violations?agent=googlebot'));
    const bad = await send('PUT', '/project-settings', { robots: { agent_types: [] } });
    expectProblem(bad, 400);
    expectDocumented('/project-settings', 'put', bad);
    await send('PUT', '/project-settings', { robots: null, client_ip: {} });
  });

  it('GET /visits/{id}: the visit with its verification checks and client-IP header; 404 for an id of another project or none', async () => {
    const page = await get('/visits?agent=gptbot&limit=1');
    const id = page.json.visits[0].id as string;
    const one = await get(`/visits/${encodeURIComponent(id)}`);
    expect(one.status).toBe(200);
    expect(one.json).toEqual(page.json.visits[0]);
    expectDocumented('/visits/{id}', 'get', one);
    const elsewhere = await get(`/visits/${encodeURIComponent(id)}`, tokenB);
    expectProblem(elsewhere, 404);
    expectDocumented('/visits/{id}', 'get', elsewhere);
    expectProblem(await get('/visits/%E0%A4%A'), 404);
    expectProblem(await get('/visits/not-an-id'), 404);
  });

  it('GET /stats/status-codes, /stats/operators, /stats/agents/{id}, with the agent and referral filters "any"', async () => {
    const codes = await get('/stats/status-codes');
    // The test catalog lacks agentwarden's test agent, so the two test visits above (no status)
    // are an unlisted agent: their header carries a URL, which no browser's does.
    expect(codes.json.statuses).toEqual([null, '200']);
    expect(codes.json.agents).toEqual([
      { agent_id: 'unlisted:AgentwardenTest', agent_name: 'AgentwardenTest', agent_type: 'Uncategorized', total: 2, counts: [2, 0], other: 0 },
      { agent_id: 'gptbot', agent_name: 'GPTBot', agent_type: 'AI Data Scraper', total: 1, counts: [0, 1], other: 0 },
    ]);
    expectDocumented('/stats/status-codes', 'get', codes);
    const operators = await get('/stats/operators');
    expect(operators.json.operators).toEqual(
      expect.arrayContaining([
        { operator: 'OpenAI', crawled: 1, referred: 0, ratio: null, agents: [{ agent_id: 'gptbot', agent_name: 'GPTBot', count: 1 }], referrals: [] },
        { operator: 'Perplexity', crawled: 0, referred: 1, ratio: 0, agents: [], referrals: [{ referral: 'perplexity', name: 'Perplexity', count: 1 }] },
      ]),
    );
    expectDocumented('/stats/operators', 'get', operators);
    const activity = await get('/stats/agents/gptbot');
    // Every GPTBot visit this file stored in project A, whenever it happened.
    const all = await get(`/stats?agent=gptbot&interval=day&by=result&from=${Date.now() - 3650 * 86_400_000}`);
    expect(activity.json).toMatchObject({ agent_id: 'gptbot', agent_name: 'GPTBot', visits: all.json.total, results: { not_verifiable: all.json.total } });
    expect(all.json.total).toBeGreaterThanOrEqual(1);
    expect(Date.parse(activity.json.first_seen)).toBeLessThanOrEqual(Date.parse(activity.json.last_seen));
    expect(Date.parse(activity.json.last_seen)).toBeLessThanOrEqual(Date.now());
    expectDocumented('/stats/agents/{id}', 'get', activity);
    const never = await get('/stats/agents/claudebot');
    expect(never.json).toEqual({ agent_id: 'claudebot', agent_name: 'ClaudeBot', visits: 0, results: {}, first_seen: null, last_seen: null });
    const agentPages = await get('/stats?by=path&agent=any&interval=day');
    // (The two unlisted test visits went to "/".)
    expect(agentPages.json.series).toEqual([{ key: '/', total: 2 }, { key: '/private/x', total: 1 }]);
    const landing = await get('/stats?by=path&referral=any&interval=day');
    expect(landing.json.series).toEqual([{ key: '/pricing', total: 1 }]);
    expectProblem(await get('/stats?status=42'), 400);
  });

  it('GET /agents and /agents/{id}: the catalog, without a token', async () => {
    const res = await fetch(`${api.url}/agents?q=openai`);
    const body = (await res.json()) as any;
    expect(res.status).toBe(200);
    expect(body).toEqual({
      total: 1,
      next_offset: null,
      agents: [
        {
          id: 'gptbot',
          name: 'GPTBot',
          type: 'AI Data Scraper',
          operator: 'OpenAI',
          url: 'https://platform.openai.com/docs/bots',
          description: null,
          robots_tokens: ['GPTBot'],
          verification_methods: [],
          signature_agents: [],
          reverse_dns: [],
          respects_robots_txt: null,
          listed: true,
        },
      ],
    });
    expectDocumented('/agents', 'get', { status: res.status, headers: res.headers, json: body });
    const one = await fetch(`${api.url}/agents/googlebot`);
    expectDocumented('/agents/{id}', 'get', { status: one.status, headers: one.headers, json: await one.json() });
    // An attack probe and an unlisted bot have pages too, marked as not in the catalog.
    for (const id of ['probe:log4shell', 'unlisted:AcmeBot']) {
      const outside = await fetch(`${api.url}/agents/${encodeURIComponent(id)}`);
      const json = (await outside.json()) as any;
      expect({ id, status: outside.status, listed: json.listed }).toEqual({ id, status: 200, listed: false });
      expectDocumented('/agents/{id}', 'get', { status: outside.status, headers: outside.headers, json });
    }
    const none = await fetch(`${api.url}/agents/nope`);
    expectDocumented('/agents/{id}', 'get', { status: none.status, headers: none.headers, json: await none.json() });
    expect(none.status).toBe(404);
    const bad = await fetch(`${api.url}/agents?type=Robots`);
    expect(bad.status).toBe(400);
  });

  it('POST /test-visits', async () => {
    const res = await send('POST', '/test-visits');
    expect(res.status).toBe(202);
    expect(res.json.request_headers['user-agent']).toMatch(/AgentwardenTest/);
    expectDocumented('/test-visits', 'post', res);
  });
});

describe('errors', () => {
  const identify = (headers: Record<string, string>, body: unknown = { request_headers: {} }) =>
    fetch(`${api.url}/agent-identifications`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }).then(async (r) => ({
      status: r.status,
      headers: r.headers,
      json: (await r.json()) as any,
    }));

  it.each([
    ['a missing Authorization header', {}, /Authorization: Bearer/, 'missing'],
    ['a misspelled header name (Autorization)', { autorization: 'Bearer x' }, /"autorization": did you mean/, 'misspelled-header'],
    ['the Basic scheme', { authorization: 'Basic dXNlcjpwYXNz' }, /Bearer scheme/, 'wrong-scheme'],
    ['an empty bearer token', { authorization: 'Bearer ' }, /Bearer scheme|empty/, 'malformed'],
    ['an unknown token', { authorization: 'Bearer aw_doesnotexist' }, /unknown or has been revoked/, 'unknown-token'],
  ])('401 with WWW-Authenticate: Bearer for %s, naming Authorization in errors[]', async (_name, headers, detail, code) => {
    const res = await identify(headers);
    expectProblem(res, 401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="agentwarden"/);
    expect(res.json.detail).toMatch(detail);
    expect(res.json.errors).toEqual([{ pointer: '', header: 'Authorization', code, message: expect.any(String) }]);
    expectDocumented('/agent-identifications', 'post', res);
  });

  it('401 of a read route names Authorization too', async () => {
    const res = await fetch(`${api.url}/visits`);
    const json = await res.json();
    expectProblem({ status: res.status, headers: res.headers, json }, 401);
    expect(json.errors).toEqual([{ pointer: '', header: 'Authorization', code: 'missing', message: 'is required: Bearer <token>' }]);
    expectDocumented('/visits', 'get', { status: res.status, headers: res.headers, json });
  });

  it('404 problem+json for an unknown path', async () => {
    const res = await post(`${api.url}/nope`, tokenA, {});
    expectProblem(res, 404);
  });

  it('logs a hostile request path as valid JSON, without its query string', async () => {
    const { connect } = await import('node:net');
    const socket = connect(api.server.port, '127.0.0.1');
    socket.write('GET /a"b\\c?token=aw_secret HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    let reply = '';
    socket.on('data', (chunk) => (reply += chunk.toString()));
    await new Promise((resolve) => socket.once('close', resolve));
    expect(reply).toMatch(/^HTTP\/1\.1 404/);
    expect(api.logs.at(-1)).toMatchObject({ path: '/a"b\\c', status: 404 });
    expect(JSON.stringify(api.logs)).not.toContain('aw_secret');
  });

  it('405 with Allow for a wrong method', async () => {
    const res = await fetch(`${api.url}/visits`, { method: 'DELETE', headers: { authorization: `Bearer ${tokenA}` } });
    expectProblem({ status: res.status, headers: res.headers, json: await res.json() }, 405);
    expect(res.headers.get('allow')).toBe('POST, GET, HEAD');
    const get = await fetch(`${api.url}/healthz`, { method: 'DELETE' });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('GET, HEAD');
  });

  it('415 for a non-JSON or missing Content-Type', async () => {
    // A patch format (RFC 6902, RFC 7396) is JSON with other semantics, and "application/+json" no media type.
    const patches = ['application/json-patch+json', 'application/merge-patch+json', 'application/vnd.example-patch+json', 'application/+json'];
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', undefined, ...patches]) {
      const res = await fetch(`${api.url}/visits`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokenA}`, ...(contentType === undefined ? {} : { 'content-type': contentType }) },
        body: new TextEncoder().encode('{}'),
      });
      const json = await res.json();
      expectProblem({ status: res.status, headers: res.headers, json }, 415);
      expectDocumented('/visits', 'post', { status: res.status, headers: res.headers, json });
      // Like every other 4xx, it names what is at fault: here a header, not a body field.
      expect(json.errors).toEqual([{ pointer: '', header: 'Content-Type', code: 'media-type', message: 'must be application/json' }]);
      expect(res.headers.get('accept-post')).toBe('application/json');
    }
    for (const contentType of ['application/json; charset=utf-8', 'application/json;charset="UTF-8"', 'application/json;;', 'application/problem+json; v=1', 'Application/Vnd.Example+JSON']) {
      const ok = await post(`${api.url}/agent-identifications`, tokenA, { request_headers: {} }, { 'content-type': contentType });
      expect(ok.status, contentType).toBe(200);
    }
    // A body in another charset would be read as UTF-8: refused, as is any charset but UTF-8.
    for (const contentType of ['application/json; charset=iso-8859-1', 'application/json; charset=utf-16', ...patches]) {
      const refused = await post(`${api.url}/agent-identifications`, tokenA, { request_headers: {} }, { 'content-type': contentType });
      expectProblem(refused, 415);
    }
  });

  it('415 with Accept-Encoding for a compressed body: it would reach the JSON parser still compressed', async () => {
    const body = gzipSync(JSON.stringify({ request_path: '/', request_method: 'GET', request_headers: {} }));
    for (const coding of ['gzip', 'br', 'deflate, gzip']) {
      const res = await fetch(`${api.url}/visits`, { method: 'POST', headers: { authorization: `Bearer ${tokenA}`, 'content-type': 'application/json', 'content-encoding': coding }, body });
      const json = await res.json();
      expectProblem({ status: res.status, headers: res.headers, json }, 415);
      expect(res.headers.get('accept-encoding')).toBe('identity');
      expect(json.detail).toContain(coding);
      expect(json.errors).toEqual([{ pointer: '', header: 'Content-Encoding', code: 'content-coding', message: 'must be identity' }]);
    }
    const identity = await post(`${api.url}/agent-identifications`, tokenA, { request_headers: {} }, { 'content-encoding': 'identity' });
    expect(identity.status).toBe(200);
  });

  it('400 for invalid JSON, invalid UTF-8, wrong types and a non-object body, with pointers', async () => {
    const bad = await post(`${api.url}/agent-identifications`, tokenA, '{"request_headers": ');
    expectProblem(bad, 400);
    expect(bad.json.errors[0]).toMatchObject({ pointer: '', code: 'invalid-json' });
    expectDocumented('/agent-identifications', 'post', bad);
    const utf8 = await fetch(`${api.url}/visits`, { method: 'POST', headers: { authorization: `Bearer ${tokenA}`, 'content-type': 'application/json' }, body: new Uint8Array([0x22, 0xff, 0x22]) });
    expect(utf8.status).toBe(400);
    const types = await post(`${api.url}/agent-identifications`, tokenA, [{ request_headers: { ok: 'x' } }, { id: 7, request_headers: { 'user-agent': 5, 'a/b': ['x', 1] } }, { request_headers: 'x' }, {}]);
    expectProblem(types, 400);
    expect(types.json.errors.map((e: any) => e.pointer)).toEqual(['/1/id', '/1/request_headers/user-agent', '/1/request_headers/a~1b', '/2/request_headers', '/3/request_headers']);
    const scalar = await post(`${api.url}/visits`, tokenA, 42);
    expectProblem(scalar, 400);
  });

  it('413 past the array, header and depth limits', async () => {
    const items = await post(`${api.url}/agent-identifications`, tokenA, Array.from({ length: 1001 }, () => ({ request_headers: {} })));
    expectProblem(items, 413);
    expect(items.json.errors[0].code).toBe('max-items');
    expectDocumented('/agent-identifications', 'post', items);
    const manyHeaders = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`x-h${i}`, 'v']));
    const headers = await post(`${api.url}/agent-identifications`, tokenA, [{ request_headers: {} }, { request_headers: manyHeaders }]);
    expectProblem(headers, 413);
    expect(headers.json.errors[0]).toMatchObject({ pointer: '/1/request_headers', code: 'max-headers' });
    const bigHeader = await post(`${api.url}/visits`, tokenA, { request_path: '/', request_method: 'GET', request_headers: { 'user-agent': 'x'.repeat(70_000) } });
    expectProblem(bigHeader, 413);
    const deep = await post(`${api.url}/visits`, tokenA, `${'['.repeat(65)}${']'.repeat(65)}`);
    expectProblem(deep, 413);
  });

  it('413 for a body past the byte limit, declared or streamed', async () => {
    const res = await post(`${api.url}/visits`, tokenA, JSON.stringify({ request_path: '/', request_method: 'GET', request_headers: {}, pad: 'x'.repeat(1024 * 1024) }));
    expectProblem(res, 413);
    // Chunked upload with no Content-Length: refused while reading.
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode(`"${'y'.repeat(100_000)}",`));
        controller.close();
      },
    });
    const chunked = await fetch(`${api.url}/visits`, { method: 'POST', headers: { authorization: `Bearer ${tokenA}`, 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit);
    expect(chunked.status).toBe(413);
  });
});

describe('projects and tokens', () => {
  it('a token only reaches its own project: visits are stored per project', async () => {
    await post(`${api.url}/visits`, tokenB, { request_path: '/only-b', request_method: 'GET', request_headers: {} });
    expect(api.store.listVisits(projectB).map((v) => v.request_path)).toEqual(['/only-b']);
    expect(api.store.listVisits(projectA).map((v) => v.request_path)).not.toContain('/only-b');
    expect(api.logs.filter((l) => l['project'] === projectB).length).toBeGreaterThan(0);
  });

  it('a token naming another project with ?project= is refused, not answered from its own', async () => {
    const other = await fetch(`${api.url}/visits?project=${encodeURIComponent(projectB)}`, { headers: { authorization: `Bearer ${tokenA}` } });
    const json = await other.json();
    expectProblem({ status: other.status, headers: other.headers, json }, 403);
    expect(json.errors).toEqual([expect.objectContaining({ parameter: 'project', code: 'other-project' })]);
    const twice = await fetch(`${api.url}/stats?project=${encodeURIComponent(projectA)}&project=${encodeURIComponent(projectB)}`, { headers: { authorization: `Bearer ${tokenA}` } });
    expect(twice.status).toBe(403);
    // Its own project, named or not, is served.
    expect((await fetch(`${api.url}/visits?project=${encodeURIComponent(projectA)}`, { headers: { authorization: `Bearer ${tokenA}` } })).status).toBe(200);
    const post = await fetch(`${api.url}/visits?project=${encodeURIComponent(projectB)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokenA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ request_path: '/misdirected', request_method: 'GET', request_headers: {} }),
    });
    expect(post.status).toBe(403);
    expect(api.store.listVisits(projectA).map((v) => v.request_path)).not.toContain('/misdirected');
  });

  it('rotation issues a working token and revokes the old one; revocation takes effect at once', async () => {
    const { id, token: first } = api.store.createProject('rotating');
    expect((await post(`${api.url}/agent-identifications`, first, { request_headers: {} })).status).toBe(200);
    const { token: second } = api.store.issueToken(id, { revokeOthers: true });
    expect(second).toMatch(/^aw_[A-Za-z0-9_-]{43}$/);
    expect((await post(`${api.url}/agent-identifications`, first, { request_headers: {} })).status).toBe(401);
    expect((await post(`${api.url}/agent-identifications`, second, { request_headers: {} })).status).toBe(200);
    const { tokenId, token: third } = api.store.issueToken(id);
    expect((await post(`${api.url}/agent-identifications`, second, { request_headers: {} })).status).toBe(200);
    expect(api.store.revokeToken({ tokenId })).toBe(true);
    expect((await post(`${api.url}/agent-identifications`, third, { request_headers: {} })).status).toBe(401);
    expect(api.store.revokeToken({ token: second })).toBe(true);
    expect((await post(`${api.url}/agent-identifications`, second, { request_headers: {} })).status).toBe(401);
  });

  it('stores only token hashes and never logs a token', async () => {
    const listed = JSON.stringify(api.store.listProjects());
    expect(listed).not.toContain(tokenA);
    expect(listed).toContain(tokenA.slice(0, 7));
    expect(JSON.stringify(api.logs)).not.toContain(tokenA.slice(3));
    expect(api.logs[0]).toMatchObject({ msg: 'request', method: expect.any(String), status: expect.any(Number), duration_ms: expect.any(Number) });
  });
});

describe('server configuration', () => {
  it('429 with Retry-After once a token is past its rate', async () => {
    const limited = await startTestServer({ rateLimit: { ratePerSecond: 0.5, burst: 2 } });
    try {
      const { token } = limited.store.createProject('limited');
      const other = limited.store.createProject('other').token;
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await post(`${limited.url}/agent-identifications`, token, { request_headers: {} })).status);
      expect(statuses).toEqual([200, 200, 429]);
      const res = await post(`${limited.url}/agent-identifications`, token, { request_headers: {} });
      expectProblem(res, 429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expectDocumented('/agent-identifications', 'post', res);
      // The limit is per token: another project is unaffected.
      expect((await post(`${limited.url}/agent-identifications`, other, { request_headers: {} })).status).toBe(200);
    } finally {
      await limited.stop();
    }
  });

  it('500 without internals when a store fails; the error goes to onError', async () => {
    const seen: unknown[] = [];
    const failing = await startTestServer({
      visits: { ...createMemoryVisitStore(), append: async () => Promise.reject(new Error('disk on fire at /var/secret/path')) },
      onError: (error) => seen.push(error),
    });
    try {
      const { token } = failing.store.createProject('p');
      const res = await post(`${failing.url}/visits`, token, { request_path: '/', request_method: 'GET', request_headers: {} });
      expectProblem(res, 500);
      expect(res.text).not.toMatch(/disk on fire|secret|at .*\.(ts|js)/);
      expect(seen).toHaveLength(1);
    } finally {
      await failing.stop();
    }
  });

  it('serves every route under a base path and nothing outside it', async () => {
    const prefixed = await startTestServer({ basePath: '/api/v1/' });
    try {
      const { token } = prefixed.store.createProject('p');
      expect((await post(`${prefixed.url}/api/v1/agent-identifications`, token, { request_headers: {} })).status).toBe(200);
      expect((await post(`${prefixed.url}/agent-identifications`, token, { request_headers: {} })).status).toBe(404);
      const doc = (await (await fetch(`${prefixed.url}/api/v1/openapi.json`)).json()) as any;
      expect(doc.servers).toEqual([{ url: '/api/v1' }]);
    } finally {
      await prefixed.stop();
    }
  });
});

describe('every operation, as the document describes it', () => {
  // Path parameters take values that exist: a catalog agent, a stored visit.
  const operations = async () => {
    const stored = await post(`${api.url}/test-visits`, tokenA, {});
    const examples: Record<string, string> = { '/agents/{id}': '/agents/gptbot', '/stats/agents/{id}': '/stats/agents/gptbot', '/visits/{id}': `/visits/${stored.json.id}` };
    return Object.entries(openapi['paths'] as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ path, method, operation, target: examples[path] ?? path })),
    );
  };
  const call = async (method: string, target: string) => {
    const res = await fetch(`${api.url}${target}`, { method: method.toUpperCase(), headers: { authorization: `Bearer ${tokenA}`, 'content-type': 'application/json' }, body: method === 'get' ? undefined : '{}' });
    const text = await res.text();
    return { status: res.status, headers: res.headers, json: JSON.parse(text) as any };
  };

  it('answers 400 invalid-query to a repeated or misencoded query parameter, on every operation', async () => {
    for (const { path, method, target } of await operations()) {
      for (const [query, code] of [['x=1&x=2', 'repeated'], ['x=%zz', 'encoding']]) {
        const res = await call(method, `${target}?${query}`);
        expectProblem(res, 400);
        expect(res.json.errors, `${method} ${path}?${query}`).toEqual([{ pointer: '', parameter: 'x', code, message: expect.any(String) }]);
        expectDocumented(path, method, res);
      }
    }
  });

  it('declares the project parameter and its 403 wherever a token is taken, and answers it', async () => {
    for (const { path, method, operation, target } of await operations()) {
      const security = (operation.security ?? openapi['security']) as Record<string, unknown>[];
      if (!security.some((scheme) => 'bearer' in scheme)) continue;
      expect(operation.parameters?.map((parameter: any) => `${parameter.in} ${parameter.name}`), `${method} ${path}`).toContain('query project');
      const res = await call(method, `${target}?project=${encodeURIComponent(projectB)}`);
      expectProblem(res, 403);
      expect(res.json.errors, `${method} ${path}`).toEqual([expect.objectContaining({ parameter: 'project', code: 'other-project' })]);
      expectDocumented(path, method, res);
    }
  });

  it('describes accepted and rejected of the 400 that no valid visit gets, on /visits and /logs/wordpress', async () => {
    const visits = await post(`${api.url}/visits`, tokenA, [1, 2]);
    expect(visits.json).toMatchObject({ status: 400, accepted: 0, rejected: [{ index: 0 }, { index: 1 }] });
    expectDocumented('/visits', 'post', visits);
    const log = await fetch(`${api.url}/logs/wordpress`, { method: 'POST', headers: { authorization: `Bearer ${tokenA}`, 'content-type': 'text/plain' }, body: '{"x":1}\n' });
    const json = await log.json();
    expect(json).toMatchObject({ status: 400, accepted: 0, rejected: [{ index: 0 }] });
    expectDocumented('/logs/wordpress', 'post', { status: log.status, headers: log.headers, json });
  });

  it('declares Allow on 405, and the CSV download headers', async () => {
    const wrong = await fetch(`${api.url}/visits`, { method: 'DELETE', headers: { authorization: `Bearer ${tokenA}` } });
    expectDocumented('/visits', 'post', { status: wrong.status, headers: wrong.headers, json: await wrong.json() });
    await post(`${api.url}/visits`, tokenA, [1, 2].map((i) => ({ request_path: `/csv/${i}`, request_method: 'GET', request_headers: {} })));
    const csv = await fetch(`${api.url}/visits?format=csv&limit=1`, { headers: { authorization: `Bearer ${tokenA}` } });
    expect(csv.headers.get('x-next-cursor')).toMatch(/^\S+$/);
    expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename=/);
    expectDocumented('/visits', 'get', { status: csv.status, headers: csv.headers, json: await csv.text() });
    for (const path of ['/stats', '/stats/top-paths', '/robots-violations']) {
      const res = await fetch(`${api.url}${path}?format=csv`, { headers: { authorization: `Bearer ${tokenA}` } });
      expectDocumented(path, 'get', { status: res.status, headers: res.headers, json: await res.text() });
    }
  });
});
