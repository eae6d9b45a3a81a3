// The verifier chain the node server runs: Web Bot Auth over the SSRF-safe fetcher, the bundled
// operator IP lists, and forward-confirmed reverse DNS on node:dns.
import { ipRangeVerifier, reverseDnsVerifier, webBotAuthVerifier, type Verifier } from '../../index.js';
import { createSafeDirectoryFetcher } from './directory-fetcher.js';
import { createNodeResolver } from './dns-resolver.js';
import { nodeEd25519 } from './ed25519.js';
import { loadIpRangeLists } from './ip-ranges-loader.js';

/** The verification methods the node adapter can assemble, in chain order. */
export const NODE_VERIFIER_METHODS = ['web-bot-auth', 'ip-ranges', 'reverse-dns'] as const;

/** One of NODE_VERIFIER_METHODS. */
export type NodeVerifierMethod = (typeof NODE_VERIFIER_METHODS)[number];

/** Options of createNodeVerifiers. */
export interface NodeVerifiersOptions {
  /** Which methods to run; all of them when omitted. The chain order is always NODE_VERIFIER_METHODS'. */
  readonly methods?: readonly NodeVerifierMethod[];
  /** DNS servers for reverse DNS (`"127.0.0.1:5353"`); the system's when omitted. */
  readonly dnsServers?: readonly string[];
  /** A directory of JAFAR IP lists (kept by `refresh-ip-ranges --dir`), replacing the bundled ones of the same name. */
  readonly ipRangesDirectory?: string;
  /** The lists already read (`loadIpRangeLists`), instead of reading `ipRangesDirectory`. */
  readonly ipRangeLists?: Record<string, unknown>;
  /** The site's own hosts, for Web Bot Auth (see `WebBotAuthVerifierOptions.siteAuthorities`); any host when omitted. */
  readonly siteAuthorities?: readonly string[];
}

/**
 * Builds the verifier chain for a Node.js server, cheapest evidence first: a signature proves
 * identity outright; an IP list lookup is local; reverse DNS costs network round trips.
 * @throws {RangeError} for an unknown method or invalid DNS server address.
 * @example
 * const engine = createEngine({ verifiers: createNodeVerifiers() });
 */
export function createNodeVerifiers(options: NodeVerifiersOptions = {}): Verifier[] {
  const methods = options.methods ?? NODE_VERIFIER_METHODS;
  for (const method of methods) {
    if (!(NODE_VERIFIER_METHODS as readonly string[]).includes(method)) {
      throw new RangeError(`methods: ${JSON.stringify(method)} is not one of ${NODE_VERIFIER_METHODS.join(', ')}`);
    }
  }
  const chosen = new Set<string>(methods);
  const verifiers: Verifier[] = [];
  if (chosen.has('web-bot-auth')) verifiers.push(webBotAuthVerifier({ fetchDirectory: createSafeDirectoryFetcher(), verifyEd25519: nodeEd25519(), ...(options.siteAuthorities === undefined ? {} : { siteAuthorities: options.siteAuthorities }) }));
  if (chosen.has('ip-ranges')) verifiers.push(ipRangeVerifier({ lists: options.ipRangeLists ?? loadIpRangeLists(options.ipRangesDirectory) }));
  if (chosen.has('reverse-dns')) verifiers.push(reverseDnsVerifier({ resolver: createNodeResolver(options.dnsServers === undefined ? {} : { servers: options.dnsServers }) }));
  return verifiers;
}
