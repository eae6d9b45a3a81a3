// Streamed response bodies through both transports: chunks reach the client as they are produced,
// a client that goes away cancels the stream, and shutdown ends open streams instead of waiting.
import { afterEach, describe, expect, it } from 'vitest';
import { createFetchHandler, type ApiHandler, type ApiResponse } from '../../src/index.js';
import { startNodeServer, type NodeServer } from '../../src/adapters/node/index.js';

const servers: NodeServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

/** A stream the test writes into, recording whether (and when) it was cancelled. */
function controlledStream() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let cancelled = false;
  let onCancel: () => void = () => undefined;
  const whenCancelled = new Promise<void>((resolve) => (onCancel = resolve));
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    cancel() {
      cancelled = true;
      onCancel();
    },
  });
  const encoder = new TextEncoder();
  return {
    stream,
    fail: () => controller.error(new Error('source failed')),
    write: (text: string) => controller.enqueue(encoder.encode(text)),
    close: () => controller.close(),
    cancelled: () => cancelled,
    whenCancelled,
  };
}

function streamingHandler(stream: ReadableStream<Uint8Array>): ApiHandler {
  return async (request): Promise<ApiResponse> =>
    request.path === '/stream'
      ? { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' }, body: stream, projectId: 'prj_s' }
      : { status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' };
}

async function start(stream: ReadableStream<Uint8Array>, options: { requestMs?: number; shutdownGraceMs?: number } = {}) {
  const lines: Record<string, unknown>[] = [];
  const server = await startNodeServer({
    handler: streamingHandler(stream),
    port: 0,
    timeouts: options.requestMs === undefined ? {} : { headersMs: options.requestMs, requestMs: options.requestMs },
    shutdownGraceMs: options.shutdownGraceMs ?? 5000,
    accessLog: (line) => lines.push(JSON.parse(line)),
  });
  servers.push(server);
  return { server, lines };
}

/** Reads a fetch body chunk by chunk, resolving each time `expected` text has arrived in total. */
function textReader(response: Response) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  return {
    reader,
    text: () => text,
    async until(expected: string): Promise<void> {
      while (!text.includes(expected)) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`stream ended before ${JSON.stringify(expected)}; got ${JSON.stringify(text)}`);
        text += decoder.decode(value, { stream: true });
      }
    },
    async rest(): Promise<string> {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return text;
        text += decoder.decode(value, { stream: true });
      }
    },
  };
}

describe('streamed responses on the node server', () => {
  it('sends headers at once and each chunk as it is written, then logs when the stream ends', async () => {
    const source = controlledStream();
    const { server, lines } = await start(source.stream);
    const response = await fetch(`${server.url}/stream`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const body = textReader(response);
    source.write('first\n');
    await body.until('first\n');
    expect(lines).toHaveLength(0);
    const sent = performance.now();
    source.write('second\n');
    await body.until('second\n');
    expect(performance.now() - sent).toBeLessThan(500);
    source.close();
    expect(await body.rest()).toBe('first\nsecond\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ method: 'GET', path: '/stream', status: 200, project: 'prj_s' });
    expect(server.inFlight()).toBe(0);
  });

  it('cancels the stream when the client disconnects', async () => {
    const source = controlledStream();
    const { server, lines } = await start(source.stream);
    const abort = new AbortController();
    const response = await fetch(`${server.url}/stream`, { signal: abort.signal });
    const body = textReader(response);
    source.write('hello\n');
    await body.until('hello\n');
    abort.abort();
    await source.whenCancelled;
    expect(source.cancelled()).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines).toHaveLength(1);
    expect(server.inFlight()).toBe(0);
  });

  it('close() ends open streams promptly instead of waiting out the grace period', async () => {
    const source = controlledStream();
    const { server, lines } = await start(source.stream, { shutdownGraceMs: 8000 });
    const response = await fetch(`${server.url}/stream`);
    const body = textReader(response);
    source.write('open\n');
    await body.until('open\n');
    const started = performance.now();
    await server.close();
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await body.rest()).toBe('open\n');
    expect(source.cancelled()).toBe(true);
    expect(lines).toHaveLength(1);
  });

  it('keeps a stream open past the request timeout (it bounds receiving the request only)', async () => {
    const source = controlledStream();
    const { server } = await start(source.stream, { requestMs: 300 });
    const response = await fetch(`${server.url}/stream`);
    const body = textReader(response);
    source.write('a');
    await body.until('a');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    source.write('b');
    await body.until('b');
    source.close();
    expect(await body.rest()).toBe('ab');
  });
});

describe('a stream that fails', () => {
  it('cuts the response, logs the failure and frees the request', async () => {
    const source = controlledStream();
    const errors: Record<string, unknown>[] = [];
    const server = await startNodeServer({ handler: streamingHandler(source.stream), port: 0, log: (entry) => errors.push(entry) });
    servers.push(server);
    const response = await fetch(`${server.url}/stream`);
    const body = textReader(response);
    source.write('partial');
    await body.until('partial');
    source.fail();
    await expect(body.rest()).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(errors).toEqual([expect.objectContaining({ level: 'error', msg: 'response stream failed' })]);
    expect(server.inFlight()).toBe(0);
  });
});

describe('streamed responses through createFetchHandler', () => {
  it('passes the stream through and forwards the consumer cancel to it', async () => {
    const source = controlledStream();
    const fetchHandler = createFetchHandler(streamingHandler(source.stream));
    const response = await fetchHandler(new Request('http://localhost/stream'));
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const body = textReader(response);
    source.write('x');
    await body.until('x');
    await body.reader.cancel();
    await source.whenCancelled;
    expect(source.cancelled()).toBe(true);
  });

  it('still answers plain text bodies', async () => {
    const fetchHandler = createFetchHandler(streamingHandler(controlledStream().stream));
    const response = await fetchHandler(new Request('http://localhost/other'));
    expect(await response.json()).toEqual({ ok: true });
  });
});
