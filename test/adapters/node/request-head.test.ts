// The strict HTTP/1.x request-head parser and the chunked body decoder, without sockets: every
// refusal with its status and reason, framing and keep-alive rules, and random splits of bodies.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChunkedBodyDecoder } from '../../../src/adapters/node/chunked-body.js';
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

/** Decodes `bytes` pushed in the given pieces; returns data, consumed bytes, and every outcome. */
function decode(pieces: string[], max = 1000) {
  const decoder = new ChunkedBodyDecoder(max);
  let data = '';
  let consumed = 0;
  const outcomes = [];
  for (const piece of pieces) {
    const outcome = decoder.push(Buffer.from(piece, 'latin1'), (bytes) => (data += Buffer.from(bytes).toString('latin1')));
    outcomes.push(outcome);
    if (!outcome.ok || outcome.done) {
      if (outcome.ok) consumed += outcome.consumed;
      break;
    }
    consumed += outcome.consumed;
  }
  return { data, consumed, last: outcomes.at(-1)!, dones: outcomes.filter((o) => o.ok && o.done).length };
}

describe('ChunkedBodyDecoder', () => {
  const body = '5;name=value\r\nhello\r\nA\r\n, chunked!\r\nb\r\n 0123456789\r\n0\r\nX-Trailer: yes\r\n\r\n';
  const next = 'GET / HTTP/1.1\r\n';

  it('decodes chunks with extensions, hex of either case and trailers, and stops right after the body', () => {
    const result = decode([body + next]);
    expect(result.data).toBe('hello, chunked! 0123456789');
    expect(result.last).toEqual({ ok: true, consumed: body.length, done: true });
  });

  it('decodes the same in every two-way split and byte by byte, done exactly once at the end', () => {
    for (let at = 0; at <= body.length; at++) {
      const split = decode([body.slice(0, at), body.slice(at)]);
      expect(split.data, `split at ${at}`).toBe('hello, chunked! 0123456789');
      expect(split.dones).toBe(1);
      expect(split.consumed).toBe(body.length);
    }
    const bytes = decode([...body]);
    expect(bytes.data).toBe('hello, chunked! 0123456789');
    expect(bytes.dones).toBe(1);
  });

  it.each([
    ['a size that is not hexadecimal', ['zz\r\n'], 400],
    ['an empty size line', ['\r\n'], 400],
    ['data not followed by CRLF', ['3\r\nabcX'], 400],
    ['LF-only line ends', ['3\nabc\n0\n\n'], 400],
    ['a size line over 4096 bytes', [`1;${'x'.repeat(5000)}\r\n`], 400],
    ['a malformed trailer', ['0\r\nno colon here\r\n\r\n'], 400],
    ['a 17-digit size', ['1'.repeat(17) + '\r\n'], 400],
    ['a size past the limit, before its data arrives', ['3e9\r\n'], 413],
    ['sizes adding up past the limit', ['200\r\n' + 'a'.repeat(0x200) + '\r\n200\r\n'], 413],
  ])('refuses %s', (_name, pieces, status) => {
    expect(decode(pieces).last).toMatchObject({ ok: false, status });
  });

  it('decodes any bytes in any chunk sizes and any splits', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ minLength: 1, maxLength: 30 }), { maxLength: 8 }), fc.array(fc.nat({ max: 400 }), { maxLength: 6 }), (chunks, cuts) => {
        const latin1 = chunks.map((chunk) => Buffer.from(chunk, 'utf8').toString('latin1'));
        const encoded = latin1.map((chunk) => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('') + '0\r\n\r\n';
        const points = [...new Set(cuts.map((cut) => cut % (encoded.length + 1)))].sort((a, b) => a - b);
        const pieces = [0, ...points].map((from, i, all) => encoded.slice(from, all[i + 1] ?? encoded.length)).filter((piece) => piece !== '');
        const result = decode(pieces, 10_000);
        expect(result.data).toBe(latin1.join(''));
        expect(result.dones).toBe(1);
      }),
      { numRuns: 300 },
    );
  });
});
