// The published address ranges of CDNs that connect to a site's server themselves, so that a
// client-IP rule can believe their headers from them and from nobody else (see data/README.md),
// and a verifier knows such an address for a proxy's, not a client's.
import type { IpAddress } from './ip-ranges/ip-address.js';
import { compilePrefixSet, parseCidr, type CidrPrefix } from './ip-ranges/prefix-set.js';

/**
 * The addresses Cloudflare's proxy connects to an origin from, as Cloudflare publishes them at
 * https://www.cloudflare.com/ips/ (its ips-v4 and ips-v6 lists, as public copies showed them in 2026-09
 * and 2026-11).
 * For a server reached through Cloudflare, as a client-IP rule's `trustedProxies`: Cloudflare's
 * `CF-Connecting-IP` is then believed from Cloudflare alone, and a client that reaches the
 * server directly is judged by its own address, whatever it writes there.
 * @example
 * agentwarden({ clientIp: createClientIpRule({ headers: ['cf-connecting-ip'], trustedProxies: CLOUDFLARE_IP_RANGES }) });
 */
export const CLOUDFLARE_IP_RANGES: readonly string[] = Object.freeze([
  '173.245.48.0/20',
  '103.21.244.0/22',
  '103.22.200.0/22',
  '103.31.4.0/22',
  '141.101.64.0/18',
  '108.162.192.0/18',
  '190.93.240.0/20',
  '188.114.96.0/20',
  '197.234.240.0/22',
  '198.41.128.0/17',
  '162.158.0.0/15',
  '104.16.0.0/13',
  '104.24.0.0/14',
  '172.64.0.0/13',
  '131.0.72.0/22',
  '2400:cb00::/32',
  '2606:4700::/32',
  '2803:f800::/32',
  '2405:b500::/32',
  '2405:8100::/32',
  '2a06:98c0::/29',
  '2c0f:f248::/32',
]);

let cdnProxies: ((address: IpAddress) => boolean) | undefined;

/**
 * Whether an address is one a CDN's proxy connects to a site from (Cloudflare's published
 * ranges): the address a site without the CDN among its trusted proxies takes for the client's.
 * It says nothing of who sent the request, so a verifier finds no evidence in it either way: a
 * genuine crawler reaching a site through Cloudflare is not branded a spoofer for the edge's
 * address.
 */
export function isCdnProxyAddress(address: IpAddress): boolean {
  if (cdnProxies === undefined) {
    const set = compilePrefixSet(CLOUDFLARE_IP_RANGES.map((cidr) => parseCidr(cidr) as CidrPrefix));
    cdnProxies = (candidate) => set.has(candidate);
  }
  return cdnProxies(address);
}
