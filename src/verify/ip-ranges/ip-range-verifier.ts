// The ip-ranges verifier: is the client address inside the prefixes the agent's operator publishes?
import type { Agent } from '../../catalog/types.js';
import type { IpRangeReason, VerificationCheck, Verifier } from '../types.js';
import { parseIpAddress } from './ip-address.js';
import { parseIpRangeList } from './ip-list.js';
import { isNonPublicAddress } from './public-address.js';
import { isCdnProxyAddress } from '../proxy-ranges.js';
import { compilePrefixSet, type CidrPrefix, type PrefixSet } from './prefix-set.js';

/** Options of `ipRangeVerifier`. */
export interface IpRangeVerifierOptions {
  /**
   * The published lists by file name, as agents reference them in `ip_ranges`
   * (`"google-common-crawlers.json"`), each the parsed JAFAR JSON document.
   */
  readonly lists: Readonly<Record<string, unknown>> | ReadonlyMap<string, unknown>;
  /**
   * Which lists are complete enough that an address outside them is evidence of spoofing
   * (`fail`). `true` (default): every list; `false`: none (a miss is `inconclusive`, so the chain
   * goes on, e.g. to reverse DNS); or the names of the authoritative lists.
   */
  readonly authoritative?: boolean | readonly string[];
}

interface AgentPlan {
  /** The union of the agent's loaded lists, or undefined when none is loaded. */
  readonly set: PrefixSet | undefined;
  /** A miss is `fail` only when every list the agent names is loaded and authoritative. */
  readonly missFails: boolean;
}

function check(outcome: VerificationCheck['outcome'], reason: IpRangeReason): VerificationCheck {
  return Object.freeze({ method: 'ip-ranges', outcome, reason });
}

const PASS = check('pass', 'ip-in-range');
const FAIL = check('fail', 'ip-not-in-range');
const MISS_INCONCLUSIVE = check('inconclusive', 'ip-not-in-range');
const MISSING = check('inconclusive', 'client-ip-missing');
const INVALID = check('inconclusive', 'client-ip-invalid');
const NOT_PUBLIC = check('inconclusive', 'client-ip-not-public');
const CDN_PROXY = check('inconclusive', 'client-ip-is-proxy');

/**
 * Creates the `ip-ranges` verifier. Every list is validated and compiled into interval tables
 * here, once (an agent naming several lists gets their union, compiled on first use); a lookup
 * is one address parse and one binary search.
 *
 * Outcomes: `pass` `ip-in-range`; `fail` `ip-not-in-range` when the address is outside every list
 * the agent names and those lists are authoritative (the operator says its agent uses only these
 * addresses, so another address claiming to be it is spoofing); otherwise `inconclusive`
 * `ip-not-in-range` — also when the agent documents `reverse_dns`, so that reverse DNS decides a
 * miss (operators such as Google accept either method). The verifier applies to agents with at least one loaded list; when the
 * engine found no client address it answers `inconclusive` `client-ip-missing` rather than not
 * applying, so the checks show that the client-IP rule needs configuring; an address that does
 * not parse is `inconclusive` `client-ip-invalid`, and a non-public one (loopback, private,
 * CGNAT, link-local, unique-local: the only address known was the site's own proxy's) is
 * `inconclusive` `client-ip-not-public`.
 *
 * Why every list is authoritative by default: each file is the operator's own statement of where
 * that agent (crawler or user-triggered fetcher alike: Google, OpenAI and Perplexity publish
 * separate files for their user-triggered agents) sends requests from. Two costs follow. A stale
 * snapshot fails genuine traffic from a newly added prefix, so keep lists fresh
 * (`agentwarden refresh-ip-ranges`). Agents with `reverse_dns` are spared that: their miss is
 * inconclusive and the chain goes on to reverse DNS. Name only the lists you trust to be complete
 * in `authoritative` to make other misses inconclusive too.
 * @throws {TypeError} when `lists` is not an object or map, or a list is not a JAFAR document.
 * @throws {RangeError} when a list holds an invalid CIDR (naming the file and prefix), or `authoritative` names an unknown list.
 * @example
 * const verifier = ipRangeVerifier({ lists: { 'openai-gptbot.json': { creationTime: '2025-10-30T11:00:00.000000', prefixes: [{ ipv4Prefix: '52.230.152.0/24' }] } } });
 * const engine = createEngine({ verifiers: [verifier] });
 */
export function ipRangeVerifier(options: IpRangeVerifierOptions): Verifier {
  if (typeof options !== 'object' || options === null) throw new TypeError(`options must be an object, got ${String(options)}`);
  const { lists, authoritative = true } = options;
  if (typeof lists !== 'object' || lists === null || Array.isArray(lists)) {
    throw new TypeError(`lists must be an object or Map of file name to JAFAR document, got ${Array.isArray(lists) ? 'an array' : String(lists)}`);
  }
  const entries = lists instanceof Map ? [...(lists as ReadonlyMap<string, unknown>)] : Object.entries(lists);
  const parsed = new Map<string, readonly CidrPrefix[]>();
  const compiled = new Map<string, PrefixSet>();
  for (const [name, document] of entries) {
    const { prefixes } = parseIpRangeList(document, name);
    parsed.set(name, prefixes);
    compiled.set(name, compilePrefixSet(prefixes));
  }

  let isAuthoritative: (name: string) => boolean;
  if (typeof authoritative === 'boolean') {
    isAuthoritative = () => authoritative;
  } else if (Array.isArray(authoritative)) {
    for (const name of authoritative) {
      if (!compiled.has(name)) throw new RangeError(`authoritative names a list that is not loaded: ${JSON.stringify(name)}`);
    }
    const set = new Set<string>(authoritative);
    isAuthoritative = (name) => set.has(name);
  } else {
    throw new TypeError(`authoritative must be a boolean or an array of list names, got ${String(authoritative)}`);
  }

  // Agents are immutable catalog records: plan each one once.
  const plans = new WeakMap<Agent, AgentPlan>();
  const planFor = (agent: Agent): AgentPlan => {
    let plan = plans.get(agent);
    if (plan === undefined) {
      const names = [...new Set(agent.ip_ranges ?? [])];
      const loaded = names.filter((name) => compiled.has(name));
      // One list: its compiled set. Several: their union, compiled once, so a lookup stays one search.
      const set = loaded.length <= 1 ? compiled.get(loaded[0] ?? '') : compilePrefixSet(loaded.flatMap((name) => parsed.get(name)!));
      // An agent that also documents reverse DNS (Googlebot, bingbot, Applebot) is verifiable
      // either way by its operator's own rules, so a miss defers to reverse DNS instead of
      // failing on a list that may be a day stale.
      const defersToDns = (agent.reverse_dns?.length ?? 0) > 0;
      const missFails = set !== undefined && !defersToDns && loaded.length === names.length && names.every(isAuthoritative);
      plan = { set, missFails };
      plans.set(agent, plan);
    }
    return plan;
  };

  return {
    name: 'ip-ranges',
    appliesTo: (agent) => planFor(agent).set !== undefined,
    verify(agent, request) {
      const { set, missFails } = planFor(agent);
      if (set === undefined) return MISS_INCONCLUSIVE;
      if (request.clientIp === undefined) return MISSING;
      const address = parseIpAddress(request.clientIp);
      if (address === undefined) return INVALID;
      // A private or loopback address is the site's own network: nothing is known of the sender.
      if (isNonPublicAddress(address)) return NOT_PUBLIC;
      if (set.has(address)) return PASS;
      // A CDN's edge (a site behind Cloudflare that does not name it as its proxy): not the sender's address.
      if (isCdnProxyAddress(address)) return CDN_PROXY;
      return missFails ? FAIL : MISS_INCONCLUSIVE;
    },
  };
}
