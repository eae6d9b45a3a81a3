// The matcher's pattern prefilter never changes a result: patterns decide exactly as a plain
// loop in catalog order would (anchored, unanchored, top-level alternation, back-references).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileUserAgentMatcher } from '../../src/catalog/ua-matcher.js';
import type { Agent } from '../../src/index.js';

const PATTERNS = ['^curl(?:/|$)', '^node$', '^a|zz', '\\bHeadlessChrome/', 'heritrix/', '^(x)\\1y', '^Go-http-client/', '[[(|]q', '^ab\\|c'];
const agents: Agent[] = PATTERNS.map((source, i) => ({
  id: `p${i}`,
  name: `p${i}`,
  type: 'Scraper',
  operator: 'test',
  url: 'https://example.com',
  match: { patterns: [source] },
  robots_tokens: [`p-${'x'.repeat(i + 1)}`],
}));
const FRAGMENTS = ['curl', '/', 'node', 'a', 'zz', 'HeadlessChrome', 'heritrix', 'x', 'y', 'Go-http-client', '[', '(', '|', 'q', 'ab', '\\', 'c', ' ', 'Mozilla/5.0 '];

/** The reference: the first pattern in catalog order that matches. */
function naive(ua: string): string | undefined {
  return agents.find((agent) => new RegExp(agent.match.patterns![0]!, 'i').test(ua))?.id;
}

describe('pattern prefilter', () => {
  const match = compileUserAgentMatcher(agents);

  it('gives the same agent as testing every pattern in order', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 8 }), (parts) => {
        const ua = parts.join('');
        expect(match(ua)?.id).toBe(naive(ua));
      }),
      { numRuns: 2000 },
    );
  });

  it('handles the hand-picked edge cases', () => {
    for (const ua of ['curl', 'curl/8', 'curly', 'node', 'node ', 'xxy', 'xy', 'bzz', 'ab|c', 'Mozilla/5.0 HeadlessChrome/1', '[q', '(q', '|q']) {
      expect(match(ua)?.id, ua).toBe(naive(ua));
    }
  });
});
