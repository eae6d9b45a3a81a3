// The batching JSON-line log: lines keep their order and bytes, batches are bounded and written
// later (or on flush), and a chunk handed to the stream is never changed afterwards.
import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { createJsonLog } from '../../../src/adapters/node/json-log.js';

/** A stream that keeps every chunk it is given, as given (a pipe may write them much later). */
function capture() {
  const chunks: Buffer[] = [];
  // What each chunk held when it arrived, to catch a writer reusing the memory later.
  const arrived: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      arrived.push(Buffer.from(chunk));
      done();
    },
  });
  return { stream, chunks, arrived, text: () => Buffer.concat(chunks).toString('utf8') };
}

describe('createJsonLog', () => {
  it('writes queued lines in order, in one write, once the interval has passed', () => {
    vi.useFakeTimers();
    try {
      const { stream, chunks, text } = capture();
      const log = createJsonLog(stream, { intervalMs: 50 });
      log.writeLine('{"n":1}');
      log.write({ n: 2, msg: 'two' });
      expect(chunks).toHaveLength(0);
      vi.advanceTimersByTime(50);
      expect(chunks).toHaveLength(1);
      expect(text()).toBe('{"n":1}\n{"n":2,"msg":"two"}\n');
    } finally {
      vi.useRealTimers();
    }
  });

  it('encodes lines as UTF-8 exactly as Buffer.from does, lone surrogates included', () => {
    const { stream, text } = capture();
    const log = createJsonLog(stream);
    const lines = ['{"path":"/café/日本"}', '{"emoji":"😀"}', `{"lone":"${'\ud800'}x"}`];
    for (const line of lines) log.writeLine(line);
    log.flush();
    expect(text()).toBe(Buffer.from(lines.map((line) => `${line}\n`).join('')).toString('utf8'));
  });

  it('writes a burst in batches of about 64 KiB, each chunk left as it was handed over', () => {
    const { stream, chunks, arrived, text } = capture();
    const log = createJsonLog(stream);
    const lines = Array.from({ length: 2000 }, (_, i) => `{"i":${i},"pad":"${'é'.repeat(i % 97)}"}`);
    for (const line of lines) log.writeLine(line);
    expect(chunks.length).toBeGreaterThan(1);
    log.flush();
    const longest = Math.max(...lines.map((line) => Buffer.byteLength(line) + 1));
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(2 * 65_536 + longest);
    chunks.forEach((chunk, i) => expect(chunk.equals(arrived[i]!)).toBe(true));
    expect(text()).toBe(lines.map((line) => `${line}\n`).join(''));
  });

  it('keeps a line longer than a batch whole and in order', () => {
    const { stream, text } = capture();
    const log = createJsonLog(stream);
    const long = `{"big":"${'x'.repeat(100_000)}"}`;
    log.writeLine('{"a":1}');
    log.writeLine(long);
    log.writeLine('{"b":2}');
    log.flush();
    expect(text()).toBe(`{"a":1}\n${long}\n{"b":2}\n`);
  });

  it('refuses a bad stream or interval, naming it', () => {
    expect(() => createJsonLog({} as never)).toThrow(/stream/);
    expect(() => createJsonLog(capture().stream, { intervalMs: -1 })).toThrow(/intervalMs/);
  });
});
