// The enrichment step of the visit pipeline: identification (agent, type, result), client IP,
// referral class and the visit's time, added to parsed visits before a store sees them.
import type { Engine } from '../engine.js';
import type { VerificationOutcome } from '../engine.js';
import { headerMapOf } from '../identify/headers.js';
import { clientIpHeader, createClientIpRule, type ClientIpRule } from '../verify/client-ip.js';
import { isoUtcMillis } from './iso-time.js';
import { classifyReferral } from './referral.js';
import type { Visit } from './visit.js';
import type { EnrichedVisit } from './visit-store.js';

/** Options of `createVisitEnricher`. */
export interface VisitEnricherOptions {
  readonly engine: Engine;
  /** Picks the visitor's address from the visit's headers; `createClientIpRule()` when omitted. */
  readonly clientIp?: ClientIpRule;
  /** Milliseconds since the epoch: the `received` time. */
  readonly clock?: { now(): number };
}

/**
 * Enriches a batch of parsed visits, keeping their order. `clientIp` and `siteAuthorities` are a
 * project's own (its proxies, its hosts for Web Bot Auth), in place of the defaults.
 */
export type VisitEnricher = (visits: readonly Visit[], clientIp?: ClientIpRule, siteAuthorities?: readonly string[]) => Promise<EnrichedVisit[]>;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

// A `created` this far ahead of the server's clock is a client clock error, not a future visit.
const MAX_CLOCK_SKEW_MS = 60_000;

/**
 * Creates the enricher. Identification runs the engine's verifier chain, so a spoofed Googlebot
 * is stored as `verification_failed` with the checks that decided it; a per-call `clientIp` rule
 * (a project's trusted proxies) overrides the default one, for the stored address and for the
 * IP-based checks alike.
 * @throws {TypeError} for a missing engine or a clientIp that is not a function.
 * @example
 * const enrich = createVisitEnricher({ engine: createEngine() });
 * const [visit] = await enrich([parsedVisit]);
 * visit.agent_id; // 'gptbot'
 */
export function createVisitEnricher(options: VisitEnricherOptions): VisitEnricher {
  if (typeof options?.engine?.identify !== 'function' || typeof options.engine.verifyNormalized !== 'function') throw new TypeError('engine must be an engine from createEngine()');
  const engine = options.engine;
  const defaultClientIp = options.clientIp ?? createClientIpRule();
  if (typeof defaultClientIp !== 'function') throw new TypeError('clientIp must be a function of the headers');
  const clock = options.clock ?? { now: () => Date.now() };

  return async (visits, clientIp = defaultClientIp, siteAuthorities) => {
    // Whole milliseconds, as parsed `created` times are: stores index times as integers.
    const received = Math.floor(clock.now());
    const count = visits.length;
    // One header map per visit serves identification, the referral and the client IP; engines
    // answer synchronously unless a verifier waits, so promises are awaited only when some did.
    const headerMaps: ReadonlyMap<string, string>[] = new Array(count);
    const pending: (VerificationOutcome | Promise<VerificationOutcome>)[] = new Array(count);
    let waiting = false;
    const rules: ClientIpRule[] = new Array(count);
    const times: number[] = new Array(count);
    for (let i = 0; i < count; i++) {
      const visit = visits[i]!;
      const headers = headerMapOf(visit.request_headers);
      headerMaps[i] = headers;
      // The address the site saw itself comes before anything a header claims.
      const sent = visit.client_ip;
      const rule = sent === undefined ? clientIp : () => sent;
      rules[i] = rule;
      // Signatures may cover the method and path (RFC 9421 §2.2), so the chain sees them, and are
      // judged valid or expired at the visit's time, not when a batch of visits arrives.
      const identification = engine.verifyNormalized(headers, {
        method: visit.request_method,
        path: visit.request_path,
        clientIp: rule,
        receivedAt: (times[i] = visitTime(visit, received)),
        siteAuthorities,
      });
      if (identification instanceof Promise) waiting = true;
      pending[i] = identification;
    }
    const identifications = waiting ? await Promise.all(pending) : (pending as VerificationOutcome[]);
    const enriched: EnrichedVisit[] = new Array(count);
    for (let i = 0; i < count; i++) enriched[i] = enrichVisit(visits[i]!, identifications[i]!, headerMaps[i]!, received, rules[i]!, times[i]);
    return enriched;
  };
}

/** When a visit happened: its `created` time, unless absent, unreadable or ahead of `received` past the allowed skew. */
function visitTime(visit: Visit, received: number): number {
  const created = visit.created === undefined ? Number.NaN : (isoUtcMillis(visit.created) ?? Date.parse(visit.created));
  return Number.isFinite(created) && created <= received + MAX_CLOCK_SKEW_MS ? created : received;
}

/**
 * One visit with what identifying it found: the enricher's step for each visit, also used by
 * embedders that identified the request themselves (agentwarden's store sink). `headers` are the
 * visit's request headers as a map, `received` whole milliseconds, `clientIp` the rule that gives
 * the visitor's address, `time` the visit's time when already worked out.
 */
export function enrichVisit(
  visit: Visit,
  identification: VerificationOutcome,
  headers: ReadonlyMap<string, string>,
  received: number,
  clientIp: ClientIpRule,
  time: number = visitTime(visit, received),
): EnrichedVisit {
  const known = identification.result !== 'unknown_agent';
  // Referral classes describe humans arriving from AI answers; an agent's Referer is not a referral.
  const referral = known ? undefined : classifyReferral(visit.request_path, headers.get('referer'));
  // Object.assign, not `{ ...visit, received, ... }`: on Node 20, a spread of a visit takes
  // V8's slow path, 5-12 us per visit (more than the rest of enrichment, see bench/visits.mjs);
  // Object.assign copies the same own fields in 0.1 us, and the new fields are set after it.
  const item: Mutable<EnrichedVisit> = Object.assign({}, visit) as Mutable<EnrichedVisit>;
  item.received = received;
  item.time = time;
  item.agent_id = known ? identification.agent_id : null;
  item.agent_type = known ? (identification.agent_type_name as EnrichedVisit['agent_type']) : null;
  item.result = identification.result;
  item.client_ip = clientIp(headers) ?? null;
  if (item.client_ip !== null) {
    const header = clientIpHeader(clientIp, headers);
    if (header !== undefined) item.client_ip_header = header;
  }
  item.referral = referral ?? null;
  // Stored only when something was checked: most visits (browsers, agents without a method) carry none.
  if (identification.verification.checks.length > 0) item.verification = identification.verification;
  return item;
}
