// The reverse-dns verifier: forward-confirmed reverse DNS (FCrDNS) against the agent's host
// suffixes, with an overall deadline, coalesced lookups and bounded TTL caches.
import { LRUCache } from 'lru-cache';
import type { Agent } from '../catalog/types.js';
import { formatIpAddress, parseIpAddress, type IpAddress } from './ip-ranges/ip-address.js';
import { isNonPublicAddress } from './ip-ranges/public-address.js';
import { isCdnProxyAddress } from './proxy-ranges.js';
import type { ReverseDnsReason, VerificationCheck, VerificationContext, Verifier } from './types.js';

/**
 * The DNS lookups the verifier needs, injected (on Node, `createNodeResolver` from "agentwarden/node").
 * "No such name" and "no records" resolve to `[]`; every other failure (SERVFAIL, REFUSED,
 * timeout) rejects, with `code: 'ETIMEOUT'` on the error for a timeout.
 */
export interface DnsResolver {
  /** PTR names of an address. */
  reverse(ip: string): Promise<string[]>;
  /** A records of a host name. */
  resolve4(hostname: string): Promise<string[]>;
  /** AAAA records of a host name. */
  resolve6(hostname: string): Promise<string[]>;
}

/** Cache settings of `reverseDnsVerifier`; `false` disables caching (lookups are still coalesced). */
export type ReverseDnsCacheOptions =
  | false
  | {
      /** Most cached verdicts (default 10,000): random source addresses must not grow memory. */
      readonly max?: number;
      /** How long a `pass` is kept, in ms (default 1 hour). */
      readonly positiveTtlMs?: number;
      /** How long a `fail` is kept, in ms (default 5 minutes). */
      readonly negativeTtlMs?: number;
      /** How long a DNS error or timeout is kept, in ms (default 10 s; 0 keeps none). */
      readonly errorTtlMs?: number;
    };

/** Options of `reverseDnsVerifier`. */
export interface ReverseDnsVerifierOptions {
  readonly resolver: DnsResolver;
  /** Overall deadline of one verification (all lookups), in ms; default 2000. */
  readonly timeoutMs?: number;
  readonly cache?: ReverseDnsCacheOptions;
  /**
   * Addresses looked up at once (each up to one PTR and eight forward queries); the rest wait
   * their turn within their deadline, and one whose deadline passed while it waited asks nothing
   * (`dns-timeout`). Default 64: a batch of a thousand claimed crawlers, or a flood of made-up
   * addresses, cannot turn into thousands of queries in flight at the resolver.
   */
  readonly maxConcurrentLookups?: number;
}

function check(outcome: VerificationCheck['outcome'], reason: ReverseDnsReason): VerificationCheck {
  return Object.freeze({ method: 'reverse-dns', outcome, reason });
}

const PASS = check('pass', 'ptr-and-forward-match');
const NOT_IN_DOMAIN = check('fail', 'ptr-not-in-domain');
const FORWARD_MISMATCH = check('fail', 'forward-mismatch');
const NO_PTR = check('fail', 'no-ptr');
const DNS_ERROR = check('inconclusive', 'dns-error');
const DNS_TIMEOUT = check('inconclusive', 'dns-timeout');
const MISSING = check('inconclusive', 'client-ip-missing');
const INVALID = check('inconclusive', 'client-ip-invalid');
const NOT_PUBLIC = check('inconclusive', 'client-ip-not-public');
const CDN_PROXY = check('inconclusive', 'client-ip-is-proxy');

// Bounds the work one address can cause: a reverse zone owner chooses how many PTRs it returns,
// and each name in the domain costs a forward lookup.
const MAX_PTRS = 8;
const TOO_MANY_PTRS = check('inconclusive', 'too-many-ptrs');

/** A host name lower-cased without its trailing dot. */
function normalizeHostname(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/**
 * Whether `hostname` is `suffix` or ends with `.suffix`: a label-boundary match, so
 * `evilgooglebot.com` is not under `googlebot.com` and `googlebot.com.evil.net` is not either.
 */
export function isUnderSuffix(hostname: string, suffix: string): boolean {
  return hostname === suffix || (hostname.length > suffix.length && hostname.endsWith(suffix) && hostname.charCodeAt(hostname.length - suffix.length - 1) === 46);
}

class DeadlineError extends Error {
  readonly code = 'ETIMEOUT';
}

function classify(error: unknown): VerificationCheck {
  return (error as { code?: unknown } | null)?.code === 'ETIMEOUT' ? DNS_TIMEOUT : DNS_ERROR;
}

function positiveNumber(value: unknown, name: string, fallback: number, allowZero = false): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new RangeError(`${name} must be a ${allowZero ? 'non-negative' : 'positive'} number, got ${String(value)}`);
  }
  return value;
}

/**
 * Creates the `reverse-dns` verifier (forward-confirmed reverse DNS, as Google, Bing, Apple and
 * Common Crawl document it): some PTR name of the client address must lie under one of the
 * agent's `reverse_dns` suffixes on a label boundary, AND that name's A (IPv4) or AAAA (IPv6)
 * records must contain the same address. The reverse lookup alone proves nothing: whoever holds
 * a reverse zone can make it say `crawl-1-2-3-4.googlebot.com`.
 *
 * Outcomes: `pass` `ptr-and-forward-match`. `fail` `no-ptr` when the address has no PTR at all
 * (the operators' procedures require one: a genuine crawler address always has it, so a claimed
 * crawler without one is evidence against the claim); `fail` `ptr-not-in-domain`; `fail`
 * `forward-mismatch` when a PTR is in the domain but no forward lookup returns the address
 * (`inconclusive` `too-many-ptrs` when more than eight names were in the domain: only eight are
 * looked up, and one left unasked might have confirmed it).
 * DNS trouble (SERVFAIL, REFUSED, unreachable server, the overall deadline) is `inconclusive`
 * `dns-error` / `dns-timeout`, never `fail`: a broken resolver must not brand real crawlers as
 * forgeries. A missing, unparseable or non-public client address (loopback, private, CGNAT,
 * link-local, unique-local: `client-ip-not-public`) is `inconclusive` too, and is never looked up.
 *
 * Verdicts are cached per (address, suffix set) with separate TTLs for pass, fail and error,
 * timed by the engine's injected clock; concurrent identical verifications share one lookup.
 * @throws {TypeError} when `resolver` lacks a method or `cache` has the wrong type.
 * @throws {RangeError} when `timeoutMs` or a cache setting is not a positive number (the message names it).
 * @example
 * import { createNodeResolver } from 'agentwarden/node';
 * const engine = createEngine({ verifiers: [reverseDnsVerifier({ resolver: createNodeResolver() })] });
 */
export function reverseDnsVerifier(options: ReverseDnsVerifierOptions): Verifier {
  if (typeof options !== 'object' || options === null) throw new TypeError(`options must be an object, got ${String(options)}`);
  const { resolver } = options;
  for (const method of ['reverse', 'resolve4', 'resolve6'] as const) {
    if (typeof resolver?.[method] !== 'function') throw new TypeError(`resolver.${method} must be a function`);
  }
  const timeoutMs = positiveNumber(options.timeoutMs, 'timeoutMs', 2000);
  const maxConcurrent = positiveNumber(options.maxConcurrentLookups, 'maxConcurrentLookups', 64);
  if (!Number.isInteger(maxConcurrent)) throw new RangeError(`maxConcurrentLookups must be a positive integer, got ${maxConcurrent}`);
  // Lookups running, and those waiting for one to end (in arrival order).
  let running = 0;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next !== undefined) next();
    else running--;
  };
  const turn = (): Promise<void> | undefined => {
    if (running < maxConcurrent) {
      running++;
      return undefined;
    }
    return new Promise((resolve) => waiting.push(resolve));
  };
  const cacheOption = options.cache ?? {};
  if (cacheOption !== false && (typeof cacheOption !== 'object' || cacheOption === null)) {
    throw new TypeError(`cache must be false or an object, got ${String(cacheOption)}`);
  }
  let cache: LRUCache<string, { check: VerificationCheck; expires: number }> | undefined;
  let positiveTtl = 0;
  let negativeTtl = 0;
  let errorTtl = 0;
  if (cacheOption !== false) {
    const max = positiveNumber(cacheOption.max, 'cache.max', 10_000);
    if (!Number.isInteger(max)) throw new RangeError(`cache.max must be a positive integer, got ${max}`);
    positiveTtl = positiveNumber(cacheOption.positiveTtlMs, 'cache.positiveTtlMs', 3_600_000, true);
    negativeTtl = positiveNumber(cacheOption.negativeTtlMs, 'cache.negativeTtlMs', 300_000, true);
    errorTtl = positiveNumber(cacheOption.errorTtlMs, 'cache.errorTtlMs', 10_000, true);
    cache = new LRUCache({ max });
  }
  const inFlight = new Map<string, Promise<VerificationCheck>>();

  // Suffixes normalised once per (immutable) agent record; the joined form keys the cache.
  const suffixPlans = new WeakMap<Agent, { suffixes: readonly string[]; key: string }>();
  const suffixesOf = (agent: Agent) => {
    let plan = suffixPlans.get(agent);
    if (plan === undefined) {
      const suffixes = [...new Set((agent.reverse_dns ?? []).map((s) => normalizeHostname(s).replace(/^\.+/, '')).filter((s) => s !== ''))];
      plan = { suffixes, key: suffixes.join(' ') };
      suffixPlans.set(agent, plan);
    }
    return plan;
  };

  /**
   * Looks an address up in its turn. Its slot is given back when it has an answer or at its
   * deadline, whichever comes first: a reverse zone that never answers holds a slot no longer than
   * the deadline its lookup was given (the resolver's own query runs on, holding none).
   * `started` says whether it asked anything: a timeout spent waiting for a turn is no verdict on
   * the address, and is not cached.
   */
  const lookup = async (address: IpAddress, text: string, suffixes: readonly string[], deadline: number, started: { value: boolean }): Promise<VerificationCheck> => {
    const waited = turn();
    if (waited !== undefined) await waited;
    let held = true;
    const free = () => {
      if (held) {
        held = false;
        release();
      }
    };
    // The wait used up the deadline (the answer went out as dns-timeout): ask nothing.
    if (Date.now() >= deadline) {
      free();
      return DNS_TIMEOUT;
    }
    started.value = true;
    const timer = setTimeout(free, deadline - Date.now());
    try {
      return await lookupNow(address, text, suffixes);
    } finally {
      clearTimeout(timer);
      free();
    }
  };

  const lookupNow = async (address: IpAddress, text: string, suffixes: readonly string[]): Promise<VerificationCheck> => {
    const ptrs = await resolver.reverse(text);
    if (ptrs.length === 0) return NO_PTR;
    // Every name is read (a DNS answer holds a few hundred at most); only the first MAX_PTRS in the domain are looked up.
    const inDomain = [...new Set(ptrs.map(normalizeHostname))].filter((ptr) => suffixes.some((suffix) => isUnderSuffix(ptr, suffix)));
    if (inDomain.length === 0) return NOT_IN_DOMAIN;
    // The address family decides the forward record type (IPv4-mapped addresses were folded to IPv4).
    const forward = address.family === 4 ? resolver.resolve4.bind(resolver) : resolver.resolve6.bind(resolver);
    const results = await Promise.allSettled(inDomain.slice(0, MAX_PTRS).map((ptr) => forward(ptr)));
    let failure: unknown;
    for (const result of results) {
      if (result.status === 'rejected') {
        failure ??= result.reason;
        continue;
      }
      for (const record of result.value) {
        const parsed = parseIpAddress(record);
        if (parsed !== undefined && formatIpAddress(parsed) === text) return PASS;
      }
    }
    // An unanswered forward lookup might have confirmed the name, and so might a name left unasked: not evidence of spoofing.
    if (failure !== undefined) return classify(failure);
    return inDomain.length > MAX_PTRS ? TOO_MANY_PTRS : FORWARD_MISMATCH;
  };

  const withDeadline = async (work: Promise<VerificationCheck>): Promise<VerificationCheck> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DeadlineError('reverse DNS deadline')), timeoutMs);
    });
    try {
      return await Promise.race([work, deadline]);
    } catch (error) {
      return classify(error);
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    name: 'reverse-dns',
    appliesTo: (agent) => suffixesOf(agent).suffixes.length > 0,
    verify(agent, request, context: VerificationContext) {
      if (request.clientIp === undefined) return MISSING;
      const address = parseIpAddress(request.clientIp);
      if (address === undefined) return INVALID;
      // The site's own network: its reverse zone is whatever the local resolver says, no evidence.
      if (isNonPublicAddress(address)) return NOT_PUBLIC;
      // A CDN's edge, not the sender's address: its reverse zone is the CDN's, no evidence either way.
      if (isCdnProxyAddress(address)) return CDN_PROXY;
      const text = formatIpAddress(address);
      const { suffixes, key: suffixKey } = suffixesOf(agent);
      const key = `${text} ${suffixKey}`;
      if (cache !== undefined) {
        const hit = cache.get(key);
        if (hit !== undefined) {
          if (hit.expires > context.now()) return hit.check;
          cache.delete(key);
        }
      }
      let pending = inFlight.get(key);
      if (pending === undefined) {
        const started = { value: false };
        pending = withDeadline(lookup(address, text, suffixes, Date.now() + timeoutMs, started)).then((result) => {
          inFlight.delete(key);
          if (cache !== undefined && started.value) {
            const ttl = result.outcome === 'pass' ? positiveTtl : result.outcome === 'fail' ? negativeTtl : errorTtl;
            if (ttl > 0) cache.set(key, { check: result, expires: context.now() + ttl });
          }
          return result;
        });
        inFlight.set(key, pending);
      }
      return pending;
    },
  };
}
