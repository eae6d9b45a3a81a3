// Per-agent robots rules: disallow_agents and allow_agents on top of agent_types (validation at JSON
// pointers, the exact text), and their meaning re-parsed by robots-parser and the RFC 9309 reference
// matcher for random choices of types, agents and paths.
import fc from 'fast-check';
import robotsParser from 'robots-parser';
import { describe, expect, it } from 'vitest';
import { compileRobotsAgentRules } from '../../src/robots/agent-rules.js';
import { compileRobotsRules, createCatalog, createEngine, parseRobotsOptions, RobotsOptionsError, validateRobotsOptions, type AgentType } from '../../src/index.js';
import { literalExtract, referenceRobots } from './rfc9309-reference.js';
import { robotsTestAgent } from '../helpers/agents.js';

const agent = robotsTestAgent;

const catalog = createCatalog({
  version: 1,
  agents: [
    agent('gptbot', 'AI Data Scraper', ['GPTBot']),
    agent('ccbot', 'AI Data Scraper', ['CCBot']),
    agent('anthropic', 'AI Data Scraper', ['ClaudeBot', 'anthropic-ai']),
    agent('chatgpt-user', 'AI Assistant', ['ChatGPT-User']),
    agent('perplexitybot', 'AI Search Crawler', ['PerplexityBot']),
    agent('googlebot', 'Search Engine Crawler', ['Googlebot']),
    agent('bingbot', 'Search Engine Crawler', ['bingbot']),
    agent('linguee', 'Undocumented AI Agent', ['Linguee Bot']),
    // Known only by a host in its User-Agent (www.monitor.us): no robots token.
    agent('monitor', 'Developer Helper', []),
    agent('uptimerobot', 'Developer Helper', ['UptimeRobot']),
  ],
});
const engine = createEngine({ catalog });

function issues(input: unknown): [string, string][] {
  const parsed = parseRobotsOptions(input, catalog);
  if (parsed.ok) throw new Error('expected issues');
  return parsed.issues.map((issue) => [issue.path, issue.code]);
}

describe('robots options: disallow_agents and allow_agents', () => {
  it('resolves ids and robots tokens (case-insensitively) to catalog ids, sorted and deduplicated', () => {
    const options = validateRobotsOptions({ agent_types: ['AI Data Scraper'], allow_agents: ['claudebot', 'CCBot', 'ccbot'], disallow_agents: [{ agent: 'GOOGLEBOT', disallow: '/private' }] }, catalog);
    expect(options.allowAgents).toEqual([
      { agent: 'anthropic', disallow: null, allow: null },
      { agent: 'ccbot', disallow: null, allow: null },
    ]);
    expect(options.disallowAgents).toEqual([{ agent: 'googlebot', disallow: ['/private'], allow: null }]);
  });

  it('an unknown agent is a 400-class issue naming the field and index', () => {
    expect(issues({ agent_types: ['AI Data Scraper'], allow_agents: ['ccbot', 'NoSuchBot'], disallow_agents: [{ agent: 'nobody' }] })).toEqual([
      ['/disallow_agents/0/agent', 'unknown-agent'],
      ['/allow_agents/1', 'unknown-agent'],
    ]);
    const error = (() => {
      try {
        engine.robotsTxt({ agent_types: [], disallow_agents: ['NoSuchBot'] });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(RobotsOptionsError);
    expect((error as RobotsOptionsError).message).toContain('"NoSuchBot" is neither an agent id nor a robots token');
  });

  it('an agent with no robots token writes nothing, named or chosen by type: no User-agent line could carry its rule', () => {
    // Accepted, so settings saved before the catalog dropped its token still hold.
    expect(parseRobotsOptions({ agent_types: [], disallow_agents: ['monitor'] }, catalog).ok).toBe(true);
    expect(engine.robotsTxt({ agent_types: [], disallow_agents: ['monitor', 'ccbot'] })).toBe('User-agent: CCBot\nDisallow: /\n');
    // Nor does any of its rules apply to it: its visits are no robots.txt violations.
    const rules = compileRobotsAgentRules(validateRobotsOptions({ agent_types: ['Developer Helper'], disallow_agents: ['monitor'] }, catalog), catalog);
    expect(rules.ruleFor('monitor')).toBeUndefined();
    expect(rules.ruleFor('uptimerobot')?.source).toBe('agent_types');
    expect(engine.robotsTxt({ agent_types: ['Developer Helper'] })).toBe('User-agent: UptimeRobot\nDisallow: /\n');
  });

  it('an unlisted agent cannot be named, and a chosen type never applies to one: robots.txt never addressed it', () => {
    expect(issues({ agent_types: [], disallow_agents: ['unlisted:AcmeBot'] })).toEqual([['/disallow_agents/0', 'unknown-agent']]);
    const unlisted = catalog.matchUserAgent('AcmeBot/2.1')!;
    expect(unlisted).toMatchObject({ id: 'unlisted:AcmeBot', type: 'Uncategorized' });
    const rules = compileRobotsAgentRules(validateRobotsOptions({ agent_types: ['Uncategorized', 'AI Data Scraper'] }, catalog), catalog);
    expect(rules.ruleFor('gptbot')?.source).toBe('agent_types');
    expect(rules.ruleFor(unlisted.id)).toBeUndefined();
  });

  it('rejects an agent named in both lists, or twice with different paths, at the later entry', () => {
    expect(issues({ agent_types: [], disallow_agents: ['GPTBot'], allow_agents: ['gptbot'] })).toEqual([['/allow_agents/0', 'conflicting-agent']]);
    expect(issues({ agent_types: [], disallow_agents: ['GPTBot', { agent: 'gptbot', disallow: '/a' }] })).toEqual([['/disallow_agents/1/agent', 'conflicting-agent']]);
  });

  it('checks the shape of every entry and its paths', () => {
    expect(
      issues({
        agent_types: ['AI Data Scraper'],
        disallow_agents: 'GPTBot',
        allow_agents: [7, '', { agent: 'ccbot', disallow: '/x' }, { agent: 'claudebot', allow: ['/ok', 'relative'] }, { agent: 'chatgpt-user', allow: [] }],
      }),
    ).toEqual([
      ['/disallow_agents', 'invalid-type'],
      ['/allow_agents/0', 'invalid-type'],
      ['/allow_agents/1', 'invalid-type'],
      ['/allow_agents/2/disallow', 'unsupported-field'],
      ['/allow_agents/3/allow/1', 'invalid-path'],
      ['/allow_agents/4/allow', 'empty'],
    ]);
  });

  it('agent_types stays required; it may be empty only when agents are named', () => {
    expect(issues({ disallow_agents: ['GPTBot'] })).toEqual([['/agent_types', 'missing']]);
    expect(issues({ agent_types: [], disallow_agents: [] })).toEqual([['/agent_types', 'empty']]);
    expect(parseRobotsOptions({ agent_types: [], disallow_agents: ['GPTBot'] }, catalog).ok).toBe(true);
  });

  it('without a catalog, references are checked for form only', () => {
    const parsed = parseRobotsOptions({ agent_types: [], disallow_agents: [' SomeBot '] });
    expect(parsed.ok && parsed.options.disallowAgents).toEqual([{ agent: 'SomeBot', disallow: null, allow: null }]);
  });
});

describe('robotsTxt with per-agent rules', () => {
  it('all AI Data Scrapers except one: the exception gets "Allow: /" in its own group', () => {
    expect(engine.robotsTxt({ agent_types: ['AI Data Scraper'], allow_agents: ['CCBot'] })).toBe(
      'User-agent: anthropic-ai\nDisallow: /\n\nUser-agent: CCBot\nAllow: /\n\nUser-agent: ClaudeBot\nDisallow: /\n\nUser-agent: GPTBot\nDisallow: /\n',
    );
  });

  it('an agent disallowed by name sits in its type\'s place, with its own paths or the top-level ones', () => {
    expect(engine.robotsTxt({ agent_types: ['AI Assistant'], disallow: '/private', disallow_agents: ['Googlebot', { agent: 'perplexitybot', disallow: ['/a', '/b'], allow: '/a/ok' }] })).toBe(
      [
        'User-agent: ChatGPT-User\nDisallow: /private\n',
        'User-agent: PerplexityBot\nAllow: /a/ok\nDisallow: /a\nDisallow: /b\n',
        'User-agent: Googlebot\nDisallow: /private\n',
      ].join('\n'),
    );
    // Only allow paths given: the rest of the site is disallowed, as at the top level.
    expect(engine.robotsTxt({ agent_types: [], disallow_agents: [{ agent: 'bingbot', allow: '/public/' }] })).toBe('User-agent: bingbot\nAllow: /public/\nDisallow: /\n');
  });

  it('an allow rule with paths keeps its type\'s lines and adds exceptions; outside a chosen type it only allows', () => {
    expect(engine.robotsTxt({ agent_types: ['AI Data Scraper'], disallow: ['/'], allow: '/pub', allow_agents: [{ agent: 'gptbot', allow: '/blog/' }, { agent: 'Googlebot', allow: '/x' }] })).toBe(
      [
        'User-agent: anthropic-ai\nAllow: /pub\nDisallow: /\n',
        'User-agent: CCBot\nAllow: /pub\nDisallow: /\n',
        'User-agent: ClaudeBot\nAllow: /pub\nDisallow: /\n',
        'User-agent: GPTBot\nAllow: /blog/\nAllow: /pub\nDisallow: /\n',
        'User-agent: Googlebot\nAllow: /x\n',
      ].join('\n'),
    );
  });

  it('a phrase token keeps its alias line; comments and markers wrap agent groups as type groups', () => {
    expect(engine.robotsTxt({ agent_types: [], disallow_agents: ['linguee'], comments: true, markers: true })).toBe(
      '# BEGIN agentwarden\n# Undocumented AI Agent\n# https://example.org/linguee\nUser-agent: Linguee Bot\nUser-agent: Linguee\nDisallow: /\n# END agentwarden\n',
    );
  });

  it('equal options in another spelling share one memoized rendering', () => {
    const a = engine.renderRobotsTxt({ agent_types: ['AI Data Scraper'], allow_agents: ['CCBot', 'claudebot'] });
    const b = engine.renderRobotsTxt({ agent_types: ['AI Data Scraper'], allow_agents: ['anthropic', 'ccbot', 'CCBOT'] });
    expect(b).toBe(a);
  });
});

describe('per-agent rules mean what they say under real parsers', () => {
  const types = fc.subarray<AgentType>(['AI Data Scraper', 'AI Assistant', 'AI Search Crawler', 'Search Engine Crawler', 'Undocumented AI Agent']);
  const pathPattern = fc.constantFrom('/', '/a', '/a/', '/a/b', '/b', '/pub', '/*.pdf$', '/a*z');
  const paths = fc.option(fc.uniqueArray(pathPattern, { minLength: 1, maxLength: 3 }), { nil: undefined });
  const agentRef = fc.constantFrom(...catalog.agents.flatMap((a) => [a.id, a.robots_tokens[0]!]));
  const rule = fc.record({ agent: agentRef, disallow: paths, allow: paths });
  const allowRule = fc.record({ agent: agentRef, allow: paths });
  const probes = ['/', '/a', '/a/', '/a/b', '/a/b/c.pdf', '/b', '/pub', '/pub/x', '/xyz', '/az'];

  it('each token of each agent is allowed exactly where its resolved rule allows; agents without a rule are untouched', () => {
    let valid = 0;
    fc.assert(
      fc.property(types, fc.array(fc.oneof(agentRef, rule), { maxLength: 3 }), fc.array(fc.oneof(agentRef, allowRule), { maxLength: 3 }), paths, paths, (agentTypes, disallowAgents, allowAgents, disallow, allow) => {
        const input = { agent_types: agentTypes, disallow_agents: disallowAgents, allow_agents: allowAgents, disallow, allow };
        const parsed = parseRobotsOptions(input, catalog);
        // Conflicting or empty choices are rejected; those are tested above.
        if (!parsed.ok) return;
        valid++;
        const text = engine.robotsTxt(input);
        const rp = robotsParser('https://example.com/robots.txt', text);
        const reference = referenceRobots(text, literalExtract);
        const rules = compileRobotsAgentRules(parsed.options, catalog);
        for (const a of catalog.agents) {
          const rule = rules.ruleFor(a.id);
          const expected = rule === undefined ? () => true : ((match) => (path: string) => match(path).allowed)(compileRobotsRules([...rule.disallow.map((pattern) => ({ allow: false, pattern })), ...rule.allow.map((pattern) => ({ allow: true, pattern }))]));
          for (const token of a.robots_tokens) {
            for (const path of probes) {
              const want = expected(path);
              if (rp.isAllowed(`https://example.com${path}`, token) !== want) throw new Error(`robots-parser: ${token} ${path} should be ${want ? 'allowed' : 'disallowed'}\n${JSON.stringify(input)}\n${text}`);
              if (reference.isAllowed(path, token) !== want) throw new Error(`RFC matcher: ${token} ${path} should be ${want ? 'allowed' : 'disallowed'}\n${text}`);
            }
          }
        }
        // A crawler nobody named stays allowed.
        for (const path of probes) expect(rp.isAllowed(`https://example.com${path}`, 'SomeRandomBot')).toBe(true);
      }),
      { numRuns: 400 },
    );
    // Most random choices are valid, so the property is not checked on a handful of inputs only.
    expect(valid).toBeGreaterThan(200);
  });

  it('"all AI Data Scrapers but one" in the default catalog: the exception allowed, every other scraper disallowed', () => {
    const defaults = createEngine();
    const text = defaults.robotsTxt({ agent_types: ['AI Data Scraper'], allow_agents: ['CCBot'] });
    const rp = robotsParser('https://example.com/robots.txt', text);
    expect(rp.isAllowed('https://example.com/page', 'CCBot')).toBe(true);
    const scrapers = defaults.catalog.agentsOfType('AI Data Scraper').filter((a) => a.id !== defaults.catalog.agents.find((x) => x.robots_tokens.includes('CCBot'))!.id);
    expect(scrapers.length).toBeGreaterThan(10);
    for (const scraper of scrapers) for (const token of scraper.robots_tokens) expect(rp.isAllowed('https://example.com/page', token), token).toBe(false);
  });
});
