// robots.txt option validation: typed issues at JSON pointers, and RFC 9309 path encoding.
import { describe, expect, it } from 'vitest';
import { AGENT_TYPES, encodeRobotsPath, parseRobotsOptions, RobotsOptionsError, validateRobotsOptions, type RobotsIssue } from '../../src/index.js';

function issues(input: unknown): readonly RobotsIssue[] {
  const parsed = parseRobotsOptions(input);
  if (parsed.ok) throw new Error('expected issues');
  return parsed.issues;
}

describe('robots options: agent_types', () => {
  it.each([
    ['missing', {}, 'missing'],
    ['null', { agent_types: null }, 'missing'],
    ['a string', { agent_types: 'AI Assistant' }, 'invalid-type'],
    ['empty', { agent_types: [] }, 'empty'],
  ])('%s agent_types is a %s issue at /agent_types', (_name, input, code) => {
    expect(issues(input)).toEqual([expect.objectContaining({ path: '/agent_types', code })]);
  });

  it('each bad entry is reported at its index; the message lists the allowed values', () => {
    const found = issues({ agent_types: ['AI Assistant', 'AI Assistants', 7, 'ai assistant'] });
    expect(found.map((i) => [i.path, i.code])).toEqual([
      ['/agent_types/1', 'unknown-agent-type'],
      ['/agent_types/2', 'invalid-type'],
      ['/agent_types/3', 'unknown-agent-type'],
    ]);
    for (const type of AGENT_TYPES) expect(found[0]!.message).toContain(type);
    expect(found[0]!.message).toContain('Headless Browser');
  });

  it('too many entries is too-many', () => {
    expect(issues({ agent_types: Array(101).fill('Scraper') })).toEqual([expect.objectContaining({ path: '/agent_types', code: 'too-many' })]);
  });

  it('not an object is reported at the root pointer', () => {
    for (const input of [null, 'x', 3, ['AI Agent']]) expect(issues(input)).toEqual([expect.objectContaining({ path: '', code: 'not-an-object' })]);
  });
});

describe('robots options: paths, comments, markers', () => {
  it('reports every issue with its pointer, and validateRobotsOptions throws them all', () => {
    const input = {
      agent_types: ['Scraper'],
      disallow: ['/ok', 'relative', '/a\r\nUser-agent: *', 42],
      allow: '/\u0000',
      comments: 'yes',
      markers: { begin: 'BEGIN', end: 'x\ny' },
    };
    const expected = [
      ['/disallow/1', 'invalid-path'],
      ['/disallow/2', 'control-character'],
      ['/disallow/3', 'invalid-type'],
      ['/allow', 'control-character'],
      ['/comments', 'invalid-type'],
      ['/markers/end', 'control-character'],
    ];
    expect(issues(input).map((i) => [i.path, i.code])).toEqual(expected);
    expect(() => validateRobotsOptions(input)).toThrow(RobotsOptionsError);
    try {
      validateRobotsOptions(input);
    } catch (error) {
      expect((error as RobotsOptionsError).issues.map((i) => [i.path, i.code])).toEqual(expected);
      expect((error as RobotsOptionsError).message).toMatch(/^\/disallow\/1: .*\(and 5 more\)$/);
      expect(error).toBeInstanceOf(RangeError);
    }
  });

  it('messages quote a rejected value JSON-escaped and shortened, never raw', () => {
    const [issue] = issues({ agent_types: ['Scraper'], disallow: `/x\nDisallow: /${'y'.repeat(200)}` });
    expect(issue!.message).not.toContain('\n');
    expect(issue!.message).toContain('\\n');
    expect(issue!.message.length).toBeLessThan(200);
  });

  it.each([
    ['empty string', '', 'invalid-path'],
    ['no leading slash', 'private', 'invalid-path'],
    ['LF', '/a\nb', 'control-character'],
    ['CR', '/a\rb', 'control-character'],
    ['tab', '/a\tb', 'control-character'],
    ['NUL', '/\u0000', 'control-character'],
    ['DEL', '/\u007f', 'control-character'],
    ['C1 NEL', '/\u0085', 'control-character'],
    ['line separator', '/\u2028', 'control-character'],
    ['lone surrogate', '/\ud800x', 'invalid-unicode'],
    ['too long', `/${'a'.repeat(2048)}`, 'too-long'],
    ['too long once encoded', `/${'é'.repeat(700)}`, 'too-long'],
  ])('disallow with %s is rejected (%s)', (_name, path, code) => {
    expect(issues({ agent_types: ['Scraper'], disallow: path })).toEqual([expect.objectContaining({ path: '/disallow', code })]);
  });

  it('empty or oversized path lists are rejected; null means the default', () => {
    expect(issues({ agent_types: ['Scraper'], disallow: [] })).toEqual([expect.objectContaining({ path: '/disallow', code: 'empty' })]);
    expect(issues({ agent_types: ['Scraper'], allow: Array(101).fill('/') })).toEqual([expect.objectContaining({ path: '/allow', code: 'too-many' })]);
    expect(issues({ agent_types: ['Scraper'], disallow: { path: '/' } })).toEqual([expect.objectContaining({ path: '/disallow', code: 'invalid-type' })]);
    const parsed = parseRobotsOptions({ agent_types: ['Scraper'], disallow: null, allow: null, comments: null, markers: null });
    expect(parsed.ok && parsed.options.disallow).toEqual(['/']);
  });

  it('markers: blank, too long, wrong type', () => {
    expect(issues({ agent_types: ['Scraper'], markers: ' ' })).toEqual([expect.objectContaining({ path: '/markers', code: 'empty' })]);
    expect(issues({ agent_types: ['Scraper'], markers: 'x'.repeat(201) })).toEqual([expect.objectContaining({ path: '/markers', code: 'too-long' })]);
    expect(issues({ agent_types: ['Scraper'], markers: 3 })).toEqual([expect.objectContaining({ path: '/markers', code: 'invalid-type' })]);
    expect(issues({ agent_types: ['Scraper'], markers: { begin: 'a' } })).toEqual([expect.objectContaining({ path: '/markers/end', code: 'invalid-type' })]);
  });

  it('the canonical key ignores order, duplicates and aliases of types', () => {
    const key = (input: unknown) => validateRobotsOptions(input).key;
    expect(key({ agent_types: ['Scraper', 'Automated Agent'] })).toBe(key({ agent_types: ['Headless Agent', 'Scraper', 'Scraper'] }));
    expect(key({ agent_types: ['Scraper'], disallow: '/' })).toBe(key({ agent_types: ['Scraper'], disallow: ['/', '/'] }));
    expect(key({ agent_types: ['Scraper'], disallow: ['/a', '/b'] })).not.toBe(key({ agent_types: ['Scraper'], disallow: ['/b', '/a'] }));
    expect(validateRobotsOptions({ agent_types: ['Uncategorized', 'AI Agent'] }).agentTypes).toEqual(['AI Agent', 'Uncategorized']);
  });
});

describe('encodeRobotsPath (RFC 9309 §2.2.2, §2.2.3)', () => {
  it.each([
    ['/', '/'],
    ['/private/', '/private/'],
    ['/café', '/caf%C3%A9'],
    ['/日本', '/%E6%97%A5%E6%9C%AC'],
    ['/😀', '/%F0%9F%98%80'],
    ['/a#b', '/a%23b'],
    ['/a b', '/a%20b'],
    ['/100%', '/100%25'],
    ['/%zz', '/%25zz'],
    ['/a%2fb', '/a%2Fb'],
    ['/%C3%A9', '/%C3%A9'],
    ['/*.gif$', '/*.gif$'],
    ['*.pdf$', '*.pdf$'],
    // Every path, written as parsers without wildcards (Python's urllib.robotparser) read it too.
    ['*', '/'],
    ['**', '/'],
    ['/*', '/'],
    ['/**', '/'],
    ['/*$', '/'],
    ['*$', '/'],
    ['*/', '/'],
    ['*/*', '/'],
    // Not every path: kept as written.
    ['/*/', '/*/'],
    ['/$', '/$'],
    ['/a%2A', '/a%2A'],
    ['/search?q=x&y=1', '/search?q=x&y=1'],
    ["/!$&'()*+,;=:@~-._", "/!$&'()*+,;=:@~-._"],
    ['/[a]"<>\\^`{|}', '/%5Ba%5D%22%3C%3E%5C%5E%60%7B%7C%7D'],
  ])('%s → %s', (input, output) => {
    expect(encodeRobotsPath(input)).toEqual({ ok: true, value: output });
  });

  it('is idempotent: encoding an encoded path changes nothing', () => {
    for (const path of ['/café#x', '/a b%', '/%e2%82%ac', '/[x]']) {
      const once = encodeRobotsPath(path);
      expect(once.ok).toBe(true);
      if (once.ok) expect(encodeRobotsPath(once.value)).toEqual(once);
    }
  });

  it('rejects what it cannot write', () => {
    expect(encodeRobotsPath(undefined)).toMatchObject({ ok: false, code: 'invalid-type' });
    expect(encodeRobotsPath('x')).toMatchObject({ ok: false, code: 'invalid-path' });
    expect(encodeRobotsPath('/\n')).toMatchObject({ ok: false, code: 'control-character' });
  });
});
