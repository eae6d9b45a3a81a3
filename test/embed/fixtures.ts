// Shared setup of the embedding tests: a catalog whose IP ranges make loopback requests verified
// (Googlebot), spoofed (GPTBot: its range is elsewhere) or unverifiable (ClaudeBot), and a real
// engine with the IP-range verifier, so the middleware's socket address decides as in production.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEngine, ipRangeVerifier, type CatalogDocument, type Engine } from '../../src/index.js';
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

/** The IP lists of EMBED_CATALOG (JAFAR documents by file name): loopback is Googlebot's range. */
export const EMBED_IP_LISTS = {
  'loopback.json': jafar({ ipv4Prefix: '127.0.0.0/8' }),
  'elsewhere.json': jafar({ ipv4Prefix: '192.0.2.0/24' }),
};

/** The engine the embedding tests use: real IP-range verification, loopback is Googlebot's range. */
export function embedEngine(): Engine {
  return createEngine({ catalog: EMBED_CATALOG, verifiers: [ipRangeVerifier({ lists: EMBED_IP_LISTS })] });
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
