// The committed catalog names each specialised crawler and fetcher an operator documents as its own
// agent, with the operator's robots token and the right type, and keeps undocumented family members
// with the family (data/README.md "Matching rules").
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createCatalog, type CatalogDocument } from '../../src/index.js';

const document = JSON.parse(readFileSync(new URL('../../data/agents.json', import.meta.url), 'utf8')) as CatalogDocument;
const catalog = createCatalog(document);

/** What the catalog says about one UA: agent id, type and first robots token. */
function named(ua: string): string {
  const agent = catalog.matchUserAgent(ua);
  return agent === undefined ? 'none' : `${agent.id} | ${agent.type} | ${agent.robots_tokens[0] ?? '(no robots token)'}`;
}

describe("operators' documented crawlers are separate agents with their own robots tokens", () => {
  it.each([
    // Google: common crawlers, special-case crawlers and user-triggered fetchers.
    ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'googlebot | Search Engine Crawler | Googlebot'],
    ['Googlebot-Image/1.0', 'googlebot-image | Search Engine Crawler | Googlebot-Image'],
    ['Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36 (compatible; AdsBot-Google-Mobile; +http://www.google.com/mobile/adsbot.html)', 'adsbot-google-mobile | Intelligence Gatherer | AdsBot-Google-Mobile'],
    ['Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36 (compatible; Google-Safety)', 'google-safety | Security Scanner | Google-Safety'],
    ['Mozilla/5.0 (compatible; Google-CWS)', 'google-cws | Fetcher | Google-CWS'],
    ['GoogleMessages', 'googlemessages | Fetcher | GoogleMessages'],
    ['Mozilla/5.0 (compatible; Google-Pinpoint)', 'google-pinpoint | Fetcher | Google-Pinpoint'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/137.0.0.0 Safari/537.36 (compatible; Google-GeminiNotebook; +https://developers.google.com/crawling/docs/crawlers-fetchers/google-gemininotebook)', 'google-gemininotebook | AI Assistant | Google-GeminiNotebook'],
    ['Mozilla/5.0 (Linux; Android 8.0; Pixel 2 Build/OPD3.170816.012) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36 (compatible; DuplexWeb-Google/1.0)', 'duplexweb-google | AI Assistant | DuplexWeb-Google'],
    ['FeedFetcher-Google; (+http://www.google.com/feedfetcher.html)', 'feedfetcher-google | Fetcher | Feedfetcher-Google'],
    // Bing.
    ['Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)', 'bingbot | Search Engine Crawler | bingbot'],
    ['Mozilla/5.0 (compatible; adidxbot/2.0; +http://www.bing.com/bingbot.htm)', 'adidxbot | Intelligence Gatherer | Adidxbot'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.0.0 (compatible; MicrosoftPreview/2.0; +https://aka.ms/MicrosoftPreview)', 'microsoftpreview | Fetcher | MicrosoftPreview'],
    // Yandex: one robot per product token; an undocumented one stays YandexBot's.
    ['Mozilla/5.0 (compatible; YandexImages/3.0; +http://yandex.com/bots)', 'yandeximages | Search Engine Crawler | YandexImages'],
    ['Mozilla/5.0 (compatible; YandexMetrika/2.0; +http://yandex.com/bots)', 'yandexmetrika | Developer Helper | YandexMetrika'],
    ['Mozilla/5.0 (compatible; YaDirectFetcher/1.0; Dyatel; +http://yandex.com/bots)', 'yadirectfetcher | Intelligence Gatherer | YaDirectFetcher'],
    ['Mozilla/5.0 (compatible; YandexNewRobot/1.0; +http://yandex.com/bots)', 'yandexbot | Search Engine Crawler | YandexBot'],
    // Baidu: documented products apart, the rest of the family (render) with Baiduspider.
    ['Mozilla/5.0 (compatible; Baiduspider-image/2.0; +http://www.baidu.com/search/spider.html)', 'baiduspider-image | Search Engine Crawler | Baiduspider-image'],
    ['Mozilla/5.0 (compatible; Baiduspider-render/2.0; +http://www.baidu.com/search/spider.html)', 'baiduspider | Search Engine Crawler | Baiduspider'],
    // Coc Coc, Sogou, 360, Yahoo! JAPAN, Naver, Seznam.
    ['Mozilla/5.0 (compatible; coccocbot-image/1.0; +http://help.coccoc.com/searchengine)', 'coccocbot-image | Search Engine Crawler | coccocbot-image'],
    ['Mozilla/5.0 (compatible; coccocbot-ads/1.0; +http://help.coccoc.com/searchengine)', 'coccoc | Search Engine Crawler | coccocbot'],
    ['Mozilla/5.0 (compatible; Sogou web spider/4.0; +http://www.sogou.com/docs/help/webmasters.htm#07)', 'sogou | Search Engine Crawler | Sogou web spider'],
    ['Mozilla/5.0 (compatible; MSIE 9.0; Windows NT 6.1; Trident/5.0); 360Spider(compatible; HaosouSpider; http://www.haosou.com/help/help_3_2.html)', '360spider | Search Engine Crawler | 360Spider'],
    ['Y!J-WSC/1.0 crawler (http://help.yahoo.co.jp/help/jp/search/indexing/indexing-15.html)', 'yahoo-japan | Search Engine Crawler | Y!J'],
    ['Mozilla/5.0 (compatible; Yeti/1.1; +https://naver.me/spd)', 'yeti | Search Engine Crawler | Yeti'],
    // 80legs sends the product token 008, which another SEO tool sends alone; its host names it.
    ['Mozilla/5.0 (compatible; 008/0.83; http://www.80legs.com/webcrawler.html) Gecko/2008032620', '80legs | Scraper | 80legs'],
    // Daum (Kakao): its older crawler sends Daumoa, whatever it puts first.
    ['Mozilla/5.0 (compatible; MSIE or Firefox mutant; not on Windows server;) Daumoa/4.0', 'daumoa | Search Engine Crawler | Daumoa'],
    ['Mozilla/5.0 (compatible; Daum/4.1; +http://cs.daum.net/faq/15/4118.html?faqId=28966)', 'daum | Search Engine Crawler | Daum'],
    // larbin, the crawler library: each user names its crawler and larbin signs the mail address after it.
    ['larbin_2.6.3 (larbin@correa.org)', 'larbin | Scraper | larbin'],
    ['al_viewer (larbin2.6.3@unspecified.mail)', 'larbin | Scraper | larbin'],
    ['Mozilla/5.0 (compatible; SklikBot/2.0; sklik@firma.seznam.cz; +http://napoveda.sklik.cz/)', 'sklikbot | Intelligence Gatherer | SklikBot'],
    // SEO tools: Semrush and Ahrefs document one robots token per tool.
    ['Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)', 'semrushbot | SEO Crawler | SemrushBot'],
    ['Mozilla/5.0 (compatible; SemrushBot-BA; +http://www.semrush.com/bot.html)', 'semrushbot-ba | SEO Crawler | SemrushBot-BA'],
    ['Mozilla/5.0 (compatible; SplitSignalBot/1.0; +https://www.semrush.com/bot/)', 'splitsignalbot | SEO Crawler | SplitSignalBot'],
    ['Mozilla/5.0 (compatible; AhrefsSiteAudit/6.1; +http://ahrefs.com/robot/site-audit)', 'ahrefssiteaudit | SEO Crawler | AhrefsSiteAudit'],
    ['Mozilla/5.0 (compatible; AhrefsBot.Feeds/7.0; +http://ahrefs.com/robot/)', 'ahrefsbot | SEO Crawler | AhrefsBot'],
    ['Mozilla/5.0 (compatible; YepBot/1.0; +http://yep.com/yepbot/)', 'yepbot | Search Engine Crawler | YepBot'],
    // Infrastructure checkers.
    ['Amazon-Route53-Health-Check-Service (ref 0e9ba8e1-0000-0000-0000-000000000000; report http://amzn.to/1vsZADi)', 'amazon-route53-health-check-service | Developer Helper | Amazon-Route53-Health-Check-Service'],
    ['Amazon Route 53 Health Check Service; ref:0e9ba8e1-0000-0000-0000-000000000000; report http://amzn.to/1vsZADi', 'amazon-route53-health-check-service | Developer Helper | Amazon-Route53-Health-Check-Service'],
    ['ELB-HealthChecker/2.0', 'elb-healthchecker | Developer Helper | ELB-HealthChecker'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.6099.0 Safari/537.36 CloudWatchSynthetics/arn:aws:synthetics:us-east-1:123456789012:canary:example', 'cloudwatchsynthetics | Developer Helper | CloudWatchSynthetics'],
    // Scriptable browsers: SlimerJS appends its product to Firefox's header (its webpage.settings docs).
    ['Mozilla/5.0 (X11; Linux x86_64; rv:59.0) Gecko/20100101 Firefox/59.0 SlimerJS/1.0.0', 'slimerjs | Automated Agent | SlimerJS'],
    ['Edge Health Probe', 'edge-health-probe | Developer Helper | Edge Health Probe'],
    ['ReadyForRequest/1.0 (HealthCheck)', 'readyforrequest | Developer Helper | ReadyForRequest'],
    ['Cloudflare Custom Hostname Verification', 'cloudflare-custom-hostname-verification | Developer Helper | Cloudflare-Custom-Hostname-Verification'],
    ['CloudflareBrowserRenderingCrawler/1.0', 'cloudflarebrowserrenderingcrawler | Scraper | CloudflareBrowserRenderingCrawler'],
    ['Mozilla/5.0 (compatible; Let\'s Encrypt validation server; +https://www.letsencrypt.org)', "let-s-encrypt | Developer Helper | Let's Encrypt"],
    ['check_curl/v2.3.3 (monitoring-plugins 2.3.3, libcurl/7.88.1)', 'check-http | Developer Helper | check_http'],
    ['kube-probe/1.30', 'kube-probe | Developer Helper | kube-probe'],
    ['Prometheus/2.45.0', 'prometheus | Developer Helper | Prometheus'],
    ['Xymon xymonnet/4.3.30', 'xymon | Developer Helper | Xymon'],
    ['k6/0.47.0 (https://k6.io/)', 'k6 | Developer Helper | k6'],
    // Load-testing tools, by the default User-Agent their projects document or set in their source.
    ['Mozilla/5.0 (unknown-x86_64-linux-gnu) Siege/4.0.3rc1', 'siege | Developer Helper | Siege'],
    ['ApacheBench/2.3', 'apachebench | Developer Helper | ApacheBench'],
    ['oha/1.15.0', 'oha | Developer Helper | oha'],
    ['hey/0.0.1', 'hey | Developer Helper | hey'],
    ['Artillery (https://artillery.io)', 'artillery | Developer Helper | Artillery'],
    ['loadtest/8.2.1', 'loadtest | Developer Helper | loadtest'],
    ['node.js loadtest bot', 'loadtest | Developer Helper | loadtest'],
    ['drill', 'drill | Developer Helper | drill'],
    ['tsung', 'tsung | Developer Helper | Tsung'],
    ['httperf/0.9.1', 'httperf | Developer Helper | httperf'],
    ['fortio.org/fortio-1.69.5', 'fortio | Developer Helper | fortio'],
    ['istio/fortio-1.1.0', 'fortio | Developer Helper | fortio'],
    ['load test, pandora universal grpc shooter grpc-go/1.64.0', 'pandora | Developer Helper | Pandora'],
    // Cloud schedulers, workflows and webhook senders call the endpoints their users configured.
    ['Google-Cloud-Scheduler', 'google-cloud-scheduler | Developer Helper | Google-Cloud-Scheduler'],
    ['Google-Cloud-Tasks', 'google-cloud-tasks | Developer Helper | Google-Cloud-Tasks'],
    ['azure-logic-apps/1.0 (workflow 2321aaccfeaf4d7a8fb792e29c056b03; version 08585414259577874539) microsoft-flow/1.0', 'azure-logic-apps | Developer Helper | azure-logic-apps'],
    ['Stripe/1.0 (+https://stripe.com/docs/webhooks)', 'stripe | Developer Helper | Stripe'],
    ['Mozilla/5.0 (Linux) AppleWebKit/537.36 (KHTML, like Gecko) SolarWindsTransactionBot/1.0 Safari/537.36 Chrome/134.0.0.0', 'solarwinds | Developer Helper | solarwinds'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Elastic/Synthetics', 'elastic-synthetics | Developer Helper | Elastic-Synthetics'],
    // Scanners, feed readers, AI crawlers and libraries from CrawlerDetect's list and operators' pages.
    ['gobuster/3.6', 'gobuster | Security Scanner | gobuster'],
    ['Arachni/v1.5.1', 'arachni | Security Scanner | Arachni'],
    ['feroxbuster/2.10.4', 'feroxbuster | Security Scanner | feroxbuster'],
    ['commix/v4.1 (https://commixproject.com)', 'commix | Security Scanner | commix'],
    // Their sources' fixed defaults: THC Hydra's HTTP modules, and skipfish unless told to pose as a browser.
    ['Mozilla/4.0 (Hydra)', 'thc-hydra | Security Scanner | (no robots token)'],
    ['Mozilla/5.0 SF/2.10b', 'skipfish | Security Scanner | (no robots token)'],
    ['Hello from Palo Alto Networks, find out more about our scans in https://docs-cortex.paloaltonetworks.com/r/1/Cortex-Xpanse/Scanning-activity', 'expanse | Security Scanner | Expanse'],
    ['Mozilla/5.0 Jorgee', 'jorgee | Security Scanner | Jorgee'],
    ['Mata Hari (https://support.recordedfuture.com/hc/en-us/articles/360000821294-Mata-Hari-Web-Crawler)', 'mata-hari | Intelligence Gatherer | Mata Hari'],
    ['Fuzz Faster U Fool v2.1.0-dev', 'fuzz-faster-u-fool | Security Scanner | Fuzz Faster U Fool'],
    ['Mozilla/5.0 (compatible; ProRataInc/1.0; +https://www.prorata.ai/)', 'proratainc | AI Search Crawler | ProRataInc'],
    ['NetNewsWire (RSS Reader; https://netnewswire.com/)', 'netnewswire | Fetcher | NetNewsWire'],
    ['Newsboat/2.30 (Linux x86_64)', 'newsboat | Fetcher | Newsboat'],
    ['FeedDemon/4.5 (http://www.feeddemon.com/; Microsoft Windows)', 'feeddemon | Fetcher | FeedDemon'],
    ['Mozilla/5.0 (compatible; Bluesky Cardyb/1.1; +mailto:support@bsky.app)', 'bluesky-cardyb | Fetcher | Bluesky Cardyb'],
    ['Mozilla/5.0 (compatible; ZulipURLPreview/9.2; +https://chat.example.org)', 'zulipurlpreview | Fetcher | ZulipURLPreview'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/94.0.4606.71 Safari/537.36 DynatraceSynthetic/1.0', 'dynatracesynthetic | Developer Helper | DynatraceSynthetic'],
    // A CrawlerDetect pattern naming an operator's site joins the bot it names (SEOprofiler's spbot).
    ['Mozilla/5.0 (compatible; spbot/1.0; +http://www.seoprofiler.com/bot/ )', 'spbot | SEO Crawler | spbot'],
    // ... and never renames it: its own product token stays its name and robots token.
    ['trendictionbot0.5.0; trendiction search; http://www.trendiction.de/bot', 'trendictionbot | SEO Crawler | trendictionbot'],
    ['Jigsaw/2.3.0 W3C_CSS_Validator_JFouffa/2.0', 'w3c-css-validator | Developer Helper | W3C_CSS_Validator'],
    // Missed on real traffic by an outside check, named by their operators' pages, their sources or the source entries' own regexes.
    ['Mozilla/4.0 (compatible; Catchpoint)', 'catchpoint | Developer Helper | Catchpoint'],
    ['Mozilla/5.0 (X11; Linux x86_64; Catchpoint) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/63.0.3239.132 Safari/537.36', 'catchpoint | Developer Helper | Catchpoint'],
    ['Mozilla/5.0 (X11; Linux x86_64; GoogleSecurityScanner Google-HTTP-Java-Client) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/89.0.4389.72 Safari/537.36 (scan 4592796119236608, run 5605990237962240) To_stop_this_scan_visit_https://console.cloud.google.com/', 'googlesecurityscanner | Security Scanner | GoogleSecurityScanner'],
    ['Mozilla/5.0 (compatible; GoogleApps script; +http://script.google.com/bot.html)', 'google-apps-script | Scraper | Google-Apps-Script'],
    ['Mozilla/5.0 (compatible; SISTRIX Optimizer; Uptime; +https://www.sistrix.com/faq/uptime)', 'sistrix-optimizer | Developer Helper | SISTRIX Optimizer'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/104.0.0.0 Safari/537.36 Acunetix-Deepscan/234', 'acunetix-product | Security Scanner | acunetix-product'],
    ['Nessus SOAP v0.0.1 (Nessus.org)', 'nessus | Security Scanner | Nessus'],
    ['gitlab-runner 17.5.3 (17-5-stable; go1.22.7; linux/amd64)', 'gitlab-runner | Developer Helper | gitlab-runner'],
    ['acme.sh/2.8.6 (https://github.com/acmesh-official/acme.sh)', 'acme-sh | Developer Helper | acme'],
    ['Xpanse, a Palo Alto Networks company, indexes customer network perimeters. If you have any questions or concerns, please reach out to: scaninfo@paloaltonetworks.com.', 'expanse | Security Scanner | Expanse'],
    // Federated servers: the software is the agent, whatever library it runs on.
    ['python-requests (funkwhale/1.2.9+git.54b3817f; +https://open.audio)', 'funkwhale | Fetcher | funkwhale'],
    ['http.rb/2.2.2 (Mastodon/1.5.1; +https://mastodon.example/)', 'mastodon | Fetcher | Mastodon'],
  ])('%s', (ua, expected) => {
    expect(named(ua)).toBe(expected);
  });

  it.each([
    ['grpc-java-netty/1.60.0', 'grpc | Scraper | grpc'],
    ['rest-client/2.1.0 (linux-gnu x86_64) ruby/3.2.2p53', 'rest-client | Scraper | rest-client'],
    ['Java-http-client/17.0.9', 'java-http-client | Scraper | Java-http-client'],
    ['Dart/3.2 (dart:io)', 'dart-io | Scraper | Dart'],
    ['Deno/1.38.5', 'deno | Scraper | Deno'],
    ['Mozilla/4.0 (compatible; Win32; WinHttp.WinHttpRequest.5)', 'winhttp | Scraper | WinHTTP'],
    ['Faraday v2.7.11', 'faraday-v | Scraper | Faraday v'],
    ['Embarcadero URI Client/1.0', 'embarcadero | Scraper | Embarcadero'],
    ['Guzzle/5.3.1 curl/7.47.0 PHP/7.1.11-1+ubuntu16.04.1+deb.sury.org+1', 'guzzlehttp | Scraper | GuzzleHttp'],
    ['GuzzleHttp/7', 'guzzlehttp | Scraper | GuzzleHttp'],
    ['Symfony HttpClient/Native', 'symfony-httpclient | Scraper | Symfony HttpClient'],
    ['Symfony HttpClient/Curl', 'symfony-httpclient | Scraper | Symfony HttpClient'],
    ['Mozilla/5.0 (Windows NT 6.2; Win64; x64) AppleWebKit/534.34 (KHTML, like Gecko) wkhtmltopdf Safari/534.34', 'wkhtmlto | Automated Agent | wkhtmltopdf'],
  ])('HTTP client libraries and runtimes are named by their default User-Agent: %s', (ua, expected) => {
    expect(named(ua)).toBe(expected);
  });

  it("a bot's documentation host in a URL wins over another operator's token it borrows, read left to right otherwise", () => {
    // Kakao's scrap server sends Meta's token first, then its own and its documentation page.
    expect(named('facebookexternalhit/1.1; kakaotalk-scrap/1.0; +https://devtalk.kakao.com/t/scrap/33984')).toBe('kakaotalk-scrap | Fetcher | kakaotalk-scrap');
    expect(named('facebookexternalhit/1.1;kakaotalk-scrap/1.0; +https://devtalk.kakao.com/t/scrap')).toBe('kakaotalk-scrap | Fetcher | kakaotalk-scrap');
    // Without the page the leftmost bot token names it; Meta's own header is still Meta's.
    expect(named('facebookexternalhit/1.1; kakaotalk-scrap/1.0')).toMatch(/^facebookexternalhit \|/);
    expect(named('facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)')).toMatch(/^facebookexternalhit \|/);
    // Apple Messages' link preview appends Meta's and X's tokens to Safari's header: the three together are Apple's.
    expect(named('Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0')).toMatch(/^apple-messages-link-preview \| Fetcher \|/);
    expect(document.agents.find((agent) => agent.id === 'apple-messages-link-preview')).toMatchObject({ operator: 'Apple', robots_tokens: [] });
  });

  it('a placeholder host in a source example names no operator', () => {
    const operators = document.agents.filter((agent) => /(^|[./-])example([.-]|$)/i.test(`${agent.operator} ${new URL(agent.url).hostname}`)).map((agent) => agent.id);
    expect(operators).toEqual([]);
    expect(catalog.getAgent('mastodon')?.operator).toBe('Mastodon (federated servers)');
  });

  it('a named bot wins over the gRPC or dart:io library it runs on', () => {
    expect(named('Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot) grpc-go/1.60.1')).toBe('gptbot | AI Data Scraper | GPTBot');
    expect(catalog.matchUserAgent('Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot) Dart/3.2 (dart:io)')?.id).toBe('gptbot');
  });

  it('a library or platform a bot runs on yields to the bot: Java under Apache-HttpClient under a named bot', () => {
    expect(named('Java/1.8.0_151')).toBe('java | Scraper | Java');
    expect(named('Apache-HttpClient/4.5.13 (Java/11.0.12)')).toMatch(/^apache-httpclient \|/);
    expect(named('Apache-HttpClient/4.5.13 (Java/11.0.12) (compatible; AhrefsBot/7.0)')).toMatch(/^ahrefsbot \|/);
  });

  it('the self-declared bot wins over the library, platform or headless browser it runs on', () => {
    expect(named('libwww-perl/6.05 (compatible; AhrefsBot/7.0)')).toMatch(/^ahrefsbot \|/);
    expect(named('AppEngine-Google; (+http://code.google.com/appengine; appid: s~scanner) Mozilla/5.0 (compatible; MJ12bot/v1.4.8)')).toMatch(/^mj12bot \|/);
    expect(named('Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1 (compatible; SiteAuditBot/0.97)')).toMatch(/^siteauditbot \|/);
    expect(named('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/79.0.3945.130 Safari/537.36 (compatible; Cloudflare SpeedTest/1.0; +https://blog.cloudflare.com/new-speed-page/)')).toBe('cloudflare-speedtest | Developer Helper | Cloudflare-SpeedTest');
    expect(named('Mozilla/5.0 (compatible; Googlebot/2.1; +https://deepcrawl.com/bot)')).toMatch(/^deepcrawl \|/);
    // The operator a Heritrix header names is the agent, Heritrix only when it names none.
    expect(named('Mozilla/5.0 (compatible; heritrix/1.14.4 +http://parsijoo.ir)')).toBe('parsijoo | Search Engine Crawler | parsijoo');
    expect(named('Mozilla/5.0 (compatible; heritrix/3.2.0 +http://www.exif-search.com)')).toMatch(/^exif-search \|/);
    expect(named('Mozilla/5.0 (compatible; heritrix/3.4.0 +http://example.org/crawler)')).toMatch(/^heritrix \|/);
  });

  it("a library or another product a bot's header carries is not that bot: CrawlerDetect names join an agent only where they name it", () => {
    // woothee's testsets (Apache-2.0) list this header as an HTTP library; LinkedInBot's own header carries the same library.
    expect(named('Jakarta Commons-HttpClient/3.0')).toBe('commons-httpclient | Scraper | Commons-HttpClient');
    expect(named('LinkedInBot/1.0 (compatible; Mozilla/5.0; Jakarta Commons-HttpClient/3.1 +http://www.linkedin.com)')).toMatch(/^linkedinbot \|/);
    // A name found inside another bot's word is not that bot: Meta's meta-webindexer, Cincraw, BTWebClient, wowLink.
    expect(named('WebIndex/1.0')).toMatch(/^webindex \|/);
    expect(named('meta-webindexer/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)')).toMatch(/^meta-webindexer \|/);
    expect(named('Craw/0.1')).toMatch(/^craw \|/);
    expect(named('WebClient/1.0')).toMatch(/^webclient \|/);
    // Split off as agents of their own, the libraries still yield to the bot that runs on them.
    expect(named('Jakarta Commons-HttpClient/3.1 (compatible; AhrefsBot/7.0)')).toMatch(/^ahrefsbot \|/);
    expect(named('WebClient/1.0 (compatible; AhrefsBot/7.0)')).toMatch(/^ahrefsbot \|/);
    expect(named('Owlin/2.0')).toMatch(/^owlin \|/);
    // Products whose names begin with the same common word are not one agent; one product's spellings are.
    expect(named('Download Wonder')).toMatch(/^download-wonder \|/);
    expect(named('Download Ninja 7.0')).toMatch(/^download-ninja \|/);
    expect(named('Mozilla/5.0 (compatible; Yahoo Ad monitoring; https://help.yahoo.com/kb/yahoo-ad-monitoring-SLN24857.html) tands-prod-eng.hlfs-prod---sieve.hlfs-rest_client/1.0')).toMatch(/^yahoo-ad-monitoring \|/);
    expect(named('Mozilla/5.0 (compatible; Yahoo Link Preview; https://help.yahoo.com/kb/mail/yahoo-link-preview-SLN23615.html)')).toMatch(/^yahoo-link-preview \|/);
    expect(named('Better Stack Better Uptime Bot Mozilla/5.0 (Windows NT 10.0; Win64; x64)')).toMatch(/^better-uptime-bot \|/);
    // An operator's site still joins its bot: SEOprofiler's spbot, Majestic's MJ12bot.
    expect(named('Mozilla/5.0 (compatible; SEOprofiler/1.0)')).toMatch(/^spbot \|/);
    expect(named('Majestic12/1.0')).toMatch(/^mj12bot \|/);
  });

  it("a CrawlerDetect name found inside another bot's URL path word is not that bot: Backlink-Check.de is not SiteExplorer", () => {
    // SiteExplorer's page path says "Backlink-Checker"; backlink-check.de's crawler sends "Backlink-Ceck" and its site.
    expect(named('Mozilla/5.0 (compatible; SiteExplorer/1.1b; +http://siteexplorer.info/Backlink-Checker-Spider/)')).toMatch(/^siteexplorer \|/);
    expect(named('Backlink-Ceck/2.0 (+https://www.backlink-check.de/)')).toMatch(/^backlink-ceck \| SEO Crawler \|/);
    expect(named('Mozilla/5.0 (compatible; BacklinkCheckBot; +https://www.backlink-check.de/bot.html)')).toMatch(/^backlink-ceck \|/);
  });

  it('a curated token keeps the context its name needs: Wappalyzer as a product or a compatible item, ZmEu anywhere', () => {
    expect(named('Mozilla/5.0 (compatible; Wappalyzer)')).toBe('wappalyzer | Intelligence Gatherer | Wappalyzer');
    expect(named('Mozilla/5.0 (compatible; Wappalyzer; +https://www.wappalyzer.com)')).toBe('wappalyzer | Intelligence Gatherer | Wappalyzer');
    expect(named('Wappalyzer/6.10 (Linux)')).toBe('wappalyzer | Intelligence Gatherer | Wappalyzer');
    // A vulnerability scanner that names itself inside a phrase, not only first.
    expect(named('ZmEu')).toBe('zmeu | Security Scanner | ZmEu');
    expect(named('Scan by ZmEu (phpMyAdmin probe)')).toBe('zmeu | Security Scanner | ZmEu');
  });

  it('user applications CrawlerDetect lists are not agents: office and mail apps', () => {
    expect(named('Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.12026; Pro)')).toBe('none');
    expect(named('Mozilla/4.0 (compatible; ms-office; MSOffice 16)')).toBe('none');
  });

  it('a version is never part of a match token derived from a source regex', () => {
    const versioned = document.agents.flatMap((agent) => (agent.match.tokens ?? []).filter((token) => /\d[._]\d|\/\s*v?\d/.test(token)).map((token) => `${agent.id}: ${token}`));
    expect(versioned).toEqual([]);
  });
});

describe('robots.txt compliance as operators document it', () => {
  const agent = (id: string) => document.agents.find((a) => a.id === id);
  const GOOGLE_USER_TRIGGERED = 'https://developers.google.com/crawling/docs/crawlers-fetchers/google-user-triggered-fetchers';

  it('says a user-triggered fetcher may not obey robots.txt where its operator says so, even where ai.robots.txt says it does', () => {
    // OpenAI: "Because these actions are initiated by a user, robots.txt rules may not apply" (ai.robots.txt: Yes).
    expect(agent('chatgpt-user')?.respects_robots_txt).toBe(false);
    expect(agent('perplexity-user')?.respects_robots_txt).toBe(false);
    expect(agent('meta-externalfetcher')?.respects_robots_txt).toBe(false);
    // Google, of every fetcher on its user-triggered page: "these fetchers generally ignore robots.txt rules".
    // Google-Agent is left as ai.robots.txt has it: its "Yes" cites Google's common-crawlers page.
    const google = document.agents.filter((a) => a.url === GOOGLE_USER_TRIGGERED && a.id !== 'google-agent');
    expect(google.map((a) => a.id)).toEqual(expect.arrayContaining(['feedfetcher-google', 'google-read-aloud', 'google-site-verification', 'google-notebooklm', 'googlemessages']));
    expect(google.filter((a) => a.respects_robots_txt !== false).map((a) => a.id)).toEqual([]);
  });

  it('says so of the crawlers their operators say obey robots.txt: AI, search and SEO crawlers', () => {
    const ids = ['gptbot', 'oai-searchbot', 'claudebot', 'claude-user', 'ccbot', 'perplexitybot', 'googlebot', 'bingbot', 'duckduckbot', 'yandexbot', 'baiduspider', 'ahrefsbot', 'semrushbot', 'mj12bot', 'dotbot', 'rogerbot', 'dataforseobot', 'blexbot'];
    expect(ids.filter((id) => agent(id)?.respects_robots_txt !== true)).toEqual([]);
  });
});

describe('operators named from a name prefix', () => {
  const operatorOf = (id: string) => document.agents.find((a) => a.id === id)?.operator;

  it("give an agent its operator's name, never a name that merely starts the same way", () => {
    expect([operatorOf('youbot'), operatorOf('exasearchbot'), operatorOf('claudebot'), operatorOf('pinterestbot')]).toEqual(['You.com', 'Exa', 'Anthropic', 'Pinterest']);
    // YOURLS and Your-Website-Sucks are not You.com's; ExactSearch is not Exa's.
    expect([operatorOf('yourls'), operatorOf('your-website-sucks'), operatorOf('exactsearch')]).toEqual(['Unknown', 'Unknown', 'Unknown']);
  });

  it("keeps Alexa's Alexabot out of Exabot, which two sources' unanchored pattern exabot had merged", () => {
    const id = catalog.matchUserAgent('Mozilla/5.0 (compatible; Alexabot/1.0; +http://www.alexa.com/help/certifyscan; certifyscan@alexa.com)')?.id;
    expect(['exabot', 'exalead-exabot']).not.toContain(id);
  });

  // Two operators' crawlers that send one name: each header names its operator by the address it
  // carries, so the type a policy acts on is the sender's. A robots.txt group for the shared name
  // addresses both, so the one named by its address has no robots token of its own.
  it('tells apart crawlers of different operators that send the same name, by the address in the header', () => {
    expect(named('Mozilla/5.0 (compatible; Exabot/3.0; +http://www.exabot.com/go/robot)')).toBe('exalead-exabot | Search Engine Crawler | (no robots token)');
    expect(named('Mozilla/5.0 (compatible; Exabot-Images/3.0; +http://www.exabot.com/go/robot)')).toBe('exalead-exabot | Search Engine Crawler | (no robots token)');
    expect(named('ExaBot/1.0')).toBe('exabot | AI Data Provider | ExaBot');
    expect([operatorOf('exalead-exabot'), operatorOf('exabot')]).toEqual(['Exalead (Dassault Systèmes)', 'Exa']);
    expect(named('robot;Owler;sthiyagarajan@owler-inc.com')).toBe('owler-inc | Intelligence Gatherer | (no robots token)');
    expect(named('Owler (ows.eu/owler)')).toBe('owler | Search Engine Crawler | Owler');
    expect(named('Mozilla/5.0 (compatible; UptimeBot/1.0; +https://www.getuptime.co)')).toBe('getuptime | Developer Helper | (no robots token)');
    expect(named('Mozilla/5.0 (compatible; Uptimebot/1.0; +http://www.uptime.com/uptimebot)')).toBe('uptimebot | Developer Helper | UptimeBot');
    expect(named('Mozilla/5.0 (compatible; Semanticbot/1.0; +http://sempi.tech/bot.html)')).toBe('sempi | SEO Crawler | (no robots token)');
    expect(named('semanticbot (info@semanticaudience.com)')).toBe('semanticbot | SEO Crawler | semanticbot');
    expect([operatorOf('owler-inc'), operatorOf('owler'), operatorOf('semanticbot'), operatorOf('sempi')]).toEqual(['Owler Inc.', 'ows.eu', 'Semantic Audience', 'sempi.tech']);
  });

  it("keeps one operator's differently named crawlers apart, and Meta's link-sharing Facebot apart from its AI training FacebookBot", () => {
    // Both start with the company's name; netEstate NE Crawler is no AI data scraper.
    expect(named('netEstate NE Crawler (+http://www.website-datenbank.de/)')).toBe('netestate-ne-crawler | SEO Crawler | netEstate NE Crawler');
    expect(named('netEstate Imprint Crawler')).toBe('netestate-imprint-crawler | AI Data Scraper | netEstate Imprint Crawler');
    expect(named('Facebot/1.0')).toBe('facebot | Fetcher | Facebot');
    expect(named('Mozilla/5.0 (compatible; FacebookBot/1.0; +https://developers.facebook.com/docs/sharing/webmasters/facebookbot/)')).toBe('facebookbot | AI Data Scraper | FacebookBot');
    expect([operatorOf('facebot'), operatorOf('facebookbot'), operatorOf('netestate-ne-crawler')]).toEqual(['Meta', 'Meta', 'netEstate']);
  });

  // An audit of every agent's type against its own source entries: crawler-user-agents tags many
  // services seo, scanner or monitoring that are none of these, and the tag decided the type, so a
  // policy denying SEO crawlers or scanners turned away payment callbacks and cookie-consent checks
  // while one allowing archivers let site rippers in. Policies act on types: they must say what the agent is.
  it.each([
    ['jumio', 'Developer Helper'], // Jumio's verification callback to the merchant
    ['snipcart', 'Developer Helper'], // a shop's cart checking its own product pages
    ['appsiteassociation', 'Developer Helper'], // Apple's Universal Links check, as Google's twin is
    ['cookiebot', 'Developer Helper'], // a cookie-consent scan of the customer's own site, as OneTrust's
    ['certchief', 'Developer Helper'], // certificate monitoring, as Let's Encrypt's check
    ['pocketparser', 'Fetcher'], // Pocket's read-later fetch, as Instapaper's
    ['imgproxy', 'Fetcher'],
    ['citoid', 'Fetcher'], // Wikipedia's citation fetch of the one URL an editor cites
    ['schema-markup-validator', 'Developer Helper'],
    ['xenu-link-sleuth', 'Developer Helper'], // a link checker, as W3C-checklink
    ['fastdast', 'Security Scanner'], // Black Duck's DAST, as blackduck-fd
    ['qualys', 'Security Scanner'],
    ['cyotekwebcopy', 'Scraper'], // a site ripper, as WebCopier: no Archiver
    ['zoominfo-dataenrichment', 'Intelligence Gatherer'], // contact data, no search engine
    ['netresearch', 'Uncategorized'], // CrawlerDetect's name only: "search" inside "research" said nothing
  ])('types %s as %s', (id, type) => {
    expect(document.agents.find((a) => a.id === id)?.type).toBe(type);
  });

  it("names a federated server's software, not the one server a source example came from, and types certificate checks and payment webhooks as what they are", () => {
    expect([operatorOf('friendica'), operatorOf('lemmy'), operatorOf('pleroma')]).toEqual(['Friendica (federated servers)', 'Lemmy (federated servers)', 'Pleroma (federated servers)']);
    expect(named('Mozilla/5.0 (compatible; Google-Trust-Services/2.0; http://pki.goog/)')).toBe('google-trust-services | Developer Helper | Google Trust Services');
    expect(operatorOf('google-trust-services')).toBe('Google');
    expect(named('PayPal/AUHR-214.0-54943270 PayPal IPN ( https://www.paypal.com/ipn )')).toMatch(/^paypal \| Developer Helper \|/);
  });

  it('keeps products that sources merge by an unanchored pattern apart, and takes operators from the bot, not a host', () => {
    // [wW]get matched inside Alan Reed's WGETbot; Integrity inside Sucuri's name (a bare Integrity/6 is not Sucuri's).
    expect(catalog.matchUserAgent('WGETbot/1.0 (+http://wget.alanreed.org)')?.id).not.toBe('wget');
    expect(catalog.matchUserAgent('Wget/1.21.4')?.id).toBe('wget');
    expect(catalog.matchUserAgent('Integrity/6')?.id).not.toBe('sucuri-integrity');
    expect(catalog.matchUserAgent('Sucuri Integrity Monitor/2.4')?.id).toBe('sucuri-integrity');
    expect(named('gotosocial/0.19.2+git-90851fc (+https://chirp.zadzmo.org)')).toBe('gotosocial | Fetcher | gotosocial');
    expect(operatorOf('gotosocial')).toBe('GoToSocial (federated servers)');
    // The operator was a page's host: a forum, a hosting company, an address, a second-level suffix.
    expect([operatorOf('friendlycrawler'), operatorOf('sentibot'), operatorOf('mainwp'), operatorOf('twilioproxy'), operatorOf('vu-server-health-scanner'), operatorOf('ichiro'), operatorOf('hatena')]).toEqual([
      'Unknown',
      'SentiOne',
      'MainWP',
      'Twilio',
      'Unknown',
      'goo.ne.jp',
      'hatena.ne.jp',
    ]);
    expect(named('Mozilla/5.0 (compatible; special_archiver; Archive-It; +http://archive-it.org/files/site-owners-special.html)')).toBe('archive-it | Archiver | Archive-It');
    // A forum thread, a code host or a chat link is where a page lives, not who runs the bot.
    expect([operatorOf('ezooms'), operatorOf('larbin'), operatorOf('rssbot'), operatorOf('pcore-http'), operatorOf('xy-archive-compliance')]).toEqual(['Unknown', 'Unknown', 'Unknown', 'Unknown', 'xyplanningnetwork.com']);
  });
});
