// `agentwarden project ...`: create projects, list them, rotate and revoke their access tokens in
// the data directory's SQLite store (or ClickHouse, --store clickhouse). Tokens are printed once, at
// creation, and stored only hashed.
import { openClickHouseVisitStore } from '../../clickhouse/index.js';
import { openSqliteStore } from '../sqlite-store.js';
import type { Command } from './command.js';
import { missingDatabaseProblem, readStoreChoice, STORE_FLAGS } from './store-flags.js';
import { parseFlags, type FlagSpec } from './flags.js';
import { hasControlCharacter } from '../control-characters.js';

const FLAGS: Record<string, FlagSpec> = {
  name: { kind: 'string' },
  'data-dir': { kind: 'string', env: 'AGENTWARDEN_DATA_DIR' },
  project: { kind: 'string' },
  'keep-old': { kind: 'boolean' },
  'token-id': { kind: 'string' },
  token: { kind: 'string' },
  ...STORE_FLAGS,
};

const USAGE = [
  'Usage: agentwarden project <subcommand> [options]',
  '',
  'Subcommands:',
  '  create --name NAME                   create a project; prints {"id","name","token"} (the token is shown only now)',
  '  list                                 list projects and their tokens (ids and first characters, never the tokens)',
  '  rotate-token --project ID [--keep-old]',
  '                                       issue a new token and revoke the old ones (--keep-old keeps them valid)',
  '  revoke-token --token-id ID | --token TOKEN',
  '                                       revoke one token; it stops working at once (within about 1 s on other servers)',
  '',
  'Options:',
  '  --data-dir DIR   data directory (env AGENTWARDEN_DATA_DIR, default ./data-dir)',
  '  --store sqlite|clickhouse, --clickhouse-url URL, --clickhouse-database NAME',
  '                   where the projects live, as for "agentwarden serve" (same environment variables)',
].join('\n');

export const projectCommand: Command = {
  name: 'project',
  summary: 'Create projects and manage their access tokens',
  usage: USAGE,
  async run(args, io) {
    const parsed = parseFlags(args, FLAGS, io.env);
    const fail = (message: string) => {
      io.stderr.write(`agentwarden project: ${message}\n\n${USAGE}\n`);
      return 2;
    };
    if (typeof parsed === 'string') return fail(parsed);
    const [sub, ...extra] = parsed.positionals;
    if (extra.length > 0) return fail(`unexpected argument ${JSON.stringify(extra[0])}`);
    const v = parsed.values;
    const store = readStoreChoice(v);
    if (typeof store === 'string') return fail(store);
    // Both stores have the same project methods; ClickHouse's return promises, hence the awaits below.
    const open = async () =>
      store.kind === 'clickhouse' ? openClickHouseVisitStore({ url: store.url, database: store.database }) : openSqliteStore({ dataDir: v['data-dir'] ?? './data-dir' });
    const print = (value: unknown) => io.stdout.write(`${JSON.stringify(value)}\n`);
    // Only create may start a data directory (before a server's first start); the others need the server's.
    if (store.kind === 'sqlite' && sub !== 'create' && ['list', 'rotate-token', 'revoke-token'].includes(sub ?? '')) {
      const missing = missingDatabaseProblem(v['data-dir'] ?? './data-dir');
      if (missing !== undefined) return fail(missing);
    }
    switch (sub) {
      case 'create': {
        if (v['name'] === undefined || v['name'].trim() === '') return fail('create needs --name NAME');
        if (hasControlCharacter(v['name'])) return fail('--name must not contain control characters or line breaks');
        // The dashboard's limit: a longer name could never be set there again.
        if (v['name'].length > 200) return fail(`--name must be at most 200 characters, got ${v['name'].length}`);
        const store = await open();
        try {
          print(await store.createProject(v['name']));
        } finally {
          await store.close();
        }
        return 0;
      }
      case 'list': {
        const store = await open();
        try {
          print(await store.listProjects());
        } finally {
          await store.close();
        }
        return 0;
      }
      case 'rotate-token': {
        const projectId = v['project'];
        if (projectId === undefined) return fail('rotate-token needs --project ID');
        const store = await open();
        try {
          const project = (await store.listProjects()).find((p) => p.id === projectId);
          if (project === undefined) {
            io.stderr.write(`agentwarden project: no project ${JSON.stringify(projectId)}\n`);
            return 1;
          }
          const { tokenId, token } = await store.issueToken(projectId, { revokeOthers: v['keep-old'] !== 'true' });
          print({ id: project.id, name: project.name, token, token_id: tokenId });
        } finally {
          await store.close();
        }
        return 0;
      }
      case 'revoke-token': {
        const tokenId = v['token-id'];
        const token = v['token'];
        if ((tokenId === undefined) === (token === undefined)) return fail('revoke-token needs exactly one of --token-id ID or --token TOKEN');
        const store = await open();
        try {
          const revoked = await store.revokeToken(tokenId !== undefined ? { tokenId } : { token: token! });
          print({ revoked });
          if (!revoked) io.stderr.write('agentwarden project: no live token matched\n');
          return revoked ? 0 : 1;
        } finally {
          await store.close();
        }
      }
      default:
        return fail(sub === undefined ? 'missing subcommand' : `unknown subcommand ${JSON.stringify(sub)}`);
    }
  },
};
