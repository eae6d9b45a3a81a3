// Shared setup of the embedding tests: a catalog whose IP ranges make loopback requests verified
// (Googlebot), spoofed (GPTBot: its range is elsewhere) or unverifiable (ClaudeBot), and a real
// engine with the IP-range verifier, so the middleware's socket address decides as in production.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEngine, ipRangeVerifier, type CatalogDocument, type Engine } from '../../src/index.js';

export const EMBED_CATALOG: CatalogDocument = {
  version: 1,
  agents: [
    {
      id: 'googlebot',
      name: 'Googlebot',
      type: 'Search Engine Crawler',
      operator: 'Google',
      url: 'https://developers.google.com/search/docs/crawling-indexing/googlebot',
      match: { tokens: ['Googlebot'] },
      robots_tokens: ['Googlebot'],
      ip_ranges: ['loopback.json'],
    },
    {
      id: 'gptbot',
      name: 'GPTBot',
      type: 'AI Data Scraper',
      operator: 'OpenAI',
      url: 'https://platform.openai.com/docs/bots',
      match: { tokens: ['GPTBot'] },
      robots_tokens: ['GPTBot'],
      ip_ranges: ['elsewhere.json'],
    },
    {
      id: 'claudebot',
      name: 'ClaudeBot',
      type: 'AI Data Scraper',
      operator: 'Anthropic',
      url: 'https://support.anthropic.com/',
      match: { tokens: ['ClaudeBot'] },
      robots_tokens: ['ClaudeBot'],
    },
  ],
};

export const GOOGLEBOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
export const GPTBOT_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
export const CLAUDEBOT_UA = 'Mozilla/5.0 (compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';
export const BROWSER_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

const jafar = (prefix: object) => ({ creationTime: '2026-11-01T00:00:00.000000', prefixes: [prefix] });

/** The engine the embedding tests use: real IP-range verification, loopback is Googlebot's range. */
export function embedEngine(): Engine {
  return createEngine({
    catalog: EMBED_CATALOG,
    verifiers: [
      ipRangeVerifier({
        lists: {
          'loopback.json': jafar({ ipv4Prefix: '127.0.0.0/8' }),
          'elsewhere.json': jafar({ ipv4Prefix: '192.0.2.0/24' }),
        },
      }),
    ],
  });
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
