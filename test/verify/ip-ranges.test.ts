// ip-ranges verifier: address parsing, JAFAR list validation, outcomes, and the engine wiring.
import { describe, expect, it } from 'vitest';
import { createCatalog, createEngine, ipRangeVerifier, parseIpRangeList, type Agent, type VerificationRequest } from '../../src/index.js';
import { loadIpRangeLists } from '../../src/adapters/node/index.js';
import { formatIpAddress, normalizeIpAddress, parseIpAddress } from '../../src/verify/ip-ranges/ip-address.js';
import { compilePrefixSet, parseCidr, type CidrPrefix } from '../../src/verify/ip-ranges/prefix-set.js';

const context = { now: () => 0 };
const jafar = (...prefixes: object[]) => ({ creationTime: '2026-08-21T14:45:42.000000', prefixes });

function agent(id: string, fields: Partial<Agent> = {}): Agent {
  return {
    id,
    name: id,
    type: 'Search Engine Crawler',
    operator: 'Example',
    url: 'https://example.com/bot',
    match: { tokens: [id] },
    robots_tokens: [id],
    ...fields,
  };
}

const request = (clientIp?: string): VerificationRequest => ({ headers: new Map(), clientIp });

describe('IP address parsing', () => {
  it.each([
    ['66.249.66.1', '66.249.66.1'],
    ['0.0.0.0', '0.0.0.0'],
    ['255.255.255.255', '255.255.255.255'],
    ['::ffff:66.249.66.1', '66.249.66.1'],
    ['::FFFF:4206:4201', '66.6.66.1'],
    ['2001:4860:4801:10::1', '2001:4860:4801:10::1'],
    ['2001:4860:4801:0010:0000:0000:0000:0001', '2001:4860:4801:10::1'],
    ['2001:DB8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['::', '::'],
    ['::1', '::1'],
    ['1::', '1::'],
    ['64:ff9b::1.2.3.4', '64:ff9b::102:304'],
    ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
  ])('%s normalises to %s', (input, expected) => {
    expect(normalizeIpAddress(input)).toBe(expected);
  });

  it.each(['', '1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', '1.2.3.04', '1..2.3', ' 1.2.3.4', '1.2.3.4 ', 'a.b.c.d', '1:2:3:4:5:6:7:8:9', '1::2::3', ':1', '1:', '12345::1', '::ffff:1.2.3', 'fe80::1%eth0', '[::1]', 'gggg::1', '1:2:3:4:5:6:7:1.2.3.4'])(
    'rejects %j',
    (input) => {
      expect(parseIpAddress(input)).toBeUndefined();
    },
  );

  it('parses IPv4 to one uint32 and IPv6 to four words', () => {
    expect(parseIpAddress('255.255.255.254')).toEqual({ family: 4, value: 0xfffffffe });
    expect(parseIpAddress('ffff:fffe::8000:1')).toEqual({ family: 6, words: [0xfffffffe, 0, 0, 0x80000001] });
    expect(formatIpAddress({ family: 6, words: [0, 0, 1, 0] })).toBe('::1:0:0');
  });
});

describe('CIDR and JAFAR list parsing', () => {
  it('accepts network prefixes and folds IPv4-mapped ones to IPv4', () => {
    expect(parseCidr('66.249.64.0/19')).toEqual({ address: { family: 4, value: 0x42f94000 }, length: 19 });
    expect(parseCidr('::ffff:66.249.64.0/115')).toEqual({ address: { family: 4, value: 0x42f94000 }, length: 19 });
    expect(parseCidr('0.0.0.0/0')).toMatchObject({ length: 0 });
    expect(parseCidr('::/0')).toMatchObject({ length: 0 });
    expect(parseCidr('::ffff:0:0/88')).toBe('host-bits-set');
  });

  it.each([
    ['66.249.64.1/19', 'host-bits-set'],
    ['66.249.64.0/33', 'bad-length'],
    ['66.249.64.0/019', 'bad-length'],
    ['66.249.64.0', 'not-a-cidr'],
    ['66.249.64.0/1/2', 'not-a-cidr'],
    ['66.249.640.0/24', 'bad-address'],
    ['2001:db8::/129', 'bad-length'],
    ['2001:db8::1/64', 'host-bits-set'],
  ])('rejects %s (%s)', (cidr, problem) => {
    expect(parseCidr(cidr)).toBe(problem);
  });

  it('skips entries with neither or both keys and ignores unknown fields', () => {
    const list = parseIpRangeList(
      {
        synctoken: '1',
        notes: 'x',
        creationTime: '2026-08-04T12:40:20Z',
        prefixes: [{ ipv4Prefix: '1.2.3.0/24', services: ['Examplebot'] }, {}, { ipv4Prefix: '5.0.0.0/8', ipv6Prefix: '2001:db8::/32' }, { other: 1 }, null, { ipv6Prefix: '2001:db8::/32' }],
      },
      'example.json',
    );
    expect(list).toMatchObject({ creationTime: '2026-08-04T12:40:20Z', count4: 1, count6: 1 });
    expect(list.prefixes).toHaveLength(2);
  });

  it('names the file and prefix of an invalid CIDR', () => {
    expect(() => parseIpRangeList(jafar({ ipv4Prefix: '1.2.3.0/24' }, { ipv4Prefix: '10.0.0.1/8' }), 'bad.json')).toThrow(
      new RangeError('IP list "bad.json": ipv4Prefix "10.0.0.1/8" is not a valid CIDR (host bits are set)'),
    );
    expect(() => parseIpRangeList(jafar({ ipv6Prefix: '1.2.3.0/24' }), 'mixed.json')).toThrow(/mixed\.json.*ipv6Prefix "1\.2\.3\.0\/24".*family/);
    expect(() => parseIpRangeList(jafar({ ipv4Prefix: 42 }), 'num.json')).toThrow(RangeError);
    expect(() => parseIpRangeList([], 'array.json')).toThrow(TypeError);
    expect(() => parseIpRangeList({ creationTime: 'x' }, 'noprefixes.json')).toThrow(/noprefixes\.json.*"prefixes" must be an array/);
  });

  it('reads every bundled list, with the counts recorded in SOURCES.md', () => {
    const lists = loadIpRangeLists();
    expect(Object.keys(lists)).toHaveLength(18);
    const google = parseIpRangeList(lists['google-common-crawlers.json'], 'google-common-crawlers.json');
    expect([google.count4, google.count6]).toEqual([169, 146]);
    const bing = parseIpRangeList(lists['bing-bingbot.json'], 'bing-bingbot.json');
    expect([bing.count4, bing.count6]).toEqual([28, 0]);
  });
});

describe('ipRangeVerifier', () => {
  const lists = {
    'crawler.json': jafar({ ipv4Prefix: '66.249.64.0/27' }, { ipv6Prefix: '2001:4860:4801:10::/64' }, { ipv4Prefix: '66.249.64.0/28' }),
    'fetcher.json': jafar({ ipv4Prefix: '192.0.2.0/24' }),
  };
  const crawler = agent('crawler', { ip_ranges: ['crawler.json'] });
  const fetcher = agent('fetcher', { ip_ranges: ['fetcher.json'] });

  it('passes addresses inside the list, IPv4-mapped included, and fails those outside', () => {
    const verifier = ipRangeVerifier({ lists });
    const verdict = (ip: string) => verifier.verify(crawler, request(ip), context);
    for (const ip of ['66.249.64.0', '66.249.64.31', '::ffff:66.249.64.5', '2001:4860:4801:10::1', '2001:4860:4801:10:ffff:ffff:ffff:ffff']) {
      expect(verdict(ip), ip).toEqual({ method: 'ip-ranges', outcome: 'pass', reason: 'ip-in-range' });
    }
    for (const ip of ['66.249.64.32', '66.249.63.255', '2001:4860:4801:11::', '2001:4860:4801:f::ffff', '192.0.2.1']) {
      expect(verdict(ip), ip).toEqual({ method: 'ip-ranges', outcome: 'fail', reason: 'ip-not-in-range' });
    }
  });

  it("finds no evidence in a CDN edge's address (Cloudflare's ranges): a site behind Cloudflare that does not name it as its proxy sees only the edge, and a genuine crawler is not branded a spoofer for it", () => {
    const verifier = ipRangeVerifier({ lists });
    for (const ip of ['104.16.0.1', '172.64.0.1', '2606:4700::1', '::ffff:162.158.1.1']) {
      expect(verifier.verify(crawler, request(ip), context), ip).toEqual({ method: 'ip-ranges', outcome: 'inconclusive', reason: 'client-ip-is-proxy' });
    }
    // An agent whose own list holds the address passes all the same.
    const onCloudflare = ipRangeVerifier({ lists: { 'edge.json': jafar({ ipv4Prefix: '104.16.0.0/24' }) } });
    expect(onCloudflare.verify(agent('edge-bot', { ip_ranges: ['edge.json'] }), request('104.16.0.1'), context)).toMatchObject({ outcome: 'pass' });
  });

  it('matches IPv4 addresses against IPv6 prefixes covering ::ffff:0:0/96 (lists refuse them; trusted-proxy rules do not)', () => {
    const v4 = parseIpAddress('192.0.2.1')!;
    expect(compilePrefixSet([parseCidr('::ff00:0:0/88') as CidrPrefix]).has(v4)).toBe(true);
    expect(compilePrefixSet([parseCidr('::/0') as CidrPrefix]).has(v4)).toBe(true);
  });

  it('is inconclusive without a usable client address', () => {
    const verifier = ipRangeVerifier({ lists });
    expect(verifier.verify(crawler, request(undefined), context)).toMatchObject({ outcome: 'inconclusive', reason: 'client-ip-missing' });
    expect(verifier.verify(crawler, request('not-an-ip'), context)).toMatchObject({ outcome: 'inconclusive', reason: 'client-ip-invalid' });
  });

  it('applies only to agents naming a loaded list', () => {
    const verifier = ipRangeVerifier({ lists });
    expect(verifier.appliesTo(crawler, request('1.2.3.4'))).toBe(true);
    expect(verifier.appliesTo(agent('none'), request('1.2.3.4'))).toBe(false);
    expect(verifier.appliesTo(agent('unknown', { ip_ranges: ['missing.json'] }), request('1.2.3.4'))).toBe(false);
  });

  it('checks every list of an agent, and a miss is only inconclusive when one of them is not loaded', () => {
    const verifier = ipRangeVerifier({ lists });
    const both = agent('both', { ip_ranges: ['crawler.json', 'fetcher.json'] });
    expect(verifier.verify(both, request('192.0.2.9'), context)).toMatchObject({ outcome: 'pass' });
    expect(verifier.verify(both, request('198.51.100.1'), context)).toMatchObject({ outcome: 'fail' });
    const partial = agent('partial', { ip_ranges: ['crawler.json', 'missing.json'] });
    expect(verifier.verify(partial, request('198.51.100.1'), context)).toEqual({ method: 'ip-ranges', outcome: 'inconclusive', reason: 'ip-not-in-range' });
  });

  it('makes misses inconclusive for lists not marked authoritative', () => {
    const some = ipRangeVerifier({ lists, authoritative: ['crawler.json'] });
    expect(some.verify(crawler, request('198.51.100.1'), context)).toMatchObject({ outcome: 'fail', reason: 'ip-not-in-range' });
    expect(some.verify(fetcher, request('198.51.100.1'), context)).toMatchObject({ outcome: 'inconclusive', reason: 'ip-not-in-range' });
    expect(some.verify(fetcher, request('192.0.2.1'), context)).toMatchObject({ outcome: 'pass', reason: 'ip-in-range' });
    const none = ipRangeVerifier({ lists, authoritative: false });
    expect(none.verify(crawler, request('198.51.100.1'), context)).toMatchObject({ outcome: 'inconclusive' });
  });

  it('rejects bad configuration at creation, naming it', () => {
    expect(() => ipRangeVerifier({ lists: { 'bad.json': jafar({ ipv4Prefix: '1.2.3.4/8' }) } })).toThrow(/bad\.json.*1\.2\.3\.4\/8/);
    expect(() => ipRangeVerifier({ lists: [] as never })).toThrow(TypeError);
    expect(() => ipRangeVerifier({ lists, authoritative: ['nope.json'] })).toThrow(new RangeError('authoritative names a list that is not loaded: "nope.json"'));
    expect(() => ipRangeVerifier({ lists, authoritative: 'yes' as never })).toThrow(TypeError);
    expect(() => ipRangeVerifier(undefined as never)).toThrow(TypeError);
  });

  it('accepts a Map of lists', () => {
    const verifier = ipRangeVerifier({ lists: new Map(Object.entries(lists)) });
    expect(verifier.verify(fetcher, request('192.0.2.200'), context)).toMatchObject({ outcome: 'pass' });
  });
});

describe('ipRangeVerifier over the bundled lists', () => {
  const verifier = ipRangeVerifier({ lists: loadIpRangeLists() });
  const googlebot = agent('googlebot', { ip_ranges: ['google-common-crawlers.json'] });
  const gptbot = agent('gptbot', { ip_ranges: ['openai-gptbot.json'] });

  it('knows Googlebot and GPTBot addresses from the published lists', () => {
    for (const ip of ['66.249.66.1', '66.249.79.255', '::ffff:66.249.66.1', '2001:4860:4801:10::1']) {
      expect(verifier.verify(googlebot, request(ip), context), ip).toMatchObject({ outcome: 'pass' });
    }
    expect(verifier.verify(googlebot, request('203.0.113.7'), context)).toMatchObject({ outcome: 'fail' });
    expect(verifier.verify(gptbot, request('66.249.66.1'), context)).toMatchObject({ outcome: 'fail' });
  });
});

describe('engine with the ip-ranges verifier', () => {
  const catalog = createCatalog({
    version: 1,
    agents: [agent('examplebot', { match: { tokens: ['Examplebot'] }, robots_tokens: ['Examplebot'], ip_ranges: ['examplebot.json'] })],
  });
  const engine = createEngine({ catalog, verifiers: [ipRangeVerifier({ lists: { 'examplebot.json': jafar({ ipv4Prefix: '192.0.2.0/24' }, { ipv6Prefix: '2001:db8::/32' }) } })] });
  const ua = 'Mozilla/5.0 (compatible; Examplebot/1.0)';

  it('verifies with the default client-IP rule (rightmost X-Forwarded-For hop)', async () => {
    const result = await engine.verify({ request_headers: { 'User-Agent': ua, 'X-Forwarded-For': '203.0.113.1, 192.0.2.10' } });
    expect(result).toMatchObject({ result: 'verified', agent_id: 'examplebot', verification: { method: 'ip-ranges', checks: [{ method: 'ip-ranges', outcome: 'pass', reason: 'ip-in-range' }] } });
  });

  it('fails a spoofed address even when the client forges the leftmost hop', async () => {
    const result = await engine.verify({ request_headers: { 'User-Agent': ua, 'X-Forwarded-For': '192.0.2.10, 203.0.113.1' } });
    expect(result).toMatchObject({ result: 'verification_failed', verification: { checks: [{ outcome: 'fail', reason: 'ip-not-in-range' }] } });
  });

  it('reads the Forwarded header and reports a missing address as not verifiable', async () => {
    const viaForwarded = await engine.verify({ request_headers: { 'User-Agent': ua, Forwarded: 'for="[2001:db8::5]:4711";proto=https' } });
    expect(viaForwarded).toMatchObject({ result: 'verified' });
    const none = await engine.verify({ request_headers: { 'User-Agent': ua } });
    expect(none).toMatchObject({ result: 'not_verifiable', verification: { method: null, checks: [{ outcome: 'inconclusive', reason: 'client-ip-missing' }] } });
  });

  it('uses a custom client-IP rule when given', async () => {
    const custom = createEngine({ catalog, verifiers: [ipRangeVerifier({ lists: { 'examplebot.json': jafar({ ipv4Prefix: '192.0.2.0/24' }) } })], clientIp: () => '192.0.2.77' });
    expect(await custom.verify({ request_headers: { 'User-Agent': ua } })).toMatchObject({ result: 'verified' });
  });
});

describe('an agent that also documents reverse DNS', () => {
  const lists = { 'g.json': jafar({ ipv4Prefix: '66.249.64.0/19' }) };
  const googlebot = agent('Googlebot', { ip_ranges: ['g.json'], reverse_dns: ['googlebot.com'] });
  const gptbot = agent('GPTBot', { ip_ranges: ['g.json'] });

  it('a miss is inconclusive, so reverse DNS decides instead of a possibly stale list', async () => {
    const verifier = ipRangeVerifier({ lists });
    expect(await verifier.verify(googlebot, request('203.0.113.9'), context)).toEqual({ method: 'ip-ranges', outcome: 'inconclusive', reason: 'ip-not-in-range' });
    expect(await verifier.verify(googlebot, request('66.249.66.1'), context)).toEqual({ method: 'ip-ranges', outcome: 'pass', reason: 'ip-in-range' });
    expect(await verifier.verify(gptbot, request('203.0.113.9'), context)).toEqual({ method: 'ip-ranges', outcome: 'fail', reason: 'ip-not-in-range' });
  });

  it('in a chain, the reverse-DNS verifier after it gets the final word on a miss', async () => {
    const catalog = createCatalog({ version: 1, agents: [{ ...googlebot, id: 'googlebot' }] });
    const dns = { name: 'reverse-dns', appliesTo: () => true, verify: () => ({ method: 'reverse-dns', outcome: 'pass' as const, reason: 'ptr-and-forward-match' }) };
    const engine = createEngine({ catalog, verifiers: [ipRangeVerifier({ lists }), dns] });
    const result = await engine.verify({ request_headers: { 'user-agent': 'Googlebot/2.1', 'x-forwarded-for': '203.0.113.9' } });
    expect(result.result).toBe('verified');
    expect(result.verification.checks.map((c) => `${c.method}:${c.outcome}`)).toEqual(['ip-ranges:inconclusive', 'reverse-dns:pass']);
  });
});

describe('outdatedIpRangeLists', () => {
  it('names the lists published more than the given days ago, reading creationTime with or without a zone; a list without one counts as old', async () => {
    const { outdatedIpRangeLists } = await import('../../src/adapters/node/ip-ranges-loader.js');
    const now = Date.parse('2026-11-26T00:00:00Z');
    const lists = {
      'fresh.json': { creationTime: '2026-11-20T10:00:00.000000', prefixes: [] },
      'zoned.json': { creationTime: '2026-11-25T10:00:00+02:00', prefixes: [] },
      'old.json': { creationTime: '2025-10-30T11:00:00.000000', prefixes: [] },
      'undated.json': { prefixes: [] },
    };
    expect(outdatedIpRangeLists(lists, now, 30)).toEqual([
      { name: 'old.json', created: '2025-10-30T11:00:00.000000' },
      { name: 'undated.json', created: null },
    ]);
  });
});
