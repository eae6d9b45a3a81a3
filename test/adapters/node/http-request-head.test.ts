// The strict HTTP/1.x request-head parser, without sockets: every refusal with its status and
// reason, framing and keep-alive rules, and random header maps.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRequestHead } from '../../../src/adapters/node/http-request-head.js';

const LIMITS = { maxHeaders: 10, maxBodyBytes: 1000 };
const parse = (text: string) => parseRequestHead(text, LIMITS);
const head = (lines: string[]) => parse(lines.join('\r\n'));

describe('parseRequestHead', () => {
  it('reads method, target, version, lower-cased names, trimmed values and repeated fields in order', () => {
    const result = head(['POST /visits?x=1 HTTP/1.1', 'Host: example.com', 'X-A:  one \t', 'x-a: two', 'Content-Length: 12']);
    expect(result).toEqual({
      ok: true,
      head: {
        method: 'POST',
        target: '/visits?x=1',
        minorVersion: 1,
        headers: expect.objectContaining({ host: 'example.com', 'x-a': ['one', 'two'], 'content-length': '12' }),
        framing: { kind: 'length', length: 12 },
        keepAlive: true,
        expectsContinue: false,
      },
    });
  });

  it('keeps a header named __proto__ as a header, not as the prototype', () => {
    const result = head(['GET / HTTP/1.1', 'Host: x', '__proto__: polluted']);
    expect(result.ok && result.head.headers['__proto__']).toBe('polluted');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it.each([
    [['GET / HTTP/1.1', 'Host: x'], true],
    [['GET / HTTP/1.1', 'Host: x', 'Connection: Keep-Alive, CLOSE'], false],
    [['GET / HTTP/1.0'], false],
    [['GET / HTTP/1.0', 'Connection: keep-alive'], true],
  ])('keep-alive per RFC 9112 §9.3: %j -> %s', (lines, keepAlive) => {
    const result = head(lines);
    expect(result.ok && result.head.keepAlive).toBe(keepAlive);
  });

  it('expects 100-continue only for an HTTP/1.1 request with a body (RFC 9110 §10.1.1)', () => {
    const withBody = head(['POST / HTTP/1.1', 'Host: x', 'Expect: 100-Continue', 'Content-Length: 3']);
    expect(withBody.ok && withBody.head.expectsContinue).toBe(true);
    const withoutBody = head(['POST / HTTP/1.1', 'Host: x', 'Expect: 100-continue']);
    expect(withoutBody.ok && withoutBody.head.expectsContinue).toBe(false);
    const http10 = head(['POST / HTTP/1.0', 'Expect: 100-continue', 'Content-Length: 3']);
    expect(http10.ok && http10.head.expectsContinue).toBe(false);
  });

  it('reads identical repeated lengths as one and a zero length as no body (RFC 9110 §8.6)', () => {
    for (const lines of [['Content-Length: 5, 5'], ['Content-Length: 5', 'Content-Length: 5']]) {
      const result = head(['POST / HTTP/1.1', 'Host: x', ...lines]);
      expect(result.ok && result.head.framing).toEqual({ kind: 'length', length: 5 });
    }
    const zero = head(['POST / HTTP/1.1', 'Host: x', 'Content-Length: 0']);
    expect(zero.ok && zero.head.framing).toEqual({ kind: 'none' });
    const chunked = head(['POST / HTTP/1.1', 'Host: x', 'Transfer-Encoding: Chunked']);
    expect(chunked.ok && chunked.head.framing).toEqual({ kind: 'chunked' });
  });

  it('accepts HTTP/1.0 without Host and exactly maxHeaders fields', () => {
    expect(parse('GET / HTTP/1.0').ok).toBe(true);
    expect(head(['GET / HTTP/1.1', 'Host: x', ...Array.from({ length: 9 }, (_, i) => `X-${i}: v`)]).ok).toBe(true);
  });

  it.each([
    ['an extra space in the request line', ['GET  / HTTP/1.1', 'Host: x'], 400, 'malformed-request-line'],
    ['a missing version', ['GET /', 'Host: x'], 400, 'malformed-request-line'],
    ['a lower-case version', ['GET / http/1.1', 'Host: x'], 400, 'malformed-request-line'],
    ['an empty method', [' / HTTP/1.1', 'Host: x'], 400, 'malformed-request-line'],
    ['a method with a non-token character', ['GE(T / HTTP/1.1', 'Host: x'], 400, 'malformed-request-line'],
    ['a non-ASCII target', ['GET /é HTTP/1.1', 'Host: x'], 400, 'malformed-request-line'],
    ['HTTP/2.0', ['GET / HTTP/2.0', 'Host: x'], 505, 'unsupported-version'],
    ['HTTP/1.2', ['GET / HTTP/1.2', 'Host: x'], 505, 'unsupported-version'],
    ['obsolete line folding (RFC 9112 §5.2)', ['GET / HTTP/1.1', 'Host: x', 'X-A: a', '\tb'], 400, 'malformed-header'],
    ['whitespace before the colon (RFC 9112 §5.1)', ['GET / HTTP/1.1', 'Host : x'], 400, 'malformed-header'],
    ['a line without a colon', ['GET / HTTP/1.1', 'Host: x', 'nonsense'], 400, 'malformed-header'],
    ['a NUL in a value', ['GET / HTTP/1.1', 'Host: x', 'X-A: a\u0000b'], 400, 'malformed-header'],
    ['a DEL in a value', ['GET / HTTP/1.1', 'Host: x', 'X-A: a\u007fb'], 400, 'malformed-header'],
    ['a bare LF', ['GET / HTTP/1.1', 'Host: x\nX-A: b'], 400, 'malformed-header'],
    ['a bare CR', ['GET / HTTP/1.1', 'Host: x\rX-A: b'], 400, 'malformed-header'],
    ['a trailing bare CR', ['GET / HTTP/1.1', 'Host: x\r'], 400, 'malformed-header'],
    ['no Host in HTTP/1.1 (RFC 9112 §3.2)', ['GET / HTTP/1.1'], 400, 'missing-host'],
    ['two Host fields', ['GET / HTTP/1.1', 'Host: x', 'Host: y'], 400, 'missing-host'],
    ['Content-Length then Transfer-Encoding (RFC 9112 §6.3)', ['POST / HTTP/1.1', 'Host: x', 'Content-Length: 3', 'Transfer-Encoding: chunked'], 400, 'ambiguous-framing'],
    ['Transfer-Encoding then Content-Length', ['POST / HTTP/1.1', 'Host: x', 'Transfer-Encoding: chunked', 'Content-Length: 3'], 400, 'ambiguous-framing'],
    ['Transfer-Encoding in HTTP/1.0', ['POST / HTTP/1.0', 'Transfer-Encoding: chunked'], 400, 'ambiguous-framing'],
    ['chunked, gzip (chunked not last)', ['POST / HTTP/1.1', 'Host: x', 'Transfer-Encoding: chunked, gzip'], 400, 'ambiguous-framing'],
    ['chunked twice', ['POST / HTTP/1.1', 'Host: x', 'Transfer-Encoding: chunked, chunked'], 400, 'ambiguous-framing'],
    ['an empty Transfer-Encoding', ['POST / HTTP/1.1', 'Host: x', 'Transfer-Encoding: '], 400, 'ambiguous-framing'],
    ['gzip, chunked', ['POST / HTTP/1.1', 'Host: x', 'Transfer-Encoding: gzip, chunked'], 501, 'unsupported-transfer-coding'],
    ['Content-Length +5', ['POST / HTTP/1.1', 'Host: x', 'Content-Length: +5'], 400, 'invalid-content-length'],
    ['Content-Length -1', ['POST / HTTP/1.1', 'Host: x', 'Content-Length: -1'], 400, 'invalid-content-length'],
    ['Content-Length 0x5', ['POST / HTTP/1.1', 'Host: x', 'Content-Length: 0x5'], 400, 'invalid-content-length'],
    ['Content-Length "5 5"', ['POST / HTTP/1.1', 'Host: x', 'Content-Length: 5 5'], 400, 'invalid-content-length'],
    ['an empty Content-Length', ['POST / HTTP/1.1', 'Host: x', 'Content-Length: '], 400, 'invalid-content-length'],
    ['Content-Length 5, 6', ['POST / HTTP/1.1', 'Host: x', 'Content-Length: 5, 6'], 400, 'invalid-content-length'],
    ['two different Content-Length fields', ['POST / HTTP/1.1', 'Host: x', 'Content-Length: 5', 'Content-Length: 6'], 400, 'invalid-content-length'],
    ['a length past the limit', ['POST / HTTP/1.1', 'Host: x', 'Content-Length: 1001'], 413, 'body-too-large'],
    ['a 30-digit length', ['POST / HTTP/1.1', 'Host: x', `Content-Length: ${'9'.repeat(30)}`], 413, 'body-too-large'],
    ['more than maxHeaders fields', ['GET / HTTP/1.1', 'Host: x', ...Array.from({ length: 10 }, (_, i) => `X-${i}: v`)], 431, 'too-many-headers'],
    ['an expectation other than 100-continue', ['POST / HTTP/1.1', 'Host: x', 'Expect: 200-ok', 'Content-Length: 1'], 417, 'unsupported-expectation'],
  ])('refuses %s', (_name, lines, status, reason) => {
    expect(head(lines)).toMatchObject({ ok: false, status, reason });
  });

  const token = fc.stringMatching(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,12}$/).filter((name) => !['host', 'content-length', 'transfer-encoding', 'expect', 'connection'].includes(name.toLowerCase()));
  // Visible ASCII and obs-text, with spaces and tabs inside but not at the ends.
  const value = fc
    .array(fc.oneof(fc.integer({ min: 0x21, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constantFrom(0x20, 0x09)), { maxLength: 20 })
    .map((codes) => String.fromCharCode(...codes).replace(/^[ \t]+|[ \t]+$/g, ''));

  it('parses any serialised header map back to the same lower-cased names and values', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(token, value), { maxLength: 8 }), (fields) => {
        const result = parseRequestHead(['GET / HTTP/1.1', 'Host: x', ...fields.map(([name, text]) => `${name}: ${text}`)].join('\r\n'), { maxHeaders: 100, maxBodyBytes: 1000 });
        expect(result.ok).toBe(true);
        // Null prototype, as the parser's: "__proto__" is a field name like any other.
        const expected = Object.assign(Object.create(null) as Record<string, string | string[]>, { host: 'x' });
        for (const [name, text] of fields) {
          const key = name.toLowerCase();
          const seen = expected[key];
          expected[key] = seen === undefined ? text : typeof seen === 'string' ? [seen, text] : [...seen, text];
        }
        expect(result.ok && { ...result.head.headers }).toEqual({ ...expected });
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a head with any control character inserted into a value, never throwing', () => {
    const forbidden = fc.oneof(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0x0a, max: 0x1f }), fc.constant(0x7f));
    fc.assert(
      fc.property(value, fc.nat(), forbidden, (text, at, code) => {
        const position = at % (text.length + 1);
        const line = `X-Test: a${text.slice(0, position)}${String.fromCharCode(code)}${text.slice(position)}b`;
        expect(parse(['GET / HTTP/1.1', 'Host: x', line].join('\r\n'))).toMatchObject({ ok: false, status: 400 });
      }),
      { numRuns: 300 },
    );
  });
});
