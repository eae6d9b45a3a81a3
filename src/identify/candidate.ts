// Picks the agent a request claims to be: the Signature-Agent origin first (browser-based agents
// such as ChatGPT's send a plain Chrome UA), then the User-Agent; results cached per header values.
import type { Catalog } from '../catalog/catalog.js';
import { isAttackProbeId } from '../catalog/attack-probe.js';
import type { Agent } from '../catalog/types.js';

/** Cache settings for candidate matching; `false` disables the cache. */
export type CandidateCacheOptions = false | { readonly max?: number };

/** A function from normalised headers (and the request's path, when known) to the claimed agent. */
export type CandidateFinder = (headers: ReadonlyMap<string, string>, path?: string) => Agent | undefined;

// Quoted strings in a Signature-Agent value: the legacy form is one sf-string
// (`"https://chatgpt.com"`), the dictionary form has one per label (`sig1="https://..."`).
const QUOTED = /"([^"\\]*)"/g;

/** The agent named by a Signature-Agent header value, if any origin in it is in the catalog. */
export function agentFromSignatureAgent(catalog: Catalog, value: string): Agent | undefined {
  let found = false;
  for (const match of value.matchAll(QUOTED)) {
    found = true;
    const agent = catalog.matchSignatureAgent(match[1]!);
    if (agent !== undefined) return agent;
  }
  // Some senders omit the quotes: accept a bare URL too.
  return found ? undefined : catalog.matchSignatureAgent(value.trim());
}

/**
 * The longest key (User-Agent, and Signature-Agent) the cache keeps. Real headers are far
 * shorter; a client that sends distinct 16 KB headers would otherwise hold 10,000 of them
 * (150 MiB) in memory. Longer ones are matched every time, in time linear in their length.
 */
export const MAX_CACHED_KEY_LENGTH = 1024;

// A frozen marker records "no agent", so misses are cached too.
const NONE: { readonly none: true } = Object.freeze({ none: true });

/**
 * A bounded memo in two generations of up to half the bound each: when the newer fills, it
 * becomes the older and the older is dropped; a hit in the older moves to the newer. Entries in
 * use survive as in an LRU, at a plain Map lookup per hit (lru-cache's bookkeeping cost more than
 * the lookup itself on the identification path, which meets the same few user agents again and again).
 */
function createMemo<V>(max: number): { get(key: string): V | undefined; set(key: string, value: V): void } {
  // At most max entries in all (two for a bound of one).
  const half = Math.max(1, Math.floor(max / 2));
  let newer = new Map<string, V>();
  let older = new Map<string, V>();
  const set = (key: string, value: V) => {
    if (newer.size >= half) {
      older = newer;
      newer = new Map();
    }
    newer.set(key, value);
  };
  return {
    get(key) {
      const hit = newer.get(key);
      if (hit !== undefined) return hit;
      const old = older.get(key);
      if (old !== undefined) set(key, old);
      return old;
    },
    set,
  };
}

/**
 * Builds the candidate finder for a catalog.
 * @throws {RangeError} when `cache.max` is not a positive integer.
 */
export function createCandidateFinder(catalog: Catalog, cache: CandidateCacheOptions = {}): CandidateFinder {
  // An attack payload as the User-Agent names the request whatever its Signature-Agent claims
  // (anyone can send that header; its signature is checked later).
  const find = (userAgent: string, signatureAgent: string | undefined): Agent | undefined => {
    const signed = signatureAgent === undefined ? undefined : agentFromSignatureAgent(catalog, signatureAgent);
    if (userAgent === '') return signed;
    const named = catalog.matchUserAgent(userAgent);
    return signed === undefined || (named !== undefined && isAttackProbeId(named.id)) ? named : signed;
  };
  // An attack payload in a header (Log4Shell, Shellshock) names the request whatever its
  // User-Agent borrows, unless a scanner names itself there. The path only names a request no
  // header names: whoever wrote a link chose it, and crawlers (Googlebot too, which verifies)
  // follow planted links. Read per request, as neither is part of the cached key.
  const withProbe = (agent: Agent | undefined, headers: ReadonlyMap<string, string>, path: string | undefined) =>
    agent?.type === 'Security Scanner' ? agent : (catalog.matchRequestProbe?.(headers, agent === undefined ? path : undefined) ?? agent);
  if (cache === false) {
    return (headers, path) => withProbe(find(headers.get('user-agent') ?? '', headers.get('signature-agent')), headers, path);
  }
  const max = cache.max ?? 10_000;
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`cache.max must be a positive integer, got ${String(max)}`);
  const memo = createMemo<Agent | typeof NONE>(max);
  const cached = (userAgent: string, signatureAgent: string | undefined): Agent | undefined => {
    // The key holds exactly the header values that decide the match.
    const key = signatureAgent === undefined ? userAgent : `${userAgent}\n${signatureAgent}`;
    if (key.length > MAX_CACHED_KEY_LENGTH) return find(userAgent, signatureAgent);
    const hit = memo.get(key);
    if (hit !== undefined) return hit === NONE ? undefined : (hit as Agent);
    const agent = find(userAgent, signatureAgent);
    memo.set(key, agent ?? NONE);
    return agent;
  };
  return (headers, path) => withProbe(cached(headers.get('user-agent') ?? '', headers.get('signature-agent')), headers, path);
}
