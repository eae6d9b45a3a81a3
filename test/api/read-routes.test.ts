// The read APIs through the transport-agnostic handler with the in-memory stores: timeline paging
// and filters, stats and top paths on a data set with known counts, robots violations, CSV export,
// project settings and their validation, test visits, project isolation and store failures.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createApiHandler,
  createEngine,
  createMemoryProjectStore,
  createMemoryVisitStore,
  TEST_AGENT_USER_AGENT,
  VisitStoreUnavailableError,
  type AdminAuthenticator,
  type ApiHandler,
  type VisitStore,
} from '../../src/index.js';
import { createMemoryProjectSettingsStore } from '../../src/api/project-settings.js';
import { csvCell } from '../../src/api/csv.js';
import { GPTBOT_UA } from '../server/helpers.js';
import { DATA_SET, NOW, READ_CATALOG } from './read-fixtures.js';

const engine = createEngine({ catalog: READ_CATALOG });

interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: any;
}

function caller(handle: ApiHandler) {
  return async (method: string, path: string, token: string | undefined, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
    const response = await handle({
      method,
      path,
      headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body)),
    });
    // A stream body (the event stream) is released at once: these tests read only its status.
    if (typeof response.body === 'object') await response.body.cancel();
    const text = typeof response.body === 'string' ? response.body : '';
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers as Record<string, string>, text, json };
  };
}

async function setup(visitStore: VisitStore = createMemoryVisitStore()) {
  const projects = createMemoryProjectStore();
  const a = await projects.createProject('a');
  const b = await projects.createProject('b');
  const settings = createMemoryProjectSettingsStore();
  const handle = createApiHandler({ engine, projects, visits: visitStore, settings, rateLimit: false, clock: { now: () => NOW } });
  return { call: caller(handle), tokenA: a.token, tokenB: b.token, idA: a.id, idB: b.id, settings, visits: visitStore };
}

let env: Awaited<ReturnType<typeof setup>>;
beforeAll(async () => {
  env = await setup();
  const res = await env.call('POST', '/visits', env.tokenA, DATA_SET);
  expect(res.json).toEqual({ accepted: 10, rejected: [] });
});

describe('GET /visits', () => {
  it('pages newest first with a next cursor until the end, without gaps or repeats', async () => {
    const seen: string[] = [];
    let path = '/visits?limit=3';
    const times: string[] = [];
    for (let pages = 0; pages < 10; pages++) {
      const res = await env.call('GET', path, env.tokenA);
      expect(res.status).toBe(200);
      seen.push(...res.json.visits.map((v: any) => v.id));
      times.push(...res.json.visits.map((v: any) => v.time));
      if (res.json.next === null) break;
      expect(res.json.visits).toHaveLength(3);
      path = `/visits?limit=3&after=${res.json.next}`;
    }
    expect(seen).toHaveLength(10);
    expect(new Set(seen).size).toBe(10);
    expect(times).toEqual([...times].sort().reverse());
    expect(times[0]).toBe(new Date(NOW - 10 * 60_000).toISOString());
  });

  it('answers each visit with ISO times, the agent name and no project id', async () => {
    const res = await env.call('GET', '/visits?limit=1&agent=gptbot', env.tokenA);
    expect(res.json.visits[0]).toMatchObject({
      time: '2026-11-21T11:30:00.000Z',
      received: new Date(NOW).toISOString(),
      agent_id: 'gptbot',
      agent_name: 'GPTBot',
      agent_type: 'AI Data Scraper',
      result: 'not_verifiable',
      client_ip: null,
      referral: null,
      request_method: 'GET',
      request_path: '/public',
      request_headers: { 'user-agent': GPTBOT_UA },
    });
    expect(res.json.visits[0]).not.toHaveProperty('project_id');
  });

  it.each([
    ['agent=gptbot', 4],
    ['agent=claudebot', 2],
    ['agent=none', 3],
    ['agent=nobody', 0],
    ['agent_type=AI%20Data%20Scraper', 6],
    ['agent_type=Search+Engine+Crawler', 1],
    ['agent_type=Headless%20Browser', 0],
    ['agent_type=none', 3],
    ['result=unknown_agent', 3],
    ['result=not_verifiable', 7],
    ['referral=chatgpt', 2],
    ['referral=none', 8],
    ['path=/private/a', 4],
    ['path=/private/b', 2],
    ['agent=gptbot&path=/private/a', 3],
  ])('filters %s', async (filter, count) => {
    const res = await env.call('GET', `/visits?limit=1000&${filter}`, env.tokenA);
    expect(res.status).toBe(200);
    expect(res.json.visits).toHaveLength(count);
    expect(res.json.next).toBeNull();
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=abc', 'limit'],
    ['agent_type=Robots', 'agent_type'],
    // Names of Object.prototype's members: once a 500 (or an empty filter), as plain-object lookups found them.
    ['agent_type=toString', 'agent_type'],
    ['agent_type=constructor', 'agent_type'],
    ['agent_type=__proto__', 'agent_type'],
    ['result=maybe', 'result'],
    ['referral=bing', 'referral'],
    ['path=private', 'path'],
    ['after=not-a-cursor', 'after'],
    ['format=xml', 'format'],
  ])('answers 400 naming the parameter for %s', async (query, parameter) => {
    const res = await env.call('GET', `/visits?${query}`, env.tokenA);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json.errors).toEqual([expect.objectContaining({ pointer: '', parameter })]);
  });

  it('needs a token', async () => {
    expect((await env.call('GET', '/visits', undefined)).status).toBe(401);
  });
});

describe('GET /stats', () => {
  it('counts by agent per hour, with names and types, matching the data set', async () => {
    const res = await env.call('GET', '/stats?from=2026-11-21T09:00:00Z&to=2026-11-21T12:00:00Z&interval=hour&by=agent', env.tokenA);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      from: '2026-11-21T09:00:00.000Z',
      to: '2026-11-21T12:00:00.000Z',
      interval: 'hour',
      by: 'agent',
      series: [
        { key: 'gptbot', total: 4, agent_name: 'GPTBot', agent_type: 'AI Data Scraper' },
        { key: null, total: 3, agent_name: null, agent_type: null },
        { key: 'claudebot', total: 2, agent_name: 'ClaudeBot', agent_type: 'AI Data Scraper' },
        { key: 'googlebot', total: 1, agent_name: 'Googlebot', agent_type: 'Search Engine Crawler' },
      ],
      buckets: [
        { start: '2026-11-21T09:00:00.000Z', counts: [1, 0, 1, 0], other: 0 },
        { start: '2026-11-21T10:00:00.000Z', counts: [2, 1, 0, 1], other: 0 },
        { start: '2026-11-21T11:00:00.000Z', counts: [1, 2, 1, 0], other: 0 },
      ],
      other: 0,
      total: 10,
    });
  });

  it('defaults to the last 24 hours by agent type per hour, and takes epoch milliseconds', async () => {
    const res = await env.call('GET', '/stats', env.tokenA);
    expect(res.json).toMatchObject({ from: new Date(Math.floor((NOW - 86_400_000) / 3_600_000) * 3_600_000).toISOString(), to: new Date(NOW).toISOString(), interval: 'hour', by: 'agent_type', total: 10 });
    expect(res.json.buckets).toHaveLength(24);
    expect(res.json.series).toEqual([
      { key: 'AI Data Scraper', total: 6 },
      { key: null, total: 3 },
      { key: 'Search Engine Crawler', total: 1 },
    ]);
    const ms = await env.call('GET', `/stats?from=${NOW - 3 * 3_600_000}&to=${NOW}&interval=day&by=referral&limit=1`, env.tokenA);
    expect(ms.json.series).toEqual([{ key: null, total: 8 }]);
    expect(ms.json.other).toBe(2);
    expect(ms.json.buckets).toEqual([{ start: '2026-11-21T00:00:00.000Z', counts: [8], other: 2 }]);
    // Buckets are whole: the answer's from is where counting started, the bucket holding the one asked.
    expect(ms.json.from).toBe('2026-11-21T00:00:00.000Z');
    const unaligned = await env.call('GET', '/stats?from=2026-11-21T09:30:00Z&to=2026-11-21T12:00:00Z&interval=hour&by=agent', env.tokenA);
    expect(unaligned.json).toMatchObject({ from: '2026-11-21T09:00:00.000Z', total: 10 });
    const codes = await env.call('GET', '/stats/status-codes?from=2026-11-21T09:30:30.500Z&to=2026-11-21T12:00:00Z', env.tokenA);
    expect(codes.json.from).toBe('2026-11-21T09:30:00.000Z');
    const operators = await env.call('GET', '/stats/operators?from=2026-11-21T09:30:30.500Z&to=2026-11-21T12:00:00Z', env.tokenA);
    expect(operators.json.from).toBe('2026-11-21T09:30:00.000Z');
  });

  it('counts by result, path and filtered', async () => {
    const byPath = await env.call('GET', '/stats?from=2026-11-21T09:00:00Z&to=2026-11-21T12:00:00Z&by=path&agent_type=AI+Data+Scraper', env.tokenA);
    expect(byPath.json.series).toEqual([
      { key: '/private/a', total: 3 },
      { key: '/private/b', total: 2 },
      { key: '/public', total: 1 },
    ]);
    const byResult = await env.call('GET', '/stats?from=2026-11-21T11:00:00%2B00:00&to=2026-11-21T12:00:00+00:00&interval=minute&by=result', env.tokenA);
    expect(byResult.status).toBe(200);
    expect(byResult.json.buckets).toHaveLength(60);
    expect(byResult.json.series).toEqual([
      { key: 'not_verifiable', total: 2 },
      { key: 'unknown_agent', total: 2 },
    ]);
  });

  it.each([
    ['from=yesterday', 'from'],
    ['to=2026-13-01', 'to'],
    ['from=2026-11-21T10:00:00', 'from'],
    ['from=2026-11-21T12:00:00Z&to=2026-11-21T11:00:00Z', 'to'],
    ['interval=week', 'interval'],
    ['by=country', 'by'],
    ['limit=0', 'limit'],
    ['from=0&to=2000000000000&interval=minute', 'interval'],
  ])('answers 400 naming the parameter for %s', async (query, parameter) => {
    const res = await env.call('GET', `/stats?${query}`, env.tokenA);
    expect(res.status).toBe(400);
    expect(res.json.errors[0].parameter).toBe(parameter);
  });

  // Without `to` the range ends now: a `from` after it is the client's parameter at fault, not the `to` it never sent.
  it.each(['/stats', '/stats/top-paths', '/robots-violations', '/stats/status-codes', '/stats/operators'])('%s names from for a from in the future without to', async (path) => {
    const res = await env.call('GET', `${path}?from=${NOW + 1000}`, env.tokenA);
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual([{ pointer: '', parameter: 'from', code: 'invalid', message: 'from is in the future; without to, the range ends now' }]);
    expect(res.json.detail).toContain('from is in the future');
  });
});

describe('GET /stats/top-paths', () => {
  it('lists (agent, path) pairs of catalog agents by visits, with the latest time', async () => {
    const res = await env.call('GET', '/stats/top-paths', env.tokenA);
    expect(res.status).toBe(200);
    expect(res.json.paths).toEqual([
      { agent_id: 'gptbot', agent_name: 'GPTBot', agent_type: 'AI Data Scraper', path: '/private/a', count: 3, last: '2026-11-21T10:01:00.000Z' },
      { agent_id: 'claudebot', agent_name: 'ClaudeBot', agent_type: 'AI Data Scraper', path: '/private/b?x=1', count: 2, last: '2026-11-21T11:00:00.000Z' },
      { agent_id: 'googlebot', agent_name: 'Googlebot', agent_type: 'Search Engine Crawler', path: '/private/a', count: 1, last: '2026-11-21T10:30:00.000Z' },
      { agent_id: 'gptbot', agent_name: 'GPTBot', agent_type: 'AI Data Scraper', path: '/public', count: 1, last: '2026-11-21T11:30:00.000Z' },
    ]);
  });

  it('narrows to one agent, to agent=none, and to a limit', async () => {
    const one = await env.call('GET', '/stats/top-paths?agent=gptbot&limit=1', env.tokenA);
    expect(one.json.paths.map((p: any) => [p.path, p.count])).toEqual([['/private/a', 3]]);
    const none = await env.call('GET', '/stats/top-paths?agent=none', env.tokenA);
    expect(none.json.paths.map((p: any) => [p.agent_id, p.path, p.count])).toEqual([
      [null, '/pricing', 2],
      [null, '/', 1],
    ]);
  });
});

describe('project settings and robots violations', () => {
  it('answers defaults, saves valid settings and answers them canonical', async () => {
    const empty = await env.call('GET', '/project-settings', env.tokenA);
    expect(empty.json).toEqual({ robots: null, client_ip: {}, site_hosts: [] });
    const saved = await env.call('PUT', '/project-settings', env.tokenA, { robots: { agent_types: ['AI Data Scraper', 'Headless Browser'], disallow: '/private/', allow: ['/private/b'] } });
    expect(saved.status).toBe(200);
    expect(saved.json).toEqual({ robots: { agent_types: ['AI Data Scraper', 'Automated Agent'], disallow: ['/private/'], allow: ['/private/b'] }, client_ip: {}, site_hosts: [] });
    expect((await env.call('GET', '/project-settings', env.tokenA)).json).toEqual(saved.json);
    expect((await env.call('GET', '/project-settings', env.tokenB)).json).toEqual({ robots: null, client_ip: {}, site_hosts: [] });
  });

  it('reports visits to disallowed paths by agents of the chosen types, with the deciding rule', async () => {
    const res = await env.call('GET', '/robots-violations', env.tokenA);
    expect(res.status).toBe(200);
    // claudebot's /private/b?x=1 is allowed (Allow: /private/b is longer); googlebot's type is not chosen.
    expect(res.json.violations).toEqual([{ agent_id: 'gptbot', agent_name: 'GPTBot', agent_type: 'AI Data Scraper', path: '/private/a', count: 3, last: '2026-11-21T10:01:00.000Z', rule: '/private/' }]);
    expect(res.json.robots.agent_types).toEqual(['AI Data Scraper', 'Automated Agent']);
    const b = await env.call('GET', '/robots-violations', env.tokenB);
    expect(b.json).toMatchObject({ robots: null, violations: [] });
  });

  it("counts only the agent's own visits: one whose verification failed came from someone borrowing its name", async () => {
    const own = await setup();
    expect((await own.call('PUT', '/project-settings', own.tokenA, { robots: { agent_types: ['AI Data Scraper'], disallow: '/private/' } })).status).toBe(200);
    expect((await own.call('POST', '/visits', own.tokenA, DATA_SET)).status).toBe(202);
    const [stored] = await own.visits.timeline({ projectId: own.idA, limit: 1, filter: { agent_id: 'gptbot', path: '/private/a' } });
    const { id: _id, project_id: _project, ...visit } = stored!;
    await own.visits.append(own.idA, [{ ...visit, result: 'verification_failed' }, { ...visit, result: 'verification_failed' }, { ...visit, result: 'verified' }]);
    // Three not verifiable and one verified; the two spoofed visits are not GPTBot's.
    for (const path of ['/robots-violations', '/robots-violations?agent=gptbot']) {
      const res = await own.call('GET', path, own.tokenA);
      expect(res.json.violations.filter((v: { agent_id: string }) => v.agent_id === 'gptbot'), path).toEqual([expect.objectContaining({ path: '/private/a', count: 4 })]);
    }
  });

  it("counts an operator's crawls without the visits that only borrowed its agents' names (GET /stats/operators)", async () => {
    const own = await setup();
    expect((await own.call('POST', '/visits', own.tokenA, DATA_SET)).status).toBe(202);
    const [stored] = await own.visits.timeline({ projectId: own.idA, limit: 1, filter: { agent_id: 'gptbot' } });
    const { id: _id, project_id: _project, ...visit } = stored!;
    await own.visits.append(own.idA, [{ ...visit, result: 'verification_failed' }, { ...visit, result: 'verification_failed' }]);
    const res = await own.call('GET', `/stats/operators?from=${NOW - 86_400_000}&to=${NOW}`, own.tokenA);
    const openai = res.json.operators.find((o: { agents: { agent_id: string }[] }) => o.agents.some((a) => a.agent_id === 'gptbot'));
    // GPTBot's four visits of the data set; the two spoofed ones are not OpenAI's.
    expect(openai.agents.find((a: { agent_id: string }) => a.agent_id === 'gptbot').count).toBe(4);
  });

  it('rejects invalid settings with 400 at JSON pointers, keeping the saved ones', async () => {
    const res = await env.call('PUT', '/project-settings', env.tokenA, {
      robots: { agent_types: ['AI Data Scraper', 'Robots'], disallow: ['/ok', 'no-slash'] },
      client_ip: { headers: ['x-real-ip', 'bad header'], trusted_proxies: ['10.0.0.0/8', '10.0.0.0/33'] },
    });
    expect(res.status).toBe(400);
    expect(res.json.errors.map((e: any) => [e.pointer, e.code])).toEqual([
      ['/robots/agent_types/1', 'unknown-agent-type'],
      ['/robots/disallow/1', 'invalid-path'],
      ['/client_ip/headers/1', 'invalid-header-name'],
      ['/client_ip/trusted_proxies/1', 'invalid-cidr'],
    ]);
    for (const [body, pointer] of [
      [{ robots: 'all' }, '/robots'],
      [{ client_ip: { trusted_proxies: -1 } }, '/client_ip/trusted_proxies'],
      [{ client_ip: { trusted_proxies: 'all' } }, '/client_ip/trusted_proxies'],
      [{ client_ip: [] }, '/client_ip'],
      [[], ''],
      // A name of Object.prototype's members once saved an empty list of types.
      [{ robots: { agent_types: ['constructor'] } }, '/robots/agent_types/0'],
    ] as const) {
      const bad = await env.call('PUT', '/project-settings', env.tokenA, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.json.errors[0].pointer).toBe(pointer);
    }
    expect((await env.call('PUT', '/project-settings', env.tokenA, '{')).status).toBe(400);
    expect((await env.call('GET', '/project-settings', env.tokenA)).json.robots.disallow).toEqual(['/private/']);
  });

  it('enriches new visits with the project client-IP rule, changed at once by a PUT', async () => {
    const { call, tokenA } = await setup();
    const send = async () => {
      await call('POST', '/visits', tokenA, { request_path: '/ip', request_method: 'GET', request_headers: { 'user-agent': GPTBOT_UA, 'x-forwarded-for': '198.51.100.1, 203.0.113.2, 10.0.0.3' } });
      return (await call('GET', '/visits?limit=1', tokenA)).json.visits[0].client_ip;
    };
    // By default the private hop (the site's own proxy) is walked past.
    expect(await send()).toBe('203.0.113.2');
    // An explicit hop count rules, even when the hop it names is private.
    expect((await call('PUT', '/project-settings', tokenA, { client_ip: { headers: ['x-forwarded-for'], trusted_proxies: 0 } })).status).toBe(200);
    expect(await send()).toBe('10.0.0.3');
    await call('PUT', '/project-settings', tokenA, { client_ip: { trusted_proxies: ['10.0.0.0/8', '203.0.113.0/24'] } });
    expect(await send()).toBe('198.51.100.1');
    await call('PUT', '/project-settings', tokenA, { client_ip: {} });
    expect(await send()).toBe('203.0.113.2');
  });
});

describe('GET /visits of large visits', () => {
  // Visits within the per-visit limits can carry 64 Ki of headers each: 10,000 such rows once
  // made the CSV export answer 500 (a string past V8's longest). A page now ends at 32 Mi
  // characters, and its cursor goes on from there.
  it('ends a page early past 32 Mi characters, JSON or CSV, and the cursor leads to every other visit', async () => {
    const projects = createMemoryProjectStore();
    const { token } = await projects.createProject('big');
    const handle = createApiHandler({ engine, projects, visits: createMemoryVisitStore(), rateLimit: false, limits: { maxBodyBytes: 64 * 1024 * 1024 }, clock: { now: () => NOW } });
    const call = caller(handle);
    const ua = `${GPTBOT_UA} ${'x'.repeat(60_000)}`;
    for (let batch = 0; batch < 6; batch++) {
      const visits = Array.from({ length: 100 }, (_, i) => ({ request_path: `/p/${batch * 100 + i}`, request_method: 'GET', request_headers: { 'user-agent': ua }, created: new Date(NOW - (batch * 100 + i) * 1000).toISOString() }));
      expect((await call('POST', '/visits', token, visits)).status).toBe(202);
    }
    const seen = new Set<string>();
    let after = '';
    let pages = 0;
    for (;;) {
      const res = await call('GET', `/visits?limit=1000${after === '' ? '' : `&after=${after}`}`, token);
      expect(res.status).toBe(200);
      expect(res.text.length).toBeLessThan(33 * 1024 * 1024);
      for (const visit of res.json.visits) seen.add(visit.request_path);
      pages++;
      if (res.json.next === null) break;
      after = res.json.next;
    }
    expect(pages).toBe(2);
    expect(seen.size).toBe(600);
    const csv = await call('GET', '/visits?format=csv', token);
    expect(csv.status).toBe(200);
    expect(csv.headers['x-next-cursor']).toBeDefined();
    const rest = await call('GET', `/visits?format=csv&after=${csv.headers['x-next-cursor']}`, token);
    expect(rest.headers['x-next-cursor']).toBeUndefined();
    const rows = (text: string) => text.split('\r\n').filter((row) => row.startsWith('/p/') || row.includes(',/p/')).length;
    expect(rows(csv.text) + rows(rest.text)).toBe(600);
  });
});

describe('CSV export', () => {
  it('quotes per RFC 4180 and defuses formulas', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('line\nbreak')).toBe('"line\nbreak"');
    for (const start of ['=', '+', '-', '@', '\t', '\r']) expect(csvCell(`${start}1+1`).replace(/^"/, '')).toMatch(/^'/);
    expect(csvCell('=HYPERLINK("http://x")')).toBe('"\'=HYPERLINK(""http://x"")"');
    expect(csvCell(-3)).toBe('-3');
    expect(csvCell(null)).toBe('');
  });

  it('exports visits with a header row, CRLF rows and an attachment name', async () => {
    const { call, tokenA, idA } = await setup();
    await call('POST', '/visits', tokenA, [
      { request_path: '/a,b', request_method: 'GET', request_headers: { 'user-agent': '=HYPERLINK("http://evil.example")', referer: 'x"y' } },
      { request_path: '/x', request_method: 'GET', request_headers: { 'user-agent': GPTBOT_UA } },
    ]);
    const res = await call('GET', '/visits?format=csv', tokenA);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="visits-${idA}.csv"`);
    const lines = res.text.split('\r\n');
    expect(lines[0]).toBe('id,time,received,agent_id,agent_name,agent_type,result,client_ip,referral,request_method,request_path,response_status_code,user_agent,referer');
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe('');
    expect(lines[1]).toContain(',GPTBot,AI Data Scraper,not_verifiable,,,GET,/x,,');
    expect(lines[2]).toContain(',unknown_agent,,,GET,"/a,b",,"\'=HYPERLINK(""http://evil.example"")","x""y"');
    const byAccept = await call('GET', '/visits', tokenA, undefined, { accept: 'text/csv' });
    expect(byAccept.text).toBe(res.text);
  });

  it('exports stats, top paths and violations', async () => {
    const stats = await env.call('GET', '/stats?from=2026-11-21T09:00:00Z&to=2026-11-21T12:00:00Z&by=agent&format=csv', env.tokenA);
    expect(stats.text).toBe('start,gptbot,(none),claudebot,googlebot,other\r\n2026-11-21T09:00:00.000Z,1,0,1,0,0\r\n2026-11-21T10:00:00.000Z,2,1,0,1,0\r\n2026-11-21T11:00:00.000Z,1,2,1,0,0\r\n');
    expect(stats.headers['content-disposition']).toMatch(/^attachment; filename="stats-agent-prj_/);
    const top = await env.call('GET', '/stats/top-paths?agent=claudebot&format=csv', env.tokenA);
    expect(top.text).toBe('agent_id,agent_name,agent_type,path,count,last\r\nclaudebot,ClaudeBot,AI Data Scraper,/private/b?x=1,2,2026-11-21T11:00:00.000Z\r\n');
    const violations = await env.call('GET', '/robots-violations', env.tokenA, undefined, { accept: 'text/csv' });
    expect(violations.text).toBe('agent_id,agent_name,agent_type,path,count,last,rule\r\ngptbot,GPTBot,AI Data Scraper,/private/a,3,2026-11-21T10:01:00.000Z,/private/\r\n');
  });
});

describe('POST /test-visits', () => {
  it('records a visit of the test agent through the visit pipeline and answers it', async () => {
    const { call, tokenA } = await setup();
    const res = await call('POST', '/test-visits', tokenA);
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({
      agent_id: 'agentwarden-test',
      agent_name: 'agentwarden test agent',
      agent_type: 'Developer Helper',
      result: 'not_verifiable',
      request_path: '/',
      request_headers: { 'user-agent': TEST_AGENT_USER_AGENT },
      time: new Date(NOW).toISOString(),
    });
    const listed = await call('GET', '/visits', tokenA);
    expect(listed.json.visits).toEqual([res.json]);
    const withPath = await call('POST', '/test-visits', tokenA, { request_path: '/landing' });
    expect(withPath.json.request_path).toBe('/landing');
    expect((await call('POST', '/test-visits', tokenA, { request_path: 'nope' })).json.errors[0].pointer).toBe('/request_path');
  });

  it('reads a body only as a JSON object, as every other route does; a bare POST needs none', async () => {
    const { call, tokenA, visits, idA } = await setup();
    const asText = await call('POST', '/test-visits', tokenA, '{"request_path":"/x"}', { 'content-type': 'text/plain' });
    expect(asText).toMatchObject({ status: 415, json: { errors: [{ pointer: '', header: 'Content-Type', code: 'media-type' }] } });
    expect((await call('POST', '/test-visits', tokenA, '{"request_path":"/x"}', { 'content-type': 'application/json; charset=utf-16' })).status).toBe(415);
    for (const body of ['null', '[]', '1', '"/x"']) {
      const answer = await call('POST', '/test-visits', tokenA, body);
      expect(answer.status, body).toBe(400);
      expect(answer.json.errors, body).toEqual([expect.objectContaining({ pointer: '', code: 'type' })]);
    }
    // Nested past the limit, a body is too large (413), as on POST /visits.
    expect((await call('POST', '/test-visits', tokenA, '['.repeat(10_000) + ']'.repeat(10_000))).status).toBe(413);
    expect(await visits.timeline({ projectId: idA, limit: 10 })).toEqual([]);
    expect((await call('POST', '/test-visits', tokenA)).status).toBe(202);
  });
});

describe('isolation and store failures', () => {
  it("never shows one project's visits to another project's token", async () => {
    const b = await env.call('GET', '/visits?limit=1000', env.tokenB);
    expect(b.json).toEqual({ visits: [], next: null });
    expect((await env.call('GET', '/stats', env.tokenB)).json.total).toBe(0);
    expect((await env.call('GET', '/stats/top-paths', env.tokenB)).json.paths).toEqual([]);
    const aFirst = (await env.call('GET', '/visits?limit=1', env.tokenA)).json.visits[0].id;
    // A's cursor on B's timeline still reads only B's visits.
    expect((await env.call('GET', `/visits?after=${Number(aFirst) + 1}`, env.tokenB)).json.visits).toEqual([]);
  });

  it('answers 503 with Retry-After, logging nothing, when the settings store is unavailable (any route, not only the reads)', async () => {
    const projects = createMemoryProjectStore();
    const a = await projects.createProject('a');
    const down = new VisitStoreUnavailableError('unavailable', 4, 'ClickHouse is unreachable');
    const settings = { getProjectSettings: async () => Promise.reject(down), putProjectSettings: async () => Promise.reject(down) };
    const logged: unknown[] = [];
    const call = caller(createApiHandler({ engine, projects, visits: createMemoryVisitStore(), settings, rateLimit: false, clock: { now: () => NOW }, onError: (error) => logged.push(error) }));
    for (const [method, body] of [['GET', undefined], ['PUT', { robots: null }]] as const) {
      const res = await call(method, '/project-settings', a.token, body);
      expect(res.status, method).toBe(503);
      expect(res.headers['retry-after'], method).toBe('4');
      expect(res.headers['content-type']).toBe('application/problem+json');
    }
    expect(logged).toEqual([]);
  });

  it('maps an unavailable store to 503 with Retry-After', async () => {
    const down = new VisitStoreUnavailableError('unavailable', 7, 'down');
    const store = createMemoryVisitStore();
    const failing: VisitStore = {
      ...store,
      timeline: async () => Promise.reject(down),
      stats: async () => Promise.reject(down),
      pathCounts: async () => Promise.reject(down),
      append: async () => Promise.reject(down),
    };
    const { call, tokenA } = await setup(failing);
    for (const [method, path] of [
      ['GET', '/visits'],
      ['GET', '/stats'],
      ['GET', '/stats/top-paths'],
      ['POST', '/test-visits'],
      ['GET', '/visits/stream?last_event_id=1'],
    ] as const) {
      const res = await call(method, path, tokenA);
      expect(res.status, `${method} ${path}`).toBe(503);
      expect(res.headers['retry-after']).toBe('7');
    }
  });
});

describe('admin sessions', () => {
  it('read the project named with ?project= and change settings only with the CSRF token', async () => {
    const projects = createMemoryProjectStore();
    const a = await projects.createProject('a');
    const admin: AdminAuthenticator = {
      authenticate: (request) => (request.headers['cookie'] === 'aw_session=ok' ? { id: 'adm', csrfToken: 'csrf-1' } : undefined),
      findProject: (id) => (id === a.id ? { id: a.id, name: 'a' } : undefined),
    };
    const call = caller(createApiHandler({ engine, projects, visits: createMemoryVisitStore(), admin, rateLimit: false, clock: { now: () => NOW } }));
    const cookie = { cookie: 'aw_session=ok' };
    await call('POST', '/visits', a.token, DATA_SET.slice(0, 3));
    const listed = await call('GET', `/visits?project=${a.id}`, undefined, undefined, cookie);
    expect(listed.status).toBe(200);
    expect(listed.json.visits).toHaveLength(3);
    expect((await call('GET', '/visits', undefined, undefined, cookie)).json.errors[0].parameter).toBe('project');
    expect((await call('GET', '/stats?project=prj_nope', undefined, undefined, cookie)).status).toBe(404);
    expect((await call('GET', `/stats?project=${a.id}`, undefined, undefined, { cookie: 'aw_session=forged' })).status).toBe(401);
    const body = { robots: { agent_types: ['AI Agent'] } };
    expect((await call('PUT', `/project-settings?project=${a.id}`, undefined, body, cookie)).status).toBe(403);
    expect((await call('POST', `/test-visits?project=${a.id}`, undefined, undefined, cookie)).status).toBe(403);
    const saved = await call('PUT', `/project-settings?project=${a.id}`, undefined, body, { ...cookie, 'x-csrf-token': 'csrf-1' });
    expect(saved.status).toBe(200);
    expect((await call('GET', '/project-settings', a.token)).json.robots).toEqual({ agent_types: ['AI Agent'], disallow: ['/'] });
    expect((await call('POST', `/test-visits?project=${a.id}`, undefined, undefined, { ...cookie, 'x-csrf-token': 'csrf-1' })).status).toBe(202);
  });
});

describe('property: random query strings never give a 5xx', () => {
  const GET_ROUTES = ['/visits', '/visits/stream', '/stats', '/stats/top-paths', '/robots-violations', '/project-settings'];
  const names = fc.constantFrom('limit', 'after', 'agent', 'agent_type', 'result', 'referral', 'path', 'from', 'to', 'interval', 'by', 'format', 'last_event_id', 'project', 'x');
  const values = fc.oneof(
    fc.string(),
    fc.constantFrom('none', 'csv', 'json', '0', '1', '-1', '1e3', '999999999999999999', 'hour', 'minute', 'day', 'agent', 'path', '2026-11-21T00:00:00Z', '/', '%', '%ZZ', 'AI Data Scraper'),
    fc.integer().map(String),
  );
  const queryString = fc.array(fc.tuple(names, values), { maxLength: 6 }).map((pairs) => pairs.map(([n, v]) => `${n}=${encodeURIComponent(v)}`).join('&'));
  const raw = fc.string({ unit: 'binary-ascii', maxLength: 40 });

  it('on every GET route', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...GET_ROUTES), fc.oneof(queryString, raw), async (route, query) => {
        const response = await env.call('GET', `${route}?${query}`, env.tokenA);
        expect(response.status).toBeLessThan(500);
        if (response.status >= 400) expect(response.json.status).toBe(response.status);
      }),
      { numRuns: 600 },
    );
  });
});
