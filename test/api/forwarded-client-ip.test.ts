// The visitor's address in what a site forwards (visits, the WordPress plugin's log, identification
// items), found by a verification audit: the WordPress plugin records the socket address it saw as
// Remote-Addr (PHP's REMOTE_ADDR, which no client can set) and forwards the visitor's own
// CF-Connecting-IP unchanged, so a GPTBot spoofer that wrote an OpenAI address there was stored
// as verified. Remote-Addr is now the peer, as a live request's socket is.
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
  const call = async (path: string, body: string | Uint8Array, headers: Record<string, string>) => {
    const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
    const response = await handler({ method: 'POST', path, headers: { authorization: `Bearer ${token}`, ...headers }, body: bytes });
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
  return { wordpress, verify, stored };
}

describe('the client address of a forwarded request', () => {
  it("judges a WordPress visit by the plugin's Remote-Addr when the visitor reached the site directly, whatever CF-Connecting-IP it wrote", async () => {
    const { wordpress, stored } = await setup();
    expect((await wordpress({ 'Remote-Addr': '198.51.100.7', 'CF-Connecting-IP': GPTBOT_ADDRESS, 'True-Client-IP': GPTBOT_ADDRESS })).status).toBe(202);
    expect(await stored()).toMatchObject({ agent_id: 'gptbot', result: 'verification_failed', client_ip: '198.51.100.7', client_ip_header: 'remote-addr' });
  });

  it("believes CF-Connecting-IP when Remote-Addr is Cloudflare's proxy, and X-Forwarded-For when it is the site's own private one", async () => {
    const { wordpress, stored } = await setup();
    await wordpress({ 'Remote-Addr': '172.64.0.1', 'CF-Connecting-IP': GPTBOT_ADDRESS });
    expect(await stored()).toMatchObject({ result: 'verified', client_ip: GPTBOT_ADDRESS, client_ip_header: 'cf-connecting-ip' });
    await wordpress({ 'Remote-Addr': '10.0.0.2', 'X-Forwarded-For': GPTBOT_ADDRESS });
    expect(await stored()).toMatchObject({ result: 'verified', client_ip: GPTBOT_ADDRESS, client_ip_header: 'x-forwarded-for' });
  });

  it('applies the same rule to identification items', async () => {
    const { verify } = await setup();
    expect((await verify({ 'remote-addr': '198.51.100.7', 'cf-connecting-ip': GPTBOT_ADDRESS })).json).toMatchObject({ result: 'verification_failed' });
    expect((await verify({ 'remote-addr': '104.16.0.1', 'cf-connecting-ip': GPTBOT_ADDRESS })).json).toMatchObject({ result: 'verified' });
  });
});
