// Identification: the REST result shape, header handling, Signature-Agent vs User-Agent, cache, verifier chain.
import { describe, expect, it } from 'vitest';
import type { Catalog } from '../../src/catalog/catalog.js';
import { createCandidateFinder, MAX_CACHED_KEY_LENGTH } from '../../src/identify/candidate.js';
import { createCatalog, createEngine, defaultCatalogDocument, type Agent, type Verifier } from '../../src/index.js';

const agents: Agent[] = [
  { id: 'gptbot', name: 'GPTBot', type: 'AI Data Scraper', operator: 'OpenAI', url: 'https://platform.openai.com/docs/bots', match: { tokens: ['GPTBot'] }, robots_tokens: ['GPTBot'] },
  { id: 'chatgpt-agent', name: 'ChatGPT agent', type: 'AI Agent', operator: 'OpenAI', url: 'https://platform.openai.com/docs/bots', match: {}, robots_tokens: ['ChatGPT-Agent'], signature_agents: ['https://chatgpt.com'] },
  { id: 'googlebot', name: 'Googlebot', type: 'Search Engine Crawler', operator: 'Google', url: 'https://developers.google.com/crawling', match: { tokens: ['Googlebot'] }, robots_tokens: ['Googlebot'] },
  { id: 'googlebot-image', name: 'Googlebot-Image', type: 'Search Engine Crawler', operator: 'Google', url: 'https://developers.google.com/crawling', match: { tokens: ['Googlebot-Image'] }, robots_tokens: ['Googlebot-Image'] },
  { id: 'nmap', name: 'Nmap Scripting Engine', type: 'Security Scanner', operator: 'Nmap', url: 'https://nmap.org/book/nse.html', match: { tokens: ['Nmap Scripting Engine'] }, robots_tokens: ['Nmap'] },
  { id: 'python-requests', name: 'python-requests', type: 'Scraper', operator: 'Python Software Foundation', url: 'https://requests.readthedocs.io', match: { patterns: ['^python-requests/'] }, robots_tokens: ['python-requests'] },
  { id: 'examplebot', name: 'ExampleBot', type: 'SEO Crawler', operator: 'Example', url: 'https://example.com/bot', match: { tokens: ['ExampleBot'] }, robots_tokens: ['ExampleBot'] },
];
const catalog = createCatalog({ version: 1, agents });
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

describe('identify: result shape (REST contract)', () => {
  const engine = createEngine({ catalog });

  it('an identified agent carries exactly the contract fields, id first when sent', async () => {
    const result = await engine.identify({ id: 'r1', request_headers: { 'User-Agent': 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)' } });
    expect(result).toEqual({
      id: 'r1',
      result: 'not_verifiable',
      agent_id: 'gptbot',
      agent_token: 'GPTBot',
      agent_url: 'https://platform.openai.com/docs/bots',
      agent_type_name: 'AI Data Scraper',
      operator_name: 'OpenAI',
    });
    expect(Object.keys(result)[0]).toBe('id');
  });

  it('an unknown agent carries only id and result', async () => {
    expect(await engine.identify({ id: 'b', request_headers: { 'user-agent': CHROME } })).toStrictEqual({ id: 'b', result: 'unknown_agent' });
    expect(await engine.identify({ request_headers: { 'user-agent': CHROME } })).toStrictEqual({ result: 'unknown_agent' });
  });

  it('omits id when none was sent', async () => {
    const result = await engine.identify({ request_headers: { 'user-agent': 'Googlebot/2.1' } });
    expect(result).not.toHaveProperty('id');
    expect(result.result).toBe('not_verifiable');
  });

  it('identifyMany keeps the input order', async () => {
    const uas = ['Googlebot/2.1', CHROME, 'GPTBot/1.0', 'Googlebot-Image/1.0', 'python-requests/2.31.0'];
    const results = await engine.identifyMany(uas.map((ua, i) => ({ id: String(i), request_headers: { 'user-agent': ua } })));
    expect(results.map((r) => [r.id, r.result === 'unknown_agent' ? null : r.agent_id])).toEqual([
      ['0', 'googlebot'],
      ['1', null],
      ['2', 'gptbot'],
      ['3', 'googlebot-image'],
      ['4', 'python-requests'],
    ]);
  });
});

describe('identify: headers', () => {
  const engine = createEngine({ catalog });
  const agentOf = async (request_headers: Record<string, unknown>) => {
    const result = await engine.identify({ request_headers: request_headers as Record<string, string> });
    return result.result === 'unknown_agent' ? undefined : result.agent_id;
  };

  it('header names are case-insensitive', async () => {
    expect(await agentOf({ 'USER-AGENT': 'Googlebot/2.1' })).toBe('googlebot');
    expect(await agentOf({ 'uSeR-aGeNt': 'Googlebot/2.1' })).toBe('googlebot');
  });

  it('values may be string[] (node IncomingHttpHeaders)', async () => {
    expect(await agentOf({ 'user-agent': ['Mozilla/5.0 (compatible; GPTBot/1.0)'] })).toBe('gptbot');
  });

  it('bad header values never throw: they are ignored', async () => {
    expect(await agentOf({ 'user-agent': 42 })).toBeUndefined();
    expect(await agentOf({ 'user-agent': null, x: { y: 1 } })).toBeUndefined();
    await expect(engine.identify({ request_headers: null as never })).resolves.toEqual({ result: 'unknown_agent' });
    await expect(engine.identify(undefined as never)).resolves.toEqual({ result: 'unknown_agent' });
  });

  it('matches product tokens on word boundaries, case-insensitively', async () => {
    expect(await agentOf({ 'user-agent': 'Mozilla/5.0 (compatible; googlebot/2.1; +http://www.google.com/bot.html)' })).toBe('googlebot');
    expect(await agentOf({ 'user-agent': 'Mozilla/5.0 (compatible; Googlebot-Image/1.0)' })).toBe('googlebot-image');
    // Not Googlebot: a bot of its own that the catalog does not list.
    expect(await agentOf({ 'user-agent': 'NotGooglebot/1.0' })).toBe('unlisted:NotGooglebot');
    expect(await agentOf({ 'user-agent': 'Googlebotx/1.0 (X11; Linux x86_64)' })).toBeUndefined();
    expect(await agentOf({ 'user-agent': 'Mozilla/5.0 (compatible; Nmap Scripting Engine; https://nmap.org/book/nse.html)' })).toBe('nmap');
    expect(await agentOf({ 'user-agent': 'Nmap Scripting Enginex' })).toBeUndefined();
  });

  it('a named bot wins over the generic library pattern it is built on', async () => {
    expect(await agentOf({ 'user-agent': 'python-requests/2.31.0 ExampleBot/1.0' })).toBe('examplebot');
    expect(await agentOf({ 'user-agent': 'python-requests/2.31.0' })).toBe('python-requests');
  });
});

describe('identify: Signature-Agent', () => {
  const engine = createEngine({ catalog });
  const agentOf = async (headers: Record<string, string>) => {
    const result = await engine.identify({ request_headers: headers });
    return result.result === 'unknown_agent' ? undefined : result.agent_id;
  };

  it('names a browser-based agent that sends a plain Chrome UA (legacy sf-string form)', async () => {
    expect(await agentOf({ 'user-agent': CHROME, 'signature-agent': '"https://chatgpt.com"' })).toBe('chatgpt-agent');
  });

  it('accepts the dictionary form and a path on the origin', async () => {
    expect(await agentOf({ 'user-agent': CHROME, 'Signature-Agent': 'sig1="https://chatgpt.com/.well-known/http-message-signatures-directory"' })).toBe('chatgpt-agent');
  });

  it('takes precedence over the User-Agent', async () => {
    expect(await agentOf({ 'user-agent': 'Googlebot/2.1', 'signature-agent': '"https://chatgpt.com"' })).toBe('chatgpt-agent');
  });

  it('an unknown or hostile origin falls back to the User-Agent', async () => {
    expect(await agentOf({ 'user-agent': 'Googlebot/2.1', 'signature-agent': '"https://evil.example"' })).toBe('googlebot');
    expect(await agentOf({ 'user-agent': CHROME, 'signature-agent': '"https://chatgpt.com.evil.example"' })).toBeUndefined();
    expect(await agentOf({ 'user-agent': CHROME, 'signature-agent': '"javascript:alert(1)"' })).toBeUndefined();
    expect(await agentOf({ 'user-agent': CHROME, 'signature-agent': '"https://user:pw@chatgpt.com"' })).toBeUndefined();
  });
});

describe('identify: cache', () => {
  it('cached and uncached engines agree, including on repeated and cached-miss inputs', async () => {
    const cached = createEngine({ catalog, cache: { max: 3 } });
    const uncached = createEngine({ catalog, cache: false });
    const inputs = ['Googlebot/2.1', CHROME, 'GPTBot/1.0', CHROME, 'Googlebot/2.1', 'python-requests/2', 'Googlebot-Image/1.0', CHROME];
    for (const ua of [...inputs, ...inputs]) {
      for (const sig of [undefined, '"https://chatgpt.com"']) {
        const headers: Record<string, string> = { 'user-agent': ua };
        if (sig) headers['signature-agent'] = sig;
        expect(await cached.identify({ request_headers: headers })).toEqual(await uncached.identify({ request_headers: headers }));
      }
    }
  });

  it('matches each user agent once while cached, keeps the ones in use and stays within its bound', () => {
    const matched: string[] = [];
    // A catalog that records what it is asked: a cache hit asks nothing.
    const counting = { matchUserAgent: (ua: string) => (matched.push(ua), undefined), matchSignatureAgent: () => undefined } as unknown as Catalog;
    const find = createCandidateFinder(counting, { max: 4 });
    const ask = (ua: string) => find(new Map([['user-agent', ua]]));
    for (let i = 0; i < 3; i++) ask('hot');
    expect(matched).toEqual(['hot']);
    // Many others pass through while 'hot' stays in use: it is never matched again.
    for (let i = 0; i < 20; i++) {
      ask(`cold-${i}`);
      ask('hot');
    }
    expect(matched.filter((ua) => ua === 'hot')).toHaveLength(1);
    // The bound: after four newer entries, the first cold one is gone and is matched again.
    matched.length = 0;
    ask('cold-0');
    expect(matched).toEqual(['cold-0']);
  });

  it('keeps no header longer than a real one: a client sending distinct long headers cannot fill memory', () => {
    const matched: string[] = [];
    const counting = { matchUserAgent: (ua: string) => (matched.push(ua), undefined), matchSignatureAgent: () => undefined } as unknown as Catalog;
    const find = createCandidateFinder(counting, { max: 4 });
    const ask = (headers: [string, string][]) => find(new Map(headers));
    const longest = 'a'.repeat(MAX_CACHED_KEY_LENGTH);
    const tooLong = `${longest}b`;
    for (let i = 0; i < 3; i++) ask([['user-agent', longest]]);
    expect(matched).toHaveLength(1);
    for (let i = 0; i < 3; i++) ask([['user-agent', tooLong]]);
    expect(matched).toHaveLength(4);
    // The key holds the Signature-Agent too, so it counts toward the length.
    matched.length = 0;
    for (let i = 0; i < 2; i++) ask([['user-agent', longest.slice(10)], ['signature-agent', '"https://chatgpt.example"']]);
    expect(matched).toHaveLength(2);
  });

  it('rejects a bad cache size at creation, naming the option', () => {
    expect(() => createEngine({ catalog, cache: { max: 0 } })).toThrow(/cache\.max/);
  });
});

describe('identify: verifier chain', () => {
  const verifier = (name: string, outcome: 'pass' | 'fail' | 'inconclusive' | 'throw', applies = true): Verifier => ({
    name,
    appliesTo: () => applies,
    verify: () => {
      if (outcome === 'throw') throw new Error('boom');
      return { method: name, outcome, reason: outcome === 'pass' ? 'ip-in-range' : outcome === 'fail' ? 'ip-not-in-range' : 'dns-timeout' };
    },
  });
  const verify = (verifiers: Verifier[]) => createEngine({ catalog, verifiers }).verify({ request_headers: { 'user-agent': 'Googlebot/2.1' } });

  it('first pass wins: verified', async () => {
    const result = await verify([verifier('a', 'inconclusive'), verifier('b', 'pass'), verifier('c', 'fail')]);
    expect(result.result).toBe('verified');
    expect(result.verification).toEqual({
      method: 'b',
      checks: [
        { method: 'a', outcome: 'inconclusive', reason: 'dns-timeout' },
        { method: 'b', outcome: 'pass', reason: 'ip-in-range' },
      ],
    });
  });

  it('first fail wins: verification_failed', async () => {
    const result = await verify([verifier('skip', 'pass', false), verifier('a', 'fail'), verifier('b', 'pass')]);
    expect(result.result).toBe('verification_failed');
    expect(result.verification.method).toBe('a');
    expect(result.verification.checks).toHaveLength(1);
  });

  it('only inconclusive answers, or a throwing verifier, never become verification_failed', async () => {
    const result = await verify([verifier('a', 'inconclusive'), verifier('b', 'throw')]);
    expect(result.result).toBe('not_verifiable');
    expect(result.verification).toEqual({
      method: null,
      checks: [
        { method: 'a', outcome: 'inconclusive', reason: 'dns-timeout' },
        { method: 'b', outcome: 'inconclusive', reason: 'verifier-error' },
      ],
    });
  });

  it('nothing applicable: not_verifiable with no checks', async () => {
    const result = await verify([verifier('a', 'pass', false)]);
    expect(result).toMatchObject({ result: 'not_verifiable', verification: { method: null, checks: [] } });
  });

  it('identify uses the same chain', async () => {
    const engine = createEngine({ catalog, verifiers: [verifier('a', 'fail')] });
    expect((await engine.identify({ request_headers: { 'user-agent': 'GPTBot/1.0' } })).result).toBe('verification_failed');
  });

  it('an unknown agent is reported with an empty verification', async () => {
    const engine = createEngine({ catalog, verifiers: [verifier('a', 'fail')] });
    expect(await engine.verify({ id: 'x', request_headers: { 'user-agent': CHROME } })).toEqual({ id: 'x', result: 'unknown_agent', verification: { method: null, checks: [] } });
  });

  it('rejects a malformed verifier at creation', () => {
    expect(() => createEngine({ catalog, verifiers: [{ name: 'x' } as unknown as Verifier] })).toThrow(/verifiers\[0\]/);
  });
});

describe('createEngine: the bundled catalog', () => {
  it('is compiled once and shared by every engine built on it; a custom document gets its own', () => {
    const first = createEngine();
    expect(createEngine().catalog).toBe(first.catalog);
    expect(createEngine({ catalog: defaultCatalogDocument }).catalog).toBe(first.catalog);
    const custom = createEngine({ catalog: { version: 1, agents } });
    expect(custom.catalog).not.toBe(first.catalog);
    expect(custom.catalog.getAgent('gptbot')).toBeDefined();
    expect(first.catalog.agents.length).toBeGreaterThan(custom.catalog.agents.length);
  });
});
