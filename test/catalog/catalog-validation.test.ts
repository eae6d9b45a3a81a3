// The committed catalog loads, covers the required ground (600+ agents, 17 types, every ai.robots.txt
// agent, every IP list) and a broken catalog fails at load with a message naming the problem.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROBOTS_FUNCTION_TYPES } from '../../scripts/build-catalog.js';
import { AGENT_TYPES, createCatalog, type Agent, type AgentType, type CatalogDocument } from '../../src/index.js';
import { TEST_AGENT_USER_AGENT } from '../../src/catalog/test-agent.js';

const DATA = new URL('../../data/', import.meta.url);
const document = JSON.parse(readFileSync(new URL('agents.json', DATA), 'utf8')) as CatalogDocument;
const catalog = createCatalog(document);
const robots = JSON.parse(readFileSync(new URL('sources/ai.robots.txt/robots.json', DATA), 'utf8')) as Record<string, { function: string }>;
const overrides = JSON.parse(readFileSync(new URL('overrides.json', DATA), 'utf8')) as { function_types: Record<string, AgentType> };

/** A minimal valid agent, for building broken documents. */
function agent(fields: Partial<Agent> & { id: string }): Agent {
  return { name: fields.id, type: 'Scraper', operator: 'Example', url: 'https://example.com/bot', match: { tokens: [fields.id] }, robots_tokens: [fields.id], ...fields };
}

describe('the committed catalog', () => {
  it('loads through createCatalog', () => {
    expect(catalog.agents.length).toBe(document.agents.length);
  });

  it('has at least 600 agents', () => {
    expect(catalog.agents.length).toBeGreaterThanOrEqual(600);
  });

  it('has real members of every one of the 17 types', () => {
    const empty = AGENT_TYPES.filter((type) => catalog.agentsOfType(type).length === 0);
    expect(empty).toEqual([]);
    const thin = AGENT_TYPES.filter((type) => type !== 'Uncategorized' && catalog.agentsOfType(type).length < 5);
    expect(thin).toEqual([]);
  });

  it('has every ai.robots.txt agent, under the type its function names', () => {
    const byRobotsToken = new Map<string, Agent>();
    for (const a of catalog.agents) for (const token of a.robots_tokens) byRobotsToken.set(token.toLowerCase(), a);
    const problems: string[] = [];
    for (const [key, entry] of Object.entries(robots)) {
      const found = byRobotsToken.get(key.toLowerCase());
      // Imported entries name their Known Agents category; hand-written prose is typed in overrides.json.
      const expected = ROBOTS_FUNCTION_TYPES[entry.function] ?? overrides.function_types[key];
      if (found === undefined) problems.push(`${key}: no agent has it as a robots token`);
      else if (found.type !== expected) problems.push(`${key}: agent ${found.id} is "${found.type}", expected "${expected ?? '(no type decided)'}"`);
      else if (!(found.sources ?? []).includes(`ai.robots.txt:${key}`)) problems.push(`${key}: agent ${found.id} does not cite ai.robots.txt:${key}`);
    }
    expect(problems).toEqual([]);
  });

  it('references only IP lists that exist, and uses every one of them', () => {
    const files = readdirSync(new URL('ip-ranges/', DATA)).filter((name) => name.endsWith('.json')).sort();
    const used = new Set(catalog.agents.flatMap((a) => a.ip_ranges ?? []));
    expect([...used].filter((name) => !existsSync(new URL(`ip-ranges/${name}`, DATA)))).toEqual([]);
    expect(files.filter((name) => !used.has(name))).toEqual([]);
  });

  it('keeps the documented verification data of the major operators', () => {
    const get = (id: string) => catalog.getAgent(id);
    expect(get('googlebot')?.ip_ranges).toEqual(['google-common-crawlers.json']);
    expect(get('googlebot')?.reverse_dns).toEqual(['google.com', 'googlebot.com', 'googleusercontent.com']);
    expect(get('bingbot')?.reverse_dns).toEqual(['search.msn.com']);
    expect(get('gptbot')?.ip_ranges).toEqual(['openai-gptbot.json']);
    expect(get('claudebot')?.ip_ranges).toEqual(['anthropic-bots.json']);
    expect(get('applebot')?.reverse_dns).toEqual(['applebot.apple.com']);
    expect(get('ccbot')?.reverse_dns).toEqual(['crawl.commoncrawl.org']);
    expect(get('amazonbot')?.reverse_dns).toEqual(['crawl.amazonbot.amazon']);
    expect(get('yandexbot')?.reverse_dns).toEqual(['yandex.com', 'yandex.net', 'yandex.ru']);
    expect(get('baiduspider')?.reverse_dns).toEqual(['baidu.com', 'baidu.jp']);
  });

  it('identifies the ChatGPT agent by its Web Bot Auth origin, not by a UA', () => {
    expect(catalog.matchSignatureAgent('https://chatgpt.com')?.id).toBe('chatgpt-agent');
    expect(catalog.getAgent('chatgpt-agent')?.match).toEqual({});
    expect(catalog.getAgent('chatgpt-agent')?.robots_tokens).toEqual(['ChatGPT Agent']);
  });

  it('keeps robots-only tokens out of UA matching', () => {
    for (const id of ['google-extended', 'applebot-extended']) {
      expect(catalog.getAgent(id)?.match).toEqual({});
    }
    expect(catalog.matchUserAgent('Mozilla/5.0 (compatible; Google-Extended/1.0)')).toBeUndefined();
  });

  it('identifies the agentwarden test agent by its documented UA', () => {
    const testAgent = catalog.matchUserAgent(TEST_AGENT_USER_AGENT);
    expect(testAgent).toMatchObject({
      id: 'agentwarden-test',
      name: 'agentwarden test agent',
      type: 'Developer Helper',
      operator: 'agentwarden',
      url: 'https://github.com/agentwarden/agentwarden#test-agent',
      match: { tokens: ['AgentwardenTest'] },
      robots_tokens: ['AgentwardenTest'],
    });
  });

  it('gives generic HTTP libraries anchored patterns so a named bot in the same UA wins', () => {
    expect(catalog.matchUserAgent('curl/8.5.0')?.id).toBe('curl');
    expect(catalog.matchUserAgent('python-requests/2.31.0')?.id).toBe('python-requests');
    expect(catalog.matchUserAgent('node')?.id).toBe('nodejs-fetch');
    expect(catalog.matchUserAgent('python-requests/2.31.0 (compatible; GPTBot/1.2)')?.id).toBe('gptbot');
    expect(catalog.matchUserAgent('Mozilla/5.0 HeadlessChrome/120.0.0.0 Safari/537.36 Puppeteer')?.id).toBe('puppeteer');
  });

  it('keeps patterns few: tokens do the work', () => {
    const patterns = catalog.agents.flatMap((a) => a.match.patterns ?? []);
    const tokens = catalog.agents.flatMap((a) => a.match.tokens ?? []);
    expect(patterns.length).toBeLessThanOrEqual(40);
    expect(tokens.length).toBeGreaterThan(patterns.length * 20);
  });

  it('names operators cleanly (no markdown, no placeholders)', () => {
    const bad = catalog.agents.filter((a) => /\[|\]\(|https?:\/\/|unclear at this time/i.test(a.operator)).map((a) => `${a.id}: ${a.operator}`);
    expect(bad).toEqual([]);
  });
});

describe('a broken catalog fails at load, naming the problem', () => {
  it('rejects a duplicate id', () => {
    expect(() => createCatalog({ version: 1, agents: [agent({ id: 'a' }), agent({ id: 'a', match: { tokens: ['b'] }, robots_tokens: ['b'] })] })).toThrow(
      new RangeError('catalog agents[1].id: duplicate id "a"'),
    );
  });

  it('rejects a match token used by two agents, case-insensitively', () => {
    expect(() => createCatalog({ version: 1, agents: [agent({ id: 'a', match: { tokens: ['GPTBot'] } }), agent({ id: 'b', match: { tokens: ['gptbot'] } })] })).toThrow(
      new RangeError('catalog: match token "gptbot" of agent "b" is already used by agent "a"'),
    );
  });

  it('rejects a robots token used by two agents', () => {
    expect(() => createCatalog({ version: 1, agents: [agent({ id: 'a', robots_tokens: ['Same'] }), agent({ id: 'b', robots_tokens: ['same'] })] })).toThrow(
      'robots token "same" of agent "b" is already used by agent "a"',
    );
  });

  it('rejects an unknown type', () => {
    const broken = { ...agent({ id: 'a' }), type: 'Robot Overlord' };
    expect(() => createCatalog({ version: 1, agents: [broken] })).toThrow(/catalog agents\[0\]\.type: "Robot Overlord" is not one of AI Agent, /);
  });

  it('rejects a pattern that does not compile', () => {
    expect(() => createCatalog({ version: 1, agents: [agent({ id: 'a', match: { patterns: ['^curl/('] } })] })).toThrow(/agent "a": match pattern "\^curl\/\(" does not compile/);
  });

  it('rejects a missing required field', () => {
    const { operator: _operator, ...missing } = agent({ id: 'a' });
    expect(() => createCatalog({ version: 1, agents: [missing] })).toThrow(new TypeError('catalog agents[0].operator: expected a non-empty string, got undefined'));
    const { robots_tokens: _tokens, ...noTokens } = agent({ id: 'b' });
    expect(() => createCatalog({ version: 1, agents: [noTokens] })).toThrow(/agents\[0\]\.robots_tokens: expected a non-empty array of strings/);
  });
});
