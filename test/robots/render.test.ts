// robots.txt rendering: the seed format, order, extensions (paths, allow, comments, markers),
// memoization, the ETag and the 500 KiB limit.
import { describe, expect, it } from 'vitest';
import {
  AGENT_TYPES,
  createCatalog,
  createEngine,
  createRobotsRenderer,
  defaultCatalogDocument,
  MAX_ROBOTS_TXT_BYTES,
  RobotsOptionsError,
  type Agent,
  type AgentType,
} from '../../src/index.js';
import { fnv1a64 } from '../../src/robots/etag.js';

function agent(id: string, type: AgentType, tokens: string[], url = `https://example.org/bots/${id}`): Agent {
  return { id, name: id, type, operator: 'Test', url, match: {}, robots_tokens: tokens };
}

const catalog = createCatalog({
  version: 1,
  agents: [
    agent('gptbot', 'AI Data Scraper', ['GPTBot'], 'https://platform.openai.com/docs/bots'),
    agent('ccbot', 'AI Data Scraper', ['CCBot'], 'https://commoncrawl.org/ccbot'),
    agent('bytespider', 'AI Data Scraper', ['Bytespider']),
    agent('anthropic', 'AI Data Scraper', ['ClaudeBot', 'anthropic-ai']),
    agent('chatgpt-user', 'AI Assistant', ['ChatGPT-User']),
    agent('headless', 'Automated Agent', ['HeadlessChrome']),
    agent('googlebot', 'Search Engine Crawler', ['Googlebot']),
  ],
});
const engine = createEngine({ catalog });

describe('robotsTxt: the seed format', () => {
  it('one group per token, blank line between groups, LF endings, trailing newline', () => {
    expect(engine.robotsTxt({ agent_types: ['AI Assistant'] })).toBe('User-agent: ChatGPT-User\nDisallow: /\n');
    expect(engine.robotsTxt({ agent_types: ['AI Assistant', 'Search Engine Crawler'], disallow: '/private' })).toBe(
      'User-agent: ChatGPT-User\nDisallow: /private\n\nUser-agent: Googlebot\nDisallow: /private\n',
    );
  });

  it('orders groups by type display order, then token (case-insensitively), whatever the input order', () => {
    const text = engine.robotsTxt({ agent_types: ['Search Engine Crawler', 'AI Data Scraper', 'AI Assistant'] });
    const tokens = text.split('\n').filter((l) => l.startsWith('User-agent: ')).map((l) => l.slice(12));
    expect(tokens).toEqual(['ChatGPT-User', 'anthropic-ai', 'Bytespider', 'CCBot', 'ClaudeBot', 'GPTBot', 'Googlebot']);
  });

  it('legacy "Headless Agent" and "Headless Browser" mean "Automated Agent"; duplicates are harmless', () => {
    const expected = 'User-agent: HeadlessChrome\nDisallow: /\n';
    expect(engine.robotsTxt({ agent_types: ['Headless Agent'] })).toBe(expected);
    expect(engine.robotsTxt({ agent_types: ['Headless Browser', 'Automated Agent', 'Headless Agent'] })).toBe(expected);
    expect(engine.robotsTxt({ agent_types: ['AI Assistant', 'AI Assistant'] })).toBe('User-agent: ChatGPT-User\nDisallow: /\n');
  });

  it('a type with no agents renders nothing (the empty file restricts nothing)', () => {
    expect(engine.robotsTxt({ agent_types: ['Uncategorized'] })).toBe('');
    expect(engine.robotsTxt({ agent_types: ['Uncategorized'], markers: true })).toBe('# BEGIN agentwarden\n# END agentwarden\n');
  });

  it('ignores unknown option keys (clients send extras)', () => {
    expect(engine.robotsTxt({ agent_types: ['AI Assistant'], wordpress_plugin_version: '1.28.0' } as never)).toBe('User-agent: ChatGPT-User\nDisallow: /\n');
  });

  it('default catalog: every group is User-agent line(s) then Disallow: /, each token once', () => {
    const text = createEngine().robotsTxt({ agent_types: [...AGENT_TYPES] });
    const groups = text.split('\n\n');
    const seen = new Set<string>();
    for (const group of groups) {
      const lines = group.replace(/\n$/, '').split('\n');
      expect(lines.at(-1)).toBe('Disallow: /');
      for (const line of lines.slice(0, -1)) {
        expect(line).toMatch(/^User-agent: \S/);
        const token = line.slice(12).toLowerCase();
        expect(seen.has(token), `${token} in two groups`).toBe(false);
        seen.add(token);
      }
    }
    expect(text.endsWith('\n')).toBe(true);
    expect(text.endsWith('\n\n')).toBe(false);
  });
});

describe('robotsTxt: beyond the seed', () => {
  it('several disallow paths and allow exceptions (Allow first, for first-match parsers)', () => {
    expect(engine.robotsTxt({ agent_types: ['AI Assistant'], disallow: ['/private', '/drafts/'], allow: ['/private/press'] })).toBe(
      'User-agent: ChatGPT-User\nAllow: /private/press\nDisallow: /private\nDisallow: /drafts/\n',
    );
  });

  it('duplicate paths (also once encoded) are written once', () => {
    expect(engine.robotsTxt({ agent_types: ['AI Assistant'], disallow: ['/a#b', '/a%23b', '/a#b'] })).toBe('User-agent: ChatGPT-User\nDisallow: /a%23b\n');
  });

  it('comments: "# <type>" and "# <agent url>" above each group', () => {
    expect(engine.robotsTxt({ agent_types: ['AI Assistant', 'Search Engine Crawler'], comments: true })).toBe(
      [
        '# AI Assistant',
        '# https://example.org/bots/chatgpt-user',
        'User-agent: ChatGPT-User',
        'Disallow: /',
        '',
        '# Search Engine Crawler',
        '# https://example.org/bots/googlebot',
        'User-agent: Googlebot',
        'Disallow: /',
        '',
      ].join('\n'),
    );
  });

  it('markers: default, custom label and custom begin/end lines', () => {
    const body = 'User-agent: ChatGPT-User\nDisallow: /\n';
    expect(engine.robotsTxt({ agent_types: ['AI Assistant'], markers: true })).toBe(`# BEGIN agentwarden\n${body}# END agentwarden\n`);
    expect(engine.robotsTxt({ agent_types: ['AI Assistant'], markers: 'AI bots' })).toBe(`# BEGIN AI bots\n${body}# END AI bots\n`);
    expect(engine.robotsTxt({ agent_types: ['AI Assistant'], markers: { begin: 'START KNOWN AGENTS BLOCK', end: 'END KNOWN AGENTS BLOCK' } })).toBe(
      `# START KNOWN AGENTS BLOCK\n${body}# END KNOWN AGENTS BLOCK\n`,
    );
    expect(engine.robotsTxt({ agent_types: ['AI Assistant'], markers: false })).toBe(body);
  });

  it('the spliced block keeps an existing robots.txt meaning the same for everyone else', async () => {
    const robotsParser = (await import('robots-parser')).default;
    const existing = 'User-agent: *\nDisallow: /admin\n\n';
    const text = existing + engine.robotsTxt({ agent_types: ['AI Assistant'], markers: true });
    const robots = robotsParser('https://example.com/robots.txt', text);
    expect(robots.isAllowed('https://example.com/page', 'ChatGPT-User')).toBe(false);
    expect(robots.isAllowed('https://example.com/page', 'Googlebot')).toBe(true);
    expect(robots.isAllowed('https://example.com/admin', 'Googlebot')).toBe(false);
  });

  it('a catalog URL is written normalised, so it cannot carry a line break into a comment', () => {
    // The WHATWG URL parser drops tab and newline, so such a URL passes catalog validation.
    const sneaky = createCatalog({ version: 1, agents: [agent('x', 'Scraper', ['XBot'], 'https://example.org/a\nUser-agent: *\nDisallow: /')] });
    const text = createRobotsRenderer(sneaky).robotsTxt({ agent_types: ['Scraper'], comments: true });
    expect(text.split('\n').filter((l) => l.startsWith('User-agent'))).toEqual(['User-agent: XBot']);
    expect(text).toContain('# https://example.org/aUser-agent:%20*Disallow:%20/\n');
  });
});

describe('robotsTxt: memoization and ETag', () => {
  it('equal options (any order, duplicates, aliases, string or array) share one rendering', () => {
    const robots = createRobotsRenderer(catalog);
    const a = robots.renderRobotsTxt({ agent_types: ['Automated Agent', 'AI Assistant'], disallow: '/' });
    const b = robots.renderRobotsTxt({ agent_types: ['AI Assistant', 'Headless Browser', 'AI Assistant'], disallow: ['/'], comments: false, markers: null });
    expect(b).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(robots.renderRobotsTxt({ agent_types: ['AI Assistant', 'Automated Agent'], comments: true })).not.toBe(a);
  });

  it('the cache is bounded: the least recently used rendering is dropped', () => {
    const robots = createRobotsRenderer(catalog, { cacheSize: 2 });
    const first = robots.renderRobotsTxt({ agent_types: ['AI Assistant'] });
    const second = robots.renderRobotsTxt({ agent_types: ['Automated Agent'] });
    expect(robots.renderRobotsTxt({ agent_types: ['AI Assistant'] })).toBe(first); // refreshes "first"
    robots.renderRobotsTxt({ agent_types: ['Search Engine Crawler'] }); // evicts "second"
    expect(robots.renderRobotsTxt({ agent_types: ['AI Assistant'] })).toBe(first);
    const again = robots.renderRobotsTxt({ agent_types: ['Automated Agent'] });
    expect(again).not.toBe(second);
    expect(again).toEqual(second);
  });

  it('cacheSize 0 disables the cache; a bad cacheSize throws RangeError naming it', () => {
    const robots = createRobotsRenderer(catalog, { cacheSize: 0 });
    const a = robots.renderRobotsTxt({ agent_types: ['AI Assistant'] });
    expect(robots.renderRobotsTxt({ agent_types: ['AI Assistant'] })).not.toBe(a);
    expect(robots.renderRobotsTxt({ agent_types: ['AI Assistant'] })).toEqual(a);
    expect(() => createRobotsRenderer(catalog, { cacheSize: -1 })).toThrow(/cacheSize must be a non-negative integer, got -1/);
    expect(() => createRobotsRenderer(catalog, { cacheSize: 1.5 })).toThrow(RangeError);
  });

  it('etag: strong, quoted FNV-1a 64 of the UTF-8 text; equal text, equal etag; bytes is the UTF-8 length', () => {
    const rendered = engine.renderRobotsTxt({ agent_types: ['AI Assistant'], markers: 'Blöcke' });
    const bytes = new TextEncoder().encode(rendered.text);
    expect(rendered.etag).toMatch(/^"[0-9a-f]{16}"$/);
    expect(rendered.etag).toBe(`"${fnv1a64(bytes)}"`);
    expect(rendered.bytes).toBe(bytes.length);
    expect(createEngine({ catalog }).renderRobotsTxt({ agent_types: ['AI Assistant'], markers: 'Blöcke' }).etag).toBe(rendered.etag);
    expect(engine.renderRobotsTxt({ agent_types: ['AI Assistant'], markers: 'Blocke' }).etag).not.toBe(rendered.etag);
  });

  it('fnv1a64 matches the published FNV-1a 64 vectors and a BigInt reference', () => {
    const enc = new TextEncoder();
    expect(fnv1a64(enc.encode(''))).toBe('cbf29ce484222325');
    expect(fnv1a64(enc.encode('a'))).toBe('af63dc4c8601ec8c');
    expect(fnv1a64(enc.encode('foobar'))).toBe('85944171f73967e8');
    const reference = (data: Uint8Array) => {
      let h = 0xcbf29ce484222325n;
      for (const byte of data) h = ((h ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
      return h.toString(16).padStart(16, '0');
    };
    const text = createEngine().robotsTxt({ agent_types: [...AGENT_TYPES], comments: true });
    const sample = enc.encode(text.slice(0, 20_000));
    expect(fnv1a64(sample)).toBe(reference(sample));
  });
});

describe('robotsTxt: RFC 9309 §2.5 size limit', () => {
  it('default catalog, every type, comments and markers on: under 500 KiB', () => {
    const rendered = createEngine().renderRobotsTxt({ agent_types: [...AGENT_TYPES], comments: true, markers: true });
    expect(rendered.bytes).toBeLessThan(MAX_ROBOTS_TXT_BYTES);
    expect(new TextEncoder().encode(rendered.text).length).toBe(rendered.bytes);
    // Every agent of the catalog is in it.
    const groups = rendered.text.split('\n').filter((l) => l.startsWith('# http')).length;
    expect(groups).toBe(defaultCatalogDocument.agents.reduce((n, a) => n + a.robots_tokens.length, 0));
  });

  it('text that would pass 500 KiB is a typed error, never a truncated file', () => {
    const many = createCatalog({ version: 1, agents: Array.from({ length: 300 }, (_, i) => agent(`bot-${i}`, 'Scraper', [`Bot-${'x'.repeat(i % 26)}-${i}`.replace(/\d/g, (d) => 'abcdefghij'[Number(d)]!)])) });
    const paths = Array.from({ length: 10 }, (_, i) => `/${String.fromCharCode(97 + i)}/${'p'.repeat(300)}`);
    let error: unknown;
    try {
      createRobotsRenderer(many).robotsTxt({ agent_types: ['Scraper'], disallow: paths, comments: true });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RobotsOptionsError);
    expect((error as RobotsOptionsError).issues).toEqual([expect.objectContaining({ path: '', code: 'output-too-large' })]);
    expect((error as RobotsOptionsError).issues[0]!.message).toMatch(/over RFC 9309's 512000-byte parse limit/);
    // The same catalog with one path fits.
    expect(createRobotsRenderer(many).renderRobotsTxt({ agent_types: ['Scraper'], disallow: paths[0] }).bytes).toBeLessThan(MAX_ROBOTS_TXT_BYTES);
  });
});
