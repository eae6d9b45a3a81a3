// A DnsResolver for the reverse-dns verifier on node:dns (c-ares), with short per-try timeouts.
import { Resolver } from 'node:dns/promises';
import { isIPv4, isIPv6 } from 'node:net';
import type { DnsResolver } from '../../index.js';

/** Options of `createNodeResolver`. */
export interface NodeResolverOptions {
  /** DNS servers as `"8.8.8.8"`, `"127.0.0.1:5353"` or `"[::1]:53"`; the system's when omitted. */
  readonly servers?: readonly string[];
  /** Milliseconds per try (default 1000); node's default retries can stall for many seconds (nodejs/node#39562). */
  readonly timeoutMs?: number;
  /** Tries per query (default 2). */
  readonly tries?: number;
}

// Codes c-ares uses for "this name or record does not exist": empty answers, not failures.
const EMPTY_CODES = new Set(['ENOTFOUND', 'ENODATA']);

/**
 * The PTR query name of an address (RFC 1035 §3.5 in-addr.arpa, RFC 3596 §2.5 ip6.arpa).
 * @throws {RangeError} when `ip` is not an IP address.
 */
export function reverseLookupName(ip: string): string {
  if (isIPv4(ip)) return `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
  if (!isIPv6(ip)) throw new RangeError(`not an IP address: ${JSON.stringify(ip)}`);
  let text = ip.toLowerCase();
  // Dual-stack sockets report IPv4 peers as ::ffff:a.b.c.d; their PTR lives under in-addr.arpa.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (mapped !== null) return reverseLookupName(mapped[1]!);
  // A trailing dotted IPv4 (::ffff:1.2.3.4) becomes two hex groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const nibbles = all.map((group) => group.padStart(4, '0')).join('');
  return `${[...nibbles].reverse().join('.')}.ip6.arpa`;
}

async function orEmpty(query: Promise<string[]>): Promise<string[]> {
  try {
    return await query;
  } catch (error) {
    if (EMPTY_CODES.has((error as NodeJS.ErrnoException).code ?? '')) return [];
    // Other codes (ETIMEOUT, ESERVFAIL, EREFUSED, ECONNREFUSED, ...) propagate, error.code intact,
    // for the verifier to classify as inconclusive.
    throw error;
  }
}

/**
 * Creates a resolver on `node:dns` `Resolver`: NXDOMAIN and "no data" become `[]`, every other
 * DNS failure rejects with its c-ares code (`ETIMEOUT` for timeouts).
 * @throws {RangeError} when `servers`, `timeoutMs` or `tries` is invalid (the message names it).
 * @example
 * const verifier = reverseDnsVerifier({ resolver: createNodeResolver({ servers: ['127.0.0.1:5353'] }) });
 */
export function createNodeResolver(options: NodeResolverOptions = {}): DnsResolver {
  const { servers, timeoutMs = 1000, tries = 2 } = options;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new RangeError(`timeoutMs must be a positive integer, got ${String(timeoutMs)}`);
  if (!Number.isInteger(tries) || tries <= 0 || tries > 10) throw new RangeError(`tries must be an integer from 1 to 10, got ${String(tries)}`);
  const resolver = new Resolver({ timeout: timeoutMs, tries });
  if (servers !== undefined) {
    if (!Array.isArray(servers) || servers.length === 0) throw new RangeError(`servers must be a non-empty array of addresses, got ${JSON.stringify(servers)}`);
    try {
      resolver.setServers(servers);
    } catch (error) {
      throw new RangeError(`servers must be addresses such as "127.0.0.1:5353", got ${JSON.stringify(servers)}: ${(error as Error).message}`);
    }
  }
  return {
    // Not resolver.reverse(): c-ares' getHostByAddr reports every failure, a dead server
    // included, as ENOTFOUND, which would read as "no PTR". A PTR query keeps the real code.
    reverse: async (ip) => orEmpty(resolver.resolvePtr(reverseLookupName(ip))),
    resolve4: (hostname) => orEmpty(resolver.resolve4(hostname)),
    resolve6: (hostname) => orEmpty(resolver.resolve6(hostname)),
  };
}
