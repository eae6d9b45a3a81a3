// The --store flags `serve` and `project` share: which store holds projects (and visits), and
// where ClickHouse is when it is that one; and the check that a data directory holds a database.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DATABASE_FILE } from '../sqlite-driver.js';
import type { FlagSpec } from './flags.js';

/** `--store sqlite|clickhouse`, `--clickhouse-url`, `--clickhouse-database` and their env vars. */
export const STORE_FLAGS: Readonly<Record<string, FlagSpec>> = {
  store: { kind: 'string', env: 'AGENTWARDEN_STORE' },
  'clickhouse-url': { kind: 'string', env: 'AGENTWARDEN_CLICKHOUSE_URL' },
  'clickhouse-database': { kind: 'string', env: 'AGENTWARDEN_CLICKHOUSE_DATABASE' },
};

/** The chosen store. */
export type StoreChoice = { readonly kind: 'sqlite' } | { readonly kind: 'clickhouse'; readonly url: string; readonly database: string };

/** Reads the store flags; a message (for usage errors) when they are invalid. */
export function readStoreChoice(values: Readonly<Record<string, string | undefined>>): StoreChoice | string {
  const kind = values['store'] ?? 'sqlite';
  if (kind === 'sqlite') return { kind };
  if (kind !== 'clickhouse') return `--store must be sqlite or clickhouse, got ${JSON.stringify(kind)}`;
  const url = values['clickhouse-url'];
  if (url === undefined) return '--store clickhouse needs --clickhouse-url (or AGENTWARDEN_CLICKHOUSE_URL)';
  return { kind, url, database: values['clickhouse-database'] ?? 'agentwarden' };
}

/**
 * Why a command that changes or reads an existing server's data must not run on `dataDir`: it
 * holds no database. A mistyped --data-dir (or another working directory) once created a fresh
 * one and "reset" its secret, leaving the running server's untouched: a reset done for a leak
 * revoked nothing.
 */
export function missingDatabaseProblem(dataDir: string): string | undefined {
  const file = join(dataDir, DATABASE_FILE);
  return existsSync(file) ? undefined : `no agentwarden database at ${JSON.stringify(file)}: give --data-dir (or AGENTWARDEN_DATA_DIR) the data directory the server uses`;
}
