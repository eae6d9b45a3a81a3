// `agentwarden refresh-ip-ranges`: downloads the operators' official IP lists, validates each and
// replaces the local copy atomically, keeping the last good copy on any failure.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Validator } from 'ip-num';
import { describeFetchFailure, readTextUpTo } from '../../../index.js';
import { escapeControlCharacters } from '../../../index.js';
import { bundledIpRangesDirectory, parseIpRangeListFile } from '../ip-ranges-loader.js';
import type { Command } from './command.js';

/** The official URL of every bundled list, as recorded in data/ip-ranges/SOURCES.md. */
export const IP_RANGE_SOURCES: Readonly<Record<string, string>> = {
  'google-common-crawlers.json': 'https://developers.google.com/static/crawling/ipranges/common-crawlers.json',
  'google-special-crawlers.json': 'https://developers.google.com/static/crawling/ipranges/special-crawlers.json',
  'google-user-triggered-fetchers.json': 'https://developers.google.com/static/crawling/ipranges/user-triggered-fetchers.json',
  'google-user-triggered-fetchers-google.json': 'https://developers.google.com/static/crawling/ipranges/user-triggered-fetchers-google.json',
  'google-user-triggered-agents.json': 'https://developers.google.com/static/crawling/ipranges/user-triggered-agents.json',
  'bing-bingbot.json': 'https://www.bing.com/toolbox/bingbot.json',
  'openai-gptbot.json': 'https://openai.com/gptbot.json',
  'openai-searchbot.json': 'https://openai.com/searchbot.json',
  'openai-chatgpt-user.json': 'https://openai.com/chatgpt-user.json',
  'perplexity-perplexitybot.json': 'https://www.perplexity.com/perplexitybot.json',
  'perplexity-perplexity-user.json': 'https://www.perplexity.com/perplexity-user.json',
  'apple-applebot.json': 'https://search.developer.apple.com/applebot.json',
  'commoncrawl-ccbot.json': 'https://index.commoncrawl.org/ccbot.json',
  'duckduckgo-duckduckbot.json': 'https://duckduckgo.com/duckduckbot.json',
  'duckduckgo-duckassistbot.json': 'https://duckduckgo.com/duckassistbot.json',
  'mistral-index-ips.json': 'https://mistral.ai/mistralai-index-ips.json',
  'mistral-user-ips.json': 'https://mistral.ai/mistralai-user-ips.json',
  'anthropic-bots.json': 'https://claude.com/crawling/bots.json',
};

// Largest published list is ~100 KB; anything far bigger is not a crawler list.
const MAX_BYTES = 5 * 1024 * 1024;
const FILE_NAME = /^[a-z0-9][a-z0-9._-]*\.json$/;
// setTimeout, behind AbortSignal.timeout, takes a signed 32-bit delay and turns a larger one into 1 ms.
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

const USAGE = [
  'Usage: agentwarden refresh-ip-ranges [NAME ...] [--dir DIR] [--source-url NAME=URL ...] [--timeout-ms MS]',
  '',
  "Downloads the operators' published crawler IP lists (JAFAR JSON), validates each (JSON, a",
  '"prefixes" array, every prefix a valid CIDR no wider than an IPv4 /8 or IPv6 /16 and none in',
  '::ffff:0:0/96, at least one prefix, a "creationTime" in ISO 8601 at most a day ahead) and',
  'replaces the copy in DIR atomically. A failed download or an invalid list keeps the previous',
  'copy. Prints one line per file and exits 1 if any file failed.',
  '',
  'Options:',
  '  NAME                   refresh only these files (default: every known list)',
  '  --dir DIR              where the lists live (default: the bundled data/ip-ranges)',
  '  --source-url NAME=URL  fetch NAME from URL instead of its official address (repeatable);',
  '                         user:password@ in URL is sent as HTTP Basic authentication',
  `  --timeout-ms MS        per-download timeout, 1 to ${MAX_TIMEOUT_MS} (default 15000)`,
  '',
  `Known lists: ${Object.keys(IP_RANGE_SOURCES).join(', ')}`,
].join('\n');

interface Options {
  readonly names: readonly string[];
  readonly dir: string | undefined;
  readonly urls: ReadonlyMap<string, string>;
  readonly timeoutMs: number;
}

function parseArgs(args: readonly string[]): Options | string {
  const names: string[] = [];
  const urls = new Map<string, string>(Object.entries(IP_RANGE_SOURCES));
  let dir: string | undefined;
  let timeoutMs = 15_000;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = () => {
      const next = args[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    try {
      if (arg === '--dir') {
        dir = value();
      } else if (arg === '--source-url') {
        const spec = value();
        const eq = spec.indexOf('=');
        const name = spec.slice(0, eq);
        const url = spec.slice(eq + 1);
        if (eq <= 0 || !FILE_NAME.test(name)) return `--source-url expects NAME=URL with NAME like "bing-bingbot.json", got ${JSON.stringify(spec)}`;
        if (!/^https?:\/\//.test(url) || !URL.canParse(url)) return `--source-url ${name}: not an http(s) URL: ${JSON.stringify(withoutPassword(url))}`;
        urls.set(name, url);
      } else if (arg === '--timeout-ms') {
        const raw = value();
        // Decimal digits only: Number() would also take 1e3, 0x10 and " 15 ".
        timeoutMs = /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : Number.NaN;
        if (!(timeoutMs <= MAX_TIMEOUT_MS)) return `--timeout-ms must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, got ${JSON.stringify(raw)}`;
      } else if (arg.startsWith('-')) {
        return `unknown option ${JSON.stringify(arg)}`;
      } else {
        names.push(arg);
      }
    } catch (error) {
      return (error as Error).message;
    }
  }
  for (const name of names) if (!urls.has(name)) return `unknown list ${JSON.stringify(name)} (give its URL with --source-url ${name}=URL)`;
  return { names: names.length > 0 ? names : [...urls.keys()], dir, urls, timeoutMs };
}

/** `text` with the password of every URL in it shown as `***` (`http://user:***@host/x`), as it may be printed. */
function withoutPassword(text: string): string {
  // Not through new URL(), which would also rewrite the rest. The user name ends at the first
  // colon, the password at the last @ before the path (WHATWG URL: the authority ends at / ? #).
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/[^/?#@:\s]*:)[^/?#\s]*@/gi, '$1***@');
}

/** Downloads and validates one list; returns its text and a summary, or throws with the reason. */
async function download(name: string, url: string, timeoutMs: number): Promise<{ text: string; summary: string }> {
  // fetch() refuses a URL holding credentials; they go in an Authorization header instead (which
  // fetch drops on a redirect to another origin).
  const target = new URL(url);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (target.username !== '' || target.password !== '') {
    const decode = (part: string) => {
      try {
        return decodeURIComponent(part);
      } catch {
        return part; // a lone % is the user's own character
      }
    };
    const credentials = `${decode(target.username)}:${decode(target.password)}`;
    headers['authorization'] = `Basic ${Buffer.from(credentials).toString('base64')}`;
    target.username = '';
    target.password = '';
  }
  // Fixed operator URLs move (Google, Perplexity): redirects are followed here, unlike for
  // Signature-Agent directories, because the URL comes from our own table or the command line.
  let response: Response;
  try {
    response = await fetch(target, { redirect: 'follow', signal: AbortSignal.timeout(timeoutMs), headers });
  } catch (error) {
    throw new Error((error as Error).name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : `download failed: ${describeFetchFailure(error)}`);
  }
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const length = Number(response.headers.get('content-length') ?? '0');
  if (length > MAX_BYTES) throw new Error(`too large (${length} bytes)`);
  // Read up to the limit, never whole: a source that answers without end (chunked, no length)
  // would otherwise fill memory for as long as the timeout allows.
  let text: string | undefined;
  try {
    text = await readTextUpTo(response, MAX_BYTES);
  } catch (error) {
    throw new Error((error as Error).name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : `download failed: ${describeFetchFailure(error)}`);
  }
  if (text === undefined) throw new Error(`too large (over ${MAX_BYTES} bytes)`);
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new Error(`invalid JSON: ${(error as Error).message}`);
  }
  // The checks serve makes when it loads the file, so that nothing saved here is refused there.
  const list = parseIpRangeListFile(document, name, Date.now());
  checkWithIpNum(document as { prefixes: unknown[] });
  return { text, summary: `${list.count4} IPv4 / ${list.count6} IPv6 prefixes, creationTime ${list.creationTime}` };
}

/**
 * A second, independent opinion on an untrusted download before it replaces the last good copy:
 * the ip-num validator must also accept every prefix as a network address in CIDR notation.
 */
function checkWithIpNum(document: { prefixes: unknown[] }): void {
  for (const entry of document.prefixes) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { ipv4Prefix, ipv6Prefix } = entry as { ipv4Prefix?: unknown; ipv6Prefix?: unknown };
    const [valid, problems] =
      typeof ipv4Prefix === 'string'
        ? Validator.isValidIPv4CidrRange(ipv4Prefix)
        : typeof ipv6Prefix === 'string'
          ? Validator.isValidIPv6CidrRange(ipv6Prefix)
          : [true, []];
    if (!valid) throw new Error(`invalid prefix ${JSON.stringify(ipv4Prefix ?? ipv6Prefix)}: ${problems.join('; ')}`);
  }
}

/** Writes through a temporary file in the same directory and renames it, so readers never see half a file. */
async function writeAtomically(path: string, text: string): Promise<void> {
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, text, { flag: 'wx' });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** The `refresh-ip-ranges` command (see USAGE). */
export const refreshIpRangesCommand: Command = {
  name: 'refresh-ip-ranges',
  summary: "Download the operators' crawler IP lists, validate them and update data/ip-ranges",
  usage: USAGE,
  async run(args, io) {
    const options = parseArgs(args);
    if (typeof options === 'string') {
      io.stderr.write(`agentwarden refresh-ip-ranges: ${options}\n\n${USAGE}\n`);
      return 2;
    }
    const dir = options.dir ?? bundledIpRangesDirectory();
    // A directory of one's own (for serve --ip-ranges-dir) need not exist yet.
    mkdirSync(dir, { recursive: true });
    const width = Math.max(...options.names.map((name) => name.length));
    // Different hosts, so fetched concurrently; results printed in the requested order.
    const results = await Promise.all(
      options.names.map(async (name) => {
        try {
          const { text, summary } = await download(name, options.urls.get(name)!, options.timeoutMs);
          await writeAtomically(join(dir, name), text);
          return { ok: true, line: `ok      ${name.padEnd(width)}  ${summary}` };
        } catch (error) {
          // Messages quote what the server sent (JSON.parse shows the text it stopped at): escape
          // it, and mask any password an error message repeats from a URL.
          const reason = escapeControlCharacters(withoutPassword((error as Error).message));
          // A directory of one's own may not have the list yet: then serve reads the bundled one.
          const kept = existsSync(join(dir, name)) ? 'kept the previous copy' : `no copy in ${dir} yet, so the bundled one is used`;
          return { ok: false, line: `FAILED  ${name.padEnd(width)}  ${reason}; ${kept}` };
        }
      }),
    );
    for (const { line } of results) io.stdout.write(`${line}\n`);
    const failed = results.filter((result) => !result.ok).length;
    io.stdout.write(`${results.length - failed} updated, ${failed} failed (${dir})\n`);
    return failed === 0 ? 0 : 1;
  },
};
