// The fetch middleware, and the Hono middleware, under the runtimes they are written for besides
// Node, each installed from npm as a devDependency: workerd (through Miniflare), Deno and Bun. Each runs test/embed/runtimes/app.js
// over the built package (dist/) on loopback: the platform's client address (Cloudflare's
// CF-Connecting-IP, Deno's info.remoteAddr, Bun's server.requestIP) verifies Googlebot by IP range
// and unmasks a GPTBot spoofer, and each visit reaches a real agentwarden server through the HTTP
// sink (on workerd flushed with ctx.waitUntil), with its decision and without secret headers.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/index.js';
import { startTestServer, type TestServer } from '../server/helpers.js';
import { EMBED_CATALOG, EMBED_IP_LISTS, GOOGLEBOT_UA, GPTBOT_UA, LOOPBACK_STAND_IN } from './fixtures.js';
import { bundleWorker, killLeftovers, loadMiniflare, runtimeBinary, startSite, visitsArriving } from './runtime-helpers.js';

let srv: TestServer;
let projectId: string;
let configs: Record<Framework, string>;

// The fetch middleware (withAgentwarden), and a Hono app with agentwarden/hono.
const FRAMEWORKS = ['fetch', 'hono'] as const;
type Framework = (typeof FRAMEWORKS)[number];

beforeAll(async () => {
  srv = await startTestServer({ engine: createEngine({ catalog: EMBED_CATALOG }) });
  const project = srv.store.createProject('runtimes.example');
  projectId = project.id;
  const config = (framework: Framework) => JSON.stringify({ framework, url: srv.url, token: project.token, catalog: EMBED_CATALOG, lists: EMBED_IP_LISTS, loopbackStandIn: LOOPBACK_STAND_IN });
  configs = { fetch: config('fetch'), hono: config('hono') };
});
afterAll(() => srv?.stop());
afterEach(killLeftovers);

/** Sends a verified Googlebot and a spoofed GPTBot to `url` (an app of `framework`); checks the answers and the visits stored. */
async function checkSite(url: string, runtime: RegExp, framework: Framework): Promise<void> {
  const before = (await srv.store.timeline({ projectId, limit: 1000 })).length;
  const google = await fetch(`${url}/page?q=1`, { headers: { 'user-agent': GOOGLEBOT_UA, cookie: 'session=secret' } });
  expect(google.status).toBe(200);
  const body = (await google.json()) as { result: string; clientIp: string; runtime: string; framework: string };
  expect(body).toMatchObject({ result: 'verified', clientIp: '127.0.0.1', framework });
  expect(body.runtime).toMatch(runtime);
  const spoofed = await fetch(`${url}/page`, { headers: { 'user-agent': GPTBOT_UA } });
  expect(spoofed.status).toBe(403);
  await spoofed.text();

  const visits = (await visitsArriving(srv.store, projectId, before + 2)).slice(0, 2);
  const byAgent = Object.fromEntries(visits.map((v) => [v.agent_id, v]));
  expect(byAgent['googlebot']).toMatchObject({ request_path: '/page?q=1', response_status_code: 200 });
  expect(byAgent['googlebot']!.request_headers['cookie']).toBeUndefined();
  expect(byAgent['gptbot']).toMatchObject({ request_path: '/page', response_status_code: 403, is_blocked: true, decision: { rule: 'deny-verification-failed', action: 'deny' } });
}

const described = { fetch: 'the fetch middleware', hono: 'the Hono middleware' } as const;

describe.each(FRAMEWORKS)('%s under workerd (Miniflare)', async (framework) => {
  const miniflare = await loadMiniflare();
  it.runIf(miniflare !== undefined)(`${described[framework]}: verifies by CF-Connecting-IP, answers the policy and delivers visits with ctx.waitUntil`, async () => {
    const mf = new miniflare!.Miniflare({
      modules: true,
      script: await bundleWorker('test/embed/runtimes/worker.js'),
      compatibilityDate: '2024-09-23',
      bindings: { AGENTWARDEN_TEST_CONFIG: configs[framework] },
    });
    try {
      const url = await mf.ready;
      await checkSite(url.origin, /^workerd Cloudflare-Workers$/, framework);
    } finally {
      await mf.dispose();
    }
  }, 60_000);
});

describe.each(
  FRAMEWORKS.flatMap((framework) =>
    (
      [
        ['deno', ['run', '--no-lock', '--allow-net=127.0.0.1', '--allow-env=AGENTWARDEN_TEST_CONFIG', '--allow-read', 'test/embed/runtimes/deno.js'], /^deno \d/],
        ['bun', ['test/embed/runtimes/bun.js'], /^bun \d/],
      ] as const
    ).map(([name, args, runtime]) => [framework, name, args, runtime] as const),
  ),
)('%s under %s', (framework, name, args, runtime) => {
  const binary = runtimeBinary(name);
  it.runIf(binary !== undefined)(`${described[framework]}: verifies by the ${name} server's client address, answers the policy and delivers visits`, async () => {
    const site = await startSite(binary!, args, { AGENTWARDEN_TEST_CONFIG: configs[framework] });
    await checkSite(site.url, runtime, framework);
    await site.stop('SIGKILL');
  }, 60_000);
});
