// The chunked request-body decoder (RFC 9112 §7.1), without sockets: chunk extensions and
// trailers, every split of the bytes, and each refusal with its status.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChunkedBodyDecoder } from '../../../src/adapters/node/chunked-body.js';

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

  it('accepts extensions with whitespace around ";" and "=" and quoted values with escapes', () => {
    const result = decode(['5 ; a = b;c="x \\"y\\"; z";d\r\nhello\r\n0\r\n\r\n']);
    expect(result.data).toBe('hello');
    expect(result.dones).toBe(1);
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
    ['a space after the size with no extension (RFC 9112 §7.1.1, as llhttp)', ['a \r\n'], 400],
    ['a semicolon with no extension name', ['2;\r\n'], 400],
    ['an extension value with an unbalanced quote', ['5;a="b;c\r\n'], 400],
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
