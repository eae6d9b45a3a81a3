// A verifiable crawler's product token borrowed by another sender: the header's URL is someone
// else's site ("Googlebot/2.1; startmebot/1.0; +https://start.me/bot"), so the token says what the
// sender imitates, not who it is (data/README.md "Who wins when several agents match one header").
import type { Agent } from './types.js';

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

const sitesByAgent = new WeakMap<Agent, ReadonlySet<string> | null>();

/**
 * The sites an agent's operator documents: its page's, its reverse-DNS names' and its signers'.
 * Null for an agent the catalog cannot verify: its page may be a bot list's, not its operator's.
 */
function operatorSites(agent: Agent): ReadonlySet<string> | null {
  let sites = sitesByAgent.get(agent);
  if (sites === undefined) {
    const verifiable = (agent.reverse_dns?.length ?? 0) > 0 || (agent.ip_ranges?.length ?? 0) > 0 || (agent.signature_agents?.length ?? 0) > 0;
    if (verifiable) {
      const hosts = [hostOf(agent.url), ...(agent.reverse_dns ?? []).map((suffix) => suffix.replace(/^\./, '').toLowerCase()), ...(agent.signature_agents ?? []).map(hostOf)];
      sites = new Set(hosts.filter((host) => host !== undefined && host !== '').map((host) => siteOf(host!)));
    } else {
      sites = null;
    }
    sitesByAgent.set(agent, sites);
  }
  return sites;
}

// A URL's host: after "http://", "https://" or a word-initial "www.".
const URL_HOST = /(?:\bhttps?:\/\/|(?<![\w.-])www\.)([a-z0-9-]+(?:\.[a-z0-9-]+)+)/gi;

/**
 * Whether a header that `agent`'s token matched carries a URL of a site that is not the agent's
 * operator's, the agent being one the catalog can verify (its operator's sites are known).
 * @example
 * carriesForeignUrl('Mozilla/5.0 (compatible; Googlebot/2.1; startmebot/1.0; +https://start.me/bot)', googlebot); // true
 * carriesForeignUrl('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', googlebot); // false
 */
export function carriesForeignUrl(userAgent: string, agent: Agent): boolean {
  const sites = operatorSites(agent);
  if (sites === null) return false;
  for (const [, host] of userAgent.matchAll(URL_HOST)) {
    if (!sites.has(siteOf(host!.toLowerCase()))) return true;
  }
  return false;
}
