// The client-IP rule: which request header holds the visitor's address, and which hop of a
// forwarding chain (X-Forwarded-For, RFC 7239 Forwarded) to believe.
import { isHttpToken } from '../http-token.js';
import { formatIpAddress, normalizeIpAddress, parseIpAddress, type IpAddress } from './ip-ranges/ip-address.js';
import { compilePrefixSet, parseCidr, type CidrPrefix } from './ip-ranges/prefix-set.js';

/** The widest trusted-proxy ranges taken: a private /8 (10.0.0.0/8), an IPv6 /16. */
const MIN_PROXY_PREFIX_V4 = 8;
const MIN_PROXY_PREFIX_V6 = 16;
import { isNonPublicAddress } from './ip-ranges/public-address.js';
import { CLOUDFLARE_IP_RANGES } from './proxy-ranges.js';

/** Options of `createClientIpRule`. */
export interface ClientIpOptions {
  /**
   * Lower- or mixed-case header names to consult in order; the first one present decides.
   * `x-forwarded-for` and `forwarded` are read as hop lists, any other header as one address.
   * Default: `cf-connecting-ip`, `true-client-ip`, `x-real-ip`, `x-forwarded-for`, `forwarded`.
   * An empty list trusts no header, for a site no proxy stands in front of, where each of them is
   * whatever the client wrote: the address is then the socket's or the platform's, or none.
   */
  readonly headers?: readonly string[];
  /**
   * How to pick a hop from `x-forwarded-for` / `forwarded`. By default: walk from the right past
   * non-public addresses (loopback, RFC 1918, CGNAT, link-local, unique-local, unspecified: your
   * own network's proxies, as proxies set to trust private networks do) and take the first public
   * one; when every hop is non-public, the leftmost. A number N: skip exactly the N rightmost
   * entries (added by your own proxies beyond the first) and take the next one, whatever it is. A
   * list of CIDRs: walk from the right past addresses inside them only, and take the first address
   * outside them; the entry `cloudflare` stands for Cloudflare's published ranges
   * (`CLOUDFLARE_IP_RANGES`), for a site behind it. An explicit setting replaces the default walk.
   */
  readonly trustedProxies?: number | readonly string[];
}

/**
 * Picks the client address from lower-cased request headers; undefined when none can be trusted or
 * parsed. Rules made by `createClientIpRule` also list the headers they consult, in order: the
 * first of them present is the one an address came from.
 */
export type ClientIpRule = ((headers: ReadonlyMap<string, string>) => string | undefined) & {
  readonly headers?: readonly string[];
  /** The client address of a request received directly from `peer` (see `clientAddressFromPeer`). */
  readonly fromPeer?: (headers: ReadonlyMap<string, string>, peer: string | undefined) => string | undefined;
  /** The header the address came from, for a rule that may take it from elsewhere than its first header present (`remoteAddrPeerRule`). */
  readonly sourceHeader?: (headers: ReadonlyMap<string, string>) => string | undefined;
};

/**
 * The client address of a request this process received itself, from the socket address `peer`
 * (the last hop, which nobody can forge) and its headers. The rule's headers are believed only
 * when the peer is one of the proxies the rule walks past (by default a non-public address; with
 * a CIDR list, one inside it; with a hop count, always, as the operator declared a proxy in front):
 * a client connecting from a public address speaks for itself, whatever X-Forwarded-For it sends.
 * A rule that cannot say gives the peer.
 * @example
 * clientAddressFromPeer(createClientIpRule(), new Map([['x-forwarded-for', '203.0.113.7']]), '10.0.0.2'); // '203.0.113.7' (via the proxy)
 * clientAddressFromPeer(createClientIpRule(), new Map([['x-forwarded-for', '203.0.113.7']]), '198.51.100.9'); // '198.51.100.9' (direct)
 */
export function clientAddressFromPeer(rule: ClientIpRule, headers: ReadonlyMap<string, string>, peer: string | undefined): string | undefined {
  if (rule.fromPeer !== undefined) return rule.fromPeer(headers, peer);
  const address = peer === undefined ? undefined : parseIpLiteral(peer);
  return address ?? rule(headers);
}

/**
 * The header a rule took the client address from: the first of its headers the request has
 * (the one that decides, see `createClientIpRule`); undefined when the rule does not list its
 * headers or the request has none of them.
 */
export function clientIpHeader(rule: ClientIpRule, headers: ReadonlyMap<string, string>): string | undefined {
  if (rule.sourceHeader !== undefined) return rule.sourceHeader(headers);
  const names = rule.headers;
  if (names === undefined) return undefined;
  for (const name of names) if (headers.has(name)) return name;
  return undefined;
}

const DEFAULT_HEADERS = ['cf-connecting-ip', 'true-client-ip', 'x-real-ip', 'x-forwarded-for', 'forwarded'] as const;
const PORT = /^[0-9]{1,5}$/;

/**
 * The canonical address in one header value or hop (`1.2.3.4`, `1.2.3.4:80`, `[2001:db8::1]:443`,
 * `2001:db8::1`, `fe80::1%eth0`), or undefined for `unknown`, obfuscated identifiers (`_hidden`,
 * RFC 7239 §6.3) and garbage.
 */
export function parseClientAddress(value: string): string | undefined {
  const address = parseHop(value);
  return address === undefined ? undefined : hopText(value, address);
}

/**
 * The canonical text of a hop parsed as `address`. A bare dotted quad, the commonest hop, already
 * is it (the IPv4 parser takes only digits and dots, without leading zeros): only IPv6, an
 * IPv4-mapped address or a port makes formatting worth its cost.
 */
function hopText(value: string, address: IpAddress): string {
  return address.family === 4 && !value.includes(':') ? value.trim() : formatIpAddress(address);
}

/** As `parseClientAddress`, the address parsed. */
function parseHop(value: string): IpAddress | undefined {
  let text = value.trim();
  if (text.length === 0 || text.length > 64) return undefined;
  if (text.charCodeAt(0) === 91) {
    // RFC 7239 §6: IPv6 in brackets, optionally followed by a port.
    const close = text.indexOf(']');
    if (close < 0) return undefined;
    const rest = text.slice(close + 1);
    if (rest !== '' && !(rest.charCodeAt(0) === 58 && PORT.test(rest.slice(1)))) return undefined;
    text = text.slice(1, close);
    if (!text.includes(':')) return undefined;
  } else {
    const colon = text.indexOf(':');
    if (colon >= 0 && colon === text.lastIndexOf(':')) {
      // One colon: IPv4 with a port.
      if (!PORT.test(text.slice(colon + 1))) return undefined;
      text = text.slice(0, colon);
      if (text.includes(':')) return undefined;
    }
  }
  // RFC 6874 zone id: meaningless beyond the link, so dropped.
  const zone = text.indexOf('%');
  if (zone >= 0 && text.includes(':')) text = text.slice(0, zone);
  return parseIpAddress(text);
}

/**
 * The canonical form of a client address given as data (a visit's or an item's `client_ip`, a
 * socket's remote address): a bare IPv4 or IPv6 literal, IPv4-mapped IPv6 folded to IPv4 and an
 * IPv6 zone id dropped; undefined for anything else (ports, brackets, host names).
 * @example
 * parseIpLiteral('::ffff:66.249.66.1'); // '66.249.66.1'
 * parseIpLiteral('66.249.66.1:443'); // undefined
 */
export function parseIpLiteral(value: string): string | undefined {
  if (typeof value !== 'string' || value.length > 64) return undefined;
  const zone = value.indexOf('%');
  return normalizeIpAddress(zone >= 0 && value.includes(':') ? value.slice(0, zone) : value);
}

/**
 * The address in the X-Forwarded-For hop `skip` places left of the rightmost, as
 * `parseClientAddress(value.split(',')[length - 1 - skip])` but without splitting the
 * list: it runs for every request behind a proxy.
 */
function hopFromRight(value: string, skip: number): string | undefined {
  let end = value.length;
  for (let i = 0; i < skip; i++) {
    // lastIndexOf clamps a negative start to 0, so position 0 is checked here, not there.
    if (end === 0) return undefined;
    end = value.lastIndexOf(',', end - 1);
    if (end === -1) return undefined;
  }
  return parseClientAddress(value.slice(end === 0 ? 0 : value.lastIndexOf(',', end - 1) + 1, end));
}

/**
 * The first address from the right of an X-Forwarded-For value that is not one of ours, or the
 * leftmost when every hop is; undefined when a hop reached cannot be read (nothing left of it can
 * be vouched for). As `pickHop(value.split(','))` without splitting the list.
 */
function walkForwardedFor(value: string, ours: (address: IpAddress) => boolean): string | undefined {
  let end = value.length;
  for (;;) {
    const comma = end === 0 ? -1 : value.lastIndexOf(',', end - 1);
    const hop = value.slice(comma + 1, end);
    const address = parseHop(hop);
    if (address === undefined) return undefined;
    if (comma < 0 || !ours(address)) return hopText(hop, address);
    end = comma;
  }
}

/**
 * The `for=` value of each RFC 7239 forwarded-element, left to right; an element without `for`
 * gives an empty hop. Quoted strings may hold `,` `;` and backslash escapes (RFC 7230 §3.2.6).
 * Undefined for a quoted string left open: it would swallow the elements after it, among them the
 * one a proxy appended (`for=1.2.3.4;x="` joined with the proxy's `, for=<client>`).
 */
function forwardedHops(value: string): string[] | undefined {
  const hops: string[] = [];
  let current = '';
  let name = '';
  let inName = true;
  let pairValue = '';
  let quoted = false;
  const endPair = () => {
    if (name.trim().toLowerCase() === 'for') current = pairValue;
    name = '';
    pairValue = '';
    inName = true;
  };
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (quoted) {
      if (c === '\\' && i + 1 < value.length) pairValue += value[++i];
      else if (c === '"') quoted = false;
      else pairValue += c;
      continue;
    }
    if (c === ',') {
      endPair();
      hops.push(current);
      current = '';
    } else if (c === ';') {
      endPair();
    } else if (inName) {
      if (c === '=') inName = false;
      else name += c;
    } else if (c === '"' && pairValue.trim() === '') {
      quoted = true;
      pairValue = '';
    } else {
      pairValue += c;
    }
  }
  if (quoted) return undefined;
  endPair();
  hops.push(current);
  return hops;
}

/**
 * Creates the client-IP rule the engine uses to fill `clientIp` for IP-based verifiers.
 *
 * Security: every one of these headers can be sent by the client itself. They are only as good
 * as the proxy in front of you: list only the headers your CDN or load balancer sets (and
 * overwrites), and count its hops. The leftmost X-Forwarded-For entry is whatever the client
 * wrote, so the default takes the rightmost public one: the entry your nearest proxy appended,
 * past any of your own proxies on private addresses (a genuine crawler behind an internal load
 * balancer is judged by its own address, not the balancer's 10.x one). A public address your
 * proxies add, or a private one a client could write, needs an explicit `trustedProxies`.
 * The first configured header present decides; a present but unparseable value gives undefined
 * rather than falling through to a later header the client could also have forged.
 * Single-address headers repeated (joined with ", ") are refused as ambiguous.
 * @throws {TypeError} when `headers` is not an array of strings or `trustedProxies` has the wrong type.
 * @throws {RangeError} when a header name is not a valid token, or `trustedProxies` is a negative or non-integer count or holds an invalid CIDR (the message names it).
 * @example
 * // Behind two proxies appending to X-Forwarded-For (CDN, then load balancer):
 * const engine = createEngine({ clientIp: createClientIpRule({ headers: ['x-forwarded-for'], trustedProxies: 1 }) });
 */
export function createClientIpRule(options: ClientIpOptions = {}): ClientIpRule {
  if (typeof options !== 'object' || options === null) throw new TypeError(`options must be an object, got ${String(options)}`);
  const headerOption = options.headers ?? DEFAULT_HEADERS;
  if (!Array.isArray(headerOption)) throw new TypeError(`headers must be an array of header names, got ${String(headerOption)}`);
  const headers = headerOption.map((name: unknown, i) => {
    if (typeof name !== 'string') throw new TypeError(`headers[${i}] must be a string, got ${String(name)}`);
    const lower = name.toLowerCase();
    if (!isHttpToken(lower)) throw new RangeError(`headers[${i}] must be a header name, got ${JSON.stringify(name)}`);
    return lower;
  });

  const trusted = options.trustedProxies;
  let skip = 0;
  // The hops a walk from the right passes; undefined to take the hop `skip` places from the right.
  let ours: ((address: IpAddress) => boolean) | undefined;
  if (trusted === undefined) {
    ours = isNonPublicAddress;
  } else if (typeof trusted === 'number') {
    if (!Number.isInteger(trusted) || trusted < 0 || trusted > 64) throw new RangeError(`trustedProxies must be an integer from 0 to 64 or a list of CIDRs, got ${trusted}`);
    skip = trusted;
  } else if (Array.isArray(trusted)) {
    const prefixes: CidrPrefix[] = trusted.flatMap((cidr: unknown, i) => {
      if (typeof cidr !== 'string') throw new TypeError(`trustedProxies[${i}] must be a CIDR string, got ${String(cidr)}`);
      if (cidr.trim().toLowerCase() === 'cloudflare') return CLOUDFLARE_IP_RANGES.map((range) => parseCidr(range) as CidrPrefix);
      // A bare address is a /32 or /128.
      const result = parseCidr(cidr.includes('/') ? cidr : `${cidr}/${cidr.includes(':') ? 128 : 32}`);
      if (typeof result === 'string') throw new RangeError(`trustedProxies[${i}] is not a valid CIDR (${result}): ${JSON.stringify(cidr)}`);
      // No site's own proxies fill a sixteenth of the address space: a range that wide (0.0.0.0/0,
      // ::/0) would believe any client's forwarded header, so a spoofer names its own address.
      if (result.length < (result.address.family === 4 ? MIN_PROXY_PREFIX_V4 : MIN_PROXY_PREFIX_V6)) {
        throw new RangeError(`trustedProxies[${i}] is too wide to be a site's own proxies (at least /${MIN_PROXY_PREFIX_V4} for IPv4, /${MIN_PROXY_PREFIX_V6} for IPv6): ${JSON.stringify(cidr)}`);
      }
      return [result];
    });
    const proxies = compilePrefixSet(prefixes);
    ours = (address) => proxies.has(address);
  } else {
    throw new TypeError(`trustedProxies must be a number or an array of CIDRs, got ${String(trusted)}`);
  }

  const pickHop = (hops: readonly string[]): string | undefined => {
    if (ours === undefined) {
      const hop = hops[hops.length - 1 - skip];
      return hop === undefined ? undefined : parseClientAddress(hop);
    }
    for (let i = hops.length - 1; i >= 0; i--) {
      const address = parseHop(hops[i]!);
      // A hop we cannot read ends the trusted chain: nothing left of it can be vouched for.
      if (address === undefined) return undefined;
      // Every hop is one of ours: the request came from inside, from the leftmost.
      if (i === 0 || !ours(address)) return formatIpAddress(address);
    }
    return undefined;
  };

  const rule = (map: ReadonlyMap<string, string>) => {
    for (const name of headers) {
      const value = map.get(name);
      if (value === undefined) continue;
      if (name === 'x-forwarded-for') return ours === undefined ? hopFromRight(value, skip) : walkForwardedFor(value, ours);
      if (name === 'forwarded') {
        const hops = forwardedHops(value);
        return hops === undefined ? undefined : pickHop(hops);
      }
      return value.includes(',') ? undefined : parseClientAddress(value);
    }
    return undefined;
  };
  // The last peer, parsed (its canonical text, undefined when it is no address) and whether it is
  // one of ours: behind a proxy every request comes from the same one or few.
  let lastPeer: string | undefined;
  let lastPeerText: string | undefined;
  let lastPeerOurs = false;
  const fromPeer = (map: ReadonlyMap<string, string>, peer: string | undefined): string | undefined => {
    if (peer === undefined) return rule(map);
    if (peer !== lastPeer) {
      const address = parseHop(peer);
      lastPeer = peer;
      lastPeerText = address === undefined ? undefined : hopText(peer, address);
      lastPeerOurs = address !== undefined && (ours === undefined || ours(address));
    }
    if (lastPeerText === undefined) return rule(map);
    // The peer is the rightmost hop: past it only when it is one of ours.
    if (!lastPeerOurs) return lastPeerText;
    return rule(map) ?? lastPeerText;
  };
  return Object.assign(rule, { headers: Object.freeze(headers), fromPeer });
}

/**
 * The rule for visits from an integration known to record the socket address it saw as
 * `Remote-Addr`: the WordPress plugin, which sends PHP's REMOTE_ADDR under that name (a visitor's
 * own `Remote-Addr` header would be HTTP_REMOTE_ADDR there). That address is then the peer, as
 * for a live request (`clientAddressFromPeer`): a visitor reaching the site directly is judged by
 * it, whatever CF-Connecting-IP it wrote, and the headers are believed only from one of the
 * rule's proxies (by default a private address). Without it, the rule reads the headers as they
 * are. Only for such an integration: other SDKs forward every request header, and there
 * `Remote-Addr` is whatever the visitor wrote, as it is in a live request.
 * @example
 * const rule = remoteAddrPeerRule(createClientIpRule());
 * rule(new Map([['remote-addr', '198.51.100.7'], ['cf-connecting-ip', '66.249.66.1']])); // '198.51.100.7'
 */
export function remoteAddrPeerRule(rule: ClientIpRule): ClientIpRule {
  const forwarded = (map: ReadonlyMap<string, string>): string | undefined => {
    const peer = map.get('remote-addr');
    return peer === undefined ? rule(map) : clientAddressFromPeer(rule, map, peer);
  };
  // The header the address came from: one of the rule's, or Remote-Addr when the peer spoke for itself.
  const sourceHeader = (map: ReadonlyMap<string, string>): string | undefined => {
    const address = forwarded(map);
    if (address === undefined) return undefined;
    const named = clientIpHeader(rule, map);
    return named !== undefined && rule(map) === address ? named : map.has('remote-addr') ? 'remote-addr' : named;
  };
  return Object.assign(forwarded, { sourceHeader });
}
