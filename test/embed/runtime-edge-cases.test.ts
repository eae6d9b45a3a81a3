// The fetch and Hono middleware at the edges of each runtime, found by an audit on the real
// runtimes (workerd through Miniflare, Deno, Bun): a WebSocket that Bun upgrades beside the
// response, a streamed body, a client that leaves, a handler that answers nothing or throws a
// non-Error, a robots.txt refreshed from a server on Workers, a Worker handler given no ctx, a sink
// made at a Worker's top level, and a CF-Connecting-IP that no Cloudflare edge set.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type StoredVisit } from '../../src/index.js';
import { startTestServer, type TestServer } from '../server/helpers.js';
import { BROWSER_UA, EMBED_CATALOG, EMBED_IP_LISTS, LOOPBACK_STAND_IN } from './fixtures.js';
import { bundleWorker, killLeftovers, loadMiniflare, runtimeBinary, startSite } from './runtime-helpers.js';

let srv: TestServer;
let projectId: string;
let token: string;
// A robots.txt server whose answer changes on every fetch (`Disallow: /v<n>`), answering after 300 ms.
let robotsServer: Server;
let robotsUrl: string;
let robotsFetches = 0;

beforeAll(async () => {
  srv = await startTestServer({ engine: createEngine({ catalog: EMBED_CATALOG }) });
  const project = srv.store.createProject('runtime-edges.example');
  projectId = project.id;
  token = project.token;
  robotsServer = createServer((req, res) => {
    req.resume();
    const version = ++robotsFetches;
    // Answered after the Worker's response to the request that asked is done, as a real server's would be.
    setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', etag: `"v${version}"` }).end(`User-agent: GPTBot\nDisallow: /v${version}\n`), 300);
  });
  await new Promise<void>((resolve) => robotsServer.listen(0, '127.0.0.1', resolve));
  robotsUrl = `http://127.0.0.1:${(robotsServer.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await srv?.stop();
  await new Promise((resolve) => robotsServer?.close(resolve));
});
afterEach(killLeftovers);

type Framework = 'fetch' | 'hono';
const config = (framework: Framework, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ framework, url: srv.url, token, catalog: EMBED_CATALOG, lists: EMBED_IP_LISTS, loopbackStandIn: LOOPBACK_STAND_IN, ...extra });

/** The visits stored for `path` once `count` of them are there (15 s at most). */
async function visitsTo(path: string, count = 1): Promise<StoredVisit[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const visits = (await srv.store.timeline({ projectId, limit: 1000 })).filter((visit) => visit.request_path === path);
    if (visits.length >= count || Date.now() > deadline) {
      expect(visits).toHaveLength(count);
      return visits;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Opens a WebSocket the way a client does (node:http, as Node 20 has no WebSocket client); resolves with the status answered. */
function openWebSocket(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', 'user-agent': BROWSER_UA },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode!);
    });
    req.on('response', (res) => (res.resume(), resolve(res.statusCode!)));
    req.on('error', reject);
    req.end();
  });
}

/** A client that gives up after `ms`: resolves once it has. */
async function leaveAfter(url: string, ms: number): Promise<void> {
  await expect(fetch(url, { headers: { 'user-agent': BROWSER_UA }, signal: AbortSignal.timeout(ms) })).rejects.toThrow();
}

const get = async (url: string) => {
  const response = await fetch(url, { headers: { 'user-agent': BROWSER_UA } });
  return { status: response.status, text: await response.text() };
};

describe.each(['fetch', 'hono'] as const)('%s middleware under Bun', (framework) => {
  const binary = runtimeBinary('bun');
  const start = () => startSite(binary!, ['test/embed/runtimes/bun.js'], { AGENTWARDEN_TEST_CONFIG: config(framework) });

  it.runIf(binary !== undefined)('records a WebSocket that Bun upgrades beside the response as 101, and the server goes on', async () => {
    const site = await start();
    // A path of this framework's own: the other's visit to /ws is in the same project.
    const path = `/ws?${framework}-bun`;
    expect(await openWebSocket(`${site.url}${path}`)).toBe(101);
    // Reading the status of a Response that was never given crashed the whole server.
    expect((await get(`${site.url}/page`)).status).toBe(200);
    expect((await visitsTo(path))[0]).toMatchObject({ request_path: path, response_status_code: 101 });
    await site.stop('SIGKILL');
  }, 60_000);

  it.runIf(binary !== undefined)('records a client that left before the answer without a status: it got none', async () => {
    const site = await start();
    const path = `/slow?ms=1500&${framework}-bun`;
    await leaveAfter(`${site.url}${path}`, 300);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const [visit] = await visitsTo(path);
    expect(visit!.response_status_code).toBeUndefined();
    await site.stop('SIGKILL');
  }, 60_000);
});

describe.each(['fetch', 'hono'] as const)('%s middleware under Deno', (framework) => {
  const binary = runtimeBinary('deno');
  // A site per test: afterEach kills what a test started.
  const deno = () =>
    startSite(binary!, ['run', '--no-lock', '--allow-net=127.0.0.1', '--allow-env=AGENTWARDEN_TEST_CONFIG', '--allow-read', 'test/embed/runtimes/deno.js'], {
      AGENTWARDEN_TEST_CONFIG: config(framework),
    });

  it.runIf(binary !== undefined)("times a streamed body until it ends (Deno's info.completed), not until the handler answered", async () => {
    const url = (await deno()).url;
    const path = `/stream?ms=800&${framework}`;
    const answer = await get(`${url}${path}`);
    expect(answer.text).toContain('chunk');
    const [visit] = await visitsTo(path);
    expect(visit).toMatchObject({ response_status_code: 200 });
    expect(visit!.response_duration_in_milliseconds).toBeGreaterThanOrEqual(700);
  }, 60_000);

  it.runIf(binary !== undefined)('records a handler that throws something other than an Error as the 500 the client gets', async () => {
    const url = (await deno()).url;
    const path = `/throw-string?${framework}`;
    expect((await get(`${url}${path}`)).status).toBe(500);
    expect((await visitsTo(path))[0]!.response_status_code).toBe(500);
  }, 60_000);

  it.runIf(binary !== undefined)('records a handler that answers nothing as the platform answers it: Hono with its 500, the fetch wrapper without a status', async () => {
    const url = (await deno()).url;
    const path = `/nothing?${framework}`;
    expect((await get(`${url}${path}`)).status).toBe(500);
    expect((await visitsTo(path))[0]!.response_status_code).toBe(framework === 'hono' ? 500 : undefined);
  }, 60_000);
});

describe('under workerd (Miniflare)', async () => {
  const miniflare = await loadMiniflare();
  const worker = async (entry: string, bindings: Record<string, string>) => {
    const mf = new miniflare!.Miniflare({ modules: true, script: await bundleWorker(entry), compatibilityDate: '2024-09-23', bindings });
    return { mf, url: (await mf.ready).origin };
  };

  it.runIf(miniflare !== undefined)('refreshes a robots.txt fetched from a server with ctx.waitUntil, so a change reaches the Worker', async () => {
    const { mf, url } = await worker('test/embed/runtimes/worker.js', { AGENTWARDEN_TEST_CONFIG: config('fetch', { robotsUrl }) });
    try {
      const served = new Set<string>();
      for (let i = 0; i < 5; i++) {
        const robots = await get(`${url}/robots.txt`);
        expect(robots.status).toBe(200);
        served.add(/Disallow: (\/v\d+)/.exec(robots.text)?.[1] ?? robots.text);
        await new Promise((resolve) => setTimeout(resolve, 1200));
      }
      // One copy at first, then each refresh (every second) serves the server's next answer: the
      // refresh was ended with the request that started it, and the first copy served for good.
      expect(served.size).toBeGreaterThanOrEqual(3);
    } finally {
      await mf.dispose();
    }
  }, 60_000);

  it.runIf(miniflare !== undefined)('given no ctx, sends a batch whose timer Workers cancelled once the next visit comes', async () => {
    const { mf, url } = await worker('test/embed/runtimes/worker.js', { AGENTWARDEN_TEST_CONFIG: config('fetch', { withoutContext: true, flushIntervalMs: 300 }) });
    try {
      expect((await get(`${url}/first-without-ctx`)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1800));
      expect((await get(`${url}/second-without-ctx`)).status).toBe(200);
      // Before, nothing left until 500 visits had built up.
      await visitsTo('/first-without-ctx');
    } finally {
      await mf.dispose();
    }
  }, 60_000);

  it.runIf(miniflare !== undefined)("starts with an HTTP sink made at the module's top level, where workerd refuses random values", async () => {
    const { mf, url } = await worker('test/embed/runtimes/worker-top-level-sink.js', {});
    try {
      expect(await get(`${url}/`)).toEqual({ status: 200, text: 'ok unknown_agent\n' });
    } finally {
      await mf.dispose();
    }
  }, 60_000);

  it.runIf(miniflare !== undefined)("takes no CF-Connecting-IP from a request that did not come through Cloudflare's edge (no request.cf)", async () => {
    const { mf, url } = await worker('test/embed/runtimes/worker.js', { AGENTWARDEN_TEST_CONFIG: config('fetch') });
    try {
      const response = await fetch(`${url}/platform-of-own-request`, { headers: { 'cf-connecting-ip': '104.210.140.130' } });
      expect(await response.json()).not.toHaveProperty('clientIp');
    } finally {
      await mf.dispose();
    }
  }, 60_000);
});
