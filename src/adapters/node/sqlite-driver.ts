// better-sqlite3, loaded when a SQLite store is opened rather than when "agentwarden/node" is
// imported: a site that embeds the middleware with the node verifiers needs no native addon, and
// the package installs where better-sqlite3 cannot be built (it is an optional dependency).
import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';

let driver: typeof BetterSqlite3 | undefined;

/**
 * Opens (creating it if missing) a SQLite database file with better-sqlite3.
 * @throws {Error} when better-sqlite3 is not installed or its native addon does not load (the message says what to run).
 */
export function openSqliteDatabase(file: string): BetterSqlite3.Database {
  driver ??= loadDriver();
  return new driver(file);
}

function loadDriver(): typeof BetterSqlite3 {
  try {
    return createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new Error(
      `the SQLite store needs the better-sqlite3 package, which did not load (${reason}): install it with \`npm install better-sqlite3\`, or after a Node.js upgrade rebuild it with \`npm rebuild better-sqlite3\``,
      { cause: error },
    );
  }
}

/** The database file of a data directory, shared by the project, visit, admin and webhook stores. */
export const DATABASE_FILE = 'agentwarden.db';

/**
 * Opens a data directory's database, creating the directory (0700) when missing. The database
 * and its WAL files are made readable by their owner only: they hold visitors' addresses and
 * headers, webhook URLs (a Slack-style URL is its own credential) and session tokens, and were
 * created with the process umask (0644). Errors name the file.
 * @throws {Error} when the directory or file cannot be created or opened.
 */
export function openDataDirDatabase(dataDir: string): BetterSqlite3.Database {
  // A missing driver is no fault of the directory: its own message says what to install.
  driver ??= loadDriver();
  const file = join(dataDir, DATABASE_FILE);
  try {
    if (existsSync(dataDir) && !statSync(dataDir).isDirectory()) throw new Error('it is not a directory');
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const db = openSqliteDatabase(file);
    for (const path of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(path)) chmodSync(path, 0o600);
    return db;
  } catch (error) {
    throw new Error(`cannot open the data directory's database ${JSON.stringify(file)}: ${(error as Error).message}`, { cause: error });
  }
}
