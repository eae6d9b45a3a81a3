// No IP list can make the ip-ranges verifier pass every address: parseIpRangeList refuses prefixes
// wider than an IPv4 /8 or IPv6 /16, IPv6 prefixes reaching into ::ffff:0:0/96 (matched against
// IPv4), and lists adding up to more than sixteen of the widest; every bundled list still passes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CLOUDFLARE_IP_RANGES, ipRangeVerifier, parseIpRangeList } from '../../src/index.js';
import { loadIpRangeLists } from '../../src/adapters/node/index.js';
import { parseIpRangeListFile } from '../../src/adapters/node/ip-ranges-loader.js';
import { compilePrefixSet, prefixBounds } from '../../src/verify/ip-ranges/prefix-set.js';

const jafar = (...prefixes: object[]) => ({ creationTime: '2026-08-21T14:45:42.000000', prefixes });

describe('parseIpRangeList refuses lists that would match (nearly) every address', () => {
  it.each([
    [[{ ipv4Prefix: '0.0.0.0/0' }, { ipv6Prefix: '::/0' }], /ipv4Prefix "0\.0\.0\.0\/0" is wider than \/8/],
    [[{ ipv6Prefix: '::/0' }], /ipv6Prefix "::\/0" reaches into ::ffff:0:0\/96/],
    [[{ ipv6Prefix: '::ffff:0:0/96' }], /ipv6Prefix "::ffff:0:0\/96" reaches into ::ffff:0:0\/96/],
    [[{ ipv6Prefix: '::ffff:192.0.2.0/120' }], /ipv6Prefix "::ffff:192\.0\.2\.0\/120" reaches into ::ffff:0:0\/96/],
    [[{ ipv6Prefix: '::/8' }], /ipv6Prefix "::\/8" reaches into ::ffff:0:0\/96/],
    [[{ ipv6Prefix: '::ff00:0:0/88' }], /ipv6Prefix "::ff00:0:0\/88" reaches into ::ffff:0:0\/96/],
    [[{ ipv4Prefix: '0.0.0.0/1' }, { ipv4Prefix: '128.0.0.0/1' }], /ipv4Prefix "0\.0\.0\.0\/1" is wider than \/8/],
    [[{ ipv4Prefix: '16.0.0.0/7' }], /ipv4Prefix "16\.0\.0\.0\/7" is wider than \/8/],
    [[{ ipv6Prefix: '2000::/3' }], /ipv6Prefix "2000::\/3" is wider than \/16/],
    [[{ ipv6Prefix: '2000::/15' }], /ipv6Prefix "2000::\/15" is wider than \/16/],
  ])('%j', (prefixes, reason) => {
    expect(() => parseIpRangeList(jafar(...prefixes), 'google-common-crawlers.json')).toThrow(RangeError);
    expect(() => parseIpRangeList(jafar(...prefixes), 'google-common-crawlers.json')).toThrow(/^IP list "google-common-crawlers\.json": /);
    expect(() => parseIpRangeList(jafar(...prefixes), 'google-common-crawlers.json')).toThrow(reason);
    // The verifier validates with the same parser, so no engine can be built on such a list.
    expect(() => ipRangeVerifier({ lists: { 'google-common-crawlers.json': jafar(...prefixes) } })).toThrow(reason);
  });

  it('refuses many widest prefixes adding up to more than sixteen of them, naming the one past the bound', () => {
    const eights = Array.from({ length: 17 }, (_, i) => ({ ipv4Prefix: `${i + 1}.0.0.0/8` }));
    expect(() => parseIpRangeList(jafar(...eights.slice(0, 16)), 'x.json')).not.toThrow();
    expect(() => parseIpRangeList(jafar(...eights), 'x.json')).toThrow('IP list "x.json": ipv4Prefix "17.0.0.0/8" takes the list past sixteen /8s of addresses');
    // Every /8 of the IPv4 space, as 256 prefixes each within the per-prefix bound.
    const everything = Array.from({ length: 256 }, (_, i) => ({ ipv4Prefix: `${i}.0.0.0/8` }));
    expect(() => parseIpRangeList(jafar(...everything), 'x.json')).toThrow(/takes the list past sixteen \/8s/);
    const sixteens = Array.from({ length: 17 }, (_, i) => ({ ipv6Prefix: `${(0x2001 + i).toString(16)}::/16` }));
    expect(() => parseIpRangeList(jafar(...sixteens.slice(0, 16)), 'x.json')).not.toThrow();
    expect(() => parseIpRangeList(jafar(...sixteens), 'x.json')).toThrow('ipv6Prefix "2011::/16" takes the list past sixteen /16s of addresses');
  });

  it('accepts prefixes at the bounds and IPv6 prefixes next to ::ffff:0:0/96', () => {
    const list = parseIpRangeList(jafar({ ipv4Prefix: '17.0.0.0/8' }, { ipv6Prefix: '2001::/16' }, { ipv6Prefix: '::fffe:0:0/96' }, { ipv6Prefix: '::1:0:0:0/96' }), 'x.json');
    expect([list.count4, list.count6]).toEqual([1, 3]);
  });

  it('never prints control characters of a prefix it refuses, and cuts a long one short', () => {
    let message = '';
    try {
      parseIpRangeList(jafar({ ipv4Prefix: `\u001b[2K\r\u009b${'9'.repeat(5000)}` }), 'x.json');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^IP list "x\.json": ipv4Prefix "\\u001b\[2K\\r\\u009b9+… is not a valid CIDR/);
    expect(message).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(message.length).toBeLessThan(200);
  });

  it('accepts every bundled list, both as parsed and as a file serve loads', () => {
    const lists = loadIpRangeLists();
    expect(Object.keys(lists)).toHaveLength(18);
    for (const [name, document] of Object.entries(lists)) {
      expect(() => parseIpRangeListFile(document, name, Date.now()), name).not.toThrow();
    }
  });

  it("accepts Cloudflare's ranges (parsed for trusted proxies by parseCidr, not as a list) as a list too", () => {
    const prefixes = CLOUDFLARE_IP_RANGES.map((cidr) => (cidr.includes(':') ? { ipv6Prefix: cidr } : { ipv4Prefix: cidr }));
    expect(parseIpRangeList(jafar(...prefixes), 'cloudflare.json').prefixes).toHaveLength(CLOUDFLARE_IP_RANGES.length);
  });
});

describe('a list that parses never makes the verifier pass everything', () => {
  const WIDTH = { 4: 32, 6: 128 } as const;
  const text = (family: 4 | 6, value: bigint) =>
    family === 4
      ? [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 255n)).join('.')
      : Array.from({ length: 8 }, (_, i) => ((value >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(':');
  // Short prefixes most of the time, so that lists near and past the bounds are common.
  const prefixArb = fc.oneof(fc.constant(4 as const), fc.constant(6 as const)).chain((family) =>
    fc.tuple(fc.constant(family), fc.bigInt({ min: 0n, max: (1n << BigInt(WIDTH[family])) - 1n }), fc.integer({ min: 0, max: family === 4 ? 12 : 20 })).map(([f, raw, length]) => {
      const width = WIDTH[f];
      const network = raw & (((1n << BigInt(length)) - 1n) << BigInt(width - length));
      return f === 4 ? { ipv4Prefix: `${text(4, network)}/${length}` } : { ipv6Prefix: `${text(6, network)}/${length}` };
    }),
  );

  it('covers at most sixteen /8s of IPv4 (IPv6 prefixes included) and sixteen /16s of IPv6', () => {
    // Plus the audit's prefixes now and then, and ::ffff:0:0/96 itself.
    fc.assert(
      fc.property(fc.array(fc.oneof(prefixArb, fc.constantFrom({ ipv6Prefix: '::ffff:0:0/96' }, { ipv6Prefix: '::/0' }, { ipv4Prefix: '1.0.0.0/8' })), { maxLength: 40 }), (prefixes) => {
        let parsed;
        try {
          parsed = parseIpRangeList(jafar(...prefixes), 'random.json').prefixes;
        } catch (error) {
          expect(error).toBeInstanceOf(RangeError);
          return;
        }
        const covered = { 4: 0n, 6: 0n };
        for (const prefix of parsed) {
          const [start, end] = prefixBounds(prefix);
          covered[prefix.address.family] += end - start + 1n;
        }
        expect(covered[4]).toBeLessThanOrEqual(16n << 24n);
        expect(covered[6]).toBeLessThanOrEqual(16n << 112n);
        // And no IPv4 address matches by way of an IPv6 prefix.
        const v6Only = compilePrefixSet(parsed.filter((p) => p.address.family === 6));
        for (const value of [0, 0x01020304, 0x42f94001, 0x7fffffff, 0xc0000201, 0xffffffff]) expect(v6Only.has({ family: 4, value })).toBe(false);
      }),
      { numRuns: 3000 },
    );
  });

});
