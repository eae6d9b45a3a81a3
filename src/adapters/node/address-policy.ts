// Classifies an IP address as public unicast or as one of the ranges a key-directory fetch must never reach.
import { isIPv4, isIPv6 } from 'node:net';

/**
 * What an address is, for the SSRF rules of the key-directory fetcher. Only `public` may be
 * connected to (and `loopback` when a test explicitly allows it); every other class is refused.
 */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'cgnat'
  | 'link-local'
  | 'metadata'
  | 'unique-local'
  | 'multicast'
  | 'unspecified'
  | 'broadcast'
  | 'documentation'
  | 'benchmarking'
  | 'reserved'
  | 'invalid';

interface V4Range {
  readonly start: number;
  readonly end: number;
  readonly kind: Exclude<AddressClass, 'public' | 'invalid'>;
}

// IANA IPv4 Special-Purpose Address Registry (RFC 6890 and updates), compiled once to integer
// ranges. Most specific first: the first match wins, so 169.254.169.254 reports as metadata.
const V4_RANGES: readonly V4Range[] = (
  [
    ['169.254.169.254/32', 'metadata'], // cloud instance metadata (AWS, GCP, Azure, OpenStack)
    ['255.255.255.255/32', 'broadcast'], // RFC 919 limited broadcast
    ['0.0.0.0/32', 'unspecified'],
    ['0.0.0.0/8', 'reserved'], // RFC 791 "this network"
    ['10.0.0.0/8', 'private'], // RFC 1918
    ['100.64.0.0/10', 'cgnat'], // RFC 6598 shared address space (also Alibaba's metadata 100.100.100.200)
    ['127.0.0.0/8', 'loopback'], // RFC 1122
    ['169.254.0.0/16', 'link-local'], // RFC 3927
    ['172.16.0.0/12', 'private'], // RFC 1918
    ['192.0.0.0/24', 'reserved'], // RFC 6890 IETF protocol assignments (incl. Oracle's metadata 192.0.0.192)
    ['192.0.2.0/24', 'documentation'], // RFC 5737 TEST-NET-1
    ['192.88.99.0/24', 'reserved'], // RFC 7526 deprecated 6to4 relay anycast
    ['192.168.0.0/16', 'private'], // RFC 1918
    ['198.18.0.0/15', 'benchmarking'], // RFC 2544
    ['198.51.100.0/24', 'documentation'], // RFC 5737 TEST-NET-2
    ['203.0.113.0/24', 'documentation'], // RFC 5737 TEST-NET-3
    ['224.0.0.0/4', 'multicast'], // RFC 5771
    ['240.0.0.0/4', 'reserved'], // RFC 1112 §4 future use
  ] as const
).map(([cidr, kind]) => {
  const [base = '', bits = '32'] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  const start = parseV4(base);
  return { start, end: start + size - 1, kind };
});

function parseV4(address: string): number {
  let value = 0;
  for (const part of address.split('.')) value = value * 256 + Number(part);
  return value;
}

function classifyV4Number(value: number): AddressClass {
  for (const range of V4_RANGES) {
    if (value >= range.start && value <= range.end) return range.kind;
  }
  return 'public';
}

// Expands a textual IPv6 address (already validated by isIPv6) into eight 16-bit groups.
function parseV6(address: string): number[] {
  let text = address;
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    // RFC 4291 §2.2 form 3: the low 32 bits written as dotted IPv4.
    const v4 = parseV4(text.slice(lastColon + 1));
    tail.push(Math.floor(v4 / 65536), v4 % 65536);
    text = `${text.slice(0, lastColon + 1)}0`; // placeholder group, dropped below
  }
  const toGroups = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const gap = text.indexOf('::');
  let groups: number[];
  if (gap === -1) {
    groups = toGroups(text);
  } else {
    const head = toGroups(text.slice(0, gap));
    const rest = toGroups(text.slice(gap + 2));
    const width = 8 - (tail.length > 0 ? 1 : 0);
    groups = [...head, ...new Array<number>(width - head.length - rest.length).fill(0), ...rest];
  }
  if (tail.length > 0) groups = [...groups.slice(0, -1), ...tail];
  return groups;
}

function embeddedV4(high: number, low: number): number {
  return high * 65536 + low;
}

// An IPv6 form that carries an IPv4 address reaches that IPv4 host (or a relay for it), so it
// gets the IPv4 address's class.
function classifyV6(g: readonly number[]): AddressClass {
  const at = (i: number): number => g[i] ?? 0;
  const zeroUpTo = (n: number): boolean => g.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(8)) return 'unspecified';
  if (zeroUpTo(7) && at(7) === 1) return 'loopback';
  // RFC 4291 §2.5.5.2 IPv4-mapped ::ffff:0:0/96: a dual-stack socket connects to the IPv4 host.
  if (zeroUpTo(5) && at(5) === 0xffff) return classifyV4Number(embeddedV4(at(6), at(7)));
  // RFC 4291 §2.5.5.1 IPv4-compatible ::/96 (deprecated) and RFC 2765 IPv4-translated
  // ::ffff:0:0:0/96: never legitimate destinations; refused, naming the embedded class if any.
  if (zeroUpTo(6) || (zeroUpTo(4) && at(4) === 0xffff && at(5) === 0)) {
    const inner = classifyV4Number(embeddedV4(at(6), at(7)));
    return inner === 'public' ? 'reserved' : inner;
  }
  // RFC 6052 NAT64 well-known prefix 64:ff9b::/96: the translator connects to the IPv4 host.
  if (at(0) === 0x64 && at(1) === 0xff9b && at(2) === 0 && at(3) === 0 && at(4) === 0 && at(5) === 0) {
    return classifyV4Number(embeddedV4(at(6), at(7)));
  }
  // RFC 8215 local-use NAT64 64:ff9b:1::/48 translates into the operator's own network.
  if (at(0) === 0x64 && at(1) === 0xff9b && at(2) === 1) return 'reserved';
  // AWS's IPv6 instance metadata endpoint fd00:ec2::254 (inside unique-local; named for logs).
  if (at(0) === 0xfd00 && at(1) === 0x0ec2 && g.slice(2, 7).every((x) => x === 0) && at(7) === 0x254) return 'metadata';
  if ((at(0) & 0xfe00) === 0xfc00) return 'unique-local'; // RFC 4193 fc00::/7
  if ((at(0) & 0xffc0) === 0xfe80) return 'link-local'; // RFC 4291 fe80::/10
  if ((at(0) & 0xffc0) === 0xfec0) return 'private'; // RFC 3879 deprecated site-local fec0::/10
  if ((at(0) & 0xff00) === 0xff00) return 'multicast'; // RFC 4291 ff00::/8
  // Everything outside global unicast 2000::/3 is unassigned or special (100::/64 discard...).
  if ((at(0) & 0xe000) !== 0x2000) return 'reserved';
  if (at(0) === 0x2001 && at(1) === 0x0db8) return 'documentation'; // RFC 3849 2001:db8::/32
  if (at(0) === 0x3fff && (at(1) & 0xf000) === 0) return 'documentation'; // RFC 9637 3fff::/20
  // RFC 2928 2001::/23 IETF protocol assignments: Teredo 2001::/32 (tunnels to an obfuscated
  // IPv4 client), benchmarking 2001:2::/48, ORCHID; none is a directory host.
  if (at(0) === 0x2001 && at(1) < 0x0200) return at(1) === 0x0002 && at(2) === 0 ? 'benchmarking' : 'reserved';
  // RFC 3056 6to4 2002::/16: the relay delivers to the embedded IPv4 address.
  if (at(0) === 0x2002) return classifyV4Number(embeddedV4(at(1), at(2)));
  return 'public';
}

/**
 * Classifies a textual IPv4 or IPv6 address (brackets and an IPv6 zone id are tolerated).
 * IPv4-mapped, IPv4-compatible, NAT64, 6to4 and Teredo forms are judged by what they reach,
 * so `::ffff:127.0.0.1` is `loopback` and `64:ff9b::a00:1` is `private`.
 *
 * @example
 * classifyAddress('169.254.169.254'); // 'metadata'
 * classifyAddress('2606:4700::1111'); // 'public'
 */
export function classifyAddress(address: string): AddressClass {
  let text = address.trim().toLowerCase();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  if (isIPv4(text)) return classifyV4Number(parseV4(text));
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  if (isIPv6(text)) return classifyV6(parseV6(text));
  return 'invalid';
}
