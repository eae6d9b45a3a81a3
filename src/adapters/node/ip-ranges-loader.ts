// Reads the bundled crawler IP lists (data/ip-ranges/*.json) for ipRangeVerifier({ lists }).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// This file runs as src/adapters/node/*.ts (tests, tsx) and bundled as dist/node.{js,cjs} or
// dist/cli.js; the package root is the nearest ancestor holding data/ip-ranges.
function moduleDirectory(): string {
  // CJS bundles have __dirname and no import.meta.url; ESM has the reverse.
  return typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
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
 * the form `ipRangeVerifier({ lists })` takes (it validates them). With `directory` (one kept by
 * `refresh-ip-ranges --dir`), its lists replace the bundled ones of the same name, so a directory
 * holding only the lists refreshed so far still verifies every agent.
 * @throws {Error} when a directory cannot be read or a file is not valid JSON (the message names the file).
 * @example
 * const engine = createEngine({ verifiers: [ipRangeVerifier({ lists: loadIpRangeLists() })] });
 */
export function loadIpRangeLists(directory?: string): Record<string, unknown> {
  const bundled = readListsIn(bundledIpRangesDirectory());
  return directory === undefined ? bundled : { ...bundled, ...readListsIn(directory) };
}

function readListsIn(directory: string): Record<string, unknown> {
  const lists: Record<string, unknown> = {};
  for (const name of readdirSync(directory).filter((file) => file.endsWith('.json')).sort()) {
    const path = join(directory, name);
    try {
      lists[name] = JSON.parse(readFileSync(path, 'utf8'));
    } catch (error) {
      throw new Error(`agentwarden: cannot read IP list ${path}: ${(error as Error).message}`);
    }
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
    // Publishers write it with or without a zone: without one it is UTC.
    const at = typeof created === 'string' ? Date.parse(/(Z|[+-]\d\d:\d\d)$/.test(created) ? created : `${created}Z`) : Number.NaN;
    if (!(now - at <= maxAgeDays * 86_400_000)) outdated.push({ name, created: typeof created === 'string' ? created : null });
  }
  return outdated;
}
