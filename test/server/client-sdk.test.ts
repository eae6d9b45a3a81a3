// The official Dark Visitors (now Known Agents) Node SDK, @darkvisitors/sdk 1.6.1 (Apache-2.0),
// as a site runs it, pointed at a real `serve` process: the client nobody here wrote. The SDK has
// its API's address built in, so its fetch calls are sent to this server instead, as a site does
// with a proxy or a DNS entry; everything else (bodies, headers, the agent type names, how it reads
// answers) is the SDK's own.
import { AgentType, DarkVisitors } from '@darkvisitors/sdk';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import robotsParser from 'robots-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GPTBOT_UA, spawnServe, stopServes, tempDir, type ServeProcess } from './helpers.js';

const SDK_API = 'https://api.darkvisitors.com/';
const GOOGLEBOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const CHROME_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

interface StoredVisit {
  agent_id: string | null;
  result: string;
  request_method: string;
  request_path: string;
  request_headers: Record<string, string | string[]>;
}

let serve: ServeProcess;
let token: string;
let site: Server;
let siteUrl: string;
const temp = tempDir();
const originalFetch = globalThis.fetch;
/** What this server answered each of the SDK's requests: method, path, status. */
const answered: string[] = [];

beforeAll(async () => {
  serve = await spawnServe(['--data-dir', temp.dir]);
  token = serve.firstToken!;
  globalThis.fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.startsWith(SDK_API)) return originalFetch(input, init);
    const response = await originalFetch(new URL(url.slice(SDK_API.length), `${serve.url}/`), init);
    answered.push(`${init?.method ?? 'GET'} /${url.slice(SDK_API.length)} ${response.status}`);
    return response;
  };
  // A site that tracks every request with the SDK, as its README shows.
  const sdk = new DarkVisitors(token);
  site = createServer((req, res) => {
    sdk.trackVisit(req);
    res.end('hello');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});

afterAll(async () => {
  globalThis.fetch = originalFetch;
  await new Promise<void>((resolve) => site.close(() => resolve()));
  await stopServes([serve]);
  temp.cleanup();
});

async function storedVisits(count: number): Promise<StoredVisit[]> {
  for (let waited = 0; waited < 10_000; waited += 50) {
    const response = await originalFetch(`${serve.url}/visits?limit=50`, { headers: { authorization: `Bearer ${token}` } });
    const { visits } = (await response.json()) as { visits: StoredVisit[] };
    if (visits.length >= count) return visits;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`fewer than ${count} visits stored within 10 s; the server answered: ${answered.join(', ')}`);
}

describe('@darkvisitors/sdk 1.6.1 against serve', () => {
  it("trackVisit: each of a site's requests is stored and identified, without its secret headers", async () => {
    const visit = (path: string, method: string, headers: Record<string, string>) => originalFetch(`${siteUrl}${path}`, { method, headers });
    await visit('/docs/page?lang=en', 'GET', { 'user-agent': GPTBOT_UA, cookie: 'session=secret', authorization: 'Basic c2VjcmV0' });
    await visit('/search', 'POST', { 'user-agent': GOOGLEBOT_UA, 'x-api-key': 'secret' });
    await visit('/', 'GET', { 'user-agent': CHROME_UA });
    const visits = await storedVisits(3);
    // Its body is one visit object (not an array) with a field of its own, node_package_version.
    expect(answered.filter((line) => line.startsWith('POST /visits'))).toEqual(['POST /visits 202', 'POST /visits 202', 'POST /visits 202']);
    const byPath = new Map(visits.map((v) => [v.request_path, v]));
    // The SDK sends the URL's path without its query.
    expect(byPath.get('/docs/page')).toMatchObject({ agent_id: 'gptbot', request_method: 'GET' });
    expect(byPath.get('/search')).toMatchObject({ agent_id: 'googlebot', request_method: 'POST' });
    expect(byPath.get('/')).toMatchObject({ agent_id: null, result: 'unknown_agent' });
    for (const v of visits) {
      expect(Object.keys(v.request_headers)).toContain('user-agent');
      for (const secret of ['cookie', 'authorization', 'x-api-key']) expect(Object.keys(v.request_headers)).not.toContain(secret);
    }
  });

  it("generateRobotsTxt: the SDK's agent types, its legacy Headless Agent among them, give rules a robots.txt parser keeps", async () => {
    const text = await new DarkVisitors(token).generateRobotsTxt([AgentType.AIDataScraper, AgentType.HeadlessAgent], '/private/');
    expect(answered).toContain('POST /robots-txts 200');
    expect(text).toContain('User-agent: GPTBot\nDisallow: /private/');
    const robots = robotsParser('https://site.example/robots.txt', text);
    expect(robots.isAllowed('https://site.example/private/report', 'GPTBot')).toBe(false);
    expect(robots.isAllowed('https://site.example/public', 'GPTBot')).toBe(true);
    expect(robots.isAllowed('https://site.example/private/report', 'Googlebot')).toBe(true);
    // "Headless Agent" is Known Agents' former name of Automated Agent: the headless browsers' tokens are disallowed too.
    const automated = await new DarkVisitors(token).generateRobotsTxt([AgentType.HeadlessAgent]);
    expect(automated).toMatch(/^User-agent: \S+\nDisallow: \/$/m);
    expect(text).toContain(automated.trim().split('\n\n')[0]!.split('\n')[0]!);
  });

  it('generateRobotsTxt: a wrong token is the error the SDK reports', async () => {
    await expect(new DarkVisitors(`aw_${'x'.repeat(43)}`).generateRobotsTxt([AgentType.AIAssistant])).rejects.toThrow('failed to generate robots.txt: 401');
  });
});
