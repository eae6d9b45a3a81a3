// End to end: a request signed by an independent signer (http-message-sig), verified by the engine
// whose Web Bot Auth verifier fetches the key directory through the SSRF-safe node fetcher from a
// real local HTTPS server (self-signed; loopback allowed only by the explicit test option).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSafeDirectoryFetcher, nodeEd25519 } from '../../../src/adapters/node/index.js';
import { webBotAuthVerifier } from '../../../src/index.js';
import { makeSelfSignedCert, opensslAvailable, startHttpsServer, type TestHttpsServer } from '../../helpers/https-server.js';
import { DIRECTORY_PATH, fixedClock, generateKey, jwks, signRequest, testCatalog, testEngine } from './support.js';

const NOW = 1_800_000_000;

describe.skipIf(!opensslAvailable())('Web Bot Auth with the key directory on a real HTTPS server', () => {
  const key = generateKey();
  let server: TestHttpsServer;
  let origin: string;

  beforeAll(async () => {
    const cert = makeSelfSignedCert([], ['127.0.0.1']);
    server = await startHttpsServer(cert, (req, res) => {
      if (req.url !== DIRECTORY_PATH) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/http-message-signatures-directory+json', 'cache-control': 'max-age=3600' }).end(jwks(key));
    });
    origin = `https://127.0.0.1:${server.port}`;
    engineOptions = { ca: cert.cert, port: server.port };
  });
  afterAll(() => server?.close());

  let engineOptions: { ca: string; port: number };
  const engineWith = (allowLoopback: boolean) =>
    testEngine(
      webBotAuthVerifier({
        fetchDirectory: createSafeDirectoryFetcher({ allowLoopback, ca: engineOptions.ca, ports: [engineOptions.port] }),
        verifyEd25519: nodeEd25519(),
      }),
      fixedClock(NOW),
      testCatalog([origin]),
    );
  const signed = () => signRequest({ key, url: 'https://example.com/articles/1?lang=en', headers: { 'Signature-Agent': `sig1="${origin}"`, 'User-Agent': 'Mozilla/5.0' } }, NOW);

  it('a correctly signed request is verified, the directory fetched once over TLS and then cached', async () => {
    const engine = engineWith(true);
    const before = server.requests.length;
    const item = await signed();
    expect(await engine.verify(item)).toMatchObject({
      result: 'verified',
      agent_id: 'test-bot',
      verification: { method: 'web-bot-auth', checks: [{ method: 'web-bot-auth', outcome: 'pass', reason: 'signature-valid' }] },
    });
    expect((await engine.identify(item)).result).toBe('verified');
    expect(server.requests.slice(before).map((r) => r.url)).toEqual([DIRECTORY_PATH]);
  });

  it('a tampered request is verification_failed', async () => {
    const engine = engineWith(true);
    const item = await signed();
    // The signer covers @authority and signature-agent: replaying it to another host must fail.
    const tampered = { ...item, request_headers: { ...item.request_headers, Host: 'victim.example' } };
    expect(await engine.verify(tampered)).toMatchObject({ result: 'verification_failed', verification: { checks: [{ outcome: 'fail', reason: 'signature-invalid' }] } });
  });

  it('without the explicit test option the loopback directory is refused and never contacted', async () => {
    const engine = engineWith(false);
    const connections = server.connections();
    expect(await engine.verify(await signed())).toMatchObject({
      result: 'not_verifiable',
      verification: { checks: [{ method: 'web-bot-auth', outcome: 'inconclusive', reason: 'key-directory-refused' }] },
    });
    expect(server.connections()).toBe(connections);
  });
});
