// The API's building blocks in isolation: bearer parsing, token format and hashing, constant-time
// compare, the rate limiter under an injected clock, JSON depth, routing, visit parsing, and the
// Fetch API wrapper, plus configuration errors thrown at creation.
import { describe, expect, it } from 'vitest';
import {
  constantTimeEqual,
  createApiHandler,
  createEngine,
  createFetchHandler,
  createMemoryProjectStore,
  createMemoryVisitStore,
  createRateLimiter,
  generateToken,
  isSecretHeader,
  parseVisit,
  resolveLimits,
  sha256Hex,
} from '../../src/index.js';
import { readBearer } from '../../src/api/auth.js';
import { jsonDepth, parseJsonBody } from '../../src/api/json-body.js';
import { createRouter } from '../../src/api/router.js';
import { TEST_CATALOG } from '../server/helpers.js';

describe('readBearer', () => {
  it.each([
    [{ authorization: 'Bearer aw_abc-_123' }, { ok: true, token: 'aw_abc-_123' }],
    [{ Authorization: 'bearer  aw_x ' }, { ok: true, token: 'aw_x' }],
    [{ authorization: ['Bearer aw_y'] }, { ok: true, token: 'aw_y' }],
    [{}, { ok: false, reason: 'missing' }],
    [{ Autorization: 'Bearer x' }, { ok: false, reason: 'misspelled-header', header: 'Autorization' }],
    [{ authorisation: 'Bearer x' }, { ok: false, reason: 'misspelled-header', header: 'authorisation' }],
    [{ authorization: 'Token aw_x' }, { ok: false, reason: 'wrong-scheme' }],
    [{ authorization: 'Bearer' }, { ok: false, reason: 'malformed' }],
    [{ authorization: 'Bearer a b' }, { ok: false, reason: 'malformed' }],
    [{ 'user-agent': 'x' }, { ok: false, reason: 'missing' }],
  ])('%j -> %j', (headers, expected) => {
    expect(readBearer(headers)).toEqual(expected);
  });
});

describe('tokens', () => {
  it('are aw_ + 43 base64url characters (256 bits), all different', () => {
    const tokens = new Set(Array.from({ length: 100 }, generateToken));
    expect(tokens.size).toBe(100);
    for (const token of tokens) expect(token).toMatch(/^aw_[A-Za-z0-9_-]{43}$/);
  });

  it('hash with SHA-256 (FIPS 180-4 test vector "abc")', async () => {
    expect(await sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('compare by value, whatever the length', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
    expect(constantTimeEqual('', '')).toBe(true);
  });

  it('memory project store: rotation and revocation', async () => {
    const projects = createMemoryProjectStore();
    const { id, token } = await projects.createProject('p');
    expect((await projects.findByTokenHash(await sha256Hex(token)))?.project.id).toBe(id);
    const next = await projects.issueToken(id, { revokeOthers: true });
    expect(await projects.findByTokenHash(await sha256Hex(token))).toBeUndefined();
    expect(await projects.revokeToken(next)).toBe(true);
    expect(await projects.findByTokenHash(await sha256Hex(next))).toBeUndefined();
    await expect(projects.issueToken('prj_nope')).rejects.toThrow(RangeError);
  });
});

describe('createRateLimiter', () => {
  it('spends a burst, refills at the rate, and says when to retry', () => {
    let now = 0;
    const limiter = createRateLimiter({ ratePerSecond: 2, burst: 3, clock: { now: () => now } });
    expect([1, 2, 3].map(() => limiter.take('a').ok)).toEqual([true, true, true]);
    expect(limiter.take('a')).toEqual({ ok: false, retryAfterSeconds: 1 });
    expect(limiter.take('b').ok).toBe(true);
    now = 500;
    expect(limiter.take('a').ok).toBe(true);
    expect(limiter.take('a').ok).toBe(false);
    now = 100_000;
    expect([1, 2, 3, 4].map(() => limiter.take('a').ok)).toEqual([true, true, true, false]);
  });

  it('rounds Retry-After up to whole seconds for slow rates', () => {
    const limiter = createRateLimiter({ ratePerSecond: 0.1, burst: 1, clock: { now: () => 0 } });
    limiter.take('k');
    expect(limiter.take('k')).toEqual({ ok: false, retryAfterSeconds: 10 });
  });

  it('throws at creation for bad settings, naming them', () => {
    expect(() => createRateLimiter({ ratePerSecond: 0, burst: 1 })).toThrow(/ratePerSecond/);
    expect(() => createRateLimiter({ ratePerSecond: 1, burst: 0.5 })).toThrow(/burst/);
  });
});

describe('JSON bodies', () => {
  it('measures depth outside strings only', () => {
    expect(jsonDepth('{"a":[1,{"b":"[[[[{{{"}]}')).toBe(3);
    expect(jsonDepth('"\\"[[["')).toBe(0);
    expect(jsonDepth('[]')).toBe(1);
    // An escaped backslash before a quote does not escape the quote.
    expect(jsonDepth('["\\\\", [[1]]]')).toBe(3);
    expect(jsonDepth('["\\\\\\"[[", []]')).toBe(2);
    expect(jsonDepth('["unterminated')).toBe(1);
  });

  it('refuses deep nesting before parsing, and reports invalid UTF-8 and JSON', () => {
    const encode = (text: string) => new TextEncoder().encode(text);
    expect(parseJsonBody(encode('[[[]]]'), 2)).toMatchObject({ ok: false, reason: 'too-deep' });
    expect(parseJsonBody(encode('[[]]'), 2)).toEqual({ ok: true, value: [[]] });
    // Brackets inside strings count toward no depth, however many there are.
    expect(parseJsonBody(encode('{"a":"{{[[{{[[","b":[{}]}'), 3)).toEqual({ ok: true, value: { a: '{{[[{{[[', b: [{}] } });
    expect(parseJsonBody(encode('{"a":"{{[[{{[[","b":[{}]}'), 2)).toEqual({ ok: false, reason: 'too-deep', message: 'JSON nesting depth 3 exceeds the limit of 2.' });
    expect(parseJsonBody(encode('{"a":[{"b":[1]}]}'), 3)).toMatchObject({ ok: false, reason: 'too-deep', message: 'JSON nesting depth 4 exceeds the limit of 3.' });
    expect(parseJsonBody(new Uint8Array([0xc3, 0x28]), 5)).toMatchObject({ ok: false, reason: 'invalid-utf8' });
    expect(parseJsonBody(encode('{'), 5)).toMatchObject({ ok: false, reason: 'invalid-json' });
    expect(parseJsonBody(undefined, 5)).toMatchObject({ ok: false, reason: 'empty' });
  });
});

describe('createRouter', () => {
  const router = createRouter('/api/', { '/visits': { POST: 1 }, '/healthz': { GET: 2, HEAD: 3 }, '/stats': { GET: 4 } });
  it('finds routes under the base path, ignoring the query string', () => {
    expect(router.match('POST', '/api/visits?x=1')).toEqual({ kind: 'found', route: 1 });
    expect(router.match('POST', '/visits')).toEqual({ kind: 'not-found' });
    expect(router.match('GET', '/api/visits')).toEqual({ kind: 'method-not-allowed', allow: 'POST' });
    expect(router.match('POST', '/api/healthz')).toEqual({ kind: 'method-not-allowed', allow: 'GET, HEAD' });
  });
  it('answers HEAD with the GET route unless HEAD has its own (RFC 9110 §9.3.2)', () => {
    expect(router.match('HEAD', '/api/stats')).toEqual({ kind: 'found', route: 4 });
    expect(router.match('HEAD', '/api/healthz')).toEqual({ kind: 'found', route: 3 });
    expect(router.match('POST', '/api/stats')).toEqual({ kind: 'method-not-allowed', allow: 'GET, HEAD' });
    expect(router.match('HEAD', '/api/visits')).toEqual({ kind: 'method-not-allowed', allow: 'POST' });
  });
  it('rejects base paths that are not paths', () => {
    for (const bad of ['api', '/a b', '/a?x', '//x']) expect(() => createRouter(bad, {})).toThrow(RangeError);
  });

  it('matches {name} segments, percent-decoded, after exact paths', () => {
    const templated = createRouter('/api', { '/visits/stream': { GET: 1 }, '/visits/{id}': { GET: 2 }, '/stats/agents/{id}': { GET: 3 } });
    expect(templated.match('GET', '/api/visits/stream')).toEqual({ kind: 'found', route: 1 });
    expect(templated.match('GET', '/api/visits/42?x=1')).toEqual({ kind: 'found', route: 2, params: { id: '42' } });
    expect(templated.match('GET', '/api/stats/agents/chatgpt%2Duser')).toEqual({ kind: 'found', route: 3, params: { id: 'chatgpt-user' } });
    expect(templated.match('GET', '/api/visits/a%2Fb')).toEqual({ kind: 'found', route: 2, params: { id: 'a/b' } });
    expect(templated.match('POST', '/api/visits/42')).toEqual({ kind: 'method-not-allowed', allow: 'GET, HEAD' });
    // One segment, never empty, never a bad escape; nothing past it.
    for (const path of ['/api/visits/', '/api/visits/42/x', '/api/visits/%E0%A4%A', '/visits/42', '/api/stats/agents']) expect(templated.match('GET', path), path).toEqual({ kind: 'not-found' });
  });
});

describe('parseVisit', () => {
  it('normalises header names, joins repeated values, strips secrets, keeps Known Agents extras and ignores unknown fields', () => {
    const result = parseVisit({
      request_path: '/p?q=1',
      request_method: 'GET',
      request_headers: { 'User-Agent': 'a', 'user-agent': ['b', 'c'], Cookie: 'c', 'X-Amz-Security-Token': 't', 'X-Client-Secret': 's', 'X-Goog-Api-Key': 'k', Accept: 'text/html' },
      acp_response_body: { total: 1 },
      is_blocked: true,
      mcp_request_tool_name: 'search',
      node_package_version: '1.8.0',
    });
    expect(result).toEqual({
      ok: true,
      visit: {
        request_path: '/p?q=1',
        request_method: 'GET',
        request_headers: { 'user-agent': 'a, b, c', accept: 'text/html' },
        acp_response_body: { total: 1 },
        is_blocked: true,
        mcp_request_tool_name: 'search',
      },
    });
  });

  it('rejects a Known Agents extra of the wrong type at its pointer', () => {
    const result = parseVisit({ request_path: '/', request_method: 'GET', request_headers: {}, is_blocked: 'yes', mcp_response_error_code: 1.5, ucp_response_body: [] }, 2);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors.map((e) => e.pointer)).toEqual(['/2/is_blocked', '/2/mcp_response_error_code', '/2/ucp_response_body']);
  });

  it('names every invalid field with a pointer under the item index', () => {
    const result = parseVisit({ request_path: '', request_headers: { a: 1 }, response_status_code: 42, response_duration_in_milliseconds: -1, created: '2026-13-99' }, 7);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.errors.map((e) => `${e.pointer} ${e.code}`)).toEqual([
        '/7/request_path type',
        '/7/request_method required',
        '/7/request_headers/a type',
        '/7/response_status_code type',
        '/7/response_duration_in_milliseconds type',
        '/7/created format',
      ]);
    }
  });

  it('lists the first ten bad fields of a header object, then says there are more: a visit refused all the same costs a bounded answer', () => {
    const bad = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`h${i}`, i]));
    const result = parseVisit({ request_path: '/', request_method: 'GET', request_headers: bad }, 4);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toHaveLength(11);
    expect(result.errors[0]).toMatchObject({ pointer: '/4/request_headers/h0', code: 'type' });
    expect(result.errors[10]).toMatchObject({ pointer: '/4/request_headers', code: 'more-errors' });
  });

  it('knows which headers are secrets', () => {
    for (const name of ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key', 'api-key', 'apikey', 'x-csrf-token', 'private-token', 'client-secret']) {
      expect(isSecretHeader(name), name).toBe(true);
    }
    for (const name of ['user-agent', 'x-forwarded-for', 'signature', 'signature-input', 'signature-agent', 'referer', 'sec-ch-ua', 'tokenizer']) {
      expect(isSecretHeader(name), name).toBe(false);
    }
  });
});

describe('createFetchHandler', () => {
  it('serves the API through Web-standard Request and Response', async () => {
    const projects = createMemoryProjectStore();
    const visits = createMemoryVisitStore();
    const { id, token } = await projects.createProject('edge');
    const fetchHandler = createFetchHandler(createApiHandler({ engine: createEngine({ catalog: TEST_CATALOG }), projects, visits }));
    const response = await fetchHandler(
      new Request('https://example.com/visits', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ request_path: '/', request_method: 'GET', request_headers: { 'user-agent': 'GPTBot/1.2' } }),
      }),
    );
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ accepted: 1, rejected: [] });
    expect(visits.list(id)).toHaveLength(1);
    const robots = await fetchHandler(
      new Request('https://example.com/robots-txts', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"agent_types":["AI Data Scraper"]}' }),
    );
    const etag = robots.headers.get('etag')!;
    const cached = await fetchHandler(
      new Request('https://example.com/robots-txts', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'if-none-match': etag }, body: '{"agent_types":["AI Data Scraper"]}' }),
    );
    expect(cached.status).toBe(304);
    expect((await fetchHandler(new Request('https://example.com/healthz'))).status).toBe(200);
  });
});

describe('createApiHandler configuration', () => {
  const engine = createEngine({ catalog: TEST_CATALOG });
  const projects = createMemoryProjectStore();
  const visits = createMemoryVisitStore();
  it('throws at creation for missing parts or bad limits, naming them', () => {
    expect(() => createApiHandler({ engine: undefined as never, projects, visits })).toThrow(/engine/);
    expect(() => createApiHandler({ engine, projects: {} as never, visits })).toThrow(/projects/);
    expect(() => createApiHandler({ engine, projects, visits: {} as never })).toThrow(/visits/);
    expect(() => createApiHandler({ engine, projects, visits, limits: { maxItems: 0 } })).toThrow(/limits.maxItems/);
    expect(() => createApiHandler({ engine, projects, visits, basePath: 'api' })).toThrow(/basePath/);
    expect(() => resolveLimits({ maxBodyBytes: 1.5 })).toThrow(RangeError);
  });
});
