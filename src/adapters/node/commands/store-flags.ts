// The --store flags `serve` and `project` share: which store holds projects (and visits), and
// where ClickHouse is when it is that one.
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
