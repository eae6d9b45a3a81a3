// Unlisted agents: bots the catalog does not list but whose User-Agent says what they are are
// named by the token they send (data/README.md "Unlisted agents"); browsers never are.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { siteOf } from '../../src/catalog/borrowed-token.js';
import { createCatalog, createEngine, defaultCatalogDocument } from '../../src/index.js';
import { robotsTestAgent } from '../helpers/agents.js';
import { costGrowth } from '../helpers/linear-time.js';

const catalog = createCatalog(defaultCatalogDocument);
const idOf = (ua: string) => catalog.matchUserAgent(ua)?.id;
/** Asserts that none of these headers is named, each reported with its header when it is. */
function expectNoneNamed(uas: readonly string[]): void {
  for (const ua of uas) expect({ ua, id: idOf(ua) }).toEqual({ ua, id: undefined });
}

describe('unlisted agents', () => {
  it('names a bot by the product word it calls itself, typed by that word', () => {
    const cases: [string, string, string][] = [
      ['AcmeBot/2.1 (+https://acme.example/about)', 'AcmeBot', 'Uncategorized'],
      ['Mozilla/5.0 (compatible; Fjordcrawler/0.3; +https://fjord.example/)', 'Fjordcrawler', 'Uncategorized'],
      ['Mozilla/5.0 (compatible; heron-spider/1.0)', 'heron-spider', 'Uncategorized'],
      ['Shelf-Scraper/4.2', 'Shelf-Scraper', 'Scraper'],
      ['PodFetcher/1.0 (podcast feeds)', 'PodFetcher', 'Fetcher'],
      ['Mozilla/5.0 (compatible; SiteArchiver/3)', 'SiteArchiver', 'Archiver'],
      ['LinkyChecker/1.0', 'LinkyChecker', 'Developer Helper'],
      ['QuuxValidator/2.0', 'QuuxValidator', 'Developer Helper'],
      ['Mozilla/5.0 (X11; Linux x86_64) AcmeMonitor/5.1', 'AcmeMonitor', 'Developer Helper'],
      ['Ping-Uptime/1.0', 'Ping-Uptime', 'Developer Helper'],
      ['AcmeMonitoring/3', 'AcmeMonitoring', 'Developer Helper'],
      ['Link-Extractor/0.2', 'Link-Extractor', 'Scraper'],
      ['Mozilla/5.0 (compatible; PageTranscoder)', 'PageTranscoder', 'Fetcher'],
      ['SiteAnalyzer/1.1', 'SiteAnalyzer', 'Uncategorized'],
      ['Mozilla/5.0 (compatible; Zebra Crawler 1.2; +https://zebra.example)', 'Zebra Crawler', 'Uncategorized'],
      ['QuickDownloader/3.1 (Windows NT 10.0)', 'QuickDownloader', 'Scraper'],
      ['Mozilla/5.0 (compatible; ShelfGrabber/1.0; Linux)', 'ShelfGrabber', 'Scraper'],
      ['Acme-Parser/2 (feeds)', 'Acme-Parser', 'Uncategorized'],
      ['DocRetriever/0.9 (Linux)', 'DocRetriever', 'Uncategorized'],
      // A version fused to the name by "_", "-" or "." is not part of it (as larbin_2.6.2 is larbin).
      ['Acmebot_1.2.3 (ops@acme.example)', 'Acmebot', 'Uncategorized'],
      ['quux-crawler.0.5 (+https://quux.example)', 'quux-crawler', 'Uncategorized'],
      ['Zed_WebRobot_V1.9 zed@zed.example', 'Zed_WebRobot', 'Uncategorized'],
      ['Mozilla/5.0 (compatible; SiteIndexer/1.0; Linux)', 'SiteIndexer', 'Uncategorized'],
    ];
    for (const [ua, name, type] of cases) {
      const agent = catalog.matchUserAgent(ua);
      expect({ ua, id: agent?.id, name: agent?.name, type: agent?.type, tokens: agent?.robots_tokens }).toEqual({ ua, id: `unlisted:${name}`, name, type, tokens: [name] });
      expect(agent?.operator).toBe('Unknown');
    }
  });

  it('names the product a header starts with, or its compatible comment, when a bot word is only in a URL or a contact address', () => {
    expect(idOf('Wombat/3.2 (+https://wombat.example/crawler.html)')).toBe('unlisted:Wombat');
    expect(idOf('Numbat/0.9 (ops@numbat.example)')).toBe('unlisted:Numbat');
    expect(idOf('Mozilla/5.0 (compatible; Quokka/1.0; +https://quokka.example/bot.html)')).toBe('unlisted:Quokka');
    expect(idOf('Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko) Chrome/41.0 Safari/537.36 (compatible; Quokka-Quality +http://quokka.example/tos.html)')).toBe('unlisted:Quokka-Quality');
    // A phrase's first word is no product name: "Quokka Site" of "(compatible; Quokka Site Tool +http://...)".
    expect(idOf('Mozilla/5.0 (compatible; Quokka Site Tool +http://quokka.example/)')).toBeUndefined();
    // Without such a sign, a product is not a bot.
    expect(idOf('Wombat/3.2 (X11; Linux x86_64) Gecko')).toBeUndefined();
    // A browser's own product never names one.
    expect(idOf('Mozilla/5.0 (+https://example.com/bot.html)')).toBeUndefined();
  });

  it('names the product of a header shaped as no browser is: a URL, a lone product, a lone compatible product', () => {
    expect(idOf('Wombat/3.2 (+https://wombat.example/)')).toBe('unlisted:Wombat');
    expect(idOf('Wombat/3.2 (see www.wombat.example)')).toBe('unlisted:Wombat');
    // A product without a version before its comment, capitalised or not (log4j-scan's own header).
    expect(idOf('Wombat (+https://wombat.example/)')).toBe('unlisted:Wombat');
    expect(idOf('log4j-scan (https://github.com/mazen160/log4j-scan)')).toBe('unlisted:log4j-scan');
    // Not a lower-case word before more words: a phrase, not a product.
    expect(idOf('see https://wombat.example/')).toBeUndefined();
    expect(idOf('Bilby/0.4.1')).toBe('unlisted:Bilby');
    expect(idOf('Mozilla/5.0 (compatible; Dunnart/2.0)')).toBe('unlisted:Dunnart');
    // A pre-release or build tail on the version, a last ";" in the comment (yauaa's test cases: `Echoping/6.1-BETA`).
    expect(idOf('Bilby/0.4.1-BETA')).toBe('unlisted:Bilby');
    expect(idOf('Bilby/2.0+git.54b3817f')).toBe('unlisted:Bilby');
    expect(idOf('Mozilla/5.0 (compatible; Dunnart/2.0;)')).toBe('unlisted:Dunnart');
    // The compatible comment names the bot when the header starts with a browser's token.
    expect(idOf('Chrome/120.0.6099.71 (compatible; Potoroo; +https://potoroo.example/)')).toBe('unlisted:Potoroo');
    expect(idOf('DoCoMo/2.0 D903i(c100;TB;W28H20) (compatible; Potoroo-Gateway/1.2; +http://potoroo.example/help)')).toBe('unlisted:Potoroo-Gateway');
    // The item before a compatible comment's "+http" contact, after the platform ones (browscap's
    // and WhichBrowser's test cases: Google's structured-data tool), or a phrase's first word that
    // is no plain word (WhichBrowser's: IODC's Odysseus survey).
    expect(idOf('Mozilla/5.0 (compatible; X11; Linux x86_64; Quokka-Tool; +http://quokka.example/tools)')).toBe('unlisted:Quokka-Tool');
    expect(idOf('Mozilla/5.0 (compatible; Quokka-Survey Run 1234-56; +https://quokka.example)')).toBe('unlisted:Quokka-Survey');
    expect(idOf('Mozilla/5.0 (compatible; Quokka Survey 1234; +https://quokka.example)')).toBeUndefined();
    // A product whose own comment is a URL, anywhere in the header (WhichBrowser's: WatchSumo, PowerMapper).
    expect(idOf('Mozilla/5.0 (compatible) Wallaby/1.0.0 (http://www.wallaby.example)')).toBe('unlisted:Wallaby');
    expect(idOf('Mozilla/5.0 (compatible; MSIE 10.0; Windows NT 6.2; Trident/6.0) WallabyProcess (+https://wallaby.example) /5.1')).toBe('unlisted:WallabyProcess');
    // A product before ";" and its comment, as Google's feed fetcher writes it; a version after " v".
    expect(idOf('Wallaby-feeds; (+http://wallaby.example/help/feeds.html; 3 subscribers)')).toBe('unlisted:Wallaby-feeds');
    expect(idOf('wallaby-httpclient v0.5.1')).toBe('unlisted:wallaby-httpclient');
    expect(idOf('wallaby-httpclient 0.5.1')).toBeUndefined();
    // A site's name alone in the compatible comment, named by its registrable label (WhichBrowser's: blogger.com).
    expect(idOf('Mozilla/5.0 (compatible; wallaby.example)')).toBe('unlisted:wallaby');
    expect(idOf('Mozilla/5.0 (compatible; www.wallaby.co.uk)')).toBe('unlisted:wallaby');
    // A capitalised label before a colon, when the header says it is a robot (WhichBrowser's: "FTRF: Friendly robot").
    expect(idOf('WLBY: Friendly robot/1.3')).toBe('unlisted:WLBY');
    expect(idOf('note: Friendly robot/1.3')).toBeUndefined();
    // Not these shapes: a comment beside the lone product, a second product, a word without a version, two compatible items.
    expectNoneNamed(['Bilby/0.4.1 (Linux)', 'Bilby/0.4.1 Quoll/2', 'Bilby', 'Mozilla/5.0 (compatible; Dunnart/2.0; Windows NT 10.0)', 'Mozilla/5.0 (compatible; Win32)', 'Model/Sony-KDL-55HX750']);
  });

  it('never names a browser by its shape: text browsers, a browser that says so, a browser token alone', () => {
    expectNoneNamed([
      'w3m/0.5.3',
      'Dillo/3.0.5',
      'NetSurf/3.10',
      'Lynx/2.8.9rel.1 libwww-FM/2.14 SSL-MM/1.4.1 OpenSSL/1.1.1d',
      'ELinks/0.13.GIT (textmode; Linux)',
      'Chrome/120.0.6099.71',
      // A major version fused into a browser's name.
      'Voyager3/2.95',
      'Quokka Browser/2.1 (http://www.quokka.example)',
      'QuollBrowser/8.7.1.234 (https://quoll.example)',
      // A platform first in the compatible comment is no product, nor a browser's engine before a contact.
      'Mozilla/5.0 (compatible; X11; Linux x86_64)',
      'Mozilla/5.0 (compatible; MSIE 9.0; Windows NT 6.1; Trident/5.0; +http://quokka.example/)',
      // An app on a phone that names its site (woothee's test sets: an iPhone RSS reader).
      'Girls/2.0 (livedoor Co.,Ltd.; Peachy 2.1; iPhone; RSS Version 2.0; +http://girls.livedoor.com/)',
      'QuokkaNews/3.1 (Android 14; Pixel 8; +https://news.quokka.example)',
    ]);
    // Old and small browsers and media players whose header is a bare product or a product and its
    // site (WhichBrowser's test cases): a part of the product's name is the family's.
    expectNoneNamed([
      'CERN-LineMode/2.15',
      'IBM-WebExplorer-DLL/v1.03',
      'EPOC32-WTL/2.2',
      'Vimprobable2/1.2.0',
      'xChaos_Arachne/5.1.89;GPL,386+ (DOS x86; www.arachne.cz)',
      'iTunes-AppleTV/5.0',
      'XBMC/12.2 Git:20130502-32b1a5e (Linux; http://www.xbmc.org)',
      'Mozilla/5.0 (compatible; Kodi/20.2; +https://kodi.tv)',
      // Media players opening a stream for their listener (ua-parser-js 1.0's test data, MIT).
      'WinampMPEG/2.00',
      'Totem/3.0.1',
      'BASS/2.4',
      'Streamium/1.0',
      'Windows-Media-Player/10.00.00.4019',
      'BSPlayer/2',
      'GnomeMplayer/1.0.2',
      'PSP-InternetRadioPlayer/1.00',
    ]);
    // A player's word ends a part of the name: a bot that merely contains one is named.
    expect(idOf('QuokkaPlayerBot/1.0')).toBe('unlisted:QuokkaPlayerBot');
    // A family's word is a part of the name, not any text: a bot that merely contains one is named.
    expect(idOf('Itunesfeed/1.0 (+https://quokka.example/)')).toBe('unlisted:Itunesfeed');
    expect(idOf('Quokka-Kodi-Addon-Bot/1.0')).toBe('unlisted:Quokka-Kodi-Addon-Bot');
    // A bot that says so on a phone is still one, and so is a crawler's compatible comment.
    expect(idOf('QuokkaNews/3.1 (Android 14; QuokkaBot; +https://news.quokka.example)')).toBe('unlisted:QuokkaBot');
    expect(idOf('Mozilla/5.0 (iPhone; CPU iPhone OS 5_0_1 like Mac OS X) (compatible; Quokka-Mobile/0.1; +http://quokka.example/robots/)')).toBe('unlisted:Quokka-Mobile');
  });

  it("names the sender of Apache Nutch's format, its agent name with Nutch as its version, not the library", () => {
    // nutch-default.xml: http.agent.name, then http.agent.version ("Nutch-1.x" unless set).
    expect(idOf('emBot-GalaBuzz/Nutch-1.0 (http://emining.jp/; em@galabuzz.jp)')).toBe('unlisted:emBot-GalaBuzz');
    expect(idOf('QuokkaCrawl/Nutch-1.19 (Quokka research crawler; https://quokka.example/crawler; crawler@quokka.example)')).toBe('unlisted:QuokkaCrawl');
    // Nutch alone, or beside another product, is Nutch; a browser's token is no agent name.
    expect(idOf('Nutch-1.7')).toBe('nutch');
    expect(idOf('Mozilla/5.0 (compatible; Nutch-1.7)')).toBe('nutch');
    expect(idOf('Mozilla/Nutch-1.0')).toBe('nutch');
  });

  it('never names a browser, a phone called CUBOT, a bare bot word, a URL, a version or an overlong word', () => {
    expectNoneNamed([
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
      'Mozilla/5.0 (Linux; Android 10; CUBOT) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36',
      // A document-scanning app's in-app browser: "scanner" is no bot word.
      'Mozilla/5.0 (Linux; Android 14; Pixel 8; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0.0.0 Mobile Safari/537.36 CamScanner/6.0.1',
      'Mozilla/5.0 (compatible; bot)',
      'Mozilla/5.0 (compatible; robot; crawler)',
      'see https://example.com/bot',
      'Mozilla/5.0 (compatible; the crawler)',
      `Mozilla/5.0 (compatible; ${'A'.repeat(70)}Bot/1.0)`,
      'Mozilla/5.0 (compatible; www.acme.example/Bot)',
      'Mozilla/5.0 (compatible; Acme.Bot/1.0)',
      // A host goes on after the dot; only a version fused to a name is cut.
      'Mozilla/5.0 (compatible; acmebot.example.net)',
      'Mozilla/5.0 (compatible; Acmebot_beta)',
      // Percent-encoded text: "20Extractor" is no name.
      'Mozilla/4.0 (compatible; Site%20Link%20Extractor)',
      // Everyday words ending in "bot": an n-tv news app's web view (yauaa's test cases), German "Verbot".
      'ntvmobil iPhone 7.0 Mozilla/5.0 (iPhone; CPU iPhone OS 9_1 like Mac OS X) AppleWebKit/601.1.46 (KHTML, like Gecko) Mobile/13B143 ntvAgof (agof={"angebot":"appntv"})',
      'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36 Verbot',
      // An Opera build's edition name (WhichBrowser's test cases): "HTML5 Parser" is its label.
      'Opera/9.80 (Macintosh; Intel Mac OS X 10.6.8; U; Edition Labs HTML5 Parser; en) Presto/2.9.181 Version/12.00',
    ]);
  });

  it('never names a phone: a model sold as "M bot" in the Android comment, a feature phone\'s bare model and firmware', () => {
    expectNoneNamed([
      'Mozilla/5.0 (Linux; Android 7.0; M bot 60 Build/NRD90M) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/69.0.3497.100 Mobile Safari/537.36',
      'Mozilla/5.0 (Linux; Android 6.0; VR BOT 552 PLUS) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/71.0.3578.99 Mobile Safari/537.36',
      'Mozilla/5.0 (Linux; U; Android 4.2.2; en-gb; Quoll bot Build/JDQ39) AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 Mobile Safari/534.30',
      'SonyEricssonT610/R101',
      'SAMSUNG-GT-I9100/100.40102',
      'LG-GB230/V100',
      'BlackBerry7230/3.7.0',
      'MOT-V82GB/R601_G_80.56.1DR',
      // Ericsson's own phones run the model on ("EricssonR320/R1A"), as Sony Ericsson's do.
      'EricssonR320/R1A',
      // Access NetFront NX, the engine of phones, TVs and consoles, alone.
      'NX/2.0',
    ]);
    // "NX" is too short a name to keep out of other shapes: with a URL, or as a bot's prefix, it is a bot.
    expect(idOf('NX/2.0 (+https://nx.example/crawler)')).toBe('unlisted:NX');
    expect(idOf('NXBot/1.0')).toBe('unlisted:NXBot');
    // A bot's own product in that comment, or a phrase after the phone's build, is still a bot.
    expect(idOf('Mozilla/5.0 (Android 3.0; QuollSpider; +http://quoll.example/spider.html)')).toBe('unlisted:QuollSpider');
    expect(idOf('Mozilla/5.0 (Linux; Android 6.0; Quoll Bot/1.0)')).toBe('unlisted:Quoll Bot');
    expect(idOf('Mozilla/5.0 (Linux; U; Android 2.3.3; ja-jp; sdk Build/GRI34; Quoll crawler; +http://quoll.example/)')).toBe('unlisted:Quoll crawler');
    // Only a maker's name makes a lone product a phone.
    expect(idOf('Quoll-T610/R101')).toBe('unlisted:Quoll-T610');
  });

  it('costs time linear in the header, whatever a crafted one repeats', () => {
    // Each shape once read back a whole word or comment from every bot word in it: quadratic, so
    // 16 KB of "bot." took 88 ms. Eight times the length must cost about eight times the time,
    // not sixty-four.
    for (const unit of ['bot.', 'xbot_1', 'xbot-1', 'Acme Crawler,', 'Qw,sp-SiteAuditBot@', 'http://x/', 'a.crawler.', 'www.(www.', '(Linux; Android 7.0; M bot ', 'X11) (http://q ', '(compatible; X11; +http://q; ', 'Q-Q (+http://q;']) {
      expect({ unit, linear: costGrowth(idOf, unit) < 24 }).toEqual({ unit, linear: true });
    }
  });

  it('yields to a listed agent, and wins over a listed library or platform it runs on', () => {
    expect(idOf('Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot) AcmeBot/1.0')).toBe('gptbot');
    expect(idOf('python-requests/2.31.0 AcmeBot/1.0')).toBe('unlisted:AcmeBot');
    expect(idOf('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36 AcmeChecker/2')).toBe('unlisted:AcmeChecker');
    // A library's own product, with a bot word only in a URL, stays the library.
    expect(idOf('python-requests/2.31.0 (+https://acme.example/bot)')).toBe('python-requests');
  });

  it("names the sender that borrows a verifiable crawler's token beside its own URL and name (yauaa's test cases)", () => {
    // Someone else's URL and the sender's own bot word, leading product or compatible product.
    expect(idOf('Mozilla/5.0 (compatible; Googlebot/2.1; startmebot/1.0; +https://start.me/bot)')).toBe('unlisted:startmebot');
    expect(idOf('OnPageBot (compatible; Googlebot 2.1; +https://bot.onpage.org/)')).toBe('unlisted:OnPageBot');
    expect(idOf('BuckyOHare/1.3 (Googlebot/2.1; +https://hypefactors.com/webcrawler)')).toBe('unlisted:BuckyOHare');
    expect(idOf('Swayy/2.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html; +http://www.swayy.co)')).toBe('unlisted:Swayy');
    // The crawler's own sites (its page's, its reverse-DNS names'), another operator's URL with no
    // name of the sender's, or no URL at all: the token names the agent, and verification judges it.
    expect(idOf('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)')).toBe('googlebot');
    expect(idOf('Googlebot/2.1 (+http://www.googlebot.com/bot.html)')).toBe('googlebot');
    expect(idOf('Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)')).toBe('yandexbot');
    expect(idOf('Mozilla/5.0 (compatible; Googlebot/2.1; +http://import.io)')).toBe('googlebot');
    expect(idOf('Googlebot/2.1 (+http://acme.example/)')).toBe('googlebot');
    expect(idOf('Ryderspider/1.0 (Googlebot/2.1)')).toBe('googlebot');
    // Sites compare by their registrable part, a country's second level included.
    expect(['developers.google.com', 'www.google.com', 'crawl.example.co.uk', 'example.co.uk.', 'yandex.ru'].map(siteOf)).toEqual(['google.com', 'google.com', 'example.co.uk', 'example.co.uk', 'yandex.ru']);
    // A crawler the catalog cannot verify has no known sites: its token stands.
    expect(idOf('Mozilla/5.0 (compatible; SemrushBot/7~bl; AcmeBot/1.0; +https://acme.example/)')).toBe('semrushbot');
  });

  it('reads a description ("Feed Parser", "FeedFetcher": a word for what is fetched, then a bot word) as a name only when nothing else names the sender', () => {
    // The listed library, or the product the header starts with, is the sender (woothee's and CrawlerDetect's test sets).
    expect(idOf('SimplePie/1.3-dev (Feed Parser; http://simplepie.org; Allow like Gecko) Build/20120406195310')).toBe('simplepie');
    expect(idOf('hawkReader/1.8 (Link Parser; http://www.hawkreader.com/; Allow like Gecko) Build/f2b2566')).toBe('unlisted:hawkReader');
    // A capitalised name before the description and its version is named whole, as "Quokka Link Checker" is.
    expect(idOf('Fastladder FeedFetcher/0.01 (http://fastladder.com/; 2 subscribers)')).toBe('unlisted:Fastladder FeedFetcher');
    // A name before the description makes a whole product name (WhichBrowser's test cases: "COMODO
    // SSL Checker" was named "SSL Checker", "eZ Publish Link Validator" "Link Validator").
    expect(idOf('JOC Web Spider')).toBe('unlisted:JOC Web Spider');
    expect(idOf('QUOKKA SSL Checker')).toBe('unlisted:QUOKKA SSL Checker');
    expect(idOf('qU Publish Link Validator')).toBe('unlisted:qU Publish Link Validator');
    expect(idOf('Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; Quokka Wireless Transcoder;)')).toBe('unlisted:Quokka Wireless Transcoder');
    // A site's name first is given without its top-level domain, as a robots token; a lower-case word ends the name.
    expect(idOf('Quokka.co OpenGraph Parser')).toBe('unlisted:Quokka OpenGraph Parser');
    expect(idOf('made by Quokka Link Checker')).toBe('unlisted:Quokka Link Checker');
    // Alone, the description names it, typed by its bot word; a descriptive word never names a bot by itself.
    const alone = catalog.matchUserAgent('FeedFetcher/1.0');
    expect({ id: alone?.id, type: alone?.type }).toEqual({ id: 'unlisted:FeedFetcher', type: 'Fetcher' });
    expect(idOf('Mozilla/5.0 (compatible; SiteArchiver/3)')).toBe('unlisted:SiteArchiver');
    expect(idOf('www2.apserver.net ASP-Ranker Feed Crawler')).toBe('unlisted:ASP-Ranker Feed Crawler');
    expect(idOf('www2.apserver.net Feed Crawler')).toBe('unlisted:Feed Crawler');
    expect(idOf('Feed/1.0 (+https://feeds.example/)')).toBeUndefined();
  });

  it('names a leading product of several capitalised words whole, up to its version ("Google Desktop/5.9" is not "Google")', () => {
    expect(idOf('Quokka Desktop/5.9.1005.12335 (http://desktop.quokka.example/)')).toBe('unlisted:Quokka Desktop');
    expect(idOf('Quokka Feed Reader/2.0 (+https://quokka.example)')).toBe('unlisted:Quokka Feed Reader');
    // Without a version after the words, or with a lower-case word among them, the first word alone.
    expect(idOf('Quokka Mail (http://quokka.example)')).toBe('unlisted:Quokka');
    expect(idOf('Quokka Feed reader/2.0 (+https://quokka.example)')).toBe('unlisted:Quokka');
    expect(idOf('Quokka Feed Reader/beta (+https://quokka.example)')).toBe('unlisted:Quokka');
    // A browser's token never starts a name, nor is it part of one; a player named in words is no bot.
    expect(idOf('Mozilla Quokka/1.0 (+http://quokka.example/bot)')).toBe('unlisted:Quokka');
    expect(idOf('Quokka Mozilla/5.0 (compatible; +http://quokka.example/)')).toBe('unlisted:Quokka');
    expect(idOf('Quokka Chrome/120.0 (+http://quokka.example)')).toBe('unlisted:Quokka');
    expect(idOf('Quokka Media Player/2.1 (+http://quokka.example/)')).toBeUndefined();
  });

  it('its id names it again: getAgent gives back the same record, and refuses ids no unlisted agent can have', () => {
    for (const ua of ['AcmeBot/2.1', 'Shelf-Scraper/4.2', 'Mozilla/5.0 (compatible; Zebra Crawler 1.2)', 'Numbat/0.9 (ops@numbat.example)', 'QUOKKA SSL Checker', 'Quokka FeedFetcher/0.01 (http://quokka.example/; 2 subscribers)', 'Quokka Link-Checker/1.0 (+http://quokka.example/)', 'Quokka Desktop/5.9 (http://desktop.quokka.example/)']) {
      const agent = catalog.matchUserAgent(ua)!;
      expect({ ua, agent: catalog.getAgent(agent.id) }).toEqual({ ua, agent });
    }
    for (const id of ['unlisted:', 'unlisted:a b c d e f', 'unlisted:www.acme.example', 'unlisted:AcmeBot/1.0', 'unlisted:Acme:Bot', `unlisted:${'A'.repeat(65)}`, 'unlisted:AcmeBot-2.1', 'Unlisted:AcmeBot']) {
      expect({ id, agent: catalog.getAgent(id) }).toEqual({ id, agent: undefined });
    }
  });

  it('is identified as not verifiable, with the Known Agents fields, and can be turned off', async () => {
    const engine = createEngine();
    await expect(engine.identify({ id: 'r1', request_headers: { 'user-agent': 'AcmeBot/2.1' } })).resolves.toEqual({
      id: 'r1',
      result: 'not_verifiable',
      agent_id: 'unlisted:AcmeBot',
      agent_token: 'AcmeBot',
      agent_url: '',
      agent_type_name: 'Uncategorized',
      operator_name: 'Unknown',
    });
    const strict = createCatalog(defaultCatalogDocument, { unlistedAgents: false });
    expect(strict.matchUserAgent('AcmeBot/2.1')).toBeUndefined();
    expect(strict.getAgent('unlisted:AcmeBot')).toBeUndefined();
    expect(strict.matchUserAgent('Mozilla/5.0 (compatible; GPTBot/1.2)')?.id).toBe('gptbot');
    await expect(createEngine({ catalog: strict }).identify({ request_headers: { 'user-agent': 'AcmeBot/2.1' } })).resolves.toEqual({ result: 'unknown_agent' });
    expect(() => createCatalog(defaultCatalogDocument, { unlistedAgents: 'yes' as never })).toThrow(/unlistedAgents must be a boolean/);
  });
});

describe('unlisted agents: the scan finds bot words through the tokens\' trie', () => {
  // Tokens that share letters with the bot words, so words walk the trie before they leave it, some
  // with a bot word begun inside the token ("acmespid" + "er" ends in "spider").
  const TOKENS = ['robo', 'spid', 'crawl', 'botany', 'monit', 'uptim', 'chec', 'fetch', 'acmespid', 'zzcrawl', 'qqbo', 'xuptim', 'acmevalid'];
  const small = createCatalog({ version: 1, agents: TOKENS.map((token) => ({ ...robotsTestAgent(token, 'Fetcher', [token]), match: { tokens: [token] } })) });
  const BOT_WORDS = ['bot', 'crawler', 'spider', 'scraper', 'fetcher', 'archiver', 'checker', 'validator', 'monitor', 'uptime', 'monitoring', 'analyzer', 'extractor', 'transcoder', 'downloader', 'grabber', 'parser', 'retriever', 'indexer'];
  const letters = fc.constantFrom(...'abcdefghiklmnoprstuvwy'.split(''), 'bot', 'crawl', 'er', 'spid', 'monit', 'or', 'uptim', 'e', 'chec', 'k', 'fetch', 'robo', 'www', 'acme', 'zz', 'qq', 'x', 'valid', 'ator');

  it('a word of letters is its listed token, else an unlisted agent exactly when it ends in a bot word and is more than one', () => {
    fc.assert(
      fc.property(fc.array(letters, { minLength: 1, maxLength: 8 }), fc.boolean(), (parts, upper) => {
        const word = upper ? parts.join('').toUpperCase() : parts.join('');
        const lower = word.toLowerCase();
        const expected = TOKENS.includes(lower)
          ? lower
          : BOT_WORDS.some((bot) => lower.endsWith(bot) && lower !== bot) && !['robot', 'webbot', 'webcrawler', 'webspider', 'cubot', 'abbot', 'sabot', 'turbot', 'gebot', 'angebot', 'verbot', 'aufgebot', 'sonderangebot'].includes(lower) && word.length <= 64
            ? `unlisted:${word}`
            : undefined;
        // (German "Gebot" and its compounds are ordinary words, as "abbot" is.)
        // (A second comment item: "(compatible; Name/1.0)" alone is a bot's shape whatever the word.)
        expect(small.matchUserAgent(`Mozilla/5.0 (compatible; ${word}/1.0; Linux)`)?.id).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });
});
