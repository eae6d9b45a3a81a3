// llhttp's request test vectors (strict mode) against the node server, as a regression: node:http
// parses with llhttp, so the server completes exactly the requests llhttp completes and never one
// llhttp refuses, apart from the listed refusals of its own. Parsers in front of us (node:http, undici, most proxies) use llhttp; where two
// parsers frame a request differently, requests can be smuggled. Vectors: test/vectors/llhttp.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeServer, type NodeServer } from '../../src/adapters/node/index.js';

interface Vector {
  readonly source: string;
  readonly title: string;
  /** The request bytes as latin1 text, after llhttp's test harness turned the markdown into bytes. */
  readonly input: string;
  readonly llhttp: { readonly completes: number; readonly error: boolean };
  /** Where this server deliberately answers otherwise, and why. */
  readonly ours?: { readonly completes: number; readonly why: string };
}

const { vectors } = JSON.parse(readFileSync(join(import.meta.dirname, '../vectors/llhttp/requests.json'), 'utf8')) as { vectors: Vector[] };

let server: NodeServer;
beforeAll(async () => {
  // Every request whose body was read to its end is answered 200: a 200 is a request the parser completed.
  server = await startNodeServer({
    handler: async (request) => {
      const read = (await request.readBody?.()) ?? { ok: true };
      return read.ok ? { status: 200, headers: { 'content-type': 'text/plain' }, body: 'ok' } : read.response;
    },
    port: 0,
  });
});
afterAll(() => server.close());

/** Sends the bytes and counts the requests answered 200, once the server closes or goes quiet. */
async function completes(input: string): Promise<{ completes: number; received: string }> {
  const socket = connect(server.port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let received = '';
  let lastData = Date.now();
  let closed = false;
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
    lastData = Date.now();
  });
  socket.on('error', () => undefined);
  socket.once('close', () => (closed = true));
  socket.write(Buffer.from(input, 'latin1'));
  const started = Date.now();
  while (!closed && Date.now() - lastData < 150 && Date.now() - started < 3000) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!closed) await new Promise((resolve) => setTimeout(resolve, 150));
  socket.destroy();
  return { completes: received.match(/^HTTP\/1\.1 200 /gm)?.length ?? 0, received };
}

/** The request with a Host field after its request line (llhttp does not require one; HTTP/1.1 does, RFC 9112 §3.2). */
function withHost(input: string): string {
  // After the empty lines a request may start with (RFC 9112 §2.2).
  let start = 0;
  while (input.startsWith('\r\n', start)) start += 2;
  const lineEnd = input.indexOf('\r\n', start);
  const headEnd = input.indexOf('\r\n\r\n', start);
  if (lineEnd === -1 || /\r\nhost:/i.test(input.slice(start, headEnd === -1 ? undefined : headEnd + 2))) return input;
  return `${input.slice(0, lineEnd + 2)}Host: x\r\n${input.slice(lineEnd + 2)}`;
}

describe('llhttp request vectors', () => {
  it('holds the strict-mode vectors of sample.md, content-length.md, transfer-encoding.md and invalid.md', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(70);
    expect(vectors.filter((vector) => vector.llhttp.error).length).toBeGreaterThanOrEqual(35);
  });

  it.each(vectors.map((vector) => [`${vector.source}: ${vector.title}`, vector] as const))('%s', async (_name, vector) => {
    const expected = vector.ours?.completes ?? vector.llhttp.completes;
    const hosted = await completes(withHost(vector.input));
    expect(hosted.completes, hosted.received).toBe(expected);
    // As sent (often without Host): never more than llhttp completes, bar the deliberate differences.
    const asIs = await completes(vector.input);
    expect(asIs.completes, asIs.received).toBeLessThanOrEqual(Math.max(expected, vector.llhttp.completes));
  });
});
