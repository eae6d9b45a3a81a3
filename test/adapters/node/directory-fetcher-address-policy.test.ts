// The address classifier behind the directory fetcher's SSRF rules: a table of v4, v6 and embedded forms, plus properties.
import { BlockList } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyAddress } from '../../../src/adapters/node/index.js';
import type { AddressClass } from '../../../src/adapters/node/index.js';

const TABLE: readonly (readonly [string, AddressClass])[] = [
  // IPv4 public
  ['8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  ['93.184.215.14', 'public'],
  ['172.15.255.255', 'public'],
  ['172.32.0.0', 'public'],
  ['100.63.255.255', 'public'],
  ['100.128.0.0', 'public'],
  ['169.253.255.255', 'public'],
  ['198.17.255.255', 'public'],
  ['198.20.0.0', 'public'],
  ['223.255.255.255', 'public'],
  // IPv4 refused
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'cgnat'],
  ['100.100.100.200', 'cgnat'],
  ['100.127.255.255', 'cgnat'],
  ['169.254.0.1', 'link-local'],
  ['169.254.169.254', 'metadata'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['192.0.0.192', 'reserved'],
  ['192.0.2.10', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.99', 'documentation'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['192.88.99.1', 'reserved'],
  // IPv6 public
  ['2606:4700:4700::1111', 'public'],
  ['2001:4860:4860::8888', 'public'],
  ['2a00:1450:4001:81c::200e', 'public'],
  ['2001:200::1', 'public'],
  // IPv6 refused
  ['::1', 'loopback'],
  ['::', 'unspecified'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf::1', 'link-local'],
  ['fec0::1', 'private'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456:789a::1', 'unique-local'],
  ['fd00:ec2::254', 'metadata'],
  ['fd00:ec2::255', 'unique-local'],
  ['ff02::1', 'multicast'],
  ['ff05::1:3', 'multicast'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation'],
  ['2001:2::1', 'benchmarking'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'], // Teredo
  ['100::1', 'reserved'], // discard-only
  ['64:ff9b:1::1', 'reserved'], // local-use NAT64
  ['4000::1', 'reserved'], // outside 2000::/3
  // IPv4 inside IPv6: judged by the IPv4 address they reach
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::FFFF:10.0.0.1', 'private'],
  ['::ffff:169.254.169.254', 'metadata'],
  ['::ffff:a9fe:a9fe', 'metadata'],
  ['::ffff:0.0.0.0', 'unspecified'],
  ['::ffff:8.8.8.8', 'public'],
  ['::127.0.0.1', 'loopback'], // IPv4-compatible (deprecated)
  ['::8.8.8.8', 'reserved'], // IPv4-compatible of a public address: still never a destination
  ['::ffff:0:10.0.0.1', 'private'], // IPv4-translated
  ['::ffff:0:8.8.8.8', 'reserved'],
  ['64:ff9b::127.0.0.1', 'loopback'], // NAT64
  ['64:ff9b::a00:1', 'private'],
  ['64:ff9b::a9fe:a9fe', 'metadata'],
  ['64:ff9b::808:808', 'public'],
  ['2002:c0a8:101::1', 'private'], // 6to4 of 192.168.1.1
  ['2002:7f00:1::', 'loopback'],
  ['2002:808:808::1', 'public'],
  // brackets as in URLs
  ['[::1]', 'loopback'],
  ['[2606:4700:4700::1111]', 'public'],
  // not addresses
  ['', 'invalid'],
  ['localhost', 'invalid'],
  ['127.1', 'invalid'],
  ['0x7f000001', 'invalid'],
  ['1.2.3.256', 'invalid'],
  ['::g', 'invalid'],
];

describe('classifyAddress', () => {
  it.each(TABLE)('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });
});

// The refused IPv4 blocks, matched by node's own BlockList as an independent reference.
const REFUSED_V4 = [
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24',
  '192.0.2.0/24', '192.88.99.0/24', '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24',
  '224.0.0.0/4', '240.0.0.0/4',
];
const reference = new BlockList();
for (const cidr of REFUSED_V4) {
  const [net = '', bits = ''] = cidr.split('/');
  reference.addSubnet(net, Number(bits), 'ipv4');
}

const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((parts) => parts.join('.'));
// Biased towards the interesting blocks so every range gets hits, not only public space.
const interestingV4 = fc.oneof(
  ipv4,
  fc.constantFrom(...REFUSED_V4).chain((cidr) => {
    const [net = ''] = cidr.split('.');
    return fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255)).map(([b, c, d]) => `${net}.${b}.${c}.${d}`);
  }),
);
const hex4 = (value: number): string => value.toString(16);

describe('classifyAddress properties', () => {
  it('refuses an IPv4 address exactly when a BlockList of the refused blocks matches it', () => {
    fc.assert(
      fc.property(interestingV4, (address) => {
        expect(classifyAddress(address) !== 'public').toBe(reference.check(address, 'ipv4'));
      }),
      { numRuns: 3000 },
    );
  });

  it('judges IPv4-mapped and NAT64 forms like the IPv4 address they carry', () => {
    fc.assert(
      fc.property(interestingV4, (address) => {
        const [a = 0, b = 0, c = 0, d = 0] = address.split('.').map(Number);
        const high = hex4(a * 256 + b);
        const low = hex4(c * 256 + d);
        const plain = classifyAddress(address);
        expect(classifyAddress(`::ffff:${address}`)).toBe(plain);
        expect(classifyAddress(`::ffff:${high}:${low}`)).toBe(plain);
        expect(classifyAddress(`64:ff9b::${address}`)).toBe(plain);
        expect(classifyAddress(`64:ff9b::${high}:${low}`)).toBe(plain);
      }),
      { numRuns: 1000 },
    );
  });

  it('classifies an IPv6 address the same in full and in the URL parser\'s compressed form', () => {
    const group = fc.oneof(fc.constant(0), fc.constant(0), fc.nat(0xffff), fc.constantFrom(0xfe80, 0xfd00, 0x2001, 0x2002, 0x64, 0xff9b, 0xffff));
    fc.assert(
      fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), (groups) => {
        const full = groups.map(hex4).join(':');
        const compressed = new URL(`https://[${full}]/`).hostname;
        expect(classifyAddress(compressed)).toBe(classifyAddress(full));
      }),
      { numRuns: 2000 },
    );
  });
});
