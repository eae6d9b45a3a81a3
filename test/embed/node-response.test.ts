// How the Node-based middleware (Express, Connect, plain node:http, Fastify, Hono on
// @hono/node-server) records visits when the response does not simply finish: the client leaves
// while verification waits or before the answer, pipelined requests lose their connection, the
// application writes its head itself, the target is in absolute-form. One visit per request, each
// with what was sent (and no status when nothing was). Found by an adversarial audit of the
// middleware: each case lost the visit, or recorded a status never sent, before the fix.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect as connectTcp, type AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import connect from 'connect';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type AgentwardenOptions, type SinkVisit, type Verifier, type VisitSink } from '../../src/index.js';
import { agentwarden as expressAgentwarden } from '../../src/adapters/express/index.js';
import { agentwarden as fastifyAgentwarden } from '../../src/adapters/fastify/index.js';
import { agentwarden as honoAgentwarden } from '../../src/adapters/hono/index.js';
import { BROWSER_UA, EMBED_CATALOG, GOOGLEBOT_UA } from './fixtures.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A verifier that takes 300 ms, as reverse DNS or a key directory may: the check is asynchronous for Googlebot. */
const slowVerifier: Verifier = {
  name: 'slow-dns',
  appliesTo: (agent) => agent.id === 'googlebot',
  verify: async () => {
    await sleep(300);
    return { method: 'slow-dns', outcome: 'fail', reason: 'reverse-dns-mismatch' };
  },
};

function collectingSink(): VisitSink & { readonly visits: SinkVisit[] } {
  const visits: SinkVisit[] = [];
  return { visits, push: (visit) => void visits.push(visit), flush: async () => {}, close: async () => {} };
}

const options = (sink: VisitSink): AgentwardenOptions => ({
  engine: createEngine({ catalog: EMBED_CATALOG, verifiers: [slowVerifier] }),
  sink,
  policy: { robotsTxt: { agentTypes: ['AI Data Scraper'] } },
});

/** Routes every app serves: /page (ok), /slow (503 after 300 ms), /head (the head written by writeHead with an object). */
function handle(path: string, res: ServerResponse): void {
  if (path.startsWith('/slow')) {
    setTimeout(() => {
      if (res.destroyed) return;
      res.statusCode = 503;
      res.end('late');
    }, 300);
    return;
  }
  if (path.startsWith('/head')) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-site': 'kept' });
    res.end('data: 1\n\n');
    return;
  }
  res.setHeader('content-type', 'text/plain');
  res.end('ok');
}

interface Running {
  readonly port: number;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<Running> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

const apps: Record<string, (sink: VisitSink) => Promise<Running>> = {
  async express(sink) {
    const app = express();
    app.use(expressAgentwarden(options(sink)));
    app.get(/.*/, (req, res) => handle(req.path, res));
    return listen(createServer(app));
  },
  async connect(sink) {
    const app = connect();
    app.use(expressAgentwarden(options(sink)) as connect.NextHandleFunction);
    app.use((req: IncomingMessage, res: ServerResponse) => handle(req.url ?? '/', res));
    return listen(createServer(app));
  },
  async 'node:http'(sink) {
    const middleware = expressAgentwarden(options(sink));
    return listen(createServer((req, res) => middleware(req, res, () => handle(req.url ?? '/', res))));
  },
  async fastify(sink) {
    const app = Fastify();
    await app.register(fastifyAgentwarden, options(sink));
    app.get('/*', (request, reply) => {
      // The application takes over the raw response (SSE, a proxied body), as Fastify documents.
      reply.hijack();
      handle(request.url, reply.raw);
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
  },
  async hono(sink) {
    const app = new Hono();
    app.use(honoAgentwarden(options(sink)));
    app.get('/slow', async (c) => {
      await sleep(300);
      return c.text('late', 503);
    });
    app.get('/head', (c) => c.body('data: 1\n\n', 200, { 'content-type': 'text/event-stream', 'x-site': 'kept' }));
    app.get('*', (c) => c.text('ok'));
    const server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server));
    });
    return { port: (server.address() as AddressInfo).port, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
  },
};

/** Writes raw request bytes, keeps the connection for `holdMs` (reading what comes), then closes it; resolves with what was read. */
function rawExchange(port: number, bytes: string, holdMs: number): Promise<string> {
  return new Promise((resolve) => {
    let read = '';
    const socket = connectTcp(port, '127.0.0.1', () => socket.write(bytes));
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (read += chunk));
    socket.on('error', () => undefined);
    setTimeout(() => {
      socket.destroy();
      resolve(read);
    }, holdMs);
  });
}

/** Waits until the sink holds `count` visits (or 3 s pass). */
async function until(sink: { visits: SinkVisit[] }, count: number): Promise<void> {
  for (let waited = 0; sink.visits.length < count && waited < 3000; waited += 20) await sleep(20);
}

const request = (path: string, ua: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: ${ua}\r\n\r\n`;

describe.each(Object.keys(apps))('%s', (name) => {
  const sink = collectingSink();
  let app: Running;
  beforeAll(async () => {
    app = await apps[name]!(sink);
  });
  afterAll(() => app.close());

  /** Sends one request, leaves after 100 ms with nothing read, and returns the one visit recorded for it (after waiting for any second one). */
  async function leaveEarly(path: string, ua: string): Promise<SinkVisit> {
    const before = sink.visits.length;
    expect(await rawExchange(app.port, request(path, ua), 100)).toBe('');
    await until(sink, before + 1);
    await sleep(400);
    expect(sink.visits.slice(before)).toHaveLength(1);
    return sink.visits[before]!;
  }

  it('records the visit of a client that left while verification waited, without a status (none was sent)', async () => {
    // Googlebot's check takes 300 ms; the client gives up after 100.
    const visit = await leaveEarly('/page', GOOGLEBOT_UA);
    expect(visit).toMatchObject({ request_path: '/page', request_headers: expect.objectContaining({ 'user-agent': GOOGLEBOT_UA }) });
    expect(visit.response_status_code).toBeUndefined();
  });

  it('records no status for a response never sent (the client left before the page answered)', async () => {
    const visit = await leaveEarly('/slow', BROWSER_UA);
    expect(visit).toMatchObject({ request_path: '/slow' });
    expect(visit.response_status_code).toBeUndefined();
    expect(visit.response_duration_in_milliseconds).toBeGreaterThanOrEqual(50);
  });

  it('records every pipelined request when the connection closes before their answers', async () => {
    const before = sink.visits.length;
    await rawExchange(app.port, request('/slow?n=1', BROWSER_UA) + request('/slow?n=2', BROWSER_UA) + request('/slow?n=3', BROWSER_UA), 100);
    await until(sink, before + 3);
    await sleep(400);
    const paths = sink.visits.slice(before).map((visit) => visit.request_path);
    expect(paths.sort()).toEqual(['/slow?n=1', '/slow?n=2', '/slow?n=3']);
  });

  it('records pipelined requests the application answered while they waited behind a slow one, without a status (none left the server)', async () => {
    // Found with nmap's http-enum, which pipelines: the answers queued behind the first response
    // were written by the site but never sent, and the connection's end lost their visits.
    const before = sink.visits.length;
    await rawExchange(app.port, request('/slow?n=1', BROWSER_UA) + request('/page?n=2', BROWSER_UA) + request('/page?n=3', BROWSER_UA), 100);
    await until(sink, before + 3);
    await sleep(400);
    const visits = sink.visits.slice(before).sort((a, b) => a.request_path.localeCompare(b.request_path));
    expect(visits.map((visit) => visit.request_path)).toEqual(['/page?n=2', '/page?n=3', '/slow?n=1']);
    for (const visit of visits) expect(visit.response_status_code).toBeUndefined();
  });

  it('records the headers of a head the application wrote with writeHead and an object', async () => {
    const before = sink.visits.length;
    const response = await fetch(`http://127.0.0.1:${app.port}/head`, { headers: { 'user-agent': BROWSER_UA } });
    expect(response.headers.get('x-site')).toBe('kept');
    await response.text();
    await until(sink, before + 1);
    expect(sink.visits[before]!.response_headers).toMatchObject({ 'content-type': 'text/event-stream', 'x-site': 'kept' });
  });

  it('reads an absolute-form target (RFC 9112 §3.2.2) as its path: recorded so, and /robots.txt answered from the policy', async () => {
    const before = sink.visits.length;
    await rawExchange(app.port, request('http://example.com/page?x=1', BROWSER_UA), 300);
    const robots = await rawExchange(app.port, request('http://example.com/robots.txt', BROWSER_UA), 300);
    expect(robots).toMatch(/^HTTP\/1\.1 200/);
    expect(robots).toContain('User-agent: GPTBot');
    await until(sink, before + 2);
    expect(sink.visits.slice(before).map((visit) => visit.request_path)).toEqual(['/page?x=1', '/robots.txt']);
  });
});

describe('fastify specifics', () => {
  it('records the path the client asked for, not the one a rewriteUrl hook routes', async () => {
    const sink = collectingSink();
    const app = Fastify({ rewriteUrl: (req) => (req.url ?? '/').replace(/^\/legacy\//, '/new/') });
    await app.register(fastifyAgentwarden, { sink });
    app.get('/new/page', async () => 'ok');
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const response = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/legacy/page?x=1`, { headers: { 'user-agent': BROWSER_UA } });
      expect(await response.text()).toBe('ok');
      await until(sink, 1);
      expect(sink.visits[0]).toMatchObject({ request_path: '/legacy/page?x=1', response_status_code: 200 });
    } finally {
      await app.close();
    }
  });

  it("answers HEAD /robots.txt without declaring a length other than GET's (RFC 9110 §8.6)", async () => {
    const app = Fastify();
    await app.register(fastifyAgentwarden, { policy: { robotsTxt: { agentTypes: ['AI Data Scraper'] } } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/robots.txt`;
      const got = await fetch(url);
      const body = await got.text();
      const head = await fetch(url, { method: 'HEAD' });
      expect(head.status).toBe(200);
      const length = head.headers.get('content-length');
      expect(length === null || length === String(Buffer.byteLength(body))).toBe(true);
    } finally {
      await app.close();
    }
  });
});
