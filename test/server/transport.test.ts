// The node HTTP/1.1 transport over raw sockets: slow-header and slow-body clients are cut off, so
// is a kept-alive connection that only dribbles empty lines; the connection cap holds; absolute-form
// targets are routed as their origin-form path; keep-alive reuses a connection, and close() lets an
// in-flight request finish before resolving.
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiHandler, createEngine, createMemoryProjectStore, createMemoryVisitStore } from '../../src/index.js';
import { startNodeServer, type NodeServer, type NodeServerOptions } from '../../src/adapters/node/index.js';
import { TEST_CATALOG } from './helpers.js';

const servers: NodeServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function start(timeouts = {}, options: Partial<NodeServerOptions> = {}) {
  const projects = createMemoryProjectStore();
  const visits = createMemoryVisitStore();
  const { id, token } = await projects.createProject('t');
  const other = await projects.createProject('other');
  const server = await startNodeServer({ handler: createApiHandler({ engine: createEngine({ catalog: TEST_CATALOG }), projects, visits }), port: 0, timeouts, shutdownGraceMs: 5000, ...options });
  servers.push(server);
  return { server, token, visits, id, other };
}

function open(server: NodeServer): Promise<{ socket: Socket; received: () => string; closed: Promise<number> }> {
  return new Promise((resolve) => {
    const socket = connect(server.port, '127.0.0.1', () => {
      let data = '';
      const started = Date.now();
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('error', () => undefined);
      const closed = new Promise<number>((done) => socket.once('close', () => done(Date.now() - started)));
      resolve({ socket, received: () => data, closed });
    });
  });
}

const visitBody = JSON.stringify({ request_path: '/slow', request_method: 'GET', request_headers: { 'user-agent': 'GPTBot/1.2' } });

/** Asserts that a new connection asking for /healthz is closed unanswered within a second (refused at the cap). */
async function expectRefusedAtCap(server: NodeServer): Promise<void> {
  const newcomer = await open(server);
  newcomer.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  expect(await newcomer.closed).toBeLessThan(1000);
  expect(newcomer.received()).toBe('');
}

/** Asserts that a new connection asking for /healthz is answered 200 once `evicted` is closed to make room for it; returns it. */
async function expectTakesThePlaceOf(server: NodeServer, evicted: Awaited<ReturnType<typeof open>>): Promise<Awaited<ReturnType<typeof open>>> {
  const newcomer = await open(server);
  newcomer.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  await evicted.closed;
  await expect.poll(() => newcomer.received()).toMatch(/^HTTP\/1\.1 200/);
  return newcomer;
}

describe('node server transport', () => {
  it('cuts off a client that never finishes its headers', async () => {
    const { server } = await start({ headersMs: 300, requestMs: 600 });
    const client = await open(server);
    client.socket.write('POST /visits HTTP/1.1\r\nHost: x\r\n');
    const after = await client.closed;
    expect(after).toBeLessThan(3000);
  });

  it('cuts off a client that dribbles its body', async () => {
    const { server, token } = await start({ headersMs: 300, requestMs: 600 });
    const client = await open(server);
    client.socket.write(`POST /visits HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${visitBody.length}\r\n\r\n{`);
    const timer = setInterval(() => client.socket.write(' '), 100);
    const after = await client.closed;
    clearInterval(timer);
    expect(after).toBeLessThan(3000);
    expect(client.received()).not.toMatch(/^HTTP\/1\.1 202/);
  });

  it('keeps a connection alive across requests', async () => {
    const { server } = await start();
    const client = await open(server);
    client.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(client.received().match(/HTTP\/1\.1 200/g)).toHaveLength(2);
    expect(client.socket.destroyed).toBe(false);
    client.socket.destroy();
  });

  it('close() stops accepting but finishes the request in flight', async () => {
    const { server, token, visits, id } = await start();
    const client = await open(server);
    client.socket.write(`POST /visits HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${visitBody.length}\r\n\r\n${visitBody.slice(0, 10)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.inFlight()).toBe(1);
    let closed = false;
    const closing = server.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closed).toBe(false);
    await expect(fetch(`http://127.0.0.1:${server.port}/healthz`)).rejects.toThrow();
    client.socket.write(visitBody.slice(10));
    await closing;
    await client.closed; // the server ends the connection after the last response
    expect(client.received()).toMatch(/^HTTP\/1\.1 202/);
    expect(client.received().toLowerCase()).toContain('connection: close');
    expect(visits.list(id)).toHaveLength(1);
  });

  it('closes a kept-alive connection that sends an empty line every few hundred milliseconds (llhttp skips them)', async () => {
    const { server } = await start({ headersMs: 300, keepAliveMs: 300 });
    const client = await open(server);
    client.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    // Each \r\n restarts node:http's keep-alive timer; only the server's own sweep ends this.
    const timer = setInterval(() => client.socket.write('\r\n'), 100);
    const after = await Promise.race([client.closed, new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), 5000))]);
    clearInterval(timer);
    expect(client.received()).toMatch(/^HTTP\/1\.1 200/);
    expect(after).toBeLessThan(2000);
    client.socket.destroy();
  });

  it('holds at most maxConnections connections; a closed one makes room', async () => {
    const { server } = await start({}, { maxConnections: 3 });
    const held = await Promise.all([open(server), open(server), open(server)]);
    for (const client of held) client.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(held.every((client) => /^HTTP\/1\.1 200/.test(client.received()))).toBe(true);
    await expectRefusedAtCap(server);
    held[0]!.socket.destroy();
    await held[0]!.closed;
    await new Promise((resolve) => setTimeout(resolve, 50));
    const next = await open(server);
    next.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(next.received()).toMatch(/^HTTP\/1\.1 200/);
    for (const client of [...held, next]) client.socket.destroy();
  });

  it('at the cap, lets a new connection take the place of the oldest one that has sent no request for a second (slowloris), never of one with a request in progress', async () => {
    const logged: Record<string, unknown>[] = [];
    // One project may upload on every connection here (by default on half of them).
    const { server, token } = await start({}, { maxConnections: 3, maxUploadsPerProject: 3, log: (entry) => logged.push(entry) });
    const get = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
    // Three clients that start a head and never finish it.
    const slow: Awaited<ReturnType<typeof open>>[] = [];
    for (let i = 0; i < 3; i++) {
      const client = await open(server);
      client.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
      slow.push(client);
    }
    // All three are fresh: a fourth connection is closed unanswered.
    await expectRefusedAtCap(server);
    // Said once in the log (what happens at the cap is counted and logged a minute later).
    expect(logged).toEqual([expect.objectContaining({ level: 'warn', msg: 'connection cap reached', max_connections: 3 })]);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    // A second on, the oldest slow client makes room, then the next one; the newcomers stay open.
    const newcomers: Awaited<ReturnType<typeof open>>[] = [];
    for (const evicted of [0, 1]) {
      const client = await open(server);
      client.socket.write(get);
      await slow[evicted]!.closed;
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(client.received()).toMatch(/^HTTP\/1\.1 200/);
      newcomers.push(client);
    }
    expect(logged).toHaveLength(1);
    let lastClosed = false;
    void slow[2]!.closed.then(() => (lastClosed = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lastClosed).toBe(false);
    for (const client of [...slow, ...newcomers]) client.socket.destroy();
    await Promise.all([...slow, ...newcomers].map((client) => client.closed));
    await new Promise((resolve) => setTimeout(resolve, 50));

    // Three uploads in progress (half of a 40 KB body sent in the first second) are requests being
    // served: none is closed for a newcomer.
    const large = visitBody.padEnd(40_000, ' ');
    const uploading: Awaited<ReturnType<typeof open>>[] = [];
    for (let i = 0; i < 3; i++) {
      const client = await open(server);
      client.socket.write(`POST /visits HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${large.length}\r\n\r\n${large.slice(0, 20_000)}`);
      uploading.push(client);
    }
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await expectRefusedAtCap(server);
    for (const client of uploading) {
      client.socket.write(large.slice(20_000));
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(uploading.every((client) => /^HTTP\/1\.1 202/.test(client.received()))).toBe(true);
    for (const client of uploading) client.socket.destroy();
  });

  it('at the cap, lets a new connection take the place of the oldest one whose body, dribbled, could not finish before the request timeout (R.U.D.Y.), never of an upload going at a useful rate', async () => {
    const { server, token } = await start({}, { maxConnections: 2, maxUploadsPerProject: 2 });
    const head = (length: number) => `POST /visits HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
    // One client uploads 40 KB at 20 KB a second (done in time); one declares 40 KB and sends a byte.
    const uploading = await open(server);
    uploading.socket.write(head(40_000) + '[' + ' '.repeat(19_999));
    const dribbling = await open(server);
    dribbling.socket.write(head(40_000) + '[');
    // For its first second a body is given the benefit of the doubt.
    await expectRefusedAtCap(server);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    uploading.socket.write(' '.repeat(10_000));
    const newcomer = await expectTakesThePlaceOf(server, dribbling);
    // The upload at a useful rate was kept, and finishes.
    uploading.socket.write(' '.repeat(9_999) + ']');
    await expect.poll(() => uploading.received()).toMatch(/^HTTP\/1\.1 202/);
    // With no body stalling and no connection idle, the next newcomer is refused as before.
    await expectRefusedAtCap(server);
    for (const client of [uploading, newcomer]) client.socket.destroy();
    await Promise.all([uploading.closed, newcomer.closed]);
    await new Promise((resolve) => setTimeout(resolve, 50));

    // A small body (a login, a few visits) still coming after a second is stalling at any rate:
    // at 400 bytes a second this one would finish in time, but it holds a connection for 10 s.
    const small = await open(server);
    small.socket.write(head(4000) + '[' + ' '.repeat(399));
    const other = await open(server);
    other.socket.write(head(40_000) + '[' + ' '.repeat(19_999));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    small.socket.write(' '.repeat(400));
    const next = await expectTakesThePlaceOf(server, small);
    for (const client of [other, next]) client.socket.destroy();
  });

  it('at the cap, never closes an event stream for a newcomer, however long it has been open', async () => {
    const { server, token } = await start({}, { maxConnections: 2 });
    const streams = [await open(server), await open(server)];
    for (const stream of streams) stream.socket.write(`GET /visits/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`);
    for (const stream of streams) await expect.poll(() => stream.received()).toMatch(/^HTTP\/1\.1 200 /);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await expectRefusedAtCap(server);
    let closed = 0;
    for (const stream of streams) void stream.closed.then(() => closed++);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(0);
    for (const stream of streams) stream.socket.destroy();
  });

  it('routes an absolute-form target by its path as written, exactly as the origin-form target (no dot-segment shortcut past a proxy)', async () => {
    const { server } = await start();
    const status = async (target: string) => {
      const client = await open(server);
      client.socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      await client.closed;
      return Number(/^HTTP\/1\.1 (\d{3})/.exec(client.received())?.[1]);
    };
    expect(await status('/admin/../healthz')).toBe(404);
    expect(await status('http://x/admin/../healthz')).toBe(404);
    expect(await status('http://x/%2e%2e/healthz')).toBe(404);
    expect(await status('http://x/healthz')).toBe(200);
    expect(await status('http://x/healthz?probe=1')).toBe(200);
    expect(await status('HTTP://x:8080/healthz')).toBe(200);
  });

  it('answers a wrong token 401 before reading the body: no 100 Continue, nothing buffered', async () => {
    const { server } = await start();
    const waiting = await open(server);
    waiting.socket.write('POST /visits HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer aw_wrong\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 1000\r\n\r\n');
    await waiting.closed;
    expect(waiting.received()).toMatch(/^HTTP\/1\.1 401 /);
    expect(waiting.received()).not.toContain('100 Continue');

    const sending = await open(server);
    sending.socket.write(`POST /visits HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${1024 * 1024}\r\n\r\n${'x'.repeat(1000)}`);
    const until = Date.now() + 3000;
    while (!/^HTTP\/1\.1 \d{3}/.test(sending.received()) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(sending.received()).toMatch(/^HTTP\/1\.1 401 /);
    expect(server.bufferedBodyBytes()).toBe(0);
    sending.socket.destroy();
  });

  it('holds at most maxBufferedBodyBytes of bodies across connections: 503 with Retry-After past it, room again once a body is handled', async () => {
    const { server, token, visits, id } = await start({}, { maxBodyBytes: 2000, maxBufferedBodyBytes: 3000, maxBufferedBodyBytesPerProject: 3000 });
    const body = visitBody.padEnd(1500, ' ');
    const head = `POST /visits HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const slow = [await open(server), await open(server)];
    for (const client of slow) client.socket.write(head + body.slice(0, 10));
    await expect.poll(() => server.bufferedBodyBytes()).toBe(3000);
    const refused = await post(server, token, body);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    for (const client of slow) client.socket.write(body.slice(10));
    for (const client of slow) await expect.poll(() => client.received()).toMatch(/^HTTP\/1\.1 202 /);
    await expect.poll(() => server.bufferedBodyBytes()).toBe(0);
    expect((await post(server, token, body)).status).toBe(202);
    expect(visits.list(id)).toHaveLength(3);
    for (const client of slow) client.socket.destroy();
  });

  it('reserves for a declared body what has arrived (16 KiB before any), so clients declaring large bodies and sending them slowly cannot take the whole cap', async () => {
    const budget = 128 * 1024;
    const { server, token, visits, id } = await start({}, { maxBufferedBodyBytes: budget, maxBufferedBodyBytesPerProject: budget });
    const head = `POST /visits HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${1024 * 1024}\r\n\r\n`;
    // Three clients that declare 1 MiB each and send one byte: 3 MiB against a 128 KiB cap, were
    // it reserved whole; they hold 16 KiB each.
    const slow = [await open(server), await open(server), await open(server)];
    for (const client of slow) client.socket.write(`${head}[`);
    await expect.poll(() => server.bufferedBodyBytes()).toBe(3 * 16 * 1024);
    expect((await post(server, token, visitBody)).status).toBe(202);
    expect(visits.list(id)).toHaveLength(1);
    // What arrives is reserved as it comes, and the cap still holds: the body that would pass it is refused.
    slow[0]!.socket.write(' '.repeat(30 * 1024));
    await expect.poll(() => server.bufferedBodyBytes()).toBeGreaterThan(2 * 16 * 1024 + 30 * 1024);
    slow[1]!.socket.write(' '.repeat(60 * 1024));
    await expect.poll(() => slow[1]!.received()).toMatch(/^HTTP\/1\.1 503 /);
    expect(slow[1]!.received()).toMatch(/retry-after: 1/i);
    expect(server.bufferedBodyBytes()).toBeLessThanOrEqual(budget);
    for (const client of slow) client.socket.destroy();
    await expect.poll(() => server.bufferedBodyBytes()).toBe(0);
  });

  it('gives one project at most its share of the body cap: past it that project gets 429, while other projects still get their visits in', async () => {
    const budget = 128 * 1024;
    const { server, token, visits, id, other } = await start({}, { maxBufferedBodyBytes: budget, maxBufferedBodyBytesPerProject: budget / 2 });
    const head = (bearer: string) => `POST /visits HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${bearer}\r\nContent-Type: application/json\r\nContent-Length: ${200 * 1024}\r\n\r\n`;
    // One project's clients send 60 KiB of their bodies and stall (a flood of large batches, or R.U.D.Y. with its token).
    const greedy = [await open(server), await open(server)];
    for (const client of greedy) client.socket.write(`${head(token)}[${' '.repeat(30 * 1024)}`);
    for (const client of greedy) client.socket.write(' '.repeat(30 * 1024));
    await expect.poll(() => greedy.filter((client) => /^HTTP\/1\.1 429 /.test(client.received())).length).toBe(1);
    const refused = greedy.find((client) => /^HTTP\/1\.1 429 /.test(client.received()))!;
    expect(refused.received()).toMatch(/retry-after: 1/i);
    expect(refused.received()).toContain('as one project may (65536)');
    expect(server.bufferedBodyBytes()).toBeLessThanOrEqual(budget / 2);
    // Its next body does not fit either; another project's does.
    expect((await post(server, token, visitBody.padEnd(20 * 1024, ' '))).status).toBe(429);
    const answered = await post(server, other.token, visitBody.padEnd(20 * 1024, ' '));
    expect(answered.status).toBe(202);
    expect(visits.list(other.id)).toHaveLength(1);
    expect(visits.list(id)).toHaveLength(0);
    for (const client of greedy) client.socket.destroy();
    await expect.poll(() => server.bufferedBodyBytes()).toBe(0);
    expect((await post(server, token, visitBody)).status).toBe(202);
  });

  it('lets one project send at most half the connections\' bodies at once (maxUploadsPerProject): past it 429 before the body is read, and the connections stay open to other projects', async () => {
    const { server, token, visits, id, other } = await start({}, { maxConnections: 4 });
    const head = (bearer: string, length: number) => `POST /visits HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${bearer}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
    const body = visitBody.padEnd(40_000, ' ');
    // A token holder's uploads, each sent fast enough to finish in time, so none is evicted as stalling.
    const holding = [await open(server), await open(server)];
    for (const client of holding) client.socket.write(head(token, body.length) + body.slice(0, 20_000));
    await expect.poll(() => server.bufferedBodyBytes()).toBeGreaterThanOrEqual(2 * 16 * 1024);
    // Its third is refused before anything of the body is read, and its connection closed.
    const third = await open(server);
    third.socket.write(head(token, body.length));
    const closedAfter = await third.closed;
    expect(closedAfter).toBeLessThan(2000);
    expect(third.received()).toMatch(/^HTTP\/1\.1 429 /);
    expect(third.received()).toMatch(/retry-after: 1/i);
    expect(third.received()).toContain('as many bodies at once as one project may (2)');
    // Another project's upload gets a connection and is stored.
    const answered = await post(server, other.token, body);
    expect(answered.status).toBe(202);
    expect(visits.list(other.id)).toHaveLength(1);
    // Once one of the first project's uploads ends, it may start another.
    holding[0]!.socket.write(body.slice(20_000));
    await expect.poll(() => holding[0]!.received()).toMatch(/^HTTP\/1\.1 202 /);
    expect((await post(server, token, body)).status).toBe(202);
    expect(visits.list(id)).toHaveLength(2);
    holding[1]!.socket.destroy();
    await expect.poll(() => server.bufferedBodyBytes()).toBe(0);
    for (const client of holding) client.socket.destroy();
  });

  it('refuses maxUploadsPerProject above maxConnections, by name', async () => {
    const handler = createApiHandler({ engine: createEngine({ catalog: TEST_CATALOG }), projects: createMemoryProjectStore(), visits: createMemoryVisitStore() });
    await expect(startNodeServer({ handler, port: 0, maxConnections: 10, maxUploadsPerProject: 11 })).rejects.toThrow('maxUploadsPerProject must be at most maxConnections (10), got 11');
  });

  it('refuses a per-project share above the cap, by name', async () => {
    const handler = createApiHandler({ engine: createEngine({ catalog: TEST_CATALOG }), projects: createMemoryProjectStore(), visits: createMemoryVisitStore() });
    await expect(startNodeServer({ handler, port: 0, maxBufferedBodyBytes: 1000, maxBufferedBodyBytesPerProject: 1001 })).rejects.toThrow(
      'maxBufferedBodyBytesPerProject must be at most maxBufferedBodyBytes (1000), got 1001',
    );
  });
});

async function post(server: NodeServer, token: string, body: string) {
  return fetch(`${server.url}/visits`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
}
