// Where the middleware's /robots.txt comes from: rendered by the engine from the policy's rules, or
// fetched from an agentwarden (or Known Agents) server's `POST /robots-txts` and cached a day.
import type { Catalog } from '../catalog/catalog.js';
import type { Engine } from '../engine.js';
import { RobotsOptionsError } from '../robots/errors.js';
import { robotsTxtRecords } from '../robots/match.js';
import { strongEtag } from '../robots/etag.js';
import { validateRobotsOptions, type RobotsAgentEntry } from '../robots/options.js';
import { MAX_ROBOTS_TXT_BYTES } from '../robots/render.js';
import { readTextUpTo } from './bounded-text.js';
import type { Timers } from './delivery-queue.js';

/**
 * Where `/robots.txt` comes from. Without `url` the engine renders it; with `url` and `token` it is
 * fetched from that server's `POST /robots-txts` (the same body) and cached for `refreshMs`
 * (default one day, as the interface recommends), and rendered locally until the first fetch
 * succeeds or whenever the server cannot be reached and no copy is cached.
 */
export interface RobotsSourceOptions {
  /** The agent types to disallow; default: the policy's `denyAgentTypes`. */
  readonly agentTypes?: readonly string[];
  /** Agents disallowed by name (`disallow_agents`); default: the policy's `denyAgents`. */
  readonly disallowAgents?: readonly RobotsAgentEntry[];
  /** Agents allowed by name (`allow_agents`), e.g. every AI Data Scraper but one. */
  readonly allowAgents?: readonly RobotsAgentEntry[];
  readonly disallow?: string | readonly string[];
  readonly allow?: string | readonly string[];
  /**
   * The site's own robots.txt (its `User-agent: *` group, `Sitemap` lines...), served first, then
   * agentwarden's groups: the middleware answers `/robots.txt` itself, so a route of the site's
   * own for it is never reached. Up to 64 KiB; together with the groups within 500 KiB. A last
   * group without rules is closed with an empty `Disallow:`; a group for an agent the policy's
   * groups name is refused at creation.
   */
  readonly siteRobotsTxt?: string;
  /** A Known Agents-compatible API's base URL; the text comes from `<url>/robots-txts`. */
  readonly url?: string;
  readonly token?: string;
  readonly refreshMs?: number;
  readonly fetch?: typeof fetch;
}

/** A robots.txt ready to serve. */
export interface ServedRobotsTxt {
  readonly text: string;
  /** A validator for If-None-Match, when known. */
  readonly etag: string | undefined;
}

/** Gives the current robots.txt: at once when cached, else after one fetch. */
export interface RobotsSource {
  /** The robots.txt to serve; `waitUntil` (Workers') keeps a refresh this starts running past the response. */
  get(waitUntil?: (promise: Promise<unknown>) => void): ServedRobotsTxt | Promise<ServedRobotsTxt>;
}

const OPTIONS = new Set(['agentTypes', 'disallowAgents', 'allowAgents', 'disallow', 'allow', 'siteRobotsTxt', 'url', 'token', 'refreshMs', 'fetch']);
const MAX_SITE_ROBOTS_TXT_BYTES = 64 * 1024;
const DAY_MS = 86_400_000;
// After a failed fetch, the next try waits this long (the local rendering is served meanwhile).
const RETRY_MS = 300_000;
const FETCH_TIMEOUT_MS = 5_000;

/** The body of `POST /robots-txts` (and of the local rendering) the options describe. */
function robotsBody(options: RobotsSourceOptions) {
  return {
    agent_types: options.agentTypes ?? [],
    ...(options.disallowAgents === undefined ? {} : { disallow_agents: options.disallowAgents }),
    ...(options.allowAgents === undefined ? {} : { allow_agents: options.allowAgents }),
    ...(options.disallow === undefined ? {} : { disallow: options.disallow }),
    ...(options.allow === undefined ? {} : { allow: options.allow }),
  };
}

/** Whether the options name no type and no agent: agentwarden then has no group to add. */
function namesNothing(options: RobotsSourceOptions): boolean {
  return (options.agentTypes ?? []).length === 0 && (options.disallowAgents ?? []).length === 0 && (options.allowAgents ?? []).length === 0;
}

/** What the policy denies, as robots.txt defaults: types and agents by name. */
export interface PolicyRobotsDefaults {
  readonly agentTypes: readonly string[];
  readonly agents: readonly string[];
}

/**
 * Validates a robots.txt source against the catalog; the policy's denied types and agents are the
 * defaults of `agentTypes` and `disallowAgents`, so the file says what the policy does.
 * @throws {TypeError | RangeError} naming `robotsTxt.<option>`.
 */
export function checkRobotsSource(value: unknown, denied: PolicyRobotsDefaults, catalog: Catalog): RobotsSourceOptions {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError(`robotsTxt must be true, false or an object, got ${value === null ? 'null' : typeof value}`);
  const options = value as RobotsSourceOptions;
  for (const key of Object.keys(options)) if (!OPTIONS.has(key)) throw new RangeError(`robotsTxt.${key} is not an option (${[...OPTIONS].join(', ')})`);
  const agentTypes = options.agentTypes ?? denied.agentTypes;
  const disallowAgents = options.disallowAgents ?? (denied.agents.length === 0 ? undefined : denied.agents);
  try {
    // Nothing of the policy's to say (every type it denies is let in when verified): only the site's own lines.
    if (!namesNothing({ ...options, agentTypes, disallowAgents })) validateRobotsOptions(robotsBody({ ...options, agentTypes, ...(disallowAgents === undefined ? {} : { disallowAgents }) }), catalog);
  } catch (error) {
    if (error instanceof RobotsOptionsError) throw new RangeError(`robotsTxt: ${error.message}${options.agentTypes === undefined ? ' (agentTypes defaults to denyAgentTypes)' : ''}`);
    throw error;
  }
  if (options.url !== undefined) {
    let url: URL;
    try {
      url = new URL(String(options.url));
    } catch {
      throw new RangeError(`robotsTxt.url must be an absolute http(s) URL, got ${JSON.stringify(options.url)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RangeError(`robotsTxt.url must be an http(s) URL, got ${JSON.stringify(options.url)}`);
    if (url.username !== '' || url.password !== '') throw new RangeError('robotsTxt.url must not carry a user name or password: the project token is the credential (robotsTxt.token)');
    if (typeof options.token !== 'string' || options.token === '' || /[\r\n]/.test(options.token)) throw new TypeError('robotsTxt.token must be the project access token (a non-empty string)');
  }
  if (options.siteRobotsTxt !== undefined) {
    if (typeof options.siteRobotsTxt !== 'string') throw new TypeError(`robotsTxt.siteRobotsTxt must be a string (the site's own robots.txt), got ${typeof options.siteRobotsTxt}`);
    const bytes = new TextEncoder().encode(options.siteRobotsTxt).length;
    if (bytes > MAX_SITE_ROBOTS_TXT_BYTES) throw new RangeError(`robotsTxt.siteRobotsTxt is ${bytes} bytes; at most ${MAX_SITE_ROBOTS_TXT_BYTES}`);
  }
  if (options.refreshMs !== undefined && (!Number.isSafeInteger(options.refreshMs) || options.refreshMs < 1000)) throw new RangeError(`robotsTxt.refreshMs must be an integer >= 1000, got ${String(options.refreshMs)}`);
  if (options.fetch !== undefined && typeof options.fetch !== 'function') throw new TypeError('robotsTxt.fetch must be a function (the Fetch API)');
  return { ...options, agentTypes, ...(disallowAgents === undefined ? {} : { disallowAgents }) };
}

// Field names parsers take as User-agent: Google's accepts these misspellings too.
const USER_AGENT_FIELDS = new Set(['user-agent', 'useragent', 'user agent']);

/** The `User-agent` values of a robots.txt, and whether its last group has no Allow or Disallow rule (RFC 9309 §2.1). */
function userAgentLines(text: string): { readonly all: readonly string[]; readonly dangling: boolean } {
  const all: string[] = [];
  let ruled = true;
  // Read as Google's parser reads it, whitespace for the colon included (`User-agent GPTBot`).
  for (const { field, value } of robotsTxtRecords(text, true)) {
    if (USER_AGENT_FIELDS.has(field)) {
      ruled = false;
      all.push(value);
    } else if (field === 'allow' || field === 'disallow') ruled = true;
  }
  return { all, dangling: !ruled };
}

/** How parsers key a User-agent value: its leading product token, lower-cased (`GPTBot/1.2`, `GPTBot*` and `GPTBot (+url)` are all `gptbot`). */
function userAgentKey(value: string): string {
  return (/^[A-Za-z0-9_.-]*/.exec(value.trim())?.[0] ?? '').toLowerCase();
}

/**
 * The site's own robots.txt, made safe to serve before agentwarden's groups. A last group without
 * an Allow or Disallow line (only `Crawl-delay`, or nothing) would run on into agentwarden's first
 * group and take its rules, so it is closed with an empty `Disallow:` (which allows everything, as
 * a group without rules does). A group naming an agent agentwarden's groups name would merge with
 * theirs (RFC 9309 §2.2.1), the policy's rule and the site's saying two things at once: refused.
 * @throws {RangeError} naming `robotsTxt.siteRobotsTxt`.
 */
function siteRobotsTxtBefore(site: string, rendered: string): string {
  const own = userAgentLines(site);
  const ours = new Set(userAgentLines(rendered).all.map(userAgentKey));
  const both = own.all.filter((value) => userAgentKey(value) !== '' && ours.has(userAgentKey(value)));
  if (both.length > 0) throw new RangeError(`robotsTxt.siteRobotsTxt has a group for ${both.join(', ')}, which the policy's robots.txt names too; leave that agent to the policy (or its agentTypes, disallowAgents, allowAgents)`);
  const text = site.endsWith('\n') ? site : `${site}\n`;
  return own.dangling ? `${text}Disallow: # added by agentwarden: ends the group above, whose crawlers may go anywhere\n` : text;
}

/**
 * Creates the source for checked options (`checkRobotsSource`).
 * @example
 * const robots = createRobotsSource({ agentTypes: ['AI Data Scraper'] }, engine, { now: () => Date.now() }, timers);
 * await robots.get(); // { text: 'User-agent: CCBot\nDisallow: /\n...', etag: '"…"' }
 */
export function createRobotsSource(options: RobotsSourceOptions, engine: Engine, clock: { now(): number }, timers: Timers): RobotsSource {
  const body = robotsBody(options);
  const empty = namesNothing(options);
  const rendered = empty ? { text: '', etag: strongEtag(new Uint8Array(0)) } : engine.renderRobotsTxt(body);
  const site = options.siteRobotsTxt;
  const siteText = site === undefined || site === '' ? undefined : siteRobotsTxtBefore(site, rendered.text);
  /** What is served of agentwarden's text: after the site's own, when given (undefined when the whole passes 500 KiB). */
  const served = (text: string, etag: string | undefined): ServedRobotsTxt | undefined => {
    if (siteText === undefined) return Object.freeze({ text, etag });
    const whole = text === '' ? siteText : `${siteText}\n${text}`;
    const bytes = new TextEncoder().encode(whole);
    return bytes.length > MAX_ROBOTS_TXT_BYTES ? undefined : Object.freeze({ text: whole, etag: strongEtag(bytes) });
  };
  const local = served(rendered.text, rendered.etag);
  if (local === undefined) throw new RangeError(`robotsTxt: the site's own robots.txt and agentwarden's groups come to more than ${MAX_ROBOTS_TXT_BYTES} bytes (RFC 9309's limit); shorten siteRobotsTxt or choose fewer types`);
  // With nothing to name there is nothing to ask a server for.
  if (options.url === undefined || empty) return { get: () => local };

  const endpoint = new URL('robots-txts', options.url.endsWith('/') ? options.url : `${options.url}/`);
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const refreshMs = options.refreshMs ?? DAY_MS;
  const requestBody = JSON.stringify(body);
  // The server's ETag (asked with If-None-Match) and what is served of its answer.
  let fetchedEtag: string | undefined;
  let cached: ServedRobotsTxt | undefined;
  let nextFetch = 0;
  let inFlight: Promise<ServedRobotsTxt> | undefined;
  let inFlightSince = 0;
  // Whether a fetch has ended, answered or not: after that no request waits for one.
  let settledOnce = false;

  const fetchRemote = async (): Promise<ServedRobotsTxt> => {
    const controller = new AbortController();
    const timeout = timers.setTimeout(() => controller.abort(), FETCH_TIMEOUT_MS);
    try {
      const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, 'content-type': 'application/json', accept: 'text/plain' };
      if (fetchedEtag !== undefined) headers['if-none-match'] = fetchedEtag;
      // A redirect is not followed: the token goes only where it was configured to go.
      const response = await fetchImpl(endpoint, { method: 'POST', headers, body: requestBody, signal: controller.signal, redirect: 'manual' });
      if (response.status === 304 && cached !== undefined) {
        await response.body?.cancel();
        nextFetch = clock.now() + refreshMs;
        return cached;
      }
      // Only a plain, sane answer is served: an error page must never become the site's robots.txt.
      if (response.status !== 200 || !(response.headers.get('content-type') ?? '').startsWith('text/plain')) {
        await response.body?.cancel();
        throw new Error(`POST ${endpoint.href} answered ${response.status}`);
      }
      const text = await readTextUpTo(response, MAX_ROBOTS_TXT_BYTES);
      if (text === undefined) throw new Error(`POST ${endpoint.href} answered more than ${MAX_ROBOTS_TXT_BYTES} bytes`);
      const etag = response.headers.get('etag') ?? undefined;
      const whole = served(text, etag);
      if (whole === undefined) throw new Error(`POST ${endpoint.href} answered a robots.txt that, after the site's own, passes ${MAX_ROBOTS_TXT_BYTES} bytes`);
      fetchedEtag = etag;
      cached = whole;
      nextFetch = clock.now() + refreshMs;
      return cached;
    } catch {
      nextFetch = clock.now() + RETRY_MS;
      return cached ?? local;
    } finally {
      settledOnce = true;
      timers.clearTimeout(timeout);
    }
  };

  return {
    get(waitUntil) {
      const now = clock.now();
      // A fetch pending well past its timeout was ended under us (Workers end a request's fetches
      // and timers with its response): it will never settle, so another may start.
      if (inFlight !== undefined && now - inFlightSince > 2 * FETCH_TIMEOUT_MS) inFlight = undefined;
      if (now >= nextFetch && inFlight === undefined) {
        const refresh = fetchRemote().finally(() => {
          if (inFlight === refresh) inFlight = undefined;
        });
        inFlight = refresh;
        inFlightSince = now;
        waitUntil?.(refresh);
      }
      // A stale copy is served while the refresh runs; only the very first request waits.
      if (cached !== undefined) return cached;
      return settledOnce ? local : (inFlight ?? local);
    },
  };
}
