// better-sqlite3, loaded when a SQLite store is opened rather than when "agentwarden/node" is
// imported: a site that embeds the middleware with the node verifiers needs no native addon, and
// the package installs where better-sqlite3 cannot be built (it is an optional dependency).
import { createRequire } from 'node:module';
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
