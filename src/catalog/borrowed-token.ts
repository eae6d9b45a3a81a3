// A verifiable crawler's product token borrowed by another sender: the header's URL is someone
// else's site ("Googlebot/2.1; startmebot/1.0; +https://start.me/bot"), so the token says what the
// sender imitates, not who it is (data/README.md "Who wins when several agents match one header").
import type { Agent } from './types.js';
import { verificationMethodsOf } from './verification-methods.js';

// Second-level labels under which a country's registries sell names ("example.co.uk").
const COUNTRY_SECOND_LEVEL = new Set(['co', 'com', 'net', 'org', 'ac', 'gov', 'edu', 'ne', 'or', 'go', 'gr', 'ed', 'lg']);

/**
 * The registrable part of a lower-case host name: its last two labels, or three under a country's
 * second level ("example.co.uk"). An approximation of the Public Suffix List that is enough to tell
 * an operator's own sites from someone else's.
 * @example
 * siteOf('developers.google.com'); // 'google.com'
 * siteOf('www.example.co.uk'); // 'example.co.uk'
 */
export function siteOf(host: string): string {
  const labels = host.replace(/\.$/, '').split('.');
  const n = labels.length;
  const keep = n >= 3 && labels[n - 1]!.length === 2 && COUNTRY_SECOND_LEVEL.has(labels[n - 2]!) ? 3 : 2;
  return labels.slice(-keep).join('.');
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

const sitesByAgent = new WeakMap<Agent, readonly string[] | null>();

/**
 * The sites an agent's operator documents: its page's, its reverse-DNS names' and its signers'.
 * Null for an agent the catalog cannot verify: its page may be a bot list's, not its operator's.
 */
function operatorSites(agent: Agent): readonly string[] | null {
  let sites = sitesByAgent.get(agent);
  if (sites === undefined) {
    if (verificationMethodsOf(agent).length > 0) {
      const hosts = [hostOf(agent.url), ...(agent.reverse_dns ?? []).map((suffix) => suffix.replace(/^\./, '').toLowerCase()), ...(agent.signature_agents ?? []).map(hostOf)];
      sites = [...new Set(hosts.filter((host) => host !== undefined && host !== '').map((host) => siteOf(host!)))];
    } else {
      sites = null;
    }
    sitesByAgent.set(agent, sites);
  }
  return sites;
}

/** Whether a byte may be part of a host name: a letter, a digit, "-" or ".". */
function isHostChar(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 45 || code === 46;
}

/** Whether the host starting at `start` is a dotted name under none of `sites`. */
function foreignHostAt(userAgent: string, start: number, sites: readonly string[]): boolean {
  let end = start;
  while (end < userAgent.length && isHostChar(userAgent.charCodeAt(end))) end++;
  // Trailing dots walked back over, not /\.+$/: that retries from every dot of a long run.
  while (end > start && userAgent.charCodeAt(end - 1) === 46) end--;
  const host = userAgent.slice(start, end).toLowerCase();
  if (!host.includes('.')) return false;
  return !sites.some((site) => host === site || host.endsWith(`.${site}`));
}

/**
 * Whether a header that `agent`'s token matched carries a URL (after "://", or a word-initial
 * "www.") of a site that is not the agent's operator's, the agent being one the catalog can
 * verify (its operator's sites are known). Runs on every header a verifiable crawler's token
 * matched: a scan with indexOf, no regular expression or allocation but the host's text.
 * @example
 * carriesForeignUrl('Mozilla/5.0 (compatible; Googlebot/2.1; startmebot/1.0; +https://start.me/bot)', googlebot); // true
 * carriesForeignUrl('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', googlebot); // false
 */
export function carriesForeignUrl(userAgent: string, agent: Agent): boolean {
  const sites = operatorSites(agent);
  if (sites === null) return false;
  for (let at = userAgent.indexOf('://'); at !== -1; at = userAgent.indexOf('://', at + 3)) {
    if (foreignHostAt(userAgent, at + 3, sites)) return true;
  }
  for (let at = userAgent.indexOf('www.'); at !== -1; at = userAgent.indexOf('www.', at + 4)) {
    // "http://www." was read above; only a word-initial "www." starts a bare URL.
    if ((at === 0 || !isHostChar(userAgent.charCodeAt(at - 1))) && userAgent.charCodeAt(at - 1) !== 47 && foreignHostAt(userAgent, at, sites)) return true;
  }
  return false;
}
