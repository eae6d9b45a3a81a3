// The visitor's address in what a site forwards, found by a verification audit: the WordPress
// plugin records the socket address it saw as Remote-Addr (PHP's REMOTE_ADDR, which no client can
// set) and forwards the visitor's own CF-Connecting-IP unchanged, so a GPTBot spoofer that wrote
// an OpenAI address there was stored as verified. In the plugin's log Remote-Addr is now the peer,
// as a live request's socket is; from other integrations, which forward every header the visitor
// sent, it stays a header like any other (a review found the first fix applied it to them too).
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createApiHandler, createEngine, createMemoryProjectStore, createMemoryVisitStore } from '../../src/index.js';
import { createNodeVerifiers } from '../../src/adapters/node/index.js';
import { GPTBOT_UA } from '../server/helpers.js';

// In OpenAI's published GPTBot list (data/ip-ranges/openai-gptbot.json).
const GPTBOT_ADDRESS = '132.196.86.0';

async function setup() {
  const projects = createMemoryProjectStore();
  const { token, id: projectId } = await projects.createProject('blog');
  const visits = createMemoryVisitStore();
  const engine = createEngine({ verifiers: createNodeVerifiers({ methods: ['ip-ranges'] }) });
  const handler = createApiHandler({ engine, projects, visits, rateLimit: false });
  const call = async (path: string, body: string | Uint8Array, headers: Record<string, string>, method = 'POST') => {
    const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
    const response = await handler({ method, path, headers: { authorization: `Bearer ${token}`, ...headers }, body: bytes });
    return { status: response.status, json: JSON.parse(response.body as string) as any };
  };
  const wordpress = (requestHeaders: Record<string, string>) =>
    call(
      '/logs/wordpress',
      gzipSync(`${JSON.stringify({ request_path: '/post/', request_method: 'GET', request_headers: { 'User-Agent': GPTBOT_UA, ...requestHeaders }, created: new Date().toISOString() })}\n`),
      { 'content-type': 'text/plain', 'content-encoding': 'gzip' },
    );
  const verify = (requestHeaders: Record<string, string>) => call('/agent-verifications', JSON.stringify({ request_headers: { 'user-agent': GPTBOT_UA, ...requestHeaders } }), { 'content-type': 'application/json' });
  const stored = async () => (await visits.timeline({ projectId, limit: 10 }))[0]!;
  return { wordpress, verify, stored, call };
}

describe('the client address of a forwarded request', () => {
  it("judges a WordPress visit by the plugin's Remote-Addr when the visitor reached the site directly, whatever CF-Connecting-IP it wrote", async () => {
    const { wordpress, stored } = await setup();
    expect((await wordpress({ 'Remote-Addr': '198.51.100.7', 'CF-Connecting-IP': GPTBOT_ADDRESS, 'True-Client-IP': GPTBOT_ADDRESS })).status).toBe(202);
    expect(await stored()).toMatchObject({ agent_id: 'gptbot', result: 'verification_failed', client_ip: '198.51.100.7', client_ip_header: 'remote-addr' });
  });

  it("believes X-Forwarded-For when Remote-Addr is the site's own private proxy, and CF-Connecting-IP from Cloudflare's ranges once the project names them as its proxies", async () => {
    const { wordpress, stored, call } = await setup();
    await wordpress({ 'Remote-Addr': '10.0.0.2', 'X-Forwarded-For': GPTBOT_ADDRESS });
    expect(await stored()).toMatchObject({ result: 'verified', client_ip: GPTBOT_ADDRESS, client_ip_header: 'x-forwarded-for' });
    // A public peer is not believed by default, Cloudflare's included (anyone's Worker connects from
    // its ranges), and its edge's address is no evidence against the claim either.
    await wordpress({ 'Remote-Addr': '172.64.0.1', 'CF-Connecting-IP': GPTBOT_ADDRESS });
    expect(await stored()).toMatchObject({ result: 'not_verifiable', client_ip: '172.64.0.1', client_ip_header: 'remote-addr', verification: { checks: [{ reason: 'client-ip-is-proxy' }] } });
    // "cloudflare" stands for its published ranges.
    const saved = await call('/project-settings', JSON.stringify({ client_ip: { trusted_proxies: ['cloudflare'] } }), { 'content-type': 'application/json' }, 'PUT');
    expect(saved.status).toBe(200);
    await wordpress({ 'Remote-Addr': '172.64.0.1', 'CF-Connecting-IP': GPTBOT_ADDRESS });
    expect(await stored()).toMatchObject({ result: 'verified', client_ip: GPTBOT_ADDRESS, client_ip_header: 'cf-connecting-ip' });
  });

  it('takes Remote-Addr for a header like any other from other integrations, which forward every request header the visitor sent', async () => {
    const { verify, call, stored } = await setup();
    // The Known Agents SDKs post the request's headers as they came: a visitor behind Cloudflare wrote this Remote-Addr.
    const headers = { 'user-agent': GPTBOT_UA, 'cf-connecting-ip': '198.51.100.7', 'remote-addr': GPTBOT_ADDRESS };
    expect((await call('/visits', JSON.stringify({ request_path: '/sdk', request_method: 'GET', request_headers: headers }), { 'content-type': 'application/json' })).status).toBe(202);
    expect(await stored()).toMatchObject({ result: 'verification_failed', client_ip: '198.51.100.7', client_ip_header: 'cf-connecting-ip' });
    expect((await verify({ 'cf-connecting-ip': '198.51.100.7', 'remote-addr': GPTBOT_ADDRESS })).json).toMatchObject({ result: 'verification_failed' });
  });
});
