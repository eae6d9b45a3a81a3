// reverse-dns end to end against a real DNS server (dnsmasq on 127.0.0.1) through the node resolver and the engine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCatalog, createEngine, reverseDnsVerifier, type Engine } from '../../src/index.js';
import { createNodeResolver } from '../../src/adapters/node/index.js';
import { reverseLookupName } from '../../src/adapters/node/dns-resolver.js';
import { googlebotAgent } from '../helpers/agents.js';
import { dnsmasqAvailable, freeUdpPort, startBlackHole, startDnsmasq, type DnsServer } from '../helpers/dnsmasq.js';

const catalog = createCatalog({ version: 1, agents: [googlebotAgent] });
const UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

const available = dnsmasqAvailable();

describe.skipIf(!available)('reverse DNS against dnsmasq', () => {
  let server: DnsServer;
  let engine: Engine;
  const verifyFrom = (ip: string) => engine.verify({ request_headers: { 'user-agent': UA, 'x-forwarded-for': ip } });

  beforeAll(async () => {
    server = await startDnsmasq({
      ptr: [
        // Spoof: the attacker's reverse zone claims googlebot.com, the forward name is elsewhere.
        ['203.0.113.7', 'crawl-203-0-113-7.googlebot.com'],
        // Outside the domain, and one that only looks like it.
        ['203.0.113.8', 'crawl.evil-googlebot.com.example'],
        ['203.0.113.9', 'crawl.evilgooglebot.com'],
        // Forward zone of this PTR is served by a dead upstream: SERVFAIL.
        ['203.0.113.11', 'crawl-203-0-113-11.broken.googlebot.com'],
      ],
      hosts: [
        // --host-record also publishes the matching PTR records.
        ['crawl-66-249-66-1.googlebot.com', '66.249.66.1'],
        ['crawl-2001-4860-4801-10--1.googlebot.com', '2001:4860:4801:10::1'],
        ['crawl-203-0-113-7.googlebot.com', '198.51.100.9'],
        ['crawl.evil-googlebot.com.example', '203.0.113.8'],
        ['crawl.evilgooglebot.com', '203.0.113.9'],
        // Any Google Cloud VM's own name (anyone can rent one), and an App Engine fetcher's.
        ['67.45.123.34.bc.googleusercontent.com', '34.123.45.67'],
        ['34-123-45-68.gae.googleusercontent.com', '34.123.45.68'],
      ],
      broken: ['broken.googlebot.com'],
    });
    engine = createEngine({ catalog, verifiers: [reverseDnsVerifier({ resolver: createNodeResolver({ servers: [server.address], timeoutMs: 500, tries: 1 }) })] });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it.each(['66.249.66.1', '::ffff:66.249.66.1', '2001:4860:4801:10::1'])('verifies the genuine crawler address %s', async (ip) => {
    expect(await verifyFrom(ip)).toMatchObject({
      result: 'verified',
      agent_id: 'googlebot',
      verification: { method: 'reverse-dns', checks: [{ method: 'reverse-dns', outcome: 'pass', reason: 'ptr-and-forward-match' }] },
    });
  });

  it.each([
    ['203.0.113.7', 'forward-mismatch'],
    ['203.0.113.8', 'ptr-not-in-domain'],
    ['203.0.113.9', 'ptr-not-in-domain'],
    ['203.0.113.10', 'no-ptr'],
  ])('fails the spoof from %s with %s', async (ip, reason) => {
    expect(await verifyFrom(ip)).toMatchObject({
      result: 'verification_failed',
      verification: { method: 'reverse-dns', checks: [{ method: 'reverse-dns', outcome: 'fail', reason }] },
    });
  });

  it("takes Google's reverse-DNS domains per crawler class, as Google documents them: a Cloud VM's googleusercontent.com name is no Googlebot", async () => {
    // The bundled catalog: common crawlers googlebot.com; user-triggered fetchers gae.googleusercontent.com or google.com.
    const bundled = createEngine({ verifiers: [reverseDnsVerifier({ resolver: createNodeResolver({ servers: [server.address], timeoutMs: 500, tries: 1 }) })] });
    const claim = (ua: string, ip: string) => bundled.verify({ request_headers: { 'user-agent': ua, 'x-forwarded-for': ip } });
    expect(await claim(UA, '34.123.45.67')).toMatchObject({ result: 'verification_failed', agent_id: 'googlebot', verification: { checks: [{ method: 'reverse-dns', outcome: 'fail', reason: 'ptr-not-in-domain' }] } });
    expect(await claim(UA, '66.249.66.1')).toMatchObject({ result: 'verified', agent_id: 'googlebot' });
    const FEEDFETCHER = 'FeedFetcher-Google; (+http://www.google.com/feedfetcher.html)';
    expect(await claim(FEEDFETCHER, '34.123.45.68')).toMatchObject({ result: 'verified', agent_id: 'feedfetcher-google' });
    expect(await claim(FEEDFETCHER, '34.123.45.67')).toMatchObject({ result: 'verification_failed', agent_id: 'feedfetcher-google' });
  });

  it('treats a server failure on the forward lookup as not verifiable', async () => {
    expect(await verifyFrom('203.0.113.11')).toMatchObject({
      result: 'not_verifiable',
      verification: { method: null, checks: [{ method: 'reverse-dns', outcome: 'inconclusive', reason: 'dns-error' }] },
    });
  });

  it('never fails a crawler when the DNS server is down (connection refused)', async () => {
    const deadPort = await freeUdpPort();
    const dead = createEngine({
      catalog,
      verifiers: [reverseDnsVerifier({ resolver: createNodeResolver({ servers: [`127.0.0.1:${deadPort}`], timeoutMs: 200, tries: 1 }), timeoutMs: 1000 })],
    });
    for (const ip of ['66.249.66.1', '203.0.113.7', '2001:4860:4801:10::1']) {
      const result = await dead.verify({ request_headers: { 'user-agent': UA, 'x-forwarded-for': ip } });
      expect(result).toMatchObject({ result: 'not_verifiable', verification: { method: null, checks: [{ method: 'reverse-dns', outcome: 'inconclusive', reason: 'dns-error' }] } });
    }
  });

  it('gives dns-timeout when a silent server makes the resolver time out', async () => {
    const hole = await startBlackHole();
    try {
      const silent = createEngine({
        catalog,
        verifiers: [reverseDnsVerifier({ resolver: createNodeResolver({ servers: [hole.address], timeoutMs: 100, tries: 1 }), timeoutMs: 2000 })],
      });
      const result = await silent.verify({ request_headers: { 'user-agent': UA, 'x-forwarded-for': '66.249.66.1' } });
      expect(result).toMatchObject({ result: 'not_verifiable', verification: { checks: [{ method: 'reverse-dns', outcome: 'inconclusive', reason: 'dns-timeout' }] } });
    } finally {
      await hole.stop();
    }
  });

  it('gives dns-timeout at the overall deadline even when the resolver would keep retrying', async () => {
    const hole = await startBlackHole();
    try {
      const slow = reverseDnsVerifier({ resolver: createNodeResolver({ servers: [hole.address], timeoutMs: 2000, tries: 3 }), timeoutMs: 150 });
      const started = Date.now();
      const check = await slow.verify(catalog.getAgent('googlebot')!, { headers: new Map(), clientIp: '66.249.66.1' }, { now: () => Date.now() });
      expect(check).toEqual({ method: 'reverse-dns', outcome: 'inconclusive', reason: 'dns-timeout' });
      expect(Date.now() - started).toBeLessThan(1500);
    } finally {
      await hole.stop();
    }
  });

  it('maps NXDOMAIN and NODATA to empty answers in the node resolver, and REFUSED to an error', async () => {
    const resolver = createNodeResolver({ servers: [server.address] });
    await expect(resolver.resolve4('x.broken.googlebot.com')).rejects.toMatchObject({ code: 'EREFUSED' });
    expect(await resolver.reverse('::ffff:66.249.66.1')).toEqual(['crawl-66-249-66-1.googlebot.com']);
    expect(await resolver.reverse('203.0.113.10')).toEqual([]);
    expect(await resolver.resolve6('crawl-66-249-66-1.googlebot.com')).toEqual([]);
    expect(await resolver.resolve4('crawl-66-249-66-1.googlebot.com')).toEqual(['66.249.66.1']);
  });
});

describe('createNodeResolver options', () => {
  it('rejects bad options, naming them', () => {
    expect(() => createNodeResolver({ servers: ['not a server'] })).toThrow(/^servers must be addresses/);
    expect(() => createNodeResolver({ servers: [] })).toThrow(RangeError);
    expect(() => createNodeResolver({ timeoutMs: 0 })).toThrow(new RangeError('timeoutMs must be a positive integer, got 0'));
    expect(() => createNodeResolver({ tries: 0 })).toThrow(new RangeError('tries must be an integer from 1 to 10, got 0'));
  });

  it.each([
    ['66.249.66.1', '1.66.249.66.in-addr.arpa'],
    ['2001:db8::567:89ab', 'b.a.9.8.7.6.5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa'],
    ['::ffff:1.2.3.4', '4.3.2.1.in-addr.arpa'],
    ['64:ff9b::1.2.3.4', '4.0.3.0.2.0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.b.9.f.f.4.6.0.0.ip6.arpa'],
  ])('PTR query name of %s', (ip, name) => {
    expect(reverseLookupName(ip)).toBe(name);
    expect(() => reverseLookupName('nope')).toThrow(RangeError);
  });
});
