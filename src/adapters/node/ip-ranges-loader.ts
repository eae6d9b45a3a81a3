// Reads and checks the crawler IP lists (the bundled data/ip-ranges/*.json, or a directory kept by
// refresh-ip-ranges) for ipRangeVerifier({ lists }); refresh-ip-ranges checks downloads the same way.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { escapeControlCharacters, parseCreationTime, parseIpRangeList, type IpRangeList } from '../../index.js';

// This file runs as src/adapters/node/*.ts (tests, tsx) and bundled as dist/node.{js,cjs} or
// dist/cli.js; the package root is the nearest ancestor holding data/ip-ranges.
function moduleDirectory(): string {
  // CJS bundles have __dirname and no import.meta.url; ESM has the reverse.
  return typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
}

// Clocks differ, and a publisher may write its local time without a zone: a day covers both. A
// later date is an error, and would keep the list out of serve's "out of date" warning for good.
const MOST_FUTURE_MS = 86_400_000;

/**
 * Validates a list file before `refresh-ip-ranges` saves it or `loadIpRangeLists` loads it: what
 * `parseIpRangeList` checks, at least one prefix (an empty list fails every genuine crawler of
 * it), and a `creationTime` that is an ISO 8601 date and time at most a day after `now` (stale
 * lists are found by it).
 * @throws {TypeError} as `parseIpRangeList` does.
 * @throws {RangeError} as `parseIpRangeList` does, and for no prefixes or a missing, malformed or future `creationTime` (the message names `name`).
 * @example
 * parseIpRangeListFile(JSON.parse(text), 'openai-gptbot.json', Date.now());
 */
export function parseIpRangeListFile(document: unknown, name: string, now: number): IpRangeList {
  const list = parseIpRangeList(document, name);
  const where = `IP list ${escapeControlCharacters(JSON.stringify(name))}`;
  if (list.prefixes.length === 0) throw new RangeError(`${where}: no prefixes (an empty list would reject every address)`);
  const { creationTime } = list;
  if (creationTime === undefined) throw new RangeError(`${where}: no "creationTime" string`);
  const at = parseCreationTime(creationTime);
  const shown = () => escapeControlCharacters(JSON.stringify(creationTime.length > 64 ? `${creationTime.slice(0, 64)}…` : creationTime));
  if (at === undefined) throw new RangeError(`${where}: "creationTime" ${shown()} is not an ISO 8601 date and time such as 2026-08-21T14:45:42Z`);
  if (at - now > MOST_FUTURE_MS) throw new RangeError(`${where}: "creationTime" ${shown()} is more than a day in the future`);
  return list;
}

/**
 * The bundled data/ip-ranges directory of the installed package.
 * @throws {Error} when no ancestor of this module holds data/ip-ranges (a broken install).
 */
export function bundledIpRangesDirectory(): string {
  let directory = moduleDirectory();
  for (let i = 0; i < 6; i++) {
    const candidate = join(directory, 'data', 'ip-ranges');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(directory);
    if (parent === directory) break;
    directory = parent;
  }
  throw new Error(`agentwarden: data/ip-ranges not found above ${moduleDirectory()}`);
}

/**
 * Reads every `*.json` list of the bundled data/ip-ranges into a map of file name to parsed JSON,
 * the form `ipRangeVerifier({ lists })` takes. With `directory` (one kept by
 * `refresh-ip-ranges --dir`), its lists replace the bundled ones of the same name, so a directory
 * holding only the lists refreshed so far still verifies every agent. Each list must pass the
 * checks `refresh-ip-ranges` makes before saving one (`parseIpRangeListFile` at `now`), so a
 * file written by hand cannot hold what a download may not.
 * @throws {Error} when a directory cannot be read, or a file is not valid JSON or not a valid list (the message names the file).
 * @example
 * const engine = createEngine({ verifiers: [ipRangeVerifier({ lists: loadIpRangeLists() })] });
 */
export function loadIpRangeLists(directory?: string, now: number = Date.now()): Record<string, unknown> {
  // The bundled lists are this package's own: a machine whose clock lags their publication must still start.
  const bundled = readListsIn(bundledIpRangesDirectory(), Number.POSITIVE_INFINITY);
  return directory === undefined ? bundled : { ...bundled, ...readListsIn(directory, now) };
}

function readListsIn(directory: string, now: number): Record<string, unknown> {
  const lists: Record<string, unknown> = {};
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch (error) {
    throw new Error(`agentwarden: cannot read the IP list directory ${directory}: ${(error as Error).message}`);
  }
  for (const name of names.filter((file) => file.endsWith('.json')).sort()) {
    const path = join(directory, name);
    let document: unknown;
    try {
      document = JSON.parse(readFileSync(path, 'utf8'));
    } catch (error) {
      throw new Error(`agentwarden: cannot read IP list ${path}: ${(error as Error).message}`);
    }
    try {
      parseIpRangeListFile(document, name, now);
    } catch (error) {
      throw new Error(`agentwarden: ${(error as Error).message} (in ${path})`);
    }
    lists[name] = document;
  }
  return lists;
}

/**
 * The lists whose publisher's `creationTime` is older than `maxAgeDays` at `now` (a list without a
 * readable time counts as old): a crawler's newly published prefix is missing from them, and
 * operators without reverse DNS then fail genuine traffic until `refresh-ip-ranges` runs.
 * @example
 * outdatedIpRangeLists(loadIpRangeLists(), Date.now(), 30); // [{ name: 'openai-gptbot.json', created: '2025-10-30T11:00:00.000000' }]
 */
export function outdatedIpRangeLists(lists: Record<string, unknown>, now: number, maxAgeDays: number): { readonly name: string; readonly created: string | null }[] {
  const outdated: { name: string; created: string | null }[] = [];
  for (const [name, document] of Object.entries(lists)) {
    const created = (document as { creationTime?: unknown } | null)?.creationTime;
    const at = typeof created === 'string' ? parseCreationTime(created) : undefined;
    if (at === undefined || now - at > maxAgeDays * 86_400_000) outdated.push({ name, created: typeof created === 'string' ? created : null });
  }
  return outdated;
}
