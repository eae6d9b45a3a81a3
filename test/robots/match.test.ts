// The RFC 9309 matcher: the RFC's own examples (§2.2.2 encoding table, §2.2.3 special characters,
// §5.1 and §5.2), the rules a robots-violations report depends on, and a property check against
// the independent reference matcher the renderer tests use.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRobotsRules, normalizeRobotsPath, parseRobotsTxt } from '../../src/robots/match.js';
import { createEngine } from '../../src/index.js';
import { literalExtract, referenceRobots } from './rfc9309-reference.js';

describe('normalizeRobotsPath (RFC 9309 §2.2.2 table)', () => {
  it.each([
    ['/foo/bar?baz=quz', '/foo/bar?baz=quz'],
    ['/foo/bar?baz=https://foo.bar', '/foo/bar?baz=https%3A%2F%2Ffoo.bar'],
    ['/foo/bar/\u30c4', '/foo/bar/%E3%83%84'],
    ['/foo/bar/%E3%83%84', '/foo/bar/%E3%83%84'],
    ['/foo/bar/%62%61%7A', '/foo/bar/baz'],
  ])('%s is matched as %s', (path, expected) => {
    expect(normalizeRobotsPath(path)).toBe(expected);
  });

  it('upper-cases hex, encodes a stray % and spaces, and keeps the wildcards', () => {
    expect(normalizeRobotsPath('/a%e3%83%84')).toBe('/a%E3%83%84');
    expect(normalizeRobotsPath('/100%')).toBe('/100%25');
    expect(normalizeRobotsPath('/a b')).toBe('/a%20b');
    expect(normalizeRobotsPath('/*.gif$')).toBe('/*.gif$');
  });
});

describe('compileRobotsRules', () => {
  const rules = (...lines: string[]) => compileRobotsRules(lines.map((line) => ({ allow: line.startsWith('A'), pattern: line.slice(2) })));

  it('longest match wins (RFC 9309 §5.2)', () => {
    const match = rules('A /example/page/', 'D /example/page/disallowed.gif');
    expect(match('/example/page/').allowed).toBe(true);
    expect(match('/example/page/disallowed.gif')).toEqual({ allowed: false, rule: { allow: false, pattern: '/example/page/disallowed.gif' } });
    expect(match('/example/page/other.gif').rule).toEqual({ allow: true, pattern: '/example/page/' });
  });

  it('Allow wins a tie of equal length', () => {
    const match = rules('D /folder', 'A /folder');
    expect(match('/folder/page').allowed).toBe(true);
    expect(rules('A /page', 'D /*ge')('/page').allowed).toBe(true);
  });

  it('no match allows, an empty Disallow matches nothing, /robots.txt is always allowed', () => {
    expect(rules('D /private/')('/public')).toEqual({ allowed: true, rule: undefined });
    expect(rules('D ')('/anything').allowed).toBe(true);
    expect(rules('D /')('/robots.txt').allowed).toBe(true);
    expect(rules('D /')('/robots.txt?x').allowed).toBe(false);
  });

  it('"*" matches any sequence and "$" anchors the end (RFC 9309 §2.2.3)', () => {
    const gif = rules('D /*.gif$');
    expect(gif('/a/b.gif').allowed).toBe(false);
    expect(gif('/a/b.gif?x=1').allowed).toBe(true);
    expect(gif('/a.gif.html').allowed).toBe(true);
    const exact = rules('D /this/path/exactly$');
    expect(exact('/this/path/exactly').allowed).toBe(false);
    expect(exact('/this/path/exactly/more').allowed).toBe(true);
    const middle = rules('D /this/*/exactly');
    expect(middle('/this/a/b/exactly/x').allowed).toBe(false);
    expect(middle('/this/exactly').allowed).toBe(true);
    expect(rules('D /a$b')('/a$bc').allowed).toBe(false);
    expect(rules('D /*$')('/anything').allowed).toBe(false);
  });

  it('compares percent-encoded and raw forms as one path', () => {
    expect(rules('D /caf\u00e9/')('/caf%C3%A9/menu').allowed).toBe(false);
    expect(rules('D /caf%c3%a9/')('/caf\u00e9/menu').allowed).toBe(false);
    expect(rules('D /baz')('/%62%61%7A').allowed).toBe(false);
    expect(rules('D /a%2Fb')('/a/b').allowed).toBe(true);
  });

  it('is fast on adversarial wildcard patterns', () => {
    const match = rules(`D /${'*a'.repeat(200)}$`);
    const started = performance.now();
    expect(match(`/${'a'.repeat(20_000)}b`).allowed).toBe(true);
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('refuses rules that are not rules', () => {
    expect(() => compileRobotsRules('x' as never)).toThrow(TypeError);
    expect(() => compileRobotsRules([{ allow: 'yes', pattern: '/' } as never])).toThrow(/rules\[0\]/);
  });
});

describe('parseRobotsTxt (RFC 9309 §5.1 example)', () => {
  const robots = parseRobotsTxt(
    [
      'User-Agent: *',
      'Disallow: *.gif$',
      'Disallow: /example/',
      'Allow: /publications/',
      '',
      'User-Agent: foobot',
      'Disallow:/',
      'Allow:/example/page.html',
      'Allow:/example/allowed.gif',
      '',
      'User-Agent: barbot',
      'User-Agent: bazbot',
      'Disallow: /example/page.html',
      '',
      'User-Agent: quxbot',
      '',
      'EOF',
    ].join('\n'),
  );

  it('applies the "*" group to crawlers without their own', () => {
    expect(robots.isAllowed('otherbot', '/example/x').allowed).toBe(false);
    expect(robots.isAllowed('otherbot', '/image.gif').allowed).toBe(false);
    expect(robots.isAllowed('otherbot', '/publications/x').allowed).toBe(true);
  });

  it('gives foobot its own group only, matched case-insensitively', () => {
    expect(robots.isAllowed('FooBot', '/').allowed).toBe(false);
    expect(robots.isAllowed('foobot', '/example/page.html').allowed).toBe(true);
    expect(robots.isAllowed('foobot', '/example/allowed.gif').allowed).toBe(true);
    expect(robots.isAllowed('foobot', '/example/other.gif').allowed).toBe(false);
  });

  it('shares one group between barbot and bazbot; quxbot has an empty group (everything allowed)', () => {
    for (const bot of ['barbot', 'bazbot']) {
      expect(robots.isAllowed(bot, '/example/page.html').allowed).toBe(false);
      expect(robots.isAllowed(bot, '/example/x').allowed).toBe(true);
    }
    expect(robots.rulesFor('quxbot')).toEqual([]);
    expect(robots.isAllowed('quxbot', '/example/page.html').allowed).toBe(true);
  });

  it('merges every group naming the same crawler and ignores rules before any group', () => {
    const merged = parseRobotsTxt('Disallow: /early\nUser-agent: a\nDisallow: /x\n\nUser-agent: b\nAllow: /\n\nuser-agent: A\nDisallow: /y # comment\n');
    expect(merged.rulesFor('a')).toEqual([
      { allow: false, pattern: '/x' },
      { allow: false, pattern: '/y' },
    ]);
    expect(merged.isAllowed('zzz', '/early').allowed).toBe(true);
  });

  it('reads what the engine renders: each chosen agent disallowed, others untouched', () => {
    const engine = createEngine();
    const text = engine.robotsTxt({ agent_types: ['AI Data Scraper'], disallow: ['/private/', '/caf\u00e9'], allow: ['/private/open'] });
    const parsed = parseRobotsTxt(text);
    expect(parsed.isAllowed('GPTBot', '/private/a').allowed).toBe(false);
    expect(parsed.isAllowed('GPTBot', '/private/open/a').allowed).toBe(true);
    expect(parsed.isAllowed('GPTBot', '/caf%c3%a9').allowed).toBe(false);
    expect(parsed.isAllowed('Googlebot', '/private/a').allowed).toBe(true);
  });
});

describe('property: agrees with the reference matcher written from the RFC', () => {
  const segment = fc.constantFrom('a', 'b', 'ab', '.gif', '/', '*', '%61', '%2f', '\u00e9', '%C3%A9', '-', '~');
  const pattern = fc.tuple(fc.array(segment, { maxLength: 5 }), fc.boolean()).map(([parts, anchored]) => `/${parts.join('')}${anchored ? '$' : ''}`);
  const path = fc.array(fc.constantFrom('a', 'b', 'ab', '.gif', '/', '%61', '%2f', '\u00e9', '%c3%a9', '-', '~', '*', '$'), { maxLength: 8 }).map((parts) => `/${parts.join('')}`);

  it('decides every random group and path alike', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), pattern), { maxLength: 6 }), path, (rules, target) => {
        const text = `User-agent: testbot\n${rules.map(([allow, p]) => `${allow ? 'Allow' : 'Disallow'}: ${p}`).join('\n')}\n`;
        const ours = compileRobotsRules(rules.map(([allow, p]) => ({ allow, pattern: p })))(target).allowed;
        expect(ours).toBe(referenceRobots(text, literalExtract).isAllowed(target, 'testbot'));
      }),
      { numRuns: 2000 },
    );
  });
});
