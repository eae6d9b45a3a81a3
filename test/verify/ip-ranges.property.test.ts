// Property tests: the compiled prefix matcher agrees with a naive BigInt mask check, on random
// prefix sets (overlaps included) and on every bundled list, with addresses biased to prefix edges.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ipRangeVerifier, parseIpRangeList, type Agent } from '../../src/index.js';
import { loadIpRangeLists } from '../../src/adapters/node/index.js';
import { formatIpAddress, parseIpAddress } from '../../src/verify/ip-ranges/ip-address.js';
import { compilePrefixSet, parseCidr, type CidrPrefix } from '../../src/verify/ip-ranges/prefix-set.js';
import { isNonPublicAddress } from '../../src/verify/ip-ranges/public-address.js';

type Family = 4 | 6;
interface Prefix {
  readonly family: Family;
  readonly network: bigint;
  readonly length: number;
}

const WIDTH = { 4: 32, 6: 128 } as const;

/** The naive reference: mask the address to the prefix length and compare networks. */
function naiveIn(prefixes: readonly Prefix[], family: Family, address: bigint): boolean {
  const width = WIDTH[family];
  return prefixes.some((p) => {
    if (p.family !== family) return false;
    const mask = ((1n << BigInt(p.length)) - 1n) << BigInt(width - p.length);
    return (address & mask) === p.network;
  });
}

const MAPPED = 0xffffn << 32n;

/** An IPv4 address is the same host as ::ffff:a.b.c.d (RFC 4291 §2.5.5.2): either form may match. */
function naiveContains(prefixes: readonly Prefix[], family: Family, address: bigint): boolean {
  if (family === 4) return naiveIn(prefixes, 4, address) || naiveIn(prefixes, 6, MAPPED | address);
  if (address >> 32n === 0xffffn) return naiveIn(prefixes, 6, address) || naiveIn(prefixes, 4, address & 0xffffffffn);
  return naiveIn(prefixes, 6, address);
}

/** Text forms written independently of the code under test: dotted quad, full uncompressed IPv6. */
function toText(family: Family, value: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 255n)).join('.');
  return Array.from({ length: 8 }, (_, i) => ((value >> BigInt(112 - 16 * i)) & 0xffffn).toString(16).padStart(4, '0')).join(':');
}

function cidrText(p: Prefix): string {
  return `${toText(p.family, p.network)}/${p.length}`;
}

const prefixArb = (family: Family) =>
  fc
    .tuple(fc.bigInt({ min: 0n, max: (1n << BigInt(WIDTH[family])) - 1n }), fc.integer({ min: family === 4 ? 0 : 0, max: WIDTH[family] }))
    .map(([raw, length]): Prefix => {
      const width = WIDTH[family];
      const mask = ((1n << BigInt(length)) - 1n) << BigInt(width - length);
      return { family, network: raw & mask, length };
    });

// Real lists cluster addresses; so do these: prefixes drawn near a few shared bases overlap often.
const clusteredPrefixArb = (family: Family) =>
  fc.tuple(fc.constantFrom(0n, 1n << BigInt(WIDTH[family] - 2), (1n << BigInt(WIDTH[family])) - (1n << 20n)), fc.bigInt({ min: 0n, max: 1n << 24n }), fc.integer({ min: WIDTH[family] - 24, max: WIDTH[family] })).map(
    ([base, offset, length]): Prefix => {
      const width = WIDTH[family];
      const mask = ((1n << BigInt(length)) - 1n) << BigInt(width - length);
      return { family, network: (base + offset) & mask & ((1n << BigInt(width)) - 1n), length };
    },
  );

/** Addresses at, just inside and just outside the edges of the prefixes, plus uniform ones. */
function addressArb(prefixes: readonly Prefix[], family: Family) {
  const width = WIDTH[family];
  const max = (1n << BigInt(width)) - 1n;
  const uniform =
    family === 4 ? fc.bigInt({ min: 0n, max }) : fc.oneof(fc.bigInt({ min: 0n, max }), fc.bigInt({ min: 0n, max: 0xffffffffn }).map((v) => MAPPED | v));
  const own = prefixes.filter((p) => p.family === family);
  if (own.length === 0) return uniform;
  const edge = fc.tuple(fc.constantFrom(...own), fc.boolean(), fc.bigInt({ min: -2n, max: 2n })).map(([p, atEnd, delta]) => {
    const size = 1n << BigInt(width - p.length);
    const at = (atEnd ? p.network + size - 1n : p.network) + delta;
    return at < 0n ? 0n : at > max ? max : at;
  });
  return fc.oneof({ weight: 3, arbitrary: edge }, { weight: 1, arbitrary: uniform });
}

const context = { now: () => 0 };
function agentWith(list: string): Agent {
  return { id: 'a', name: 'a', type: 'Fetcher', operator: 'o', url: 'https://example.com', match: { tokens: ['a'] }, robots_tokens: ['a'], ip_ranges: [list] };
}

function verdict(lists: Record<string, unknown>, list: string) {
  const verifier = ipRangeVerifier({ lists });
  const agent = agentWith(list);
  return (text: string) => {
    const check = verifier.verify(agent, { headers: new Map(), clientIp: text }, context) as { outcome: string; reason: string };
    return check.reason === 'client-ip-not-public' ? 'not-public' : check.outcome === 'pass';
  };
}

/**
 * The verifier's judgement, from the compiled set alone: random prefixes reach widths (::/0,
 * ::ffff:0:0/96) that a list may not hold but a trusted-proxy rule may.
 */
function compiledVerdict(prefixes: readonly Prefix[]) {
  const set = compilePrefixSet(prefixes.map((p) => parseCidr(cidrText(p)) as CidrPrefix));
  return (text: string) => {
    const address = parseIpAddress(text)!;
    return isNonPublicAddress(address) ? 'not-public' : set.has(address);
  };
}

// Addresses of a site's own network, judged by no list (issue 15), written out independently:
// unspecified, RFC 1918, CGNAT, loopback, link-local, unique-local.
const NON_PUBLIC: readonly Prefix[] = [
  { family: 4, network: 0n, length: 32 },
  { family: 4, network: 0x0a000000n, length: 8 },
  { family: 4, network: 0x64400000n, length: 10 },
  { family: 4, network: 0x7f000000n, length: 8 },
  { family: 4, network: 0xa9fe0000n, length: 16 },
  { family: 4, network: 0xac100000n, length: 12 },
  { family: 4, network: 0xc0a80000n, length: 16 },
  { family: 6, network: 0n, length: 128 },
  { family: 6, network: 1n, length: 128 },
  { family: 6, network: 0xfc00n << 112n, length: 7 },
  { family: 6, network: 0xfe80n << 112n, length: 10 },
];

/** What the verifier must say of an address: not public, else whether the list holds it. */
function expected(prefixes: readonly Prefix[], family: Family, address: bigint): boolean | 'not-public' {
  return naiveContains(NON_PUBLIC, family, address) ? 'not-public' : naiveContains(prefixes, family, address);
}

describe('compiled matcher agrees with a naive CIDR check', () => {
  it.each([4, 6] as const)('random IPv%i prefix sets with overlaps', (family) => {
    const setArb = fc.array(fc.oneof(prefixArb(family), clusteredPrefixArb(family), prefixArb(family === 4 ? 6 : 4)), { minLength: 0, maxLength: 40 });
    fc.assert(
      fc.property(
        setArb.chain((prefixes) => fc.tuple(fc.constant(prefixes), fc.array(addressArb(prefixes, family), { minLength: 1, maxLength: 20 }))),
        ([prefixes, addresses]) => {
          const inList = compiledVerdict(prefixes);
          for (const address of addresses) {
            expect(inList(toText(family, address)), `${toText(family, address)} in ${prefixes.map(cidrText).join(' ')}`).toBe(expected(prefixes, family, address));
          }
        },
      ),
      { numRuns: 5000 },
    );
  });

  const lists = loadIpRangeLists();
  it.each(Object.keys(lists))('bundled list %s', (name) => {
    const parsed = parseIpRangeList(lists[name], name).prefixes.map((p): Prefix => {
      const a = p.address;
      const network = a.family === 4 ? BigInt(a.value) : a.words.reduce((acc, w) => (acc << 32n) | BigInt(w), 0n);
      return { family: a.family, network, length: p.length };
    });
    const inList = verdict(lists, name);
    for (const family of [4, 6] as const) {
      fc.assert(
        fc.property(addressArb(parsed, family), (address) => {
          expect(inList(toText(family, address))).toBe(expected(parsed, family, address));
        }),
        { numRuns: 500 },
      );
    }
  });
});

describe('address text round trip', () => {
  it('IPv6 canonical form matches the WHATWG URL serializer and parses back', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff })), { minLength: 8, maxLength: 8 }),
        (groups) => {
          const full = groups.map((g) => g.toString(16)).join(':');
          const parsed = parseIpAddress(full);
          if (parsed?.family !== 6) return; // ::ffff:a.b.c.d folds to IPv4, checked below
          const canonical = formatIpAddress(parsed);
          expect(`[${canonical}]`).toBe(new URL(`http://[${full}]/`).hostname);
          expect(parseIpAddress(canonical)).toEqual(parsed);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('IPv4 and IPv4-mapped IPv6 parse to the same address', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 0xffffffffn }), (value) => {
        const dotted = toText(4, value);
        expect(formatIpAddress(parseIpAddress(dotted)!)).toBe(dotted);
        expect(parseIpAddress(`::ffff:${dotted}`)).toEqual(parseIpAddress(dotted));
        expect(parseIpAddress(toText(6, (0xffffn << 32n) | value))).toEqual(parseIpAddress(dotted));
      }),
      { numRuns: 2000 },
    );
  });
});
