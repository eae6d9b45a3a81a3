// `agentwarden robots`: prints a robots.txt disallowing the chosen agent types, with no network
// (for static-site builds and cron jobs that write the file).
import { parseArgs } from 'node:util';
import { createEngine, RobotsOptionsError, type RobotsTxtOptions } from '../../../index.js';
import type { Command } from './command.js';

const USAGE = [
  'Usage: agentwarden robots --types "AI Data Scraper,AI Assistant" [--disallow PATH ...] [--allow PATH ...]',
  '                          [--comments] [--markers | --marker-label LABEL]',
  '',
  'Prints a robots.txt (RFC 9309) with one group per robots token of every agent of the chosen',
  'types, to splice into or serve as your robots.txt.',
  '',
  'Options:',
  '  --types LIST          comma-separated agent types (repeatable); "Headless Agent" and',
  '                        "Headless Browser" mean "Automated Agent"',
  '  --disallow PATH       path pattern to disallow (repeatable; default "/")',
  '  --allow PATH          path pattern to keep allowed (repeatable)',
  '  --comments            add "# <type>" and "# <agent url>" above each group',
  '  --markers             wrap the text in "# BEGIN agentwarden" ... "# END agentwarden"',
  '  --marker-label LABEL  wrap it in "# BEGIN LABEL" ... "# END LABEL" instead',
  '',
  'Example:',
  '  agentwarden robots --types "AI Data Scraper,AI Search Crawler" --disallow / --markers >> public/robots.txt',
].join('\n');

type Parsed = { readonly options: RobotsTxtOptions } | { readonly error: string };

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
        comments: { type: 'boolean' },
        markers: { type: 'boolean' },
        'marker-label': { type: 'string' },
      },
    }));
  } catch (error) {
    return { error: (error as Error).message };
  }
  if (values.types === undefined) return { error: 'missing --types (a comma-separated list of agent types)' };
  if (values.markers === true && values['marker-label'] !== undefined) return { error: 'give either --markers or --marker-label, not both' };
  const agentTypes = values.types.flatMap((list) => list.split(',')).map((type) => type.trim()).filter((type) => type !== '');
  return {
    options: {
      // An empty list is left for the validator to name, as the REST layer would.
      agent_types: agentTypes,
      disallow: values.disallow,
      allow: values.allow,
      comments: values.comments === true,
      markers: values['marker-label'] ?? values.markers === true,
    },
  };
}

export const robotsCommand: Command = {
  name: 'robots',
  summary: 'Print a robots.txt disallowing chosen agent types (no network)',
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
      for (const issue of error.issues) io.stderr.write(`agentwarden robots: ${flagOf(issue.path)}: ${issue.message}\n`);
      return 2;
    }
  },
};

function flagOf(pointer: string): string {
  const field = pointer.split('/')[1] ?? '';
  const index = pointer.split('/')[2];
  const flag = field === 'agent_types' ? '--types' : field === 'markers' ? '--marker-label' : field === '' ? 'options' : `--${field}`;
  return index === undefined || field === 'markers' ? flag : `${flag} #${Number(index) + 1}`;
}
