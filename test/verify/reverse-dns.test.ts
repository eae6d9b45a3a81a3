// reverse-dns verifier with an in-memory resolver: FCrDNS rules, error classes, deadline, caches, coalescing.
import { describe, expect, it } from 'vitest';
import { reverseDnsVerifier, type Agent, type DnsResolver, type VerificationRequest } from '../../src/index.js';
import { googlebotAgent } from '../helpers/agents.js';
import { isUnderSuffix } from '../../src/verify/reverse-dns.js';

const googlebot = googlebotAgent;

class FakeError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

type Answer = string[] | FakeError | 'hang';

function fakeResolver(table: { ptr?: Record<string, Answer>; a?: Record<string, Answer>; aaaa?: Record<string, Answer> }) {
  const calls: string[] = [];
  const answer = (kind: string, map: Record<string, Answer> | undefined, key: string): Promise<string[]> => {
    calls.push(`${kind} ${key}`);
    const value = map?.[key] ?? [];
    if (value === 'hang') return new Promise(() => {});
    return new Promise((resolve, reject) => setTimeout(() => (value instanceof Error ? reject(value) : resolve(value)), 1));
  };
  const resolver: DnsResolver = {
    reverse: (ip) => answer('PTR', table.ptr, ip),
    resolve4: (host) => answer('A', table.a, host),
    resolve6: (host) => answer('AAAA', table.aaaa, host),
  };
  return { resolver, calls };
}

const request = (clientIp?: string): VerificationRequest => ({ headers: new Map(), clientIp });
let clock = 0;
const context = { now: () => clock };

const records = {
  ptr: {
    '66.249.66.1': ['crawl-66-249-66-1.GOOGLEBOT.com.'],
    '2001:4860:4801:10::1': ['crawl-2001-4860-4801-10--1.googlebot.com'],
    '203.0.113.1': ['crawl-203-0-113-1.googlebot.com'],
    '203.0.113.2': ['evilgooglebot.com'],
    '203.0.113.3': ['googlebot.com.evil.example'],
    '203.0.113.4': ['other.example', 'crawl-203-0-113-4.googlebot.com'],
    '203.0.113.5': new FakeError('ESERVFAIL'),
    '203.0.113.6': ['crawl-203-0-113-6.googlebot.com'],
    '203.0.113.7': 'hang' as const,
    '203.0.113.8': ['a.googlebot.com', 'b.googlebot.com'],
  },
  a: {
    'crawl-66-249-66-1.googlebot.com': ['66.249.66.1'],
    'crawl-203-0-113-1.googlebot.com': ['198.51.100.1'],
    'evilgooglebot.com': ['203.0.113.2'],
    'googlebot.com.evil.example': ['203.0.113.3'],
    'crawl-203-0-113-4.googlebot.com': ['203.0.113.4'],
    'crawl-203-0-113-6.googlebot.com': new FakeError('EREFUSED'),
    'a.googlebot.com': new FakeError('ETIMEOUT'),
    'b.googlebot.com': ['203.0.113.8'],
  },
  aaaa: { 'crawl-2001-4860-4801-10--1.googlebot.com': ['2001:4860:4801:0010:0:0:0:1'] },
};

describe('isUnderSuffix', () => {
  it.each([
    ['googlebot.com', 'googlebot.com', true],
    ['crawl-1-2-3-4.googlebot.com', 'googlebot.com', true],
    ['evilgooglebot.com', 'googlebot.com', false],
    ['googlebot.com.evil.net', 'googlebot.com', false],
    ['oglebot.com', 'googlebot.com', false],
  ])('%s under %s: %s', (host, suffix, expected) => {
    expect(isUnderSuffix(host, suffix)).toBe(expected);
  });
});

describe('reverseDnsVerifier', () => {
  const verify = async (ip: string | undefined, options: { timeoutMs?: number } = {}) => {
    const { resolver } = fakeResolver(records);
    return reverseDnsVerifier({ resolver, cache: false, ...options }).verify(googlebot, request(ip), context);
  };

  it.each([
    ['66.249.66.1', 'pass', 'ptr-and-forward-match'],
    ['::ffff:66.249.66.1', 'pass', 'ptr-and-forward-match'],
    ['2001:4860:4801:10:0::1', 'pass', 'ptr-and-forward-match'],
    ['203.0.113.4', 'pass', 'ptr-and-forward-match'],
    ['203.0.113.8', 'pass', 'ptr-and-forward-match'],
    ['203.0.113.1', 'fail', 'forward-mismatch'],
    ['203.0.113.2', 'fail', 'ptr-not-in-domain'],
    ['203.0.113.3', 'fail', 'ptr-not-in-domain'],
    ['203.0.113.99', 'fail', 'no-ptr'],
    // A CDN edge's address (Cloudflare's) is the proxy's, not the sender's: never looked up.
    ['104.16.0.1', 'inconclusive', 'client-ip-is-proxy'],
    ['203.0.113.5', 'inconclusive', 'dns-error'],
    ['203.0.113.6', 'inconclusive', 'dns-error'],
    [undefined, 'inconclusive', 'client-ip-missing'],
    ['garbage', 'inconclusive', 'client-ip-invalid'],
  ])('%s -> %s %s', async (ip, outcome, reason) => {
    expect(await verify(ip)).toEqual({ method: 'reverse-dns', outcome, reason });
  });

  it('gives dns-timeout at the overall deadline, and when the resolver reports ETIMEOUT', async () => {
    const started = Date.now();
    expect(await verify('203.0.113.7', { timeoutMs: 50 })).toEqual({ method: 'reverse-dns', outcome: 'inconclusive', reason: 'dns-timeout' });
    expect(Date.now() - started).toBeLessThan(1000);
    const { resolver } = fakeResolver({ ptr: { '203.0.113.50': new FakeError('ETIMEOUT') } });
    expect(await reverseDnsVerifier({ resolver }).verify(googlebot, request('203.0.113.50'), context)).toMatchObject({ reason: 'dns-timeout' });
  });

  it('looks up at most eight names in the domain, reading past names outside it; a list cut short without a match is no evidence either way', async () => {
    const names = (ip: string, count: number) => Array.from({ length: count }, (_, i) => `crawl-${ip.replaceAll('.', '-')}-${i}.googlebot.com`);
    // Nine names in the domain, the ninth confirming: not the forward-mismatch a cut list gave.
    const nine = names('203.0.113.60', 9);
    const cut = fakeResolver({ ptr: { '203.0.113.60': nine }, a: { [nine[8]!]: ['203.0.113.60'] } });
    expect(await reverseDnsVerifier({ resolver: cut.resolver, cache: false }).verify(googlebot, request('203.0.113.60'), context)).toEqual({ method: 'reverse-dns', outcome: 'inconclusive', reason: 'too-many-ptrs' });
    expect(cut.calls.filter((call) => call.startsWith('A '))).toHaveLength(8);
    // Names outside the domain do not use up the eight: the one in the domain after them is looked up.
    const padded = fakeResolver({ ptr: { '203.0.113.61': [...Array.from({ length: 12 }, (_, i) => `host-${i}.example`), 'crawl.googlebot.com'] }, a: { 'crawl.googlebot.com': ['203.0.113.61'] } });
    expect(await reverseDnsVerifier({ resolver: padded.resolver, cache: false }).verify(googlebot, request('203.0.113.61'), context)).toMatchObject({ outcome: 'pass' });
    // Eight in the domain, all looked up, none confirming: still a forward mismatch.
    const eight = fakeResolver({ ptr: { '203.0.113.62': names('203.0.113.62', 8) } });
    expect(await reverseDnsVerifier({ resolver: eight.resolver, cache: false }).verify(googlebot, request('203.0.113.62'), context)).toMatchObject({ outcome: 'fail', reason: 'forward-mismatch' });
  });

  it('looks up at most maxConcurrentLookups addresses at once, the others in turn', async () => {
    let active = 0;
    let peak = 0;
    const asked: string[] = [];
    const resolver: DnsResolver = {
      reverse: async (ip) => {
        asked.push(ip);
        active++;
        peak = Math.max(peak, active);
        await new Promise((resolve) => setTimeout(resolve, 40));
        active--;
        return [];
      },
      resolve4: async () => [],
      resolve6: async () => [],
    };
    // Deadlines far beyond the six rounds of 40 ms, so no slot is given back early: what waits, waits its turn.
    const verifier = reverseDnsVerifier({ resolver, cache: false, maxConcurrentLookups: 2, timeoutMs: 5000 });
    const addresses = Array.from({ length: 12 }, (_, i) => `203.0.113.${100 + i}`);
    const results = await Promise.all(addresses.map((ip) => verifier.verify(googlebot, request(ip), context)));
    expect(peak).toBe(2);
    expect(results.map((r) => r.reason)).toEqual(addresses.map(() => 'no-ptr'));
    expect(asked.sort()).toEqual([...addresses].sort());
    expect(() => reverseDnsVerifier({ resolver, maxConcurrentLookups: 0 })).toThrow(/maxConcurrentLookups/);
  });

  it('gives a slot back at its deadline: reverse zones that never answer cannot starve a genuine crawler, and a timeout spent waiting for a turn is not cached', async () => {
    // Twelve claims at once from zones that never answer, two slots: two ask, the rest wait. A
    // waiter handed a slot at its deadline may still ask (the same millisecond); those handed one
    // later ask nothing.
    const hanging = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`203.0.113.${200 + i}`, 'hang' as const]));
    const { resolver, calls } = fakeResolver({ ptr: { ...records.ptr, ...hanging }, a: records.a });
    const verifier = reverseDnsVerifier({ resolver, maxConcurrentLookups: 2, timeoutMs: 100 });
    const stalled = Object.keys(hanging).map((ip) => verifier.verify(googlebot, request(ip), context));
    for (const result of await Promise.all(stalled)) expect(result).toMatchObject({ reason: 'dns-timeout' });
    // The slots are free again although the resolver never answered: the genuine crawler passes.
    expect(await verifier.verify(googlebot, request('66.249.66.1'), context)).toMatchObject({ outcome: 'pass' });
    const asked = new Set(calls.filter((call) => call.startsWith('PTR ')).map((call) => call.slice(4)));
    const unasked = Object.keys(hanging).filter((ip) => !asked.has(ip));
    expect(asked.size).toBeLessThan(12);
    // Its timeout was not kept: asked again (alone, with the slots free), it is looked up.
    const again = unasked[0]!;
    await Promise.race([verifier.verify(googlebot, request(again), context), new Promise((resolve) => setTimeout(resolve, 150))]);
    expect(calls).toContain(`PTR ${again}`);
  });

  it('does not look up forward names outside the domain', async () => {
    const { resolver, calls } = fakeResolver(records);
    await reverseDnsVerifier({ resolver }).verify(googlebot, request('203.0.113.4'), context);
    expect(calls).toEqual(['PTR 203.0.113.4', 'A crawl-203-0-113-4.googlebot.com']);
  });

  it('applies to agents with reverse_dns suffixes only', () => {
    const verifier = reverseDnsVerifier({ resolver: fakeResolver({}).resolver });
    expect(verifier.appliesTo(googlebot, request('1.2.3.4'))).toBe(true);
    expect(verifier.appliesTo({ ...googlebot, reverse_dns: [] }, request('1.2.3.4'))).toBe(false);
    expect(verifier.appliesTo({ ...googlebot, reverse_dns: undefined }, request('1.2.3.4'))).toBe(false);
  });

  it('caches pass for the positive TTL and fail for the negative TTL, by the injected clock', async () => {
    const { resolver, calls } = fakeResolver(records);
    const verifier = reverseDnsVerifier({ resolver, cache: { positiveTtlMs: 1000, negativeTtlMs: 100, errorTtlMs: 0 } });
    clock = 0;
    await verifier.verify(googlebot, request('66.249.66.1'), context);
    await verifier.verify(googlebot, request('::ffff:66.249.66.1'), context);
    await verifier.verify(googlebot, request('203.0.113.1'), context);
    await verifier.verify(googlebot, request('203.0.113.5'), context);
    clock = 500;
    await verifier.verify(googlebot, request('66.249.66.1'), context);
    await verifier.verify(googlebot, request('203.0.113.1'), context);
    await verifier.verify(googlebot, request('203.0.113.5'), context);
    expect(calls.filter((c) => c.startsWith('PTR'))).toEqual(['PTR 66.249.66.1', 'PTR 203.0.113.1', 'PTR 203.0.113.5', 'PTR 203.0.113.1', 'PTR 203.0.113.5']);
    clock = 1500;
    expect(await verifier.verify(googlebot, request('66.249.66.1'), context)).toMatchObject({ outcome: 'pass' });
    expect(calls.filter((c) => c === 'PTR 66.249.66.1')).toHaveLength(2);
  });

  it('keeps verdicts per suffix set: a pass for one agent is not a pass for another', async () => {
    const { resolver } = fakeResolver(records);
    const verifier = reverseDnsVerifier({ resolver });
    const bingbot: Agent = { ...googlebot, id: 'bingbot', reverse_dns: ['search.msn.com'] };
    expect(await verifier.verify(googlebot, request('66.249.66.1'), context)).toMatchObject({ outcome: 'pass' });
    expect(await verifier.verify(bingbot, request('66.249.66.1'), context)).toMatchObject({ outcome: 'fail', reason: 'ptr-not-in-domain' });
  });

  it('bounds the cache size', async () => {
    const { resolver, calls } = fakeResolver(records);
    const verifier = reverseDnsVerifier({ resolver, cache: { max: 2 } });
    for (const ip of ['66.249.66.1', '203.0.113.1', '203.0.113.2', '66.249.66.1']) await verifier.verify(googlebot, request(ip), context);
    expect(calls.filter((c) => c === 'PTR 66.249.66.1')).toHaveLength(2);
  });

  it('coalesces concurrent identical verifications into one lookup', async () => {
    const { resolver, calls } = fakeResolver(records);
    const verifier = reverseDnsVerifier({ resolver, cache: false });
    const results = await Promise.all(Array.from({ length: 20 }, () => verifier.verify(googlebot, request('66.249.66.1'), context)));
    expect(new Set(results.map((r) => r.outcome))).toEqual(new Set(['pass']));
    expect(calls).toEqual(['PTR 66.249.66.1', 'A crawl-66-249-66-1.googlebot.com']);
  });

  it('rejects bad configuration at creation, naming it', () => {
    const { resolver } = fakeResolver({});
    expect(() => reverseDnsVerifier({ resolver: {} as never })).toThrow(new TypeError('resolver.reverse must be a function'));
    expect(() => reverseDnsVerifier({ resolver, timeoutMs: 0 })).toThrow(new RangeError('timeoutMs must be a positive number, got 0'));
    expect(() => reverseDnsVerifier({ resolver, cache: { max: 1.5 } })).toThrow(new RangeError('cache.max must be a positive integer, got 1.5'));
    expect(() => reverseDnsVerifier({ resolver, cache: { negativeTtlMs: -1 } })).toThrow(new RangeError('cache.negativeTtlMs must be a non-negative number, got -1'));
    expect(() => reverseDnsVerifier({ resolver, cache: 'yes' as never })).toThrow(TypeError);
  });
});
