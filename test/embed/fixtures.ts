// Shared setup of the embedding tests: a catalog whose IP ranges make loopback requests verified
// (Googlebot), spoofed (GPTBot: its range is elsewhere) or unverifiable (ClaudeBot), and a real
// engine with the IP-range verifier, so the middleware's socket address decides as in production.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEngine, ipRangeVerifier, type CatalogDocument, type Engine, type EngineOptions, type Verifier } from '../../src/index.js';
import { claudebotAgent, googlebotRecord, gptbotAgent } from '../helpers/agents.js';

export const EMBED_CATALOG: CatalogDocument = {
  version: 1,
  agents: [
    { ...googlebotRecord, ip_ranges: ['loopback.json'] },
    { ...gptbotAgent, ip_ranges: ['elsewhere.json'] },
    claudebotAgent,
  ],
};

export const CLAUDEBOT_UA = 'Mozilla/5.0 (compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';
export { BROWSER_UA, GOOGLEBOT_UA, GPTBOT_UA } from '../helpers/agents.js';

const jafar = (prefix: object) => ({ creationTime: '2026-11-01T00:00:00.000000', prefixes: [prefix] });

// These tests can only connect over loopback, and the ip-ranges verifier rightly takes no evidence
// from a non-public address (a site's own network: `client-ip-not-public`). So the verifier sees
// the loopback client address as this public stand-in, which Googlebot's list here holds
// (test/embed/runtimes/app.js does the same under workerd, Deno and Bun).
export const LOOPBACK_STAND_IN = '198.18.0.1';

/** The IP lists of EMBED_CATALOG (JAFAR documents by file name): the loopback stand-in is Googlebot's range. */
export const EMBED_IP_LISTS = {
  'loopback.json': jafar({ ipv4Prefix: '198.18.0.0/24' }),
  'elsewhere.json': jafar({ ipv4Prefix: '192.0.2.0/24' }),
};

/** A verifier that sees a loopback client address as LOOPBACK_STAND_IN. */
function loopbackAsPublic(verifier: Verifier): Verifier {
  return {
    name: verifier.name,
    appliesTo: (agent, request) => verifier.appliesTo(agent, request),
    verify: (agent, request, context) =>
      verifier.verify(agent, { headers: request.headers, method: request.method, path: request.path, clientIp: request.clientIp === '127.0.0.1' ? LOOPBACK_STAND_IN : request.clientIp }, context),
  };
}

/** The engine the embedding tests use: real IP-range verification, the loopback client in Googlebot's range. */
export function embedEngine(options: { readonly clientIp?: EngineOptions['clientIp'] } = {}): Engine {
  return createEngine({ catalog: EMBED_CATALOG, verifiers: [loopbackAsPublic(ipRangeVerifier({ lists: EMBED_IP_LISTS }))], ...options });
}

/** A plain node:http server on 127.0.0.1 for tests of our own client logic (status codes, Retry-After). */
export async function startStub(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => handler(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
