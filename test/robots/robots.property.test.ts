// robots.txt output re-parsed by two independent parsers — robots-parser (npm) and an RFC 9309
// reference matcher written from the RFC text (rfc9309-reference.ts) — for random type subsets and random paths.
import fc from 'fast-check';
import robotsParser from 'robots-parser';
import { describe, expect, it } from 'vitest';
import { googleExtract, literalExtract, referenceRobots } from './rfc9309-reference.js';
import { AGENT_TYPES, createCatalog, createEngine, defaultCatalogDocument, RobotsOptionsError, type AgentType, type Catalog, type Engine } from '../../src/index.js';
import { robotsTestAgent } from '../helpers/agents.js';

const ORIGIN = 'https://example.com';
const robotsUrl = `${ORIGIN}/robots.txt`;

/** What robots-parser keys a token as: lower-cased, cut at "/", trimmed (reference §7). */
const parserKey = (token: string) => token.toLowerCase().split('/')[0]!.trim();

const agent = robotsTestAgent;

/** A small catalog: every type, several tokens per agent, and the non-RFC tokens the brief names. */
const handCatalog = createCatalog({
  version: 1,
  agents: [
    agent('gptbot', 'AI Data Scraper', ['GPTBot']),
    agent('ccbot', 'AI Data Scraper', ['CCBot']),
    agent('ai2bot', 'AI Data Scraper', ['AI2Bot']),
    agent('chatgpt-agent', 'AI Agent', ['ChatGPT Agent']),
    agent('chatgpt-user', 'AI Assistant', ['ChatGPT-User']),
    agent('claude', 'AI Assistant', ['Claude-User', 'claude-web']),
    agent('devin', 'AI Coding Agent', ['Devin']),
    agent('diffbot', 'AI Data Provider', ['Diffbot']),
    agent('perplexitybot', 'AI Search Crawler', ['PerplexityBot']),
    agent('iaskspider', 'AI Search Crawler', ['iaskspider']),
    agent('archive', 'Archiver', ['archive.org_bot', 'ia_archiver']),
    agent('helper', 'Developer Helper', ['Google-Site-Verification']),
    agent('slackbot', 'Fetcher', ['Slackbot', 'Slack-ImgProxy']),
    agent('headless', 'Automated Agent', ['HeadlessChrome']),
    agent('intel', 'Intelligence Gatherer', ['Brandwatch']),
    agent('scrapy', 'Scraper', ['Scrapy']),
    agent('mj12bot', 'SEO Crawler', ['MJ12bot']),
    agent('ahrefs', 'SEO Crawler', ['AhrefsBot']),
    agent('googlebot', 'Search Engine Crawler', ['Googlebot']),
    agent('bingbot', 'Search Engine Crawler', ['bingbot']),
    agent('nessus', 'Security Scanner', ['Nessus']),
    agent('linguee', 'Undocumented AI Agent', ['Linguee Bot']),
    agent('other', 'Uncategorized', ['SomeOtherBot']),
  ],
});

const typeInput = fc.array(fc.constantFrom<string>(...AGENT_TYPES, 'Headless Agent', 'Headless Browser'), { minLength: 1, maxLength: 8 });
const chosenTypes = (input: readonly string[]): Set<AgentType> =>
  new Set(input.map((t) => (t === 'Headless Agent' || t === 'Headless Browser' ? 'Automated Agent' : (t as AgentType))));

// Path text a site owner might write: plain, reserved and sub-delim characters, "#", "%" (alone and
// as valid %XX), space, non-ASCII (2-, 3- and 4-byte UTF-8), and the two wildcards.
const pathChar = fc.constantFrom(
  ...'abcxyzABZ0129-._~'.split(''),
  '/', '/', '/', ':', '@', '!', '&', "'", '(', ')', '+', ',', ';', '=', '?', '#', '%', ' ', '[', '"', '<',
  'é', 'ü', '€', '日', '😀', '%2F', '%41', '%c3%a9', '*', '$',
);
const pathText = fc.tuple(fc.constantFrom('/', '/', '/', '*'), fc.string({ unit: pathChar, maxLength: 16 })).map(([head, rest]) => head + rest);
// No hex digits: a fill after a lone "%" must not turn it into a %XX escape.
const fill = fc.string({ unit: fc.constantFrom(...'xyzqXZ-_/~'.split('')), maxLength: 6 });

/** How a crawler requests a literal path: UTF-8 percent-encoded as encodeURI does, "#" as %23, %XX kept. */
function requestPath(raw: string): string {
  return raw
    .split(/(%[0-9A-Fa-f]{2})/)
    .map((part, i) => (i % 2 === 1 ? part : encodeURI(part).replace(/#/g, '%23')))
    .join('');
}

/**
 * A concrete request path the path a user wrote means: each "*" filled in, a trailing "$" honoured,
 * otherwise a suffix appended ("paths under it"), then encoded as a crawler requests it. Undefined
 * when the URL parser would rewrite it (dot segments, query characters it escapes), because then no
 * crawler could request it as written.
 */
function concretePath(pattern: string, fills: readonly string[], suffix: string): string | undefined {
  const anchored = pattern.endsWith('$');
  // Each piece is encoded on its own, so a fill never completes a "%" the user wrote into an escape.
  const parts = (anchored ? pattern.slice(0, -1) : pattern).split('*').map(requestPath);
  let path = parts[0]!;
  for (let i = 1; i < parts.length; i++) path += requestPath(fills[i - 1] ?? '') + parts[i]!;
  if (!anchored) path += requestPath(suffix);
  if (!path.startsWith('/')) path = `/${path}`;
  const url = new URL(ORIGIN + path);
  return url.pathname + url.search === path ? path : undefined;
}

/** A cheap assertion for hot loops (vitest's expect costs microseconds per call); fast-check reports the throw. */
function ensure(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}

interface Blocked {
  readonly robotsParser: boolean;
  readonly google: boolean;
  readonly literal: boolean;
}

function checker(text: string) {
  const rp = robotsParser(robotsUrl, text);
  const google = referenceRobots(text, googleExtract);
  const literal = referenceRobots(text, literalExtract);
  return (path: string, token: string): Blocked => {
    const allowed = rp.isAllowed(ORIGIN + path, token);
    ensure(typeof allowed === 'boolean', `robots-parser answered ${String(allowed)} for ${path}`);
    return {
      robotsParser: !allowed,
      // Google-style crawlers look up a valid product token: the leading run of their own token.
      google: googleExtract(token) !== '' && !google.isAllowed(path, googleExtract(token)),
      literal: !literal.isAllowed(path, token),
    };
  };
}

/**
 * Runs the main property for one catalog: chosen agents blocked everywhere the parsers can see
 * them, unchosen agents and generic crawlers allowed except for the documented degradation of
 * non-RFC tokens, which is returned so each catalog's test can assert what it expects of it.
 */
function mainProperty(catalog: Catalog, engine: Engine, numRuns: number, maxProbes: number): Set<string> {
  const collateral = new Set<string>();
  fc.assert(
    fc.property(typeInput, fc.array(pathText, { minLength: 1, maxLength: 3 }), fc.array(fill, { maxLength: 4 }), fill, (types, paths, fills, suffix) => {
      const text = engine.robotsTxt({ agent_types: types, disallow: paths });
      const chosen = chosenTypes(types);
      // Probes come from the paths as the user wrote them, not from the output.
      const probes = (paths as string[])
        .map((p) => concretePath(p, fills, suffix))
        .filter((p): p is string => p !== undefined)
        .slice(0, maxProbes);
      const check = checker(text);
      const chosenTokens = catalog.agents.filter((a) => chosen.has(a.type)).flatMap((a) => a.robots_tokens);
      for (const path of probes) {
        for (const token of chosenTokens) {
          const blocked = check(path, token);
          ensure(blocked.robotsParser, `robots-parser lets ${token} fetch ${path}\n${text}`);
          ensure(blocked.literal, `literal matching lets ${token} fetch ${path}\n${text}`);
          ensure(blocked.google || googleExtract(token) === '', `Google-style lets ${googleExtract(token)} (${token}) fetch ${path}\n${text}`);
        }
        for (const other of catalog.agents.filter((a) => !chosen.has(a.type))) {
          for (const token of other.robots_tokens) {
            const blocked = check(path, token);
            // A crawler matching its own token literally is never caught by another agent's group.
            ensure(!blocked.literal, `${token} (${other.type}, not chosen) is blocked for ${path}`);
            if (blocked.robotsParser) {
              // Only when robots-parser's key for it is the key of a chosen token (cut at "/").
              ensure(chosenTokens.some((t) => parserKey(t) === parserKey(token)), `robots-parser blocks unchosen ${token}`);
              collateral.add(`robots-parser:${token}`);
            }
            if (blocked.google) {
              // Only when a chosen token degrades to the same leading letter run.
              ensure(chosenTokens.some((t) => googleExtract(t).toLowerCase() === googleExtract(token).toLowerCase()), `Google-style blocks unchosen ${token}`);
              collateral.add(`google:${token}`);
            }
          }
        }
        for (const token of ['SomeRandomBot', 'Zz-Unlisted_Crawler']) {
          const blocked = check(path, token);
          ensure(!blocked.robotsParser && !blocked.google && !blocked.literal, `generic crawler ${token} is blocked for ${path}`);
        }
      }
    }),
    { numRuns },
  );
  return collateral;
}

describe('robots.txt means what it says (robots-parser and an RFC 9309 matcher)', () => {
  it('hand-written catalog: chosen agents blocked, the rest allowed, collateral only via degraded tokens', () => {
    const collateral = mainProperty(handCatalog, createEngine({ catalog: handCatalog }), 1500, 3);
    // The only side effect of this catalog: none of its tokens is the degraded form of another.
    expect([...collateral]).toEqual([]);
  });

  it('default catalog: chosen agents blocked, the rest allowed, collateral only via degraded tokens', () => {
    const defaultCatalog = createCatalog(defaultCatalogDocument);
    const collateral = mainProperty(defaultCatalog, createEngine({ catalog: defaultCatalog }), 100, 1);
    // Whatever the catalog holds, collateral is possible only under the lossy parsers, never literally.
    for (const entry of collateral) expect(entry).toMatch(/^(robots-parser|google):/);
  });

  it('allow exceptions: robots-parser and the RFC matcher agree on every probe', () => {
    const engine = createEngine({ catalog: handCatalog });
    const probe = fc.tuple(fc.constantFrom('/', '/a', '/a/b', '/pub', '/pub/x', '/p'), fill).map(([a, b]) => a + b);
    fc.assert(
      fc.property(typeInput, fc.array(pathText, { minLength: 1, maxLength: 3 }), fc.array(pathText, { minLength: 1, maxLength: 3 }), fc.array(probe, { minLength: 1, maxLength: 5 }), (types, disallow, allow, probes) => {
        const text = engine.robotsTxt({ agent_types: types, disallow, allow });
        const check = checker(text);
        const tokens = handCatalog.agents.filter((a) => chosenTypes(types).has(a.type)).map((a) => a.robots_tokens[0]!);
        for (const path of probes) {
          for (const token of tokens) {
            const blocked = check(path, token);
            ensure(blocked.robotsParser === blocked.literal, `robots-parser and the RFC matcher disagree: ${token} ${path}\n${text}`);
            ensure(blocked.google === blocked.literal || googleExtract(token) === '', `Google-style and literal disagree: ${token} ${path}\n${text}`);
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('no input can inject a line: strings with control characters are rejected, never rendered', () => {
    const engine = createEngine({ catalog: handCatalog });
    const control = fc.constantFrom('\r', '\n', '\r\n', '\u0000', '\t', '\u000b', '\u000c', '\u001b', '\u007f', '\u0085', '\u2028', '\u2029');
    const hostile = fc.tuple(fc.string({ maxLength: 10 }), control, fc.string({ maxLength: 10 })).map(([a, c, b]) => `/${a}${c}User-agent: *${c}Disallow: /${b}`);
    fc.assert(
      fc.property(hostile, fc.constantFrom('disallow', 'allow', 'markers'), fc.boolean(), (value, field, asArray) => {
        const options = { agent_types: ['AI Data Scraper'], [field]: field !== 'markers' && asArray ? ['/ok', value] : value };
        let error: unknown;
        try {
          engine.robotsTxt(options);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(RobotsOptionsError);
        const issues = (error as RobotsOptionsError).issues;
        expect(issues).toContainEqual(expect.objectContaining({ code: 'control-character', path: field !== 'markers' && asArray ? `/${field}/1` : `/${field}` }));
      }),
      { numRuns: 500 },
    );
  });

  it('any string either is rejected with a typed error or renders only well-formed lines', () => {
    const engine = createEngine({ catalog: handCatalog });
    const line = /^(User-agent: [^\r\n#*]+|Allow: [!-"$-~]+|Disallow: [!-"$-~]+|# [^\r\n\u2028\u2029]+|)$/;
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 12 }), (a, b) => {
        for (const path of [a, b, `/${a}`, `/${b}`]) {
          let text: string;
          try {
            text = engine.robotsTxt({ agent_types: ['AI Data Scraper', 'Fetcher'], disallow: path, comments: true, markers: path.slice(1) || true });
          } catch (error) {
            expect(error).toBeInstanceOf(RobotsOptionsError);
            continue;
          }
          const lines = text.split('\n');
          expect(lines.pop()).toBe('');
          for (const l of lines) ensure(line.test(l), `malformed line ${JSON.stringify(l)}`);
          // Exactly one Disallow line per group: the path never split into more.
          const userAgentLines = lines.filter((l) => l.startsWith('User-agent: ')).length;
          expect(lines.filter((l) => l.startsWith('Disallow: ')).length).toBe(userAgentLines - countAliases(lines));
        }
      }),
      { numRuns: 300 },
    );
  });
});

/** Alias lines (a second User-agent line in a group) in rendered lines. */
function countAliases(lines: readonly string[]): number {
  let n = 0;
  for (let i = 1; i < lines.length; i++) if (lines[i]!.startsWith('User-agent: ') && lines[i - 1]!.startsWith('User-agent: ')) n++;
  return n;
}
