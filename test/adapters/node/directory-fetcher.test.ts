// The SSRF-safe key-directory fetcher against a real HTTPS server on loopback: success, statuses, caps, deadlines.
import { createServer as createTcpServer } from 'node:net';
import type { Server as TcpServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSafeDirectoryFetcher, DIRECTORY_ACCEPT } from '../../../src/adapters/node/index.js';
import type { DirectoryLookup, SafeDirectoryFetcherOptions } from '../../../src/adapters/node/index.js';
import { makeSelfSignedCert, opensslAvailable, startHttpsServer } from '../../helpers/https-server.js';
import type { SelfSignedCert, TestHttpsServer } from '../../helpers/https-server.js';
import { failureCode } from '../../helpers/directory-fetch.js';

const WELL_KNOWN = '/.well-known/http-message-signatures-directory';
const DIRECTORY = JSON.stringify({
  keys: [{ kty: 'OKP', crv: 'Ed25519', kid: 'poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U', x: 'JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs', use: 'sig' }],
});


describe.skipIf(!opensslAvailable())('createSafeDirectoryFetcher against a local HTTPS server', () => {
  let cert: SelfSignedCert;
  let server: TestHttpsServer;
  const routes = new Map<string, (res: import('node:http').ServerResponse) => void>();

  beforeAll(async () => {
    cert = makeSelfSignedCert(['directory.test', 'localhost'], ['127.0.0.1']);
    server = await startHttpsServer(cert, (req, res) => {
      const route = routes.get(req.url ?? '');
      if (route === undefined) {
        res.writeHead(404).end();
        return;
      }
      route(res);
    });
    routes.set(WELL_KNOWN, (res) => {
      res.writeHead(200, { 'content-type': 'application/http-message-signatures-directory+json', 'cache-control': 'max-age=86400' });
      res.end(DIRECTORY);
    });
  });
  afterAll(async () => server.close());
  afterEach(() => {
    server.requests.length = 0;
  });

  const testOptions = (extra: SafeDirectoryFetcherOptions = {}): SafeDirectoryFetcherOptions => ({
    allowLoopback: true,
    ca: cert.cert,
    ports: [server.port],
    lookup: () => '127.0.0.1',
    ...extra,
  });

  it('fetches a JWKS directory: status, headers and exact body bytes', async () => {
    const fetchDirectory = createSafeDirectoryFetcher(testOptions());
    const response = await fetchDirectory(server.url(WELL_KNOWN), {});
    expect(response.status).toBe(200);
    expect(response.headers).toBeInstanceOf(Headers);
    expect(response.headers.get('cache-control')).toBe('max-age=86400');
    expect(response.headers.get('content-type')).toBe('application/http-message-signatures-directory+json');
    expect(response.body).toBeInstanceOf(Uint8Array);
    expect(new TextDecoder().decode(response.body)).toBe(DIRECTORY);
  });

  it('verifies the certificate against the host name (SNI) when the URL names a host', async () => {
    const fetchDirectory = createSafeDirectoryFetcher(testOptions());
    const response = await fetchDirectory(`https://directory.test:${server.port}${WELL_KNOWN}`, {});
    expect(response.status).toBe(200);
    expect(server.requests[0]?.headers.host).toBe(`directory.test:${server.port}`);
  });

  it('sends the directory Accept header and a User-Agent, and no cookies or credentials', async () => {
    const fetchDirectory = createSafeDirectoryFetcher(testOptions());
    await fetchDirectory(server.url(WELL_KNOWN), {});
    const headers = server.requests[0]?.headers;
    expect(headers?.accept).toBe(DIRECTORY_ACCEPT);
    expect(DIRECTORY_ACCEPT.startsWith('application/http-message-signatures-directory+json')).toBe(true);
    expect(headers?.['user-agent']).toMatch(/agentwarden/);
    expect(headers?.['accept-encoding']).toBe('identity');
    expect(headers?.cookie).toBeUndefined();
    expect(headers?.authorization).toBeUndefined();
    expect(server.requests[0]?.method).toBe('GET');
  });

  it('refuses the same loopback server without allowLoopback, and nothing reaches it', async () => {
    const before = server.connections();
    const strict = createSafeDirectoryFetcher({ ca: cert.cert, ports: [server.port], lookup: () => '127.0.0.1' });
    expect(await failureCode(strict(server.url(WELL_KNOWN), {}))).toBe('refused-address');
    expect(await failureCode(strict(`https://directory.test:${server.port}${WELL_KNOWN}`, {}))).toBe('refused-address');
    expect(server.connections()).toBe(before);
    expect(server.requests).toEqual([]);
  });

  it('does not trust a self-signed certificate without ca', async () => {
    const fetchDirectory = createSafeDirectoryFetcher({ allowLoopback: true, ports: [server.port] });
    expect(await failureCode(fetchDirectory(server.url(WELL_KNOWN), {}))).toBe('network');
    expect(server.requests).toEqual([]);
  });

  it('turns a 301 into redirect and never requests the target', async () => {
    routes.set('/moved', (res) => res.writeHead(301, { location: '/target' }).end());
    routes.set('/target', (res) => res.writeHead(200).end(DIRECTORY));
    const fetchDirectory = createSafeDirectoryFetcher(testOptions());
    expect(await failureCode(fetchDirectory(server.url('/moved'), {}))).toBe('redirect');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.requests.map((r) => r.url)).toEqual(['/moved']);
  });

  it.each([
    [302, 'redirect'],
    [307, 'redirect'],
    [308, 'redirect'],
    [500, 'http-status'],
    [404, 'http-status'],
    [204, 'ok'],
  ] as const)('status %i gives %s', async (status, expected) => {
    routes.set(`/status-${status}`, (res) => res.writeHead(status, status < 400 && status >= 300 ? { location: '/x' } : {}).end());
    const fetchDirectory = createSafeDirectoryFetcher(testOptions());
    const promise = fetchDirectory(server.url(`/status-${status}`), {});
    if (expected === 'ok') expect((await promise).status).toBe(status);
    else expect(await failureCode(promise)).toBe(expected);
  });

  it('refuses a body whose Content-Length exceeds the cap before reading it', async () => {
    routes.set('/big-declared', (res) => {
      res.writeHead(200, { 'content-length': '100000' });
      res.end('x'.repeat(100_000));
    });
    const fetchDirectory = createSafeDirectoryFetcher(testOptions({ maxBytes: 65_536 }));
    expect(await failureCode(fetchDirectory(server.url('/big-declared'), {}))).toBe('too-large');
  });

  it('cuts a chunked body without length as soon as it passes the cap', async () => {
    let serverGaveUp = false;
    let bytesWritten = 0;
    routes.set('/big-chunked', (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = 'x'.repeat(16_384);
      // Would send 64 MiB if the client kept reading.
      const pump = (): void => {
        while (bytesWritten < 64 * 1024 * 1024) {
          bytesWritten += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      res.on('close', () => {
        serverGaveUp = !res.writableFinished;
      });
      pump();
    });
    const fetchDirectory = createSafeDirectoryFetcher(testOptions({ maxBytes: 65_536 }));
    expect(await failureCode(fetchDirectory(server.url('/big-chunked'), {}))).toBe('too-large');
    await expect.poll(() => serverGaveUp, { timeout: 2000 }).toBe(true);
    expect(bytesWritten).toBeLessThan(8 * 1024 * 1024);
  });

  it('accepts a body of exactly maxBytes', async () => {
    routes.set('/exact', (res) => res.writeHead(200).end('y'.repeat(1000)));
    const fetchDirectory = createSafeDirectoryFetcher(testOptions({ maxBytes: 1000 }));
    expect((await fetchDirectory(server.url('/exact'), {})).body.length).toBe(1000);
  });

  it('times out when the headers never come', async () => {
    routes.set('/silent', () => {});
    const fetchDirectory = createSafeDirectoryFetcher(testOptions({ timeoutMs: 300 }));
    const started = performance.now();
    expect(await failureCode(fetchDirectory(server.url('/silent'), {}))).toBe('timeout');
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(1500);
  });

  it('times out on a slow-drip body within the total deadline', async () => {
    routes.set('/drip', (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => res.write(' '), 20);
      res.on('close', () => clearInterval(timer));
    });
    const fetchDirectory = createSafeDirectoryFetcher(testOptions({ timeoutMs: 300 }));
    const started = performance.now();
    expect(await failureCode(fetchDirectory(server.url('/drip'), {}))).toBe('timeout');
    expect(performance.now() - started).toBeLessThan(1500);
  });

  it('treats a caller abort as timeout', async () => {
    routes.set('/silent', () => {});
    const fetchDirectory = createSafeDirectoryFetcher(testOptions({ timeoutMs: 5000 }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = performance.now();
    expect(await failureCode(fetchDirectory(server.url('/silent'), { signal: controller.signal }))).toBe('timeout');
    expect(performance.now() - started).toBeLessThan(1500);
    expect(await failureCode(fetchDirectory(server.url(WELL_KNOWN), { signal: AbortSignal.abort() }))).toBe('timeout');
  });

  it('gives network when the body is cut short', async () => {
    routes.set('/cut', (res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('{"keys":');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const fetchDirectory = createSafeDirectoryFetcher(testOptions());
    expect(await failureCode(fetchDirectory(server.url('/cut'), {}))).toBe('network');
  });
});

describe('createSafeDirectoryFetcher without a TLS peer', () => {
  let silent: TcpServer;
  let silentPort = 0;
  let silentConnections = 0;
  let silentClosed = 0;

  beforeAll(async () => {
    // Accepts TCP but never answers the TLS ClientHello.
    silent = createTcpServer((socket) => {
      silentConnections += 1;
      socket.on('error', () => {});
      socket.on('close', () => {
        silentClosed += 1;
      });
      socket.resume(); // read (and drop) the ClientHello so the client's close is seen
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    silentPort = typeof address === 'object' && address !== null ? address.port : 0;
  });
  afterAll(async () => new Promise<void>((resolve) => silent.close(() => resolve())));

  it('gives timeout when the handshake never completes, at the connect deadline', async () => {
    const fetchDirectory = createSafeDirectoryFetcher({ allowLoopback: true, ports: [silentPort], connectTimeoutMs: 200, timeoutMs: 2000 });
    const started = performance.now();
    expect(await failureCode(fetchDirectory(`https://127.0.0.1:${silentPort}/`, {}))).toBe('timeout');
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeLessThan(1500);
    expect(silentConnections).toBe(1);
    // The abandoned connection is closed, not leaked.
    await expect.poll(() => silentClosed, { timeout: 1000 }).toBe(1);
  });

  it('gives network when nothing listens', async () => {
    const closed = createTcpServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const address = closed.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const fetchDirectory = createSafeDirectoryFetcher({ allowLoopback: true, ports: [port] });
    expect(await failureCode(fetchDirectory(`https://127.0.0.1:${port}/`, {}))).toBe('network');
  });

  it('gives network when the name does not resolve', async () => {
    const fetchDirectory = createSafeDirectoryFetcher({
      lookup: () => Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' })),
    });
    expect(await failureCode(fetchDirectory('https://missing.example/', {}))).toBe('network');
    const empty = createSafeDirectoryFetcher({ lookup: () => [] });
    expect(await failureCode(empty('https://empty.example/', {}))).toBe('network');
    const garbage = createSafeDirectoryFetcher({ lookup: (() => [42]) as unknown as DirectoryLookup, timeoutMs: 5000 });
    const started = performance.now();
    expect(await failureCode(garbage('https://garbage.example/', {}))).toBe('network');
    expect(performance.now() - started).toBeLessThan(1000);
    const throwing = createSafeDirectoryFetcher({
      lookup: () => {
        throw new Error('resolver crashed');
      },
    });
    expect(await failureCode(throwing('https://throwing.example/', {}))).toBe('network');
  });
});

describe('createSafeDirectoryFetcher options', () => {
  it.each([
    [{ timeoutMs: 0 }, /"timeoutMs".*got 0/],
    [{ timeoutMs: 2 ** 31 }, /"timeoutMs"/],
    [{ timeoutMs: 1.5 }, /"timeoutMs".*got 1.5/],
    [{ connectTimeoutMs: -1 }, /"connectTimeoutMs".*got -1/],
    [{ timeoutMs: 500, connectTimeoutMs: 1000 }, /"connectTimeoutMs".*at most timeoutMs/],
    [{ maxBytes: 0 }, /"maxBytes".*got 0/],
    [{ ports: [] }, /"ports"/],
    [{ ports: [0] }, /"ports".*got 0/],
    [{ ports: [65_536] }, /"ports".*got 65536/],
    [{ userAgent: 'bot\r\nCookie: x' }, /"userAgent"/],
    [{ userAgent: '' }, /"userAgent"/],
  ] as const)('rejects %o with a RangeError naming the option', (options, message) => {
    expect(() => createSafeDirectoryFetcher(options)).toThrow(RangeError);
    expect(() => createSafeDirectoryFetcher(options)).toThrow(message);
  });

  it.each([
    [{ timeoutMs: '3000' }, /"timeoutMs"/],
    [{ lookup: 'dns' }, /"lookup"/],
    [{ allowLoopback: 'yes' }, /"allowLoopback"/],
    [{ ca: 42 }, /"ca"/],
    [{ ports: 443 }, /"ports"/],
  ])('rejects %o with a TypeError naming the option', (options, message) => {
    expect(() => createSafeDirectoryFetcher(options as unknown as SafeDirectoryFetcherOptions)).toThrow(TypeError);
    expect(() => createSafeDirectoryFetcher(options as unknown as SafeDirectoryFetcherOptions)).toThrow(message);
  });

  it('accepts the defaults', () => {
    expect(typeof createSafeDirectoryFetcher()).toBe('function');
  });
});
