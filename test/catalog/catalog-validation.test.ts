// The committed catalog loads, covers the required ground (600+ agents, 17 types, every ai.robots.txt
// agent, every IP list) and a broken catalog fails at load with a message naming the problem.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROBOTS_FUNCTION_TYPES, robotsTokenOf, sentRobotsToken } from '../../scripts/build-catalog.js';
import { ROBOTS_TOKEN_EXCEPTIONS, robotsTokenProblem } from '../../src/catalog/robots-token-rules.js';
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
      // A name with a version or a host ("iaskspider/2.0", "quillbot.com") is its product token.
      const found = byRobotsToken.get((robotsTokenOf(key) ?? key).toLowerCase());
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
    expect(get('googlebot')?.reverse_dns).toEqual(['googlebot.com']);
    // googleusercontent.com names every Google Cloud VM: only App Engine's, for user-triggered fetchers.
    expect(get('feedfetcher-google')?.reverse_dns).toEqual(['gae.googleusercontent.com', 'google.com']);
    expect(get('adsbot-google')?.reverse_dns).toEqual(['google.com']);
    expect(catalog.agents.filter((agent) => agent.reverse_dns?.includes('googleusercontent.com'))).toEqual([]);
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
    // No crawler sends Google-Extended: a header that does is not Google's. It is an unlisted agent
    // (the header's own name, operator Unknown), and nothing when the catalog names none.
    expect(catalog.matchUserAgent('Mozilla/5.0 (compatible; Google-Extended/1.0)')).toMatchObject({ id: 'unlisted:Google-Extended', operator: 'Unknown' });
    expect(createCatalog(document, { unlistedAgents: false }).matchUserAgent('Mozilla/5.0 (compatible; Google-Extended/1.0)')).toBeUndefined();
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

  it('names HTTP libraries and headless browsers only when no bot names itself in the same UA', () => {
    expect(catalog.matchUserAgent('curl/8.5.0')?.id).toBe('curl');
    expect(catalog.matchUserAgent('python-requests/2.31.0')?.id).toBe('python-requests');
    expect(catalog.matchUserAgent('node')?.id).toBe('nodejs-fetch');
    expect(catalog.matchUserAgent('Mozilla/5.0 Node.js node')?.id).toBeUndefined();
    expect(catalog.matchUserAgent('python-requests/2.31.0 (compatible; GPTBot/1.2)')?.id).toBe('gptbot');
    expect(catalog.matchUserAgent('Mozilla/5.0 HeadlessChrome/120.0.0.0 Safari/537.36 Puppeteer')?.id).toBe('puppeteer');
    expect(catalog.matchUserAgent('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36')?.id).toBe('headlesschrome');
    expect(catalog.matchUserAgent('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36 (compatible; AhrefsBot/7.0)')?.id).toBe('ahrefsbot');
    expect(catalog.matchUserAgent('Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1 MJ12bot/v1.4.8')?.id).toBe('mj12bot');
    expect(catalog.matchUserAgent('libwww-perl/6.05 Exabot/3.0')?.id).toBe('exabot');
  });

  it('does the work with tokens: no regular-expression pattern is left', () => {
    expect(catalog.agents.flatMap((a) => a.match.patterns ?? [])).toEqual([]);
  });

  it('has robots tokens that are product tokens: no hostname, URL, regex syntax or version', () => {
    const bad = catalog.agents.flatMap((a) => a.robots_tokens.filter((t) => robotsTokenProblem(t) !== undefined).map((t) => `${a.id}: ${t}`));
    expect(bad).toEqual([]);
    // Names follow the same rule (they are what the dashboard shows next to the token).
    // A product token built on its operator's domain (bnf.fr_bot) is a name too; a bare host is not.
    expect(catalog.agents.filter((a) => /^www\.|[A-Za-z0-9-]\.(com|org|net|io|ru|de)\b|\\|\^/.test(a.name) && robotsTokenProblem(a.name) !== undefined).map((a) => `${a.id}: ${a.name}`)).toEqual([]);
  });

  it('derives robots tokens from product names: no anchor, version or host; a Perl module by its distribution name', () => {
    expect(robotsTokenOf('iaskspider/2.0')).toBe('iaskspider');
    expect(robotsTokenOf('^RED/')).toBe('RED');
    expect(robotsTokenOf('www.pinterest.com')).toBe('pinterest');
    // Cut at its "::", "HTTP::Lite" would be "HTTP", the name of no product.
    expect(robotsTokenOf('HTTP::Lite')).toBe('HTTP-Lite');
    expect(robotsTokenOf('Mail::STS')).toBe('Mail-STS');
  });

  it('takes robots tokens only from product tokens the crawler sends, never from a piece of a host, address or dotted name', () => {
    expect(sentRobotsToken('Sitebulb/')).toBe('Sitebulb');
    expect(sentRobotsToken('Drupal (+http://drupal.org/)')).toBe('Drupal');
    expect(sentRobotsToken('HTTP::Lite')).toBe('HTTP-Lite');
    // Built on its operator's domain, as the crawler sends it: cut to Kukei-Bot it named no crawler.
    expect(sentRobotsToken('Kukei.eu-Bot')).toBe('Kukei.eu-Bot');
    expect(sentRobotsToken('archive.org_bot')).toBe('archive.org_bot');
    for (const piece of ['www.monitor.us', 'search.thunderstone', 'scraping@nytimes.com', 'Zombie.js', 'top100.rambler.ru crawler', 'http://www.neomo.de/']) {
      expect(sentRobotsToken(piece), piece).toBeUndefined();
    }
    // In the bundled catalog: an agent known only by a host keeps its name, with no robots token
    // that a parser matching User-agent values inside crawlers' names would apply to others.
    expect(catalog.getAgent('monitor')).toMatchObject({ name: 'monitor', robots_tokens: [] });
    expect(catalog.getAgent('sitebulb')?.robots_tokens).toEqual(['Sitebulb']);
    const hostPieces = catalog.agents.flatMap((a) =>
      a.robots_tokens.filter((t) => (a.match.tokens ?? []).length > 0 && (a.match.tokens ?? []).every((m) => m.toLowerCase().startsWith(`${t.toLowerCase()}.`) || m.toLowerCase().startsWith(`www.${t.toLowerCase()}.`))).map((t) => `${a.id}: ${t}`),
    );
    // ai.robots.txt's names, which site owners already write (bigsur.ai, Notion, Spider of spider.com),
    // and acme.sh's `acme`, what a parser reads of the `acme.sh/<version>` it sends.
    expect(hostPieces).toEqual(['acme-sh: acme', 'bigsur: bigsur', 'notion: Notion', 'spider: Spider']);
  });

  it('keeps every reviewed robots-token exception explained', () => {
    for (const [token, reason] of Object.entries(ROBOTS_TOKEN_EXCEPTIONS)) {
      expect(reason.length, token).toBeGreaterThan(40);
      expect(reason, token).toMatch(/https?:\/\//);
    }
    expect(Object.keys(ROBOTS_TOKEN_EXCEPTIONS).length).toBeLessThanOrEqual(5);
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

  it('rejects a robots token that is a hostname, a URL, regex syntax or a version', () => {
    expect(() => createCatalog({ version: 1, agents: [agent({ id: 'a', robots_tokens: ['www.pinterest.com'] })] })).toThrow(
      new RangeError('catalog agents[0].robots_tokens: "www.pinterest.com" is not a robots.txt product token (a URL)'),
    );
    expect(() => createCatalog({ version: 1, agents: [agent({ id: 'a', robots_tokens: ['^Silk\\/'] })] })).toThrow('(regular-expression syntax)');
    expect(() => createCatalog({ version: 1, agents: [agent({ id: 'a', robots_tokens: ['larbin_2.6.2'] })] })).toThrow('(a version)');
    expect(() => createCatalog({ version: 1, agents: [agent({ id: 'a', robots_tokens: ['Dataprovider.com'] })] })).toThrow('(a hostname)');
  });

  it("accepts a product token built on its operator's domain as the crawler sends it, and still refuses a bare host", () => {
    for (const token of ['bnf.fr_bot', 'bl.uk_lddc_bot', 'Kukei.eu-Bot', 'archive.org_bot', 'Mail.RU_Bot']) expect(robotsTokenProblem(token), token).toBeUndefined();
    for (const token of ['Dataprovider.com', 'www.pinterest.com', 'search.marginalia.nu', 'www.example.com-bot', 'bnf.fr_']) expect(robotsTokenProblem(token), token).toBeDefined();
    // The catalog's archivers are addressed by what they send: BnF's crawler sends bnf.fr_bot, not bnf_bot.
    expect(catalog.getAgent('bnf-bot')?.robots_tokens).toEqual(['bnf.fr_bot']);
    expect(catalog.getAgent('bl-lddc-bot')?.robots_tokens).toEqual(['bl.uk_lddc_bot']);
  });

  it('rejects a robots token that keeps a pattern\'s separator at its start or end, and keeps inner punctuation', () => {
    // CrawlerDetect's `Nitro-` and `monitis -` once became the robots tokens "Nitro-" and "monitis -".
    for (const token of ['Nitro-', 'monitis -', '-Bot', 'Perlu _', "Bot'", 'Yahoo!']) {
      expect(() => createCatalog({ version: 1, agents: [agent({ id: 'a', robots_tokens: [token] })] }), token).toThrow('(a leading or trailing "-", "_", "!" or "\'")');
    }
    for (const token of ['Y!J-BRW', 'Screaming Frog SEO Spider', 'AdsBot-Google-Mobile', "Let's Encrypt"]) expect(robotsTokenProblem(token), token).toBeUndefined();
  });

  it('rejects a malformed match token or layer', () => {
    expect(() => createCatalog({ version: 1, agents: [agent({ id: 'a', match: { tokens: ['/x'] } })] })).toThrow(/match token must be printable ASCII/);
    expect(() => createCatalog({ version: 1, agents: [agent({ id: 'a', match: { tokens: ['a'], layer: 'engine' as never } })] })).toThrow(/match\.layer: expected "library" or "platform"/);
  });

  it('rejects a pattern that does not compile', () => {
    expect(() => createCatalog({ version: 1, agents: [agent({ id: 'a', match: { patterns: ['^curl/('] } })] })).toThrow(/agent "a": match pattern "\^curl\/\(" does not compile/);
  });

  it('rejects a missing required field', () => {
    const { operator: _operator, ...missing } = agent({ id: 'a' });
    expect(() => createCatalog({ version: 1, agents: [missing] })).toThrow(new TypeError('catalog agents[0].operator: expected a non-empty string, got undefined'));
    const { robots_tokens: _tokens, ...noTokens } = agent({ id: 'b' });
    expect(() => createCatalog({ version: 1, agents: [noTokens] })).toThrow(/agents\[0\]\.robots_tokens: expected an array of strings/);
    // An empty list is an agent robots.txt cannot name (it sends no product token of its own).
    expect(createCatalog({ version: 1, agents: [agent({ id: 'c', robots_tokens: [] })] }).getAgent('c')?.robots_tokens).toEqual([]);
  });
});
