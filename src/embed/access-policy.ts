// Access policies (DESIGN.md §9): a plain object, validated and compiled once, that turns a
// request's identification into a decision — deny spoofed agents, deny chosen types or agents
// (403, or 402 as pay-per-crawl services answer), always allow verified agents of chosen types.
import { resolveAgentType, type Catalog } from '../catalog/catalog.js';
import type { Agent, AgentType } from '../catalog/types.js';
import { VERIFICATION_METHODS, verificationMethodsOf } from '../catalog/verification-methods.js';
import { isUnlistedAgentId } from '../catalog/unlisted-agent.js';
import type { Identification } from '../identify/identification.js';
import type { VisitDecision } from '../visits/visit.js';
import { isHttpToken } from '../http-token.js';
import { checkOptions } from './options.js';
import { checkRobotsSource, type RobotsSourceOptions } from './robots-source.js';

/** How a denied request is answered. */
export interface DenyResponseOptions {
  /** 403 Forbidden (default) or 402 Payment Required (pay-per-crawl). */
  readonly status?: 402 | 403;
  /** The body (default: a one-line text saying the site's policy refused the request). */
  readonly body?: string;
  /** Its Content-Type (default `text/plain; charset=utf-8`). */
  readonly contentType?: string;
  /** More response headers (a price header for pay-per-crawl, a Link to your terms). */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * An access policy, as a plain object. Rules, in the order they are asked (the first that applies
 * decides; none applying lets the request through with no decision recorded):
 * 1. `allowVerifiedAgentTypes`: a verified agent of one of these types is allowed (`allow-verified`);
 * 2. `denyVerificationFailed`: an agent whose claimed identity failed verification is denied (`deny-verification-failed`);
 * 3. `denyAgents`: these catalog agents (by id) are denied (`deny-agent`);
 * 4. `denyAgentTypes`: agents of these types are denied (`deny-agent-type`).
 */
export interface AccessPolicyOptions {
  readonly denyVerificationFailed?: boolean;
  readonly denyAgentTypes?: readonly string[];
  readonly denyAgents?: readonly string[];
  readonly allowVerifiedAgentTypes?: readonly string[];
  readonly denyResponse?: DenyResponseOptions;
  /**
   * Serve `/robots.txt` (see `RobotsSourceOptions`); `true` renders it from `denyAgentTypes` and
   * `denyAgents`, less the types of `allowVerifiedAgentTypes` (their genuine crawlers are let in).
   */
  readonly robotsTxt?: boolean | RobotsSourceOptions;
  /** Record decisions, but let every request through (`is_blocked` stays false). */
  readonly reportOnly?: boolean;
}

/** A response the middleware gives instead of the application's. */
export interface PolicyResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** A compiled policy. */
export interface AccessPolicy {
  /** The decision for an identified request, or undefined when no rule applies. */
  decide(identification: Identification): VisitDecision | undefined;
  /** The answer to a denied request. */
  readonly denial: PolicyResponse;
  readonly reportOnly: boolean;
  /** Where `/robots.txt` comes from, when the policy serves it. */
  readonly robotsTxt: RobotsSourceOptions | undefined;
}

const KNOWN_OPTIONS = new Set(['denyVerificationFailed', 'denyAgentTypes', 'denyAgents', 'allowVerifiedAgentTypes', 'denyResponse', 'robotsTxt', 'reportOnly']);
const DENY_RESPONSE_OPTIONS = new Set(['status', 'body', 'contentType', 'headers']);
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

function booleanOption(value: unknown, name: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new TypeError(`${name} must be a boolean, got ${typeof value}`);
  return value;
}

function stringList(value: unknown, name: string): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new TypeError(`${name} must be an array of strings, got ${typeof value}`);
  value.forEach((item, i) => {
    if (typeof item !== 'string') throw new TypeError(`${name}[${i}] must be a string, got ${typeof item}`);
  });
  return value as readonly string[];
}

function agentTypes(value: unknown, name: string): ReadonlySet<AgentType> {
  return new Set(
    stringList(value, name).map((item, i) => {
      const type = resolveAgentType(item);
      if (type === undefined) throw new RangeError(`${name}[${i}] is not an agent type: ${JSON.stringify(item)} (see AGENT_TYPES)`);
      return type;
    }),
  );
}

function denyResponse(value: unknown): PolicyResponse {
  if (value === undefined) value = {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError(`denyResponse must be an object, got ${value === null ? 'null' : typeof value}`);
  const options = value as DenyResponseOptions;
  for (const key of Object.keys(options)) if (!DENY_RESPONSE_OPTIONS.has(key)) throw new RangeError(`denyResponse.${key} is not an option (status, body, contentType, headers)`);
  const status = options.status ?? 403;
  if (status !== 402 && status !== 403) throw new RangeError(`denyResponse.status must be 402 or 403, got ${JSON.stringify(status)}`);
  const body = options.body ?? (status === 402 ? 'Payment required: this site charges automated agents for access.\n' : "Forbidden: this site's access policy does not allow this agent.\n");
  if (typeof body !== 'string') throw new TypeError(`denyResponse.body must be a string, got ${typeof body}`);
  const contentType = options.contentType ?? 'text/plain; charset=utf-8';
  if (typeof contentType !== 'string' || !HEADER_VALUE.test(contentType) || contentType === '') throw new RangeError(`denyResponse.contentType must be a header value, got ${JSON.stringify(contentType)}`);
  // A denial must not be cached and served to the people behind the same CDN.
  const headers: Record<string, string> = { 'content-type': contentType, 'cache-control': 'no-store' };
  const extra = options.headers ?? {};
  if (typeof extra !== 'object' || extra === null || Array.isArray(extra)) throw new TypeError('denyResponse.headers must be an object of header names to strings');
  for (const [name, headerValue] of Object.entries(extra)) {
    if (!isHttpToken(name)) throw new RangeError(`denyResponse.headers has an invalid header name: ${JSON.stringify(name)}`);
    if (typeof headerValue !== 'string' || !HEADER_VALUE.test(headerValue)) throw new RangeError(`denyResponse.headers[${JSON.stringify(name)}] must be a header value without line breaks`);
    headers[name.toLowerCase()] = headerValue;
  }
  return Object.freeze({ status, headers: Object.freeze(headers), body });
}

const decision = (rule: string, action: 'allow' | 'deny', reportOnly: boolean): VisitDecision => Object.freeze({ rule, action, report_only: reportOnly });

/**
 * Validates and compiles a policy against a catalog (agents named in it must exist there).
 * `verifierNames` (the engine's, `engine.verifierNames`) says which agents can be verified, for
 * robots.txt; without it, any agent the catalog gives verification data for.
 * @throws {TypeError} for an option of the wrong type; {RangeError} for an unknown option, agent
 * type or agent, a status other than 402/403, or a bad header (the message names the option).
 * @example
 * const policy = createAccessPolicy({ denyVerificationFailed: true, denyAgentTypes: ['AI Data Scraper'], allowVerifiedAgentTypes: ['Search Engine Crawler'] }, engine.catalog, engine.verifierNames);
 * policy.decide(identification); // { rule: 'deny-agent-type', action: 'deny', report_only: false }
 */
export function createAccessPolicy(options: AccessPolicyOptions, catalog: Catalog, verifierNames?: readonly string[]): AccessPolicy {
  checkOptions(options, 'createAccessPolicy');
  for (const key of Object.keys(options)) if (!KNOWN_OPTIONS.has(key)) throw new RangeError(`policy.${key} is not an option (${[...KNOWN_OPTIONS].join(', ')})`);
  const reportOnly = booleanOption(options.reportOnly, 'reportOnly');
  const denyFailed = booleanOption(options.denyVerificationFailed, 'denyVerificationFailed');
  const deniedTypes = agentTypes(options.denyAgentTypes, 'denyAgentTypes');
  const allowedVerifiedTypes = agentTypes(options.allowVerifiedAgentTypes, 'allowVerifiedAgentTypes');
  const deniedAgents = new Set(
    stringList(options.denyAgents, 'denyAgents').map((id, i) => {
      if (catalog.getAgent(id) === undefined) throw new RangeError(`denyAgents[${i}] is not an agent of the catalog: ${JSON.stringify(id)}${agentIdHint(id, catalog)}`);
      return id;
    }),
  );
  let robotsTxt: RobotsSourceOptions | undefined;
  // robots.txt names catalog agents only: an unlisted one is denied at the door, not in robots.txt.
  // Nor does it disallow what the policy lets in when verified: the genuine crawler reads robots.txt
  // and would stay away (Googlebot told "Disallow: /" drops the site), while spoofers, who do not
  // read it, are denied at the door. Such a type is left out whole, its crawlers reading the site's
  // own `*` group (naming each with "Allow: /" would override that group's rules for them); the ones
  // nothing can verify, denied at the door always, are not told so: a 403 tells them.
  const canBeVerified = (agent: Agent) => {
    const methods = verificationMethodsOf(agent);
    if (verifierNames === undefined) return methods.length > 0;
    // A verifier of the site's own making may verify any agent.
    return methods.some((method) => verifierNames.includes(method)) || verifierNames.some((name) => !(VERIFICATION_METHODS as readonly string[]).includes(name));
  };
  const denied = {
    agentTypes: [...deniedTypes].filter((type) => !allowedVerifiedTypes.has(type)),
    agents: [...deniedAgents].filter((id) => {
      const agent = catalog.getAgent(id)!;
      return !isUnlistedAgentId(id) && !(allowedVerifiedTypes.has(agent.type) && canBeVerified(agent));
    }),
  };
  if (options.robotsTxt === true) {
    // Nothing denied at all is a mistake; everything denied let in when verified is a policy (its robots.txt names nobody).
    if (deniedTypes.size === 0 && [...deniedAgents].every(isUnlistedAgentId)) {
      // It would answer /robots.txt with an empty file in place of the site's own.
      throw new RangeError(
        'robotsTxt: true renders robots.txt from denyAgentTypes and the catalog agents of denyAgents, and this policy has none (spoofed and unlisted agents are turned away at the door: robots.txt cannot name them), so it would serve an empty robots.txt in place of your own; deny some types or agents, or pass robotsTxt: { agentTypes: [...] } for the types robots.txt should disallow, or { siteRobotsTxt: "..." } for your own lines',
      );
    }
    robotsTxt = checkRobotsSource({}, denied, catalog);
  } else if (options.robotsTxt !== undefined && options.robotsTxt !== false) {
    robotsTxt = checkRobotsSource(options.robotsTxt, denied, catalog);
  }
  const denial = denyResponse(options.denyResponse);
  // Decisions are shared frozen objects: nothing is allocated per request.
  const allowVerified = decision('allow-verified', 'allow', reportOnly);
  const denyVerificationFailed = decision('deny-verification-failed', 'deny', reportOnly);
  const denyAgent = decision('deny-agent', 'deny', reportOnly);
  const denyAgentType = decision('deny-agent-type', 'deny', reportOnly);

  return {
    decide(identification) {
      if (identification.result === 'unknown_agent') return undefined;
      const type = identification.agent_type_name as AgentType;
      if (identification.result === 'verified' && allowedVerifiedTypes.has(type)) return allowVerified;
      if (denyFailed && identification.result === 'verification_failed') return denyVerificationFailed;
      if (deniedAgents.has(identification.agent_id)) return denyAgent;
      if (deniedTypes.has(type)) return denyAgentType;
      return undefined;
    },
    denial,
    reportOnly,
    robotsTxt,
  };
}

/** ", the id of GPTBot is \"gptbot\"" when a name or robots token was given where an id belongs. */
function agentIdHint(given: string, catalog: Catalog): string {
  const wanted = given.toLowerCase();
  const agent = catalog.agents.find((candidate) => candidate.name.toLowerCase() === wanted || candidate.robots_tokens.some((token) => token.toLowerCase() === wanted));
  return agent === undefined ? ' (agents are named by their catalog id: GET /agents, or agentwarden identify)' : `; denyAgents takes catalog ids: ${agent.name}'s is ${JSON.stringify(agent.id)}`;
}
