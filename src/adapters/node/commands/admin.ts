// `agentwarden admin reset-password`: replaces the dashboard's admin login secret (printed once)
// and ends every admin session, for a lost secret or one that may have leaked.
import { openAdminStore } from '../admin-store.js';
import type { Command } from './command.js';
import { parseFlags, type FlagSpec } from './flags.js';
import { missingDatabaseProblem } from './store-flags.js';

const FLAGS: Record<string, FlagSpec> = {
  'data-dir': { kind: 'string', env: 'AGENTWARDEN_DATA_DIR' },
};

const USAGE = [
  'Usage: agentwarden admin reset-password [options]',
  '',
  'Replaces the admin login secret of the dashboard with a new random one, prints it once, and',
  'logs out every admin session. Works while the server runs.',
  '',
  'Options:',
  '  --data-dir DIR   data directory (env AGENTWARDEN_DATA_DIR, default ./data-dir)',
].join('\n');

export const adminCommand: Command = {
  name: 'admin',
  summary: 'Reset the dashboard admin login secret',
  usage: USAGE,
  async run(args, io) {
    const parsed = parseFlags(args, FLAGS, io.env);
    const fail = (message: string) => {
      io.stderr.write(`agentwarden admin: ${message}\n\n${USAGE}\n`);
      return 2;
    };
    if (typeof parsed === 'string') return fail(parsed);
    const [sub, ...extra] = parsed.positionals;
    if (sub !== 'reset-password') return fail(sub === undefined ? 'name a subcommand' : `unknown subcommand ${JSON.stringify(sub)}`);
    if (extra.length > 0) return fail(`unexpected argument ${JSON.stringify(extra[0])}`);
    const dataDir = parsed.values['data-dir'] ?? './data-dir';
    const missing = missingDatabaseProblem(dataDir);
    if (missing !== undefined) return fail(missing);
    const admin = openAdminStore({ dataDir });
    try {
      const secret = await admin.resetSecret();
      io.stdout.write(`agentwarden admin login secret, shown only now: ${secret}\nEvery admin session was logged out.\n`);
    } finally {
      admin.close();
    }
    return 0;
  },
};
