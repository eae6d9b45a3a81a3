// createEngine: validates options once, compiles the catalog and wires identification,
// the verifier chain and (as they land) the other jobs.
import { createCatalog, type Catalog } from './catalog/catalog.js';
import type { Agent } from './catalog/types.js';
import { defaultCatalogDocument } from './catalog/default-catalog.js';
import { createCandidateFinder, type CandidateCacheOptions } from './identify/candidate.js';
import { headerMapOf, type HeadersInput } from './identify/headers.js';
import { identifiedAgent, unknownAgent, type Identification } from './identify/identification.js';
import { createRobotsRenderer, type RenderedRobotsTxt, type RobotsRenderer } from './robots/render.js';
import type { RobotsTxtOptions } from './robots/options.js';
import { NOTHING_APPLIED, startVerifierChain, type ChainOutcome } from './verify/chain.js';
import { createClientIpRule } from './verify/client-ip.js';
import type { VerificationCheck, VerificationContext, VerificationMethod, VerificationRequest, Verifier } from './verify/types.js';

/** One request to identify: its headers and an optional id echoed in the result. */
export interface IdentificationItem {
  readonly id?: string;
  readonly request_headers: HeadersInput | Headers;
  /** The visitor's address as the caller saw it (its socket or platform); used before any header. */
  readonly client_ip?: string;
}

/** One request to verify: as for identification, plus what signatures may cover. */
export interface VerificationItem extends IdentificationItem {
  readonly request_path?: string;
  readonly request_method?: string;
}

/** What was checked to verify an agent: the method that decided (null when none did) and every check made. */
export interface VerificationReport {
  readonly method: VerificationMethod | null;
  readonly checks: readonly VerificationCheck[];
}

/** What `engine.verify` returns: the identification fields plus what was checked. */
export type VerificationOutcome = Identification & {
  verification: VerificationReport;
};

/** What `engine.verifyNormalized` knows of the request beyond its headers. */
export interface NormalizedRequestContext {
  readonly id?: string;
  readonly method?: string;
  /** The request path with its query string (signatures may cover it, RFC 9421 §2.2). */
  readonly path?: string;
  /**
   * Picks the client address for IP-based verifiers instead of the engine's `clientIp` rule (a
   * project's own proxies), so a stored visit's address and its checks agree.
   */
  readonly clientIp?: (headers: ReadonlyMap<string, string>) => string | undefined;
  /** When the request arrived (ms since the epoch), when it is judged later (a stored visit). */
  readonly receivedAt?: number;
  /** The site's own hosts for Web Bot Auth (a project's), in place of the verifier's (see `VerificationRequest`). */
  readonly siteAuthorities?: readonly string[];
}

/** Options of `createEngine`. */
export interface EngineOptions {
  /** A compiled catalog or a catalog document; the bundled catalog when omitted. */
  readonly catalog?: Catalog | unknown;
  /** The verifier chain, asked in order; empty (every agent `not_verifiable`) when omitted. */
  readonly verifiers?: readonly Verifier[];
  /** LRU cache of UA / Signature-Agent matches (headers up to 1,024 characters); `false` disables it. */
  readonly cache?: CandidateCacheOptions;
  /** Milliseconds since the epoch; injected so signature expiry is testable. */
  readonly clock?: { now(): number };
  /** Picks the client address from normalised headers (for IP-based verifiers); `createClientIpRule()` when omitted. */
  readonly clientIp?: (headers: ReadonlyMap<string, string>) => string | undefined;
}

/** The agentwarden engine. */
export interface Engine {
  readonly catalog: Catalog;
  /** The client-IP rule given to `createEngine`, if one was (undefined for the default rule). */
  readonly clientIp: ((headers: ReadonlyMap<string, string>) => string | undefined) | undefined;
  /** The names of the verifiers in its chain, in order (`web-bot-auth`, `ip-ranges`, ...). */
  readonly verifierNames: readonly string[];
  /** Identifies one request. Never throws on bad input: it becomes `unknown_agent`. */
  identify(item: IdentificationItem): Promise<Identification>;
  /**
   * Identifies one request synchronously, for engines whose verifiers answer synchronously: none,
   * or IP ranges only. The result is the one `identify` gives. Bad input becomes `unknown_agent`.
   * @throws {TypeError} when a verifier answers with a promise (reverse DNS, a Web Bot Auth key
   * directory not yet cached): use `identify` with such verifiers.
   * @example
   * createEngine().identifySync({ request_headers: { 'user-agent': 'GPTBot/1.2' } }); // { result: 'not_verifiable', agent_id: 'gptbot', ... }
   */
  identifySync(item: IdentificationItem): Identification;
  /**
   * Identifies one request from headers already normalised as `normalizeHeaders` returns them
   * (lower-case names, repeated values joined), so a caller that reads the headers too (the
   * visit enricher) builds the map once. The result is the one `identify` gives for the same
   * headers; it comes synchronously unless a verifier has to wait (DNS, a key directory).
   * @example
   * engine.identifyNormalized(new Map([['user-agent', 'GPTBot/1.2']])); // { result: 'not_verifiable', agent_id: 'gptbot', ... }
   */
  identifyNormalized(headers: ReadonlyMap<string, string>, id?: string): Identification | Promise<Identification>;
  /**
   * As `identifyNormalized`, plus what was checked (as `verify` reports it): what the visit
   * pipeline stores with each visit. Synchronous unless a verifier has to wait.
   * @example
   * engine.verifyNormalized(new Map([['user-agent', 'GPTBot/1.2'], ['x-forwarded-for', '203.0.113.7']]), { method: 'GET', path: '/' });
   * // { result: 'verification_failed', agent_id: 'gptbot', ..., verification: { method: 'ip-ranges', checks: [...] } }
   */
  verifyNormalized(headers: ReadonlyMap<string, string>, context?: NormalizedRequestContext): VerificationOutcome | Promise<VerificationOutcome>;
  /** Identifies many requests; results keep the input order. */
  identifyMany(items: readonly IdentificationItem[]): Promise<Identification[]>;
  /** Identifies a request and reports every verification check made. */
  verify(item: VerificationItem): Promise<VerificationOutcome>;
  /**
   * A robots.txt disallowing every agent of the chosen types (memoized per options).
   * @throws {RobotsOptionsError} for invalid options (each issue at a JSON pointer) or output over 500 KiB.
   * @example
   * engine.robotsTxt({ agent_types: ['AI Data Scraper'] }); // "User-agent: CCBot\nDisallow: /\n\nUser-agent: GPTBot\n..."
   */
  robotsTxt(options: RobotsTxtOptions): string;
  /**
   * As `robotsTxt`, with the strong ETag and byte size an HTTP layer needs.
   * @throws {RobotsOptionsError} as `robotsTxt`.
   */
  renderRobotsTxt(options: RobotsTxtOptions): RenderedRobotsTxt;
}

/**
 * The request a verifier chain sees; the client address is computed on first use, since only
 * IP-based verifiers need it. A class, not an object literal with a getter: V8 builds such a
 * literal through the runtime, about 0.7 us per request against 0.01 us for `new`.
 */
class ChainRequest implements VerificationRequest {
  #address: string | undefined | null = null;
  constructor(
    readonly headers: ReadonlyMap<string, string>,
    readonly method: string | undefined,
    readonly path: string | undefined,
    private readonly rule: (headers: ReadonlyMap<string, string>) => string | undefined,
    readonly receivedAt: number | undefined,
    readonly siteAuthorities: readonly string[] | undefined,
  ) {}
  get clientIp(): string | undefined {
    if (this.#address === null) this.#address = this.rule(this.headers);
    return this.#address;
  }
}

const NO_REPORT: VerificationReport = Object.freeze({ method: null, checks: Object.freeze([]) as readonly VerificationCheck[] });

// The bundled catalog compiles to a 2.9 MB matcher table in 11-19 ms: every engine built on it
// shares one compilation (a Worker or a test suite may create many engines in one isolate).
let bundledCatalog: Catalog | undefined;

/** The compiled bundled catalog, compiled on first use. */
function compiledBundledCatalog(): Catalog {
  bundledCatalog ??= createCatalog(defaultCatalogDocument);
  return bundledCatalog;
}

function isCatalog(value: unknown): value is Catalog {
  return typeof value === 'object' && value !== null && typeof (value as Catalog).matchUserAgent === 'function';
}

/**
 * Creates an engine. Configuration is validated and compiled here, once.
 * @throws {TypeError | RangeError} for an invalid catalog or option (the message names it).
 * @example
 * const engine = createEngine();
 * await engine.identify({ request_headers: { 'User-Agent': 'Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)' } });
 * // { result: 'not_verifiable', agent_id: 'gptbot', agent_token: 'GPTBot', ... }
 */
export function createEngine(options: EngineOptions = {}): Engine {
  if (typeof options !== 'object' || options === null) throw new TypeError(`options must be an object, got ${String(options)}`);
  const catalog = isCatalog(options.catalog)
    ? options.catalog
    : options.catalog === undefined || options.catalog === defaultCatalogDocument
      ? compiledBundledCatalog()
      : createCatalog(options.catalog);
  const verifiers = options.verifiers ?? [];
  if (!Array.isArray(verifiers)) throw new TypeError('verifiers must be an array of verifiers');
  verifiers.forEach((verifier, i) => {
    if (typeof verifier?.appliesTo !== 'function' || typeof verifier?.verify !== 'function' || typeof verifier?.name !== 'string') {
      throw new TypeError(`verifiers[${i}] must be an object with name, appliesTo and verify`);
    }
  });
  const clock = options.clock ?? { now: () => Date.now() };
  if (typeof clock.now !== 'function') throw new TypeError('clock.now must be a function');
  const clientIp = options.clientIp ?? createClientIpRule();
  if (typeof clientIp !== 'function') throw new TypeError(`clientIp must be a function of the headers, got ${String(clientIp)}`);
  const context: VerificationContext = { now: () => clock.now() };
  const findCandidate = createCandidateFinder(catalog, options.cache ?? {});
  // Compiled on first use: it costs as much as the catalog itself, and many engines (an edge
  // worker identifying requests) never render a robots.txt.
  let robots: RobotsRenderer | undefined;
  const robotsRenderer = () => (robots ??= createRobotsRenderer(catalog));

  interface Run {
    readonly identification: Identification;
    readonly outcome?: ChainOutcome;
  }
  const finishedRun = (agent: Agent, outcome: ChainOutcome, id: string | undefined): Run => ({ outcome, identification: identifiedAgent(agent, outcome.result, id) });
  // Synchronous unless a verifier applies: identification with no applicable verifier is the
  // hot path and should cost no promise round-trips.
  // Headers are read in place when they already are lower-case strings (headerMapOf): a Map of
  // every header would cost more than matching the User-Agent.
  const run = (item: VerificationItem): Run | Promise<Run> => {
    const sent = item?.client_ip;
    return runNormalized(
      headerMapOf(item?.request_headers as HeadersInput),
      typeof item?.id === 'string' ? item.id : undefined,
      typeof item?.request_method === 'string' ? item.request_method : undefined,
      typeof item?.request_path === 'string' ? item.request_path : undefined,
      // The address the caller saw comes before anything a header claims.
      typeof sent === 'string' ? () => sent : clientIp,
    );
  };
  const runNormalized = (
    headers: ReadonlyMap<string, string>,
    id: string | undefined,
    method: string | undefined,
    path: string | undefined,
    rule: (headers: ReadonlyMap<string, string>) => string | undefined = clientIp,
    receivedAt?: number,
    siteAuthorities?: readonly string[],
  ): Run | Promise<Run> => {
    const agent = findCandidate(headers, path);
    if (agent === undefined) return { identification: unknownAgent(id) };
    // With no verifiers (identification only) there is no chain to make a request for.
    const chain = verifiers.length === 0 ? NOTHING_APPLIED : startVerifierChain(verifiers, agent, new ChainRequest(headers, method, path, rule, receivedAt, siteAuthorities), context);
    // No closure for the synchronous answer: it is made per request on the hot path.
    if (chain instanceof Promise) return chain.then((outcome) => finishedRun(agent, outcome, id));
    return finishedRun(agent, chain, id);
  };
  const identification = (item: IdentificationItem): Promise<Identification> => {
    const ran = run(item);
    return ran instanceof Promise ? ran.then((r) => r.identification) : Promise.resolve(ran.identification);
  };

  // The identification object is the run's own (made for this request), so it takes the report
  // in place; a spread copy of it would cost more than identifying (see enrich.ts).
  const withReport = ({ identification, outcome }: Run): VerificationOutcome => {
    const outcomeWithReport = identification as VerificationOutcome;
    outcomeWithReport.verification = outcome === undefined ? NO_REPORT : { method: outcome.method, checks: outcome.checks };
    return outcomeWithReport;
  };

  return {
    catalog,
    clientIp: options.clientIp,
    verifierNames: Object.freeze(verifiers.map((verifier) => verifier.name)),
    identify: identification,
    identifySync(item) {
      const ran = run(item);
      if (ran instanceof Promise) throw new TypeError('identifySync: a verifier answered with a promise (reverse DNS, an uncached key directory); use identify with such verifiers');
      return ran.identification;
    },
    identifyNormalized(headers, id) {
      const ran = runNormalized(headers, typeof id === 'string' ? id : undefined, undefined, undefined);
      return ran instanceof Promise ? ran.then((r) => r.identification) : ran.identification;
    },
    verifyNormalized(headers, request = {}) {
      const ran = runNormalized(
        headers,
        typeof request.id === 'string' ? request.id : undefined,
        typeof request.method === 'string' ? request.method : undefined,
        typeof request.path === 'string' ? request.path : undefined,
        typeof request.clientIp === 'function' ? request.clientIp : clientIp,
        typeof request.receivedAt === 'number' && Number.isFinite(request.receivedAt) ? request.receivedAt : undefined,
        Array.isArray(request.siteAuthorities) ? request.siteAuthorities : undefined,
      );
      return ran instanceof Promise ? ran.then(withReport) : withReport(ran);
    },
    identifyMany(items) {
      return Promise.all(items.map(identification));
    },
    async verify(item) {
      return withReport(await run(item));
    },
    robotsTxt: (options) => robotsRenderer().robotsTxt(options),
    renderRobotsTxt: (options) => robotsRenderer().renderRobotsTxt(options),
  };
}
