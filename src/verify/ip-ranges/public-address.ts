// Which addresses can be a visitor's address on the internet: the client-IP rule walks past the
// others (a site's own proxies) and IP-based verifiers take no evidence from them.
import type { IpAddress } from './ip-address.js';
import { compilePrefixSet, parseCidr, type CidrPrefix } from './prefix-set.js';

// Addresses no request from the internet arrives from: a hop with one is inside the site's own
// network (or the address is meaningless). Documentation ranges (RFC 5737, RFC 3849) are left
// out on purpose: they are ordinary addresses in examples and tests.
const NON_PUBLIC_CIDRS = [
  '0.0.0.0/32', // RFC 1122 unspecified
  '10.0.0.0/8', // RFC 1918
  '100.64.0.0/10', // RFC 6598 carrier-grade NAT
  '127.0.0.0/8', // RFC 1122 loopback
  '169.254.0.0/16', // RFC 3927 link-local
  '172.16.0.0/12', // RFC 1918
  '192.168.0.0/16', // RFC 1918
  '::/128', // RFC 4291 unspecified
  '::1/128', // RFC 4291 loopback
  'fc00::/7', // RFC 4193 unique-local
  'fe80::/10', // RFC 4291 link-local
] as const;

const nonPublic = compilePrefixSet(NON_PUBLIC_CIDRS.map((cidr) => parseCidr(cidr) as CidrPrefix));

/**
 * Whether a parsed address is loopback, private (RFC 1918), CGNAT, link-local, unique-local or
 * unspecified: one a site's own proxy or network has, never a visitor on the internet.
 * @example
 * isNonPublicAddress(parseIpAddress('10.0.0.1')!); // true
 * isNonPublicAddress(parseIpAddress('203.0.113.7')!); // false: documentation ranges count as public
 */
export function isNonPublicAddress(address: IpAddress): boolean {
  return nonPublic.has(address);
}

