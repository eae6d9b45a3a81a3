// The visit pipeline before any store: parseVisit strips secrets, createVisitEnricher adds the
// identification, client IP, time and referral, classifyReferral names the AI product a human came from.
import { describe, expect, it } from 'vitest';
import { classifyReferral, createClientIpRule, createEngine, createVisitEnricher, ipRangeVerifier, parseVisit, REFERRAL_CLASSES, type Visit } from '../../src/index.js';
import { BROWSER_UA, GPTBOT_UA } from '../helpers/agents.js';

// The Known Agents SDK's list (shared/reference/known-agents-api.md, "Sensitive headers stripped (22)").
const SDK_SECRET_HEADERS = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'api-key',
  'apikey',
  'x-auth-token',
  'x-access-token',
  'x-id-token',
  'x-refresh-token',
  'x-session-token',
  'session-token',
  'csrf-token',
  'x-csrf-token',
  'xsrf-token',
  'x-xsrf-token',
  'x-amz-security-token',
  'x-goog-api-key',
  'x-client-secret',
  'client-secret',
  'private-token',
];

// Headers verification and analytics need: never mistaken for secrets.
const KEPT = {
  'user-agent': 'GPTBot/1.2',
  'sec-ch-ua': '"Chromium";v="131"',
  signature: 'sig1=:AAAA:',
  'signature-input': 'sig1=("@authority");tag="web-bot-auth"',
  'signature-agent': '"https://chatgpt.com"',
  'x-forwarded-for': '203.0.113.9, 10.0.0.1',
  referer: 'https://chatgpt.com/',
  'x-token-count': '3',
};

const upper = (name: string) => name.toUpperCase();
const title = (name: string) => name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());

function parsed(input: unknown): Visit {
  const result = parseVisit(input);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.visit;
}

describe('parseVisit', () => {
  it('strips all 22 secret headers of the SDK list, in any letter case, from request and response headers', () => {
    expect(SDK_SECRET_HEADERS).toHaveLength(22);
    for (const spell of [(n: string) => n, upper, title]) {
      const secrets = Object.fromEntries(SDK_SECRET_HEADERS.map((name) => [spell(name), 'secret-value']));
      const visit = parsed({ request_path: '/', request_method: 'GET', request_headers: { ...secrets, ...KEPT }, response_headers: { ...secrets, 'Content-Type': 'text/html' } });
      expect(visit.request_headers).toEqual(KEPT);
      expect(visit.response_headers).toEqual({ 'content-type': 'text/html' });
      expect(JSON.stringify(visit)).not.toContain('secret-value');
    }
  });

  it('keeps client hints, signatures and forwarding headers, lower-casing names and joining repeated values', () => {
    const visit = parsed({
      request_path: '/a?b=c',
      request_method: 'GET',
      request_headers: { 'Sec-CH-UA': 'x', 'Signature-Input': 'y', 'X-Forwarded-For': ['203.0.113.9', '10.0.0.1'], Accept: 'a', accept: 'b' },
    });
    expect(visit.request_headers).toEqual({ 'sec-ch-ua': 'x', 'signature-input': 'y', 'x-forwarded-for': '203.0.113.9, 10.0.0.1', accept: 'a, b' });
  });

  const errorsOf = (input: Record<string, unknown>) => {
    const result = parseVisit({ request_path: '/', request_method: 'GET', request_headers: {}, ...input }, 2);
    return result.ok ? [] : result.errors.map(({ pointer, code }) => `${pointer} ${code}`);
  };

  it('refuses a header name no HTTP request can carry, so no spelling slips a secret past the stripping', () => {
    for (const name of ['Cookie ', ' authorization', 'x-api-key\t', 'Authorization\u0000', 'user agent', '', 'Ä', '\ud800']) {
      expect(errorsOf({ request_headers: { [name]: 'secret-value', accept: 'a' } }), JSON.stringify(name)).toEqual([`/2/request_headers/${name} header-name`]);
      expect(errorsOf({ response_headers: { [name]: 'secret-value' } }), JSON.stringify(name)).toEqual([`/2/response_headers/${name} header-name`]);
    }
    // Every token character is a name, and an HTTP/2 server's pseudo-headers are kept (Web Bot Auth reads :authority).
    expect(parsed({ request_path: '/', request_method: 'GET', request_headers: { "X-!#$%&'*+.^_`|~1": 'v', ':authority': 'example.com', ':path': '/' } }).request_headers).toEqual({
      "x-!#$%&'*+.^_`|~1": 'v',
      ':authority': 'example.com',
      ':path': '/',
    });
    expect(errorsOf({ request_headers: { '::x': 'v', ':': 'v' } })).toEqual(['/2/request_headers/::x header-name', '/2/request_headers/: header-name']);
  });

  it('refuses control characters and unpaired surrogates in header values, the path and the method; keeps tab and latin1 bytes', () => {
    for (const bad of ['a\u0000b', 'a\r\nX-Injected: 1', 'a\u001b[2J', 'a\u007f']) {
      expect(errorsOf({ request_headers: { 'user-agent': bad } })).toEqual(['/2/request_headers/user-agent control-character']);
      expect(errorsOf({ request_headers: { 'user-agent': ['ok', bad] } })).toEqual(['/2/request_headers/user-agent control-character']);
      expect(errorsOf({ request_path: `/${bad}` })).toEqual(['/2/request_path control-character']);
      expect(errorsOf({ request_method: `G${bad}` })).toEqual(['/2/request_method format']);
    }
    expect(errorsOf({ request_headers: { referer: 'https://example.com/\ud800' } })).toEqual(['/2/request_headers/referer invalid-unicode']);
    expect(errorsOf({ request_path: '/a\udfff' })).toEqual(['/2/request_path invalid-unicode']);
    // node:http hands header bytes over as latin1: a UTF-8 header arrives as such characters, C1 range included.
    const visit = parsed({ request_path: '/caf\u00c3\u00a9 \ud83d\ude00', request_method: 'PATCH', request_headers: { 'user-agent': 'Bot\t1.0 \u00c3\u0083\u0080 \ud83d\ude00' } });
    expect(visit.request_headers['user-agent']).toBe('Bot\t1.0 \u00c3\u0083\u0080 \ud83d\ude00');
    expect(visit.request_path).toBe('/caf\u00c3\u00a9 \ud83d\ude00');
  });

  it('holds MCP text to the rules of paths and header values (an error message may run over lines), and ACP and UCP bodies to well-formed Unicode', () => {
    for (const field of ['mcp_request_method', 'mcp_request_tool_name', 'mcp_request_client_info_name', 'mcp_request_client_info_version']) {
      expect(errorsOf({ [field]: 'tool\u0000' })).toEqual([`/2/${field} control-character`]);
      expect(errorsOf({ [field]: 'a\u001b[31mred' })).toEqual([`/2/${field} control-character`]);
      expect(errorsOf({ [field]: 'two\nlines' })).toEqual([`/2/${field} control-character`]);
      expect(errorsOf({ [field]: 'half \ud800' })).toEqual([`/2/${field} invalid-unicode`]);
      expect(parsed({ request_path: '/', request_method: 'GET', request_headers: {}, [field]: 'search_web \ud83d\ude00\tv1' })[field as 'mcp_request_method']).toBe('search_web \ud83d\ude00\tv1');
    }
    expect(parsed({ request_path: '/', request_method: 'GET', request_headers: {}, mcp_response_error_message: 'line 1\r\nline 2\ttab' }).mcp_response_error_message).toBe('line 1\r\nline 2\ttab');
    expect(errorsOf({ mcp_response_error_message: 'bell\u0007' })).toEqual(['/2/mcp_response_error_message control-character']);
    expect(errorsOf({ mcp_response_error_message: 'cut \udc00' })).toEqual(['/2/mcp_response_error_message invalid-unicode']);
    expect(errorsOf({ acp_response_body: { order: { items: ['ok', 'half \ud800'] } } })).toEqual(['/2/acp_response_body/order/items/1 invalid-unicode']);
    expect(errorsOf({ ucp_response_body: { 'k\udfff/x': 1 } })).toEqual(['/2/ucp_response_body/k\udfff~1x invalid-unicode']);
    // JSON data is JSON data: escaped control characters inside a body are kept as sent.
    expect(parsed({ request_path: '/', request_method: 'GET', request_headers: {}, acp_response_body: { note: 'a\u0000b', emoji: '\ud83d\ude00' } }).acp_response_body).toEqual({ note: 'a\u0000b', emoji: '\ud83d\ude00' });
  });

  it('bounds the path and the method', () => {
    expect(errorsOf({ request_path: `/${'a'.repeat(16 * 1024)}` })).toEqual(['/2/request_path max-length']);
    expect(errorsOf({ request_path: `/${'a'.repeat(16 * 1024 - 1)}` })).toEqual([]);
    // Characters, as OpenAPI's maxLength counts them: an emoji is one, though two UTF-16 units.
    expect(errorsOf({ request_path: `/${'\u{1f600}'.repeat(16 * 1024 - 1)}` })).toEqual([]);
    expect(errorsOf({ request_path: `/${'\u{1f600}'.repeat(16 * 1024)}` })).toEqual(['/2/request_path max-length']);
    expect(errorsOf({ request_method: 'M'.repeat(65) })).toEqual(['/2/request_method format']);
    expect(errorsOf({ request_method: 'GET POST' })).toEqual(['/2/request_method format']);
  });
});

// A GPTBot list of one prefix, so the engine verifies and refutes without the network.
const engine = createEngine({
  verifiers: [ipRangeVerifier({ lists: { 'openai-gptbot.json': { creationTime: '2025-10-30T11:00:00.000000', prefixes: [{ ipv4Prefix: '52.230.152.0/24' }] } } })],
});
const CLAUDEBOT_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';
const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);

function visit(headers: Record<string, string>, extra: Record<string, unknown> = {}): Visit {
  return parsed({ request_path: '/pricing', request_method: 'GET', request_headers: headers, ...extra });
}

describe('createVisitEnricher', () => {
  const enrich = createVisitEnricher({ engine, clock: { now: () => NOW } });

  it('adds agent, type and verification result from the engine, keeping order and the visit fields', async () => {
    const input = [
      visit({ 'user-agent': GPTBOT_UA, 'x-forwarded-for': '52.230.152.7' }, { response_status_code: 200 }),
      visit({ 'user-agent': GPTBOT_UA, 'x-forwarded-for': '198.51.100.1' }),
      visit({ 'user-agent': CLAUDEBOT_UA }),
      visit({ 'user-agent': BROWSER_UA, referer: 'https://chatgpt.com/' }),
    ];
    const out = await enrich(input);
    expect(out.map((v) => [v.agent_id, v.agent_type, v.result])).toEqual([
      ['gptbot', 'AI Data Scraper', 'verified'],
      ['gptbot', 'AI Data Scraper', 'verification_failed'],
      ['claudebot', 'AI Data Scraper', 'not_verifiable'],
      [null, null, 'unknown_agent'],
    ]);
    expect(out[0]).toMatchObject({ ...input[0], received: NOW, time: NOW });
    expect(out.map((v) => v.referral)).toEqual([null, null, null, 'chatgpt']);
  });

  it('takes client_ip from x-forwarded-for or cf-connecting-ip by default, or by a per-call rule', async () => {
    const [fromXff, lastHop, fromCf, none] = await enrich([
      visit({ 'x-forwarded-for': '203.0.113.9' }),
      // With no trusted proxies configured, the hop appended by the site's own proxy is the client:
      // earlier entries are whatever the client sent.
      visit({ 'x-forwarded-for': '192.0.2.66, 203.0.113.10' }),
      visit({ 'cf-connecting-ip': '2001:db8::1', 'x-forwarded-for': '198.51.100.2' }),
      visit({ 'user-agent': BROWSER_UA }),
    ]);
    expect(fromXff!.client_ip).toBe('203.0.113.9');
    expect(lastHop!.client_ip).toBe('203.0.113.10');
    expect(fromCf!.client_ip).toBe('2001:db8::1');
    expect(none!.client_ip).toBeNull();
    // A project behind one proxy of its own: the address before the last hop.
    const rule = createClientIpRule({ headers: ['x-forwarded-for'], trustedProxies: 1 });
    const [custom] = await enrich([visit({ 'x-forwarded-for': '203.0.113.9, 198.51.100.7, 10.0.0.1', 'cf-connecting-ip': '192.0.2.1' })], rule);
    expect(custom!.client_ip).toBe('198.51.100.7');
    const byDefault = createVisitEnricher({ engine, clock: { now: () => NOW }, clientIp: createClientIpRule({ headers: ['x-real-ip'] }) });
    expect((await byDefault([visit({ 'x-real-ip': '192.0.2.44', 'x-forwarded-for': '203.0.113.9' })]))[0]!.client_ip).toBe('192.0.2.44');
  });

  it('dates a visit by `created`, unless it lies beyond the allowed clock skew in the future', async () => {
    const [past, slightlyAhead, future, absent] = await enrich([
      visit({}, { created: new Date(NOW - 3 * 86_400_000).toISOString() }),
      visit({}, { created: new Date(NOW + 30_000).toISOString() }),
      visit({}, { created: new Date(NOW + 3_600_000).toISOString() }),
      visit({}),
    ]);
    expect(past!.time).toBe(NOW - 3 * 86_400_000);
    expect(slightlyAhead!.time).toBe(NOW + 30_000);
    expect(future!.time).toBe(NOW);
    expect(future!.created).toBe(new Date(NOW + 3_600_000).toISOString());
    expect(absent!.time).toBe(NOW);
    expect([past, slightlyAhead, future, absent].every((v) => v!.received === NOW)).toBe(true);
  });

  it('gives a referral only to visitors that are not agents', async () => {
    const [agent, human, plain] = await enrich([
      visit({ 'user-agent': GPTBOT_UA, referer: 'https://chatgpt.com/' }),
      visit({ 'user-agent': BROWSER_UA }, { request_path: '/docs?utm_source=perplexity.ai' }),
      visit({ 'user-agent': BROWSER_UA, referer: 'https://www.google.com/' }),
    ]);
    expect(agent!.referral).toBeNull();
    expect(human!.referral).toBe('perplexity');
    expect(plain!.referral).toBeNull();
  });

  it('throws at creation for a missing engine or a clientIp that is not a function', () => {
    expect(() => createVisitEnricher({} as never)).toThrow(TypeError);
    expect(() => createVisitEnricher({ engine, clientIp: 'x-forwarded-for' as never })).toThrow(/clientIp/);
  });
});

describe('classifyReferral', () => {
  // One Referer host and one utm_source value per class.
  const CASES: [(typeof REFERRAL_CLASSES)[number], string, string][] = [
    ['chatgpt', 'https://chatgpt.com/c/abc', 'chatgpt.com'],
    ['perplexity', 'https://www.perplexity.ai/search?q=x', 'perplexity'],
    ['gemini', 'https://gemini.google.com/app', 'gemini'],
    ['claude', 'https://claude.ai/chat/1', 'claude.ai'],
    ['copilot', 'https://copilot.microsoft.com/', 'bing-copilot'],
    ['deepseek', 'https://chat.deepseek.com/', 'deepseek'],
    ['grok', 'https://grok.com/', 'grok.com'],
    ['meta-ai', 'https://www.meta.ai/', 'metaai'],
    ['mistral', 'https://chat.mistral.ai/chat', 'lechat'],
    ['you', 'https://you.com/search', 'you.com'],
    ['phind', 'https://www.phind.com/search', 'phind'],
    ['poe', 'https://poe.com/chat', 'poe.com'],
  ];

  it('covers every class', () => {
    expect(CASES.map(([c]) => c).sort()).toEqual([...REFERRAL_CLASSES].sort());
  });

  for (const [referral, referer, source] of CASES) {
    it(`${referral}: from the Referer host and from utm_source`, () => {
      expect(classifyReferral('/page', referer)).toBe(referral);
      expect(classifyReferral(`/page?utm_source=${encodeURIComponent(source)}&utm_medium=x`, undefined)).toBe(referral);
      expect(classifyReferral(`/page?a=1&utm_source=${encodeURIComponent(source.toUpperCase())}#top`, '')).toBe(referral);
    });
  }

  it('names nothing for other referrers, look-alike hosts and other sources', () => {
    for (const referer of ['https://www.google.com/', 'https://notchatgpt.com/', 'https://chatgpt.com.evil.example/', 'https://example.com/?ref=chatgpt.com', 'not a url', 'android-app://com.google.android.gm/']) {
      expect(classifyReferral('/page', referer), referer).toBeUndefined();
    }
    for (const path of ['/page', '/page?utm_source=newsletter', '/page?utm_medium=chatgpt', '/chatgpt.com', '/page#utm_source=chatgpt', '/page#top?utm_source=chatgpt']) {
      expect(classifyReferral(path, undefined), path).toBeUndefined();
    }
  });

  it('prefers the Referer host over utm_source', () => {
    expect(classifyReferral('/p?utm_source=perplexity', 'https://claude.ai/')).toBe('claude');
    expect(classifyReferral('/p?utm_source=perplexity', 'https://www.google.com/')).toBe('perplexity');
  });
});
