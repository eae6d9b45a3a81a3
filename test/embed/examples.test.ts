// Every example app under examples/ started as its README says, against a real agentwarden server
// (and shown in the README word for word):
// a spoofed GPTBot (its Web Bot Auth signature is not one any signer makes) is refused, a GPTBot
// known only by its loopback address is served (a site's own network is no evidence either way),
// a person's browser is served, and the visits arrive with the decision. The Node examples deliver their batch when
// stopped (flushOnExit on SIGTERM); the Worker, bundled as Wrangler does and run by workerd, with
// ctx.waitUntil after each response; the Next.js one built by `next build` and served by `next start`,
// with the request's waitUntil.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/index.js';
import { startTestServer, type TestServer } from '../server/helpers.js';
import { BROWSER_UA, GOOGLEBOT_UA, GPTBOT_UA } from './fixtures.js';
import { bundleWorker, killLeftovers, loadMiniflare, packPackage, ROOT, startSite, unpackInto, visitsArriving, type RunningSite } from './runtime-helpers.js';

const NEXT = join(ROOT, 'node_modules', 'next', 'dist', 'bin', 'next');

// A web-bot-auth signature of 3 bytes where Ed25519 gives 64: evidence, found with no key fetched.
const MALFORMED_SIGNATURE = { 'signature-input': 'sig1=("@authority");created=1;expires=2;keyid="k";tag="web-bot-auth"', signature: 'sig1=:AAAA:' };

let srv: TestServer;
afterEach(killLeftovers);
beforeAll(async () => {
  srv = await startTestServer({ engine: createEngine() });
});
afterAll(() => srv?.stop());

describe('the README', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  it.each(['examples/express/server.mjs', 'examples/fastify/server.mjs', 'examples/hono/server.mjs', 'examples/worker/worker.js', 'examples/nextjs/proxy.ts', 'examples/nextjs-edge/middleware.ts'])('shows %s whole, under its name', (path) => {
    const block = `\`\`\`${path.endsWith('.ts') ? 'ts' : 'js'}\n${readFileSync(join(ROOT, path), 'utf8')}\`\`\`\n`;
    const at = readme.indexOf(block);
    expect(at, `README.md has ${path} word for word`).toBeGreaterThan(-1);
    // The paragraph just above the block names the file.
    const caption = readme.slice(readme.lastIndexOf('\n\n', at - 3) + 2, at);
    expect(caption.startsWith(`\`${path}\``), caption).toBe(true);
  });
});

describe.each(['express', 'fastify', 'hono', 'node-http'])('examples/%s', (name) => {
  it('refuses a spoofed bot, serves an unproven one and a browser, and delivers the visits when stopped', async () => {
    const { id: projectId, token } = srv.store.createProject(`${name}.example`);
    const site = await startSite(process.execPath, [`examples/${name}/server.mjs`], { AGENTWARDEN_URL: srv.url, AGENTWARDEN_TOKEN: token, PORT: '0' });
    const spoofed = await fetch(`${site.url}/`, { headers: { 'user-agent': GPTBOT_UA, ...MALFORMED_SIGNATURE } });
    expect(spoofed.status).toBe(403);
    await spoofed.text();
    const unsigned = await fetch(`${site.url}/`, { headers: { 'user-agent': GPTBOT_UA } });
    expect(await unsigned.text()).toBe('Hello! agentwarden says: not_verifiable\n');
    const person = await fetch(`${site.url}/`, { headers: { 'user-agent': BROWSER_UA } });
    expect(person.status).toBe(200);
    expect(await person.text()).toBe('Hello! agentwarden says: unknown_agent\n');
    // Nothing yet: the sink batches (30 s); stopping the app delivers the batch.
    expect(await srv.store.timeline({ projectId, limit: 10 })).toHaveLength(0);
    expect(await site.stop('SIGTERM')).toEqual({ code: null, signal: 'SIGTERM' });
    const visits = await visitsArriving(srv.store, projectId, 3);
    const bots = visits.filter((v) => v.agent_id === 'gptbot');
    expect(bots.find((v) => v.response_status_code === 403)).toMatchObject({ request_path: '/', is_blocked: true, decision: { rule: 'deny-verification-failed', action: 'deny' } });
    expect(bots.find((v) => v.response_status_code === 200)).toMatchObject({ request_path: '/', client_ip: '127.0.0.1' });
    expect(visits.find((v) => v.agent_id !== 'gptbot')).toMatchObject({ result: 'unknown_agent', response_status_code: 200 });
  }, 60_000);
});

describe('examples/worker', async () => {
  const miniflare = await loadMiniflare();
  it.runIf(miniflare !== undefined)('under workerd refuses an AI data scraper, serves /robots.txt and a browser, and delivers each visit with waitUntil', async () => {
    const { id: projectId, token } = srv.store.createProject('worker.example');
    const mf = new miniflare!.Miniflare({
      modules: true,
      script: await bundleWorker('examples/worker/worker.js'),
      compatibilityDate: '2024-09-23',
      bindings: { AGENTWARDEN_URL: srv.url, AGENTWARDEN_TOKEN: token },
    });
    try {
      const url = (await mf.ready).origin;
      const scraper = await fetch(`${url}/article`, { headers: { 'user-agent': GPTBOT_UA } });
      expect(scraper.status).toBe(403);
      await scraper.text();
      const robots = await fetch(`${url}/robots.txt`, { headers: { 'user-agent': GPTBOT_UA } });
      expect(robots.status).toBe(200);
      expect(await robots.text()).toMatch(/User-agent: GPTBot[\s\S]*Disallow: \//);
      const person = await fetch(`${url}/article`, { headers: { 'user-agent': BROWSER_UA } });
      expect(await person.text()).toBe('Hello! agentwarden says: unknown_agent\n');
      // No flush interval has passed: each visit left with its request's waitUntil.
      const visits = await visitsArriving(srv.store, projectId, 3);
      expect(visits.find((v) => v.agent_id === 'gptbot' && v.request_path === '/article')).toMatchObject({ response_status_code: 403, is_blocked: true, decision: { rule: 'deny-agent-type' } });
      expect(visits.find((v) => v.request_path === '/robots.txt')).toMatchObject({ response_status_code: 200 });
    } finally {
      await mf.dispose();
    }
  }, 60_000);
});

// Next.js 16 (a devDependency): an example in a project of its own under .tmp/ (inside this
// repository, whose lockfile marks the root Turbopack compiles from), with the packed package in
// its node_modules and examples/nextjs/app beside it, built by `next build` (its type check
// included) and served by `next start`.
function buildNextSite(example: string): string {
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  const project = mkdtempSync(join(ROOT, '.tmp', `${example}-`));
  unpackInto(packPackage(project).tarball, project);
  cpSync(join(ROOT, 'examples', 'nextjs', 'app'), join(project, 'app'), { recursive: true });
  cpSync(join(ROOT, 'examples', example), project, { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'site', private: true }));
  const built = spawnSync(process.execPath, [NEXT, 'build'], { cwd: project, env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' }, encoding: 'utf8', timeout: 240_000 });
  expect(built.status, `next build:\n${built.stdout}\n${built.stderr}`).toBe(0);
  return project;
}

/** The example built once for the describe block this is called in, removed after it: its project directory. */
function nextSiteFor(example: string): () => string {
  let project: string | undefined;
  beforeAll(() => {
    project = buildNextSite(example);
  }, 300_000);
  afterAll(() => {
    if (project !== undefined) rmSync(project, { recursive: true, force: true });
  });
  return () => project!;
}

function startNextSite(project: string, token: string): Promise<RunningSite> {
  return startSite(process.execPath, [NEXT, 'start', '-p', '0', '-H', '127.0.0.1'], { AGENTWARDEN_URL: srv.url, AGENTWARDEN_TOKEN: token, NEXT_TELEMETRY_DISABLED: '1' }, { cwd: project, listening: /Local:\s+(http:\/\/[^\s/]+)/ });
}

describe('examples/nextjs', () => {
  const project = nextSiteFor('nextjs');

  it('refuses a spoofed bot and an AI data scraper, serves an unproven bot, a browser and /robots.txt, and delivers each visit with waitUntil', async () => {
    const { id: projectId, token } = srv.store.createProject('nextjs.example');
    const site = await startNextSite(project(), token);
    try {
      // Next.js gives the proxy no client address: Googlebot cannot be checked against its ranges.
      const unproven = await fetch(`${site.url}/`, { headers: { 'user-agent': GOOGLEBOT_UA } });
      expect(await unproven.text()).toBe('Hello! agentwarden says: not_verifiable\n');
      // The page's header is the proxy's, whatever the client sends under that name.
      const forged = await fetch(`${site.url}/`, { headers: { 'user-agent': GOOGLEBOT_UA, 'x-agentwarden-result': 'verified' } });
      expect(await forged.text()).toBe('Hello! agentwarden says: not_verifiable\n');
      const spoofed = await fetch(`${site.url}/`, { headers: { 'user-agent': GOOGLEBOT_UA, ...MALFORMED_SIGNATURE } });
      expect(spoofed.status).toBe(403);
      await spoofed.text();
      const scraper = await fetch(`${site.url}/article`, { headers: { 'user-agent': GPTBOT_UA } });
      expect(scraper.status).toBe(403);
      await scraper.text();
      const robots = await fetch(`${site.url}/robots.txt`, { headers: { 'user-agent': GPTBOT_UA } });
      expect(await robots.text()).toMatch(/User-agent: GPTBot\nDisallow: \//);
      const person = await fetch(`${site.url}/`, { headers: { 'user-agent': BROWSER_UA } });
      expect(await person.text()).toBe('Hello! agentwarden says: unknown_agent\n');
      // No flush interval has passed and the site still runs: each visit left with its request's waitUntil.
      const visits = await visitsArriving(srv.store, projectId, 6);
      expect(visits.find((v) => v.request_path === '/article')).toMatchObject({ agent_id: 'gptbot', response_status_code: 403, is_blocked: true, decision: { rule: 'deny-agent-type' } });
      expect(visits.find((v) => v.is_blocked && v.agent_id === 'googlebot')).toMatchObject({ response_status_code: 403, decision: { rule: 'deny-verification-failed' } });
      expect(visits.find((v) => v.request_path === '/robots.txt')).toMatchObject({ response_status_code: 200 });
      // A request the proxy hands on is answered by the page later: no status of the proxy's own.
      const handedOn = visits.filter((v) => v.request_path === '/' && !v.is_blocked);
      expect(handedOn).toHaveLength(3);
      for (const visit of handedOn) expect(visit.response_status_code).toBeUndefined();
    } finally {
      await site.stop('SIGTERM');
    }
  }, 60_000);
});

// Next.js 15's place for it, middleware.ts on the edge runtime (Next.js 16 still builds it so): no
// Node APIs, so the core's verifiers with the IP lists imported as JSON through the package's
// exports, and the client address from Vercel's X-Real-IP.
describe('examples/nextjs-edge', () => {
  const project = nextSiteFor('nextjs-edge');

  it('is built for the edge runtime and verifies Googlebot and GPTBot by their published ranges, refuses spoofers and a scraper, and delivers each visit with waitUntil', async () => {
    const manifest = JSON.parse(readFileSync(join(project(), '.next', 'server', 'middleware-manifest.json'), 'utf8')) as { middleware: Record<string, { files: string[] }> };
    expect(manifest.middleware['/']!.files.every((file) => file.startsWith('server/edge/'))).toBe(true);
    const { id: projectId, token } = srv.store.createProject('nextjs-edge.example');
    const site = await startNextSite(project(), token);
    try {
      const fromGoogle = await fetch(`${site.url}/`, { headers: { 'user-agent': GOOGLEBOT_UA, 'x-real-ip': '66.249.66.1' } });
      expect(await fromGoogle.text()).toBe('Hello! agentwarden says: verified\n');
      // Outside Google's ranges, with no reverse DNS on the edge: unproven, not refuted.
      const elsewhere = await fetch(`${site.url}/`, { headers: { 'user-agent': GOOGLEBOT_UA, 'x-real-ip': '81.2.69.160' } });
      expect(await elsewhere.text()).toBe('Hello! agentwarden says: not_verifiable\n');
      const spoofed = await fetch(`${site.url}/`, { headers: { 'user-agent': GOOGLEBOT_UA, 'x-real-ip': '81.2.69.160', ...MALFORMED_SIGNATURE } });
      expect(spoofed.status).toBe(403);
      await spoofed.text();
      // GPTBot from OpenAI's published range is refused as an AI data scraper; from elsewhere, as a spoofer.
      const scraper = await fetch(`${site.url}/`, { headers: { 'user-agent': GPTBOT_UA, 'x-real-ip': '132.196.86.7' } });
      expect(scraper.status).toBe(403);
      await scraper.text();
      const spoofedScraper = await fetch(`${site.url}/`, { headers: { 'user-agent': GPTBOT_UA, 'x-real-ip': '81.2.69.161' } });
      expect(spoofedScraper.status).toBe(403);
      await spoofedScraper.text();
      const visits = await visitsArriving(srv.store, projectId, 5);
      // The address reaches the server with the visit (which verifies it again with its own chain).
      const handedOn = visits.find((v) => v.client_ip === '66.249.66.1');
      expect(handedOn?.agent_id).toBe('googlebot');
      expect(handedOn?.response_status_code).toBeUndefined();
      expect(visits.find((v) => v.client_ip === '132.196.86.7')).toMatchObject({ agent_id: 'gptbot', response_status_code: 403, decision: { rule: 'deny-agent-type' } });
      expect(visits.find((v) => v.client_ip === '81.2.69.161')).toMatchObject({ agent_id: 'gptbot', response_status_code: 403, decision: { rule: 'deny-verification-failed' } });
      expect(visits.filter((v) => v.decision?.rule === 'deny-verification-failed')).toHaveLength(2);
    } finally {
      await site.stop('SIGTERM');
    }
  }, 60_000);
});
