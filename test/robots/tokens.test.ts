// Catalog tokens that are not RFC 9309 product tokens: what is written, and what it means under
// robots-parser, a Google-style parser (ExtractUserAgent) and the crawler's own literal matching.
import robotsParser from 'robots-parser';
import { describe, expect, it } from 'vitest';
import { createCatalog, createRobotsRenderer, type Agent, type Catalog } from '../../src/index.js';
import { googleExtract, literalExtract, referenceRobots } from './rfc9309-reference.js';
import { robotsTestAgent } from '../helpers/agents.js';

const agent = robotsTestAgent;

const catalog = createCatalog({
  version: 1,
  agents: [
    agent('mj12bot', 'SEO Crawler', ['MJ12bot']),
    agent('mj', 'Scraper', ['MJ']),
    agent('ai2bot', 'AI Data Scraper', ['AI2Bot']),
    agent('linguee', 'Undocumented AI Agent', ['Linguee Bot']),
    agent('archive', 'Archiver', ['archive.org_bot']),
    agent('chatgpt-agent', 'AI Agent', ['ChatGPT Agent']),
    agent('chatgpt-user', 'AI Assistant', ['ChatGPT-User']),
    agent('kangaroo-bot', 'Fetcher', ['Kangaroo Bot']),
    agent('kangaroo', 'Intelligence Gatherer', ['Kangaroo']),
    agent('echo-bot', 'Security Scanner', ['Echo Bot']),
    agent('echo-crawler', 'Security Scanner', ['Echo Crawler']),
    agent('spider360', 'Search Engine Crawler', ['360Spider']),
  ],
});
const robots = createRobotsRenderer(catalog);
const URL_ = 'https://example.com/page';

/** Whether each parser lets `token` fetch /page: robots-parser gets the token, Google-style its leading run. */
function verdicts(text: string, token: string) {
  const google = googleExtract(token);
  return {
    robotsParser: robotsParser('https://example.com/robots.txt', text).isAllowed(URL_, token),
    google: google === '' ? 'unaddressable' : referenceRobots(text, googleExtract).isAllowed('/page', google),
    literal: referenceRobots(text, literalExtract).isAllowed('/page', token),
  };
}
const BLOCKED = { robotsParser: false, google: false, literal: false };

/**
 * Python's urllib.robotparser's reading (Scrapy's Protego reads alike): the first group with a
 * User-agent value found anywhere inside the crawler's name, case-insensitively; its first rule
 * whose path starts /page decides.
 */
function substringAllowed(text: string, token: string): boolean {
  const name = token.split('/')[0]!.toLowerCase();
  let agents: string[] = [];
  let inRules = false;
  let applies = false;
  for (const line of text.split('\n')) {
    const [field, ...rest] = line.split(':');
    const value = rest.join(':').trim();
    if (field === 'User-agent') {
      if (inRules) agents = [];
      inRules = false;
      agents.push(value.toLowerCase());
      applies = agents.some((agent) => agent !== '*' && name.includes(agent));
    } else if ((field === 'Disallow' || field === 'Allow') && (inRules = true) && applies && '/page'.startsWith(value)) return field === 'Allow';
  }
  return true;
}

describe('non-RFC tokens are written as documented', () => {
  it('MJ12bot: written as is; blocked everywhere; Google-style also reads it as "MJ"', () => {
    const text = robots.robotsTxt({ agent_types: ['SEO Crawler'] });
    expect(text).toBe('User-agent: MJ12bot\nDisallow: /\n');
    expect(verdicts(text, 'MJ12bot')).toEqual(BLOCKED);
    // The accepted side effect: a crawler whose whole token is "MJ" is blocked by Google-style parsers only.
    expect(verdicts(text, 'MJ')).toEqual({ robotsParser: true, google: false, literal: true });
  });

  it('AI2Bot and archive.org_bot: written as is, blocked everywhere', () => {
    const text = robots.robotsTxt({ agent_types: ['AI Data Scraper', 'Archiver'] });
    expect(text).toBe('User-agent: AI2Bot\nDisallow: /\n\nUser-agent: archive.org_bot\nDisallow: /\n');
    expect(verdicts(text, 'AI2Bot')).toEqual(BLOCKED);
    expect(verdicts(text, 'archive.org_bot')).toEqual(BLOCKED);
    expect(verdicts(text, 'ai2bot')).toEqual(BLOCKED);
  });

  it('a token with no leading letters (360Spider) is blocked where it can be addressed at all', () => {
    const text = robots.robotsTxt({ agent_types: ['Search Engine Crawler'] });
    expect(text).toBe('User-agent: 360Spider\nDisallow: /\n');
    expect(verdicts(text, '360Spider')).toEqual({ robotsParser: false, google: 'unaddressable', literal: false });
    // A Google-style parser reads the line as an empty token, which matches nobody.
    expect(verdicts(text, 'SomeRandomBot')).toEqual({ robotsParser: true, google: true, literal: true });
  });
});

describe('tokens with a space also get their name as a second User-agent line', () => {
  it('Linguee Bot → also "Linguee": robots-parser keeps spaces, so the alias is what "Linguee" finds', () => {
    const text = robots.robotsTxt({ agent_types: ['Undocumented AI Agent'] });
    expect(text).toBe('User-agent: Linguee Bot\nUser-agent: Linguee\nDisallow: /\n');
    expect(verdicts(text, 'Linguee Bot')).toEqual(BLOCKED);
    expect(verdicts(text, 'Linguee')).toEqual(BLOCKED);
    // Without the alias robots-parser would key the group "linguee bot" and let "Linguee" in.
    expect(robotsParser('https://example.com/robots.txt', 'User-agent: Linguee Bot\nDisallow: /\n').isAllowed(URL_, 'Linguee')).toBe(true);
  });

  it('no alias when another agent\'s token contains the name: "ChatGPT" is inside ChatGPT-User, which substring parsers would block', () => {
    const text = robots.robotsTxt({ agent_types: ['AI Agent'] });
    expect(text).toBe('User-agent: ChatGPT Agent\nDisallow: /\n');
    expect(verdicts(text, 'ChatGPT Agent')).toEqual(BLOCKED);
    expect(substringAllowed(text, 'ChatGPT Agent')).toBe(false);
    expect(verdicts(text, 'ChatGPT-User')).toEqual({ robotsParser: true, google: true, literal: true });
    expect(substringAllowed(text, 'ChatGPT-User')).toBe(true);
    // With the alias, as written before: Python's parser blocked ChatGPT-User, which nobody chose.
    expect(substringAllowed('User-agent: ChatGPT Agent\nUser-agent: ChatGPT\nDisallow: /\n', 'ChatGPT-User')).toBe(false);
  });

  it('no alias when another catalog token is that name: "Kangaroo" (not chosen) keeps robots-parser and literal access', () => {
    const text = robots.robotsTxt({ agent_types: ['Fetcher'] });
    expect(text).toBe('User-agent: Kangaroo Bot\nDisallow: /\n');
    expect(verdicts(text, 'Kangaroo Bot')).toEqual(BLOCKED);
    // Google-style parsers read "Kangaroo Bot" as "Kangaroo" whatever we write: documented degradation.
    expect(verdicts(text, 'Kangaroo')).toEqual({ robotsParser: true, google: false, literal: true });
  });

  it('no alias when two tokens share a name, so no name is in two groups', () => {
    const text = robots.robotsTxt({ agent_types: ['Security Scanner'] });
    expect(text).toBe('User-agent: Echo Bot\nDisallow: /\n\nUser-agent: Echo Crawler\nDisallow: /\n');
    expect(verdicts(text, 'Echo Bot')).toEqual(BLOCKED);
    expect(verdicts(text, 'Echo Crawler')).toEqual(BLOCKED);
  });

  it('every type at once: no User-agent value appears twice (case-insensitively)', () => {
    const text = robots.robotsTxt({ agent_types: ['AI Agent', 'Undocumented AI Agent', 'Fetcher', 'Intelligence Gatherer', 'Security Scanner', 'Scraper', 'SEO Crawler'] });
    const values = text.split('\n').filter((l) => l.startsWith('User-agent: ')).map((l) => l.slice(12).toLowerCase());
    expect(new Set(values).size).toBe(values.length);
  });
});

/** A Catalog object that skips createCatalog's validation, as a caller could hand-make one. */
function unvalidated(agents: readonly Agent[]): Catalog {
  return {
    version: 1,
    agents,
    getAgent: (id) => agents.find((a) => a.id === id),
    agentsOfType: (type) => agents.filter((a) => a.type === type),
    matchUserAgent: () => undefined,
    matchSignatureAgent: () => undefined,
  };
}

describe('robots tokens that are not product tokens never reach the output', () => {
  it.each([
    ['*', 'regular-expression syntax'],
    ['Foo*', 'regular-expression syntax'],
    ['^Silk\\/', 'regular-expression syntax'],
    ['008\\/', 'regular-expression syntax'],
    [' Padded', 'blank, padded'],
    ['Bad\u2028Bot', 'control character'],
    ['www.pinterest.com', 'a URL'],
    ['pinterest.com', 'a hostname'],
    ['iaskspider/2.0', 'a version'],
    ['Brightbot 1.0', 'a version'],
    ['larbin_2.6.2', 'a version'],
    ['https://example.com/bot', 'a URL'],
  ])('%j is refused by createCatalog and by the renderer (%s)', (token, reason) => {
    expect(() => createCatalog({ version: 1, agents: [agent('bad', 'Scraper', [token])] })).toThrow(reason);
    expect(() => createRobotsRenderer(unvalidated([agent('bad', 'Scraper', [token])]))).toThrow(/catalog agent "bad": robots token .* cannot be written/s);
  });

  it('the reviewed exceptions (archive.org_bot, Mail.RU_Bot) are written as documented', () => {
    const text = createRobotsRenderer(createCatalog({ version: 1, agents: [agent('archive', 'Archiver', ['archive.org_bot']), agent('mail', 'Search Engine Crawler', ['Mail.RU_Bot'])] })).robotsTxt({
      agent_types: ['Archiver', 'Search Engine Crawler'],
    });
    expect(text).toBe('User-agent: archive.org_bot\nDisallow: /\n\nUser-agent: Mail.RU_Bot\nDisallow: /\n');
  });
});

describe('the RFC 9309 reference matcher itself (sanity, from RFC and Google test cases)', () => {
  const file = ['User-agent: FooBot', 'User-agent: BarBot', 'Disallow: /x', '', 'User-agent: FooBot', 'Allow: /x/y', '', 'User-agent: *', 'Disallow: /'].join('\n');
  const google = referenceRobots(file, googleExtract);
  it('merges all groups of a token, falls back to * only when none matches', () => {
    expect(google.isAllowed('/x/a', 'foobot')).toBe(false);
    expect(google.isAllowed('/x/y/z', 'FooBot')).toBe(true);
    expect(google.isAllowed('/x/y/z', 'BarBot')).toBe(false);
    expect(google.isAllowed('/other', 'BarBot')).toBe(true);
    expect(google.isAllowed('/other', 'Baz')).toBe(false);
    expect(google.isAllowed('/robots.txt', 'Baz')).toBe(true);
  });
  it('longest match wins, allow wins ties, * and $ wildcards, percent-encoding normalised', () => {
    const r = referenceRobots('User-agent: a\nDisallow: /p\nAllow: /p\nDisallow: /*.gif$\nDisallow: /%7Ex\nDisallow: /caf\u00e9', googleExtract);
    expect(r.isAllowed('/p', 'a')).toBe(true);
    expect(r.isAllowed('/img/x.gif', 'a')).toBe(false);
    expect(r.isAllowed('/img/x.gif?v=1', 'a')).toBe(true);
    expect(r.isAllowed('/~x', 'a')).toBe(false);
    expect(r.isAllowed('/caf%C3%A9', 'a')).toBe(false);
  });
  it('Google-style extraction: "Foo Bar" applies to Foo, "MJ12bot" to MJ', () => {
    expect(referenceRobots('User-agent: Foo Bar\nDisallow: /', googleExtract).isAllowed('/', 'Foo')).toBe(false);
    expect(referenceRobots('User-agent: MJ12bot\nDisallow: /', googleExtract).isAllowed('/', 'MJ')).toBe(false);
    expect(referenceRobots('User-agent: MJ12bot\nDisallow: /', literalExtract).isAllowed('/', 'MJ')).toBe(true);
  });
});
