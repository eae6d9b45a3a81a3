// `agentwarden robots`: prints a robots.txt disallowing the chosen agent types and agents, with no
// network (for static-site builds and cron jobs that write the file).
import { parseArgs } from 'node:util';
import { createEngine, RobotsOptionsError, type RobotsAgentRule, type RobotsTxtOptions } from '../../../index.js';
import type { Command } from './command.js';

const USAGE = [
  'Usage: agentwarden robots --types "AI Data Scraper,AI Assistant" [--disallow PATH ...] [--allow PATH ...]',
  '                          [--disallow-agent AGENT[:PATH] ...] [--allow-agent AGENT[:PATH] ...]',
  '                          [--comments] [--markers | --marker-label LABEL]',
  '',
  'Prints a robots.txt (RFC 9309) with one group per robots token of every agent of the chosen',
  'types, and of the agents named, to splice into or serve as your robots.txt.',
  '',
  'Options:',
  '  --types LIST          comma-separated agent types (repeatable); "Headless Agent" and',
  '                        "Headless Browser" mean "Automated Agent"',
  '  --disallow PATH       path pattern to disallow (repeatable; default "/")',
  '  --allow PATH          path pattern to keep allowed (repeatable)',
  '  --disallow-agent AGENT[:PATH]',
  '                        disallow an agent by catalog id or robots token on top of the types;',
  '                        with :PATH it is disallowed that path instead of --disallow (repeat the',
  '                        agent for more paths)',
  '  --allow-agent AGENT[:PATH]',
  '                        allow an agent by name, e.g. every AI Data Scraper but one ("Allow: /");',
  '                        with :PATH only that path is added as an exception to its type\'s rules',
  '  --comments            add "# <type>" and "# <agent url>" above each group',
  '  --markers             wrap the text in "# BEGIN agentwarden" ... "# END agentwarden"',
  '  --marker-label LABEL  wrap it in "# BEGIN LABEL" ... "# END LABEL" instead',
  '',
  'Examples:',
  '  agentwarden robots --types "AI Data Scraper,AI Search Crawler" --disallow / --markers >> public/robots.txt',
  '  agentwarden robots --types "AI Data Scraper" --allow-agent CCBot --disallow-agent Bytespider:/api/',
].join('\n');

/** What the option flags built, and the flag text of each agent entry (to name it in errors). */
type Parsed = { readonly options: RobotsTxtOptions; readonly agentFlags: Readonly<Record<string, readonly string[]>> } | { readonly error: string };

/**
 * `AGENT` or `AGENT:PATH` flags into agent entries: an agent repeated gathers its paths, in order.
 * A robots token or catalog id never holds ":", so the first one ends the agent.
 */
function agentEntries(flags: readonly string[], pathKey: 'disallow' | 'allow'): { entries: (string | RobotsAgentRule)[]; names: string[] } {
  const byAgent = new Map<string, { agent: string; paths: string[] }>();
  for (const flag of flags) {
    const colon = flag.indexOf(':');
    const agent = (colon === -1 ? flag : flag.slice(0, colon)).trim();
    const entry = byAgent.get(agent.toLowerCase()) ?? { agent, paths: [] };
    if (colon !== -1) entry.paths.push(flag.slice(colon + 1));
    byAgent.set(agent.toLowerCase(), entry);
  }
  const list = [...byAgent.values()];
  return {
    entries: list.map(({ agent, paths }) => (paths.length === 0 ? agent : { agent, [pathKey]: paths })),
    names: list.map(({ agent }) => agent),
  };
}

function parse(args: readonly string[]): Parsed {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: false,
      options: {
        types: { type: 'string', multiple: true },
        disallow: { type: 'string', multiple: true },
        allow: { type: 'string', multiple: true },
        'disallow-agent': { type: 'string', multiple: true },
        'allow-agent': { type: 'string', multiple: true },
        comments: { type: 'boolean' },
        markers: { type: 'boolean' },
        'marker-label': { type: 'string' },
      },
    }));
  } catch (error) {
    return { error: (error as Error).message };
  }
  const disallowAgents = agentEntries(values['disallow-agent'] ?? [], 'disallow');
  const allowAgents = agentEntries(values['allow-agent'] ?? [], 'allow');
  if (values.types === undefined && disallowAgents.entries.length + allowAgents.entries.length === 0) {
    return { error: 'missing --types (a comma-separated list of agent types), --disallow-agent or --allow-agent' };
  }
  if (values.markers === true && values['marker-label'] !== undefined) return { error: 'give either --markers or --marker-label, not both' };
  const agentTypes = (values.types ?? []).flatMap((list) => list.split(',')).map((type) => type.trim()).filter((type) => type !== '');
  return {
    options: {
      // An empty list is left for the validator to name, as the REST layer would.
      agent_types: agentTypes,
      disallow: values.disallow,
      allow: values.allow,
      disallow_agents: disallowAgents.entries,
      allow_agents: allowAgents.entries,
      comments: values.comments === true,
      markers: values['marker-label'] ?? values.markers === true,
    },
    agentFlags: { disallow_agents: disallowAgents.names, allow_agents: allowAgents.names },
  };
}

export const robotsCommand: Command = {
  name: 'robots',
  summary: 'Print a robots.txt disallowing chosen agent types and agents (no network)',
  usage: USAGE,
  async run(args, io) {
    const parsed = parse(args);
    if ('error' in parsed) {
      io.stderr.write(`agentwarden robots: ${parsed.error}\n${USAGE}\n`);
      return 2;
    }
    try {
      io.stdout.write(createEngine().robotsTxt(parsed.options));
      return 0;
    } catch (error) {
      if (!(error instanceof RobotsOptionsError)) throw error;
      // Options arrive as flags, so name each issue by its flag rather than its JSON pointer.
      for (const issue of error.issues) io.stderr.write(`agentwarden robots: ${flagOf(issue.path, parsed.agentFlags)}: ${issue.message}\n`);
      return 2;
    }
  },
};

function flagOf(pointer: string, agentFlags: Readonly<Record<string, readonly string[]>>): string {
  const [, field = '', index, , pathIndex] = pointer.split('/');
  const agents = agentFlags[field];
  if (agents !== undefined) {
    // An agent's entry gathers its flags: name the flag by its agent (and which of its paths).
    const flag = `${field === 'disallow_agents' ? '--disallow-agent' : '--allow-agent'} ${agents[Number(index)] ?? ''}`.trimEnd();
    return pathIndex === undefined ? flag : `${flag} path #${Number(pathIndex) + 1}`;
  }
  const flag = field === 'agent_types' ? '--types' : field === 'markers' ? '--marker-label' : field === '' ? 'options' : `--${field}`;
  return index === undefined || field === 'markers' ? flag : `${flag} #${Number(index) + 1}`;
}
