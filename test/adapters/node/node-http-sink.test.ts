// createNodeHttpSink's transport (nodeHttpFetch) where it differs from the global fetch: TLS is
// verified, a kept-alive connection does not keep a process alive, and what it refuses. Its
// delivery, retries, redirects and answer bound run in test/embed/http-sink.test.ts beside fetch's.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeHttpSink, nodeHttpFetch } from '../../../src/adapters/node/index.js';
import { startStub } from '../../embed/fixtures.js';
import { makeSelfSignedCert, opensslAvailable, startHttpsServer, type SelfSignedCert, type TestHttpsServer } from '../../helpers/https-server.js';

const visit = { request_path: '/', request_method: 'GET', request_headers: { 'user-agent': 'GPTBot/1.2' } };

describe.runIf(opensslAvailable())('createNodeHttpSink over https', () => {
  let cert: SelfSignedCert;
  let server: TestHttpsServer;
  let dir: string;
  beforeAll(async () => {
    cert = makeSelfSignedCert(['localhost'], ['127.0.0.1']);
    server = await startHttpsServer(cert, (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(202, { 'content-type': 'application/json' }).end('{"accepted":1,"rejected":[]}'));
    });
    dir = mkdtempSync(join(tmpdir(), 'agentwarden-node-sink-'));
    writeFileSync(join(dir, 'ca.pem'), cert.cert);
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends nothing to a server whose certificate it cannot verify, and says why', async () => {
    const errors: string[] = [];
    const sink = createNodeHttpSink({ url: server.url(''), token: 'site-token', maxAttempts: 1, onError: (message) => errors.push(message) });
    sink.push(visit);
    await sink.flush();
    expect(sink.stats()).toMatchObject({ delivered: 0, dropped: 1 });
    expect(server.requests).toHaveLength(0);
    expect(errors.join('\n')).toMatch(/self[- ]signed certificate/i);
  });

  it('delivers to one Node trusts (NODE_EXTRA_CA_CERTS), and the process then exits by itself', async () => {
    // No close(): the kept-alive connection must not hold the process open once the batch is sent.
    const script = `
      import { createNodeHttpSink } from 'agentwarden/node';
      const sink = createNodeHttpSink({ url: ${JSON.stringify(server.url(''))}, token: 'site-token', onError: (message) => console.error(message) });
      sink.push(${JSON.stringify(visit)});
      await sink.flush();
      console.log(JSON.stringify(sink.stats()));
    `;
    const started = Date.now();
    // Asynchronously: the server answering it runs in this process.
    const run = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') } });
    expect(JSON.parse(run.stdout), run.stderr).toMatchObject({ delivered: 1, dropped: 0 });
    // Well inside the agent's 4 s idle limit: nothing waited for the connection to time out.
    expect(Date.now() - started).toBeLessThan(3_500);
    expect(server.requests.at(-1)).toMatchObject({ method: 'POST', url: '/visits' });
    expect(server.requests.at(-1)?.headers['authorization']).toBe('Bearer site-token');
  }, 40_000);
});

describe('nodeHttpFetch', () => {
  it('sends a byte body with its length and reads the answer', async () => {
    let received = '';
    const stub = await startStub((req, res, body) => {
      received = `${req.method} ${req.headers['content-length']} ${req.headers['x-note']} ${body}`;
      res.writeHead(201, { 'retry-after': '3', 'set-cookie': ['a=1', 'b=2'] }).end('é done');
    });
    try {
      const response = await nodeHttpFetch(`${stub.url}/visits`, { method: 'POST', headers: { 'x-note': 'n' }, body: new TextEncoder().encode('[{"é":1}]') });
      expect(received).toBe('POST 10 n [{"é":1}]');
      expect(response.status).toBe(201);
      expect(response.headers.get('retry-after')).toBe('3');
      expect(response.headers.get('set-cookie')).toBe('a=1, b=2');
      expect(await response.text()).toBe('é done');
    } finally {
      await stub.close();
    }
  });

  it('gives an answer without a body for 204, and refuses a status the Fetch API cannot hold', async () => {
    let status = 204;
    const stub = await startStub((_req, res) => res.writeHead(status).end());
    try {
      const empty = await nodeHttpFetch(stub.url, { method: 'POST', body: '[]' });
      expect(empty.status).toBe(204);
      expect(empty.body).toBeNull();
      status = 600;
      await expect(nodeHttpFetch(stub.url, { method: 'POST', body: '[]' })).rejects.toThrow(RangeError);
    } finally {
      await stub.close();
    }
  });

  it('ends the request when its signal aborts, before or during it', async () => {
    const stub = await startStub(() => {
      // Never answers.
    });
    try {
      const controller = new AbortController();
      const pending = nodeHttpFetch(stub.url, { method: 'POST', body: '[]', signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
      await expect(nodeHttpFetch(stub.url, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      await stub.close();
    }
  });

  it('refuses bodies other than strings and bytes, and URLs other than http(s)', async () => {
    await expect(nodeHttpFetch('http://127.0.0.1:9/', { method: 'POST', body: new Blob(['x']) })).rejects.toThrow(TypeError);
    await expect(nodeHttpFetch('file:///etc/passwd')).rejects.toThrow(/http\(s\) URLs only/);
  });
});
