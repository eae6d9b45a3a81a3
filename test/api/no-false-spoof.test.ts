// Issue 15 through the REST API: a site's own proxies and input the caller did not send are never
// evidence of spoofing. Each case goes through POST /agent-identifications, POST
// /agent-verifications and a visit stored by POST /visits and read back with GET /visits, over
// the operators' real published lists; a property test covers any chain of forwarding hops.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createApiHandler,
  createEngine,
  createMemoryProjectStore,
  createMemoryVisitStore,
  ipRangeVerifier,
  reverseDnsVerifier,
  webBotAuthVerifier,
  type CatalogDocument,
  type DnsResolver,
} from '../../src/index.js';
import { apiCaller } from '../helpers/api-call.js';
import { claudebotAgent, googlebotAgent, gptbotAgent, GOOGLEBOT_UA, GPTBOT_UA } from '../helpers/agents.js';
import { component, generateKey, signRequest } from '../verify/web-bot-auth/support.js';

const NOW_SECONDS = 1_800_000_000;
const key = generateKey();

const list = (name: string) => JSON.parse(readFileSync(new URL(`../../data/ip-ranges/${name}`, import.meta.url), 'utf8')) as { prefixes: { ipv4Prefix?: string }[] };
const LISTS = { 'openai-gptbot.json': list('openai-gptbot.json'), 'anthropic-bots.json': list('anthropic-bots.json'), 'google-common-crawlers.json': list('google-common-crawlers.json') };

const CATALOG: CatalogDocument = {
  version: 1,
  agents: [
    { ...gptbotAgent, ip_ranges: ['openai-gptbot.json'] },
    { ...claudebotAgent, ip_ranges: ['anthropic-bots.json'] },
    { ...googlebotAgent, ip_ranges: ['google-common-crawlers.json'] },
    { id: 'signbot', name: 'SignBot', type: 'AI Agent', operator: 'Test', url: 'https://agent.test/', match: { tokens: ['SignBot'] }, robots_tokens: ['SignBot'], signature_agents: ['https://agent.test'] },
  ],
};

const GPTBOT = GPTBOT_UA;
const CLAUDEBOT = 'Mozilla/5.0 (compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';
const GOOGLEBOT = GOOGLEBOT_UA;
const SIGNBOT = 'SignBot/1.0';

/** The API over the real lists, a pinned Web Bot Auth key and a resolver that records what it was asked. */
async function setup() {
  const asked: string[] = [];
  // Says "not Google's" for every address: a lookup of a private address would be a false failure.
  const resolver: DnsResolver = {
    reverse: async (ip) => (asked.push(ip), ['host.internal.example']),
    resolve4: async () => [],
    resolve6: async () => [],
  };
  const clock = { now: () => NOW_SECONDS * 1000 };
  const engine = createEngine({
    catalog: CATALOG,
    clock,
    verifiers: [
      webBotAuthVerifier({ keys: [{ jwk: key.publicJwk, directory: 'https://agent.test' }] }),
      ipRangeVerifier({ lists: LISTS }),
      reverseDnsVerifier({ resolver, cache: false }),
    ],
  });
  const projects = createMemoryProjectStore();
  const { token } = await projects.createProject('site');
  const handle = createApiHandler({ engine, projects, visits: createMemoryVisitStore(), rateLimit: false, clock });
  const call = apiCaller(handle, token);
  return { call, asked };
}

interface Item {
  readonly request_headers: Record<string, string>;
  readonly request_method?: string;
  readonly request_path?: string;
}

/** What the three REST paths say of one request: identification, verification, and the stored visit. */
async function judge(api: Awaited<ReturnType<typeof setup>>, item: Item) {
  const identification = await api.call('POST', '/agent-identifications', item);
  const verification = await api.call('POST', '/agent-verifications', item);
  const stored = await api.call('POST', '/visits', { request_method: 'GET', request_path: '/', ...item });
  expect(stored.json).toEqual({ accepted: 1, rejected: [] });
  const visit = (await api.call('GET', '/visits?limit=1')).json.visits[0];
  return { identification: identification.json, verification: verification.json, visit };
}

type Case = readonly [name: string, item: Item, result: string, reason: string | null, clientIp: string | null];

const xff = (ua: string, value: string): Item => ({ request_headers: { 'user-agent': ua, 'x-forwarded-for': value } });

const IP_CASES: readonly Case[] = [
  ['GPTBot behind the site’s internal proxy', xff(GPTBOT, '132.196.86.7, 10.0.0.1'), 'verified', 'ip-in-range', '132.196.86.7'],
  ['GPTBot behind two private hops', xff(GPTBOT, '132.196.86.7, 172.16.4.2, 192.168.1.10'), 'verified', 'ip-in-range', '132.196.86.7'],
  ['ClaudeBot behind a CGNAT and a loopback hop', xff(CLAUDEBOT, '216.73.216.5, 100.64.3.9, 127.0.0.1'), 'verified', 'ip-in-range', '216.73.216.5'],
  ['ClaudeBot behind a unique-local IPv6 proxy', xff(CLAUDEBOT, '216.73.216.5, fd12:3456::1'), 'verified', 'ip-in-range', '216.73.216.5'],
  ['GPTBot through RFC 7239 Forwarded with a private hop', { request_headers: { 'user-agent': GPTBOT, forwarded: 'for=132.196.86.7;proto=https, for="10.1.2.3:8080"' } }, 'verified', 'ip-in-range', '132.196.86.7'],
  ['only a private address known', xff(GPTBOT, '10.0.0.1'), 'not_verifiable', 'client-ip-not-public', '10.0.0.1'],
  ['only private hops known: the leftmost is stored', xff(GPTBOT, '192.168.0.7, 10.0.0.1'), 'not_verifiable', 'client-ip-not-public', '192.168.0.7'],
  ['only a CGNAT address known', xff(GPTBOT, '100.100.1.1'), 'not_verifiable', 'client-ip-not-public', '100.100.1.1'],
  ['only loopback known', xff(CLAUDEBOT, '127.0.0.1'), 'not_verifiable', 'client-ip-not-public', '127.0.0.1'],
  ['only IPv6 loopback known', xff(CLAUDEBOT, '::1'), 'not_verifiable', 'client-ip-not-public', '::1'],
  ['only a unique-local IPv6 address known', xff(GPTBOT, 'fd00::1'), 'not_verifiable', 'client-ip-not-public', 'fd00::1'],
  ['only a link-local address known', xff(GPTBOT, '169.254.10.1'), 'not_verifiable', 'client-ip-not-public', '169.254.10.1'],
  ['only an IPv6 link-local address known', xff(GPTBOT, 'fe80::1'), 'not_verifiable', 'client-ip-not-public', 'fe80::1'],
  ['only the unspecified address known', xff(GPTBOT, '0.0.0.0'), 'not_verifiable', 'client-ip-not-public', '0.0.0.0'],
  ['a private X-Real-IP', { request_headers: { 'user-agent': GPTBOT, 'x-real-ip': '192.168.5.5' } }, 'not_verifiable', 'client-ip-not-public', '192.168.5.5'],
  // Googlebot also documents reverse DNS: a private address is never looked up (the resolver would say "not Google's").
  ['Googlebot from a private address: neither list nor DNS judges it', xff(GOOGLEBOT, '10.9.8.7'), 'not_verifiable', 'client-ip-not-public', '10.9.8.7'],
  ['no address at all', { request_headers: { 'user-agent': GPTBOT } }, 'not_verifiable', 'client-ip-missing', null],
  // Evidence stays evidence: a public address outside the published list, documentation ranges included.
  ['GPTBot from a public address outside its list', xff(GPTBOT, '203.0.113.7'), 'verification_failed', 'ip-not-in-range', '203.0.113.7'],
  ['GPTBot whose first public hop from the right is outside its list', xff(GPTBOT, '132.196.86.7, 198.51.100.20, 10.0.0.1'), 'verification_failed', 'ip-not-in-range', '198.51.100.20'],
];

describe('no false spoof verdicts through the REST API', () => {
  it.each(IP_CASES)('%s', async (_name, item, result, reason, clientIp) => {
    const api = await setup();
    const { identification, verification, visit } = await judge(api, item);
    expect(identification.result).toBe(result);
    expect(verification.result).toBe(result);
    expect(verification.verification.checks.at(-1)?.reason ?? null).toBe(reason);
    if (result === 'not_verifiable') expect(verification.verification.checks.every((check: { outcome: string }) => check.outcome === 'inconclusive')).toBe(true);
    expect(visit).toMatchObject({ result, client_ip: clientIp });
    if (reason !== null) expect(visit.verification.checks.at(-1).reason).toBe(reason);
    expect(api.asked.filter((ip) => ip !== '203.0.113.7' && ip !== '198.51.100.20')).toEqual([]);
  });

  it('identification and verification read the address by the project\'s own rule, as its stored visits do', async () => {
    const api = await setup();
    // The site's proxy is on a public address: only the project's settings can say it is theirs.
    const item = xff(GPTBOT, '132.196.86.7, 198.51.100.9');
    expect((await judge(api, item)).verification.result).toBe('verification_failed');
    expect((await api.call('PUT', '/project-settings', { client_ip: { trusted_proxies: ['198.51.100.0/24'] } })).status).toBe(200);
    const { identification, verification, visit } = await judge(api, item);
    expect([identification.result, verification.result, visit.result]).toEqual(['verified', 'verified', 'verified']);
    expect(visit.client_ip).toBe('132.196.86.7');
  });

  it('an explicit trustedProxies still rules: a count takes the hop it names, private or not', async () => {
    const { createClientIpRule } = await import('../../src/index.js');
    const rule = createClientIpRule({ headers: ['x-forwarded-for'], trustedProxies: 0 });
    expect(rule(new Map([['x-forwarded-for', '132.196.86.7, 10.0.0.1']]))).toBe('10.0.0.1');
    const cidrs = createClientIpRule({ trustedProxies: ['198.51.100.0/24'] });
    // Only the listed proxies are walked past: a private hop is then the address.
    expect(cidrs(new Map([['x-forwarded-for', '132.196.86.7, 10.0.0.1, 198.51.100.9']]))).toBe('10.0.0.1');
  });
});

describe('Web Bot Auth input that was not sent is not evidence, through the REST API', () => {
  const signed = (components?: Parameters<typeof signRequest>[0]['components']) =>
    signRequest({ key, url: 'https://site.example/page?x=1', headers: { 'User-Agent': SIGNBOT, 'Signature-Agent': 'sig1="https://agent.test"' }, components }, NOW_SECONDS);
  const withoutHost = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'host'));
  const agent = component('signature-agent', { key: 'sig1' });

  it('a correct signature verifies on every path', async () => {
    const api = await setup();
    const { verification, visit } = await judge(api, await signed());
    expect(verification).toMatchObject({ result: 'verified', verification: { method: 'web-bot-auth' } });
    expect(visit).toMatchObject({ result: 'verified' });
  });

  it.each([
    ['no Host header', async () => ({ ...(await signed()), request_headers: withoutHost((await signed()).request_headers) }), 'authority-not-sent'],
    ['no path (the signature covers @path)', async () => ({ ...(await signed(['@authority', '@path', agent])), request_path: undefined }), 'path-not-sent'],
    ['no method (the signature covers @method)', async () => ({ ...(await signed(['@authority', '@method', agent])), request_method: undefined }), 'method-not-sent'],
  ] as const)('%s: not_verifiable, the reason names what was missing', async (_name, make, reason) => {
    const api = await setup();
    const item = await make();
    const verification = await api.call('POST', '/agent-verifications', item);
    expect(verification.json).toMatchObject({ result: 'not_verifiable', verification: { checks: [{ method: 'web-bot-auth', outcome: 'inconclusive', reason }] } });
    // Identification never sends the method or path along unless the item names them.
    const identification = await api.call('POST', '/agent-identifications', { request_headers: item.request_headers });
    expect(identification.json.result).not.toBe('verification_failed');
  });

  it('a stored visit without a Host header is not_verifiable, not spoofed', async () => {
    const api = await setup();
    const item = await signed();
    const { visit } = await judge(api, { ...item, request_headers: withoutHost(item.request_headers) });
    expect(visit).toMatchObject({ result: 'not_verifiable', verification: { checks: [{ reason: 'authority-not-sent' }] } });
  });

  it('a signature checked and not holding is verification_failed', async () => {
    const api = await setup();
    const item = await signed(['@authority', '@path', agent]);
    const { verification, visit } = await judge(api, { ...item, request_path: '/elsewhere' });
    expect(verification).toMatchObject({ result: 'verification_failed', verification: { checks: [{ reason: 'signature-invalid' }] } });
    expect(visit).toMatchObject({ result: 'verification_failed' });
  });

  it('a visit reported after its signature expired is judged at the time it arrived', async () => {
    const api = await setup();
    const item = await signRequest({ key, url: 'https://site.example/', headers: { 'User-Agent': SIGNBOT, 'Signature-Agent': 'sig1="https://agent.test"' }, params: { created: NOW_SECONDS - 3600, expires: NOW_SECONDS - 3540 } }, NOW_SECONDS);
    const late = await api.call('POST', '/visits', { ...item, created: new Date((NOW_SECONDS - 3590) * 1000).toISOString() });
    expect(late.json).toEqual({ accepted: 1, rejected: [] });
    expect((await api.call('GET', '/visits?limit=1')).json.visits[0]).toMatchObject({ result: 'verified' });
    // Sent now, the same signature is expired: evidence of a replay.
    expect((await api.call('POST', '/agent-verifications', item)).json).toMatchObject({ result: 'verification_failed', verification: { checks: [{ reason: 'signature-expired' }] } });
  });
});

// Addresses no visitor on the internet has, in the forms proxies write them.
const nonPublicHop = fc.oneof(
  fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255)).map(([a, b, c]) => `10.${a}.${b}.${c}`),
  fc.tuple(fc.integer({ min: 16, max: 31 }), fc.nat(255), fc.nat(255)).map(([a, b, c]) => `172.${a}.${b}.${c}`),
  fc.tuple(fc.nat(255), fc.nat(255)).map(([a, b]) => `192.168.${a}.${b}`),
  fc.tuple(fc.integer({ min: 64, max: 127 }), fc.nat(255), fc.nat(255)).map(([a, b, c]) => `100.${a}.${b}.${c}`),
  fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255)).map(([a, b, c]) => `127.${a}.${b}.${c}`),
  fc.tuple(fc.nat(255), fc.nat(255)).map(([a, b]) => `169.254.${a}.${b}`),
  fc.tuple(fc.integer({ min: 0xfc00, max: 0xfdff }), fc.nat(0xffff)).map(([a, b]) => `${a.toString(16)}::${b.toString(16)}`),
  fc.nat(0xffff).map((a) => `fe80::${a.toString(16)}`),
  fc.constantFrom('::1', '0.0.0.0', '::', '::ffff:10.0.0.1'),
);

// Any hop at all: public, private, garbage, `unknown`, obfuscated identifiers.
const anyHop = fc.oneof(nonPublicHop, fc.ipV4(), fc.ipV6(), fc.constantFrom('unknown', '_hidden', 'garbage', ''));

/** An address inside a random prefix of a published IPv4 list. */
function inList(name: keyof typeof LISTS) {
  const prefixes = LISTS[name].prefixes.flatMap((p) => (p.ipv4Prefix === undefined ? [] : [p.ipv4Prefix]));
  return fc.tuple(fc.constantFrom(...prefixes), fc.nat()).map(([cidr, n]) => {
    const [base, bits] = cidr.split('/') as [string, string];
    const start = base.split('.').reduce((v, part) => v * 256 + Number(part), 0);
    const size = 2 ** (32 - Number(bits));
    const v = start + (n % size);
    return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
  });
}

/** A hop as proxies write it: bare, with a port, with spaces. */
const written = (address: string, port: number | null, pad: boolean) => {
  const text = port === null ? address : address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
  return pad ? ` ${text}` : text;
};

describe('property: a first public hop inside the published ranges is never verification_failed', () => {
  it('for any chain in X-Forwarded-For or Forwarded, through POST /agent-verifications and stored visits', async () => {
    const api = await setup();
    const agent = fc.constantFrom(['openai-gptbot.json', GPTBOT] as const, ['anthropic-bots.json', CLAUDEBOT] as const);
    await fc.assert(
      fc.asyncProperty(
        agent.chain(([name, ua]) => fc.record({ ua: fc.constant(ua), client: inList(name) })),
        fc.array(anyHop, { maxLength: 3 }),
        fc.array(nonPublicHop, { maxLength: 4 }),
        fc.array(fc.option(fc.integer({ min: 1, max: 65535 }), { nil: null }), { minLength: 8, maxLength: 8 }),
        fc.boolean(),
        fc.boolean(),
        async ({ ua, client }, left, right, ports, forwarded, pad) => {
          const hops = [...left, client, ...right].map((hop, i) => written(hop, hop === '' || hop.startsWith('_') || hop === 'unknown' || hop === 'garbage' ? null : (ports[i % 8] ?? null), pad));
          const header = forwarded ? { forwarded: hops.map((hop) => `for="${hop.trim()}"`).join(', ') } : { 'x-forwarded-for': hops.join(',') };
          const item = { request_headers: { 'user-agent': ua, ...header } };
          const verification = await api.call('POST', '/agent-verifications', item);
          expect(verification.json.result).not.toBe('verification_failed');
          expect(verification.json.result).toBe('verified');
          await api.call('POST', '/visits', { request_method: 'GET', request_path: '/', ...item });
          const visit = (await api.call('GET', '/visits?limit=1')).json.visits[0];
          expect(visit).toMatchObject({ result: 'verified', client_ip: client });
        },
      ),
      { numRuns: 150 },
    );
  });
});
