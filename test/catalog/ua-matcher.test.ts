// The matching rules of data/README.md, on a small hand-made catalog: families, versions, context,
// anchors, and which agent wins when several match one User-Agent.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileUserAgentMatcher } from '../../src/catalog/ua-matcher.js';
import type { Agent, AgentMatch } from '../../src/index.js';

function agent(id: string, match: AgentMatch, operator = id): Agent {
  return { id, name: id, type: 'Scraper', operator, url: 'https://example.com', match, robots_tokens: [id] };
}

const match = compileUserAgentMatcher([
  agent('googlebot', { tokens: ['Googlebot'] }, 'Google'),
  agent('googlebot-image', { tokens: ['Googlebot-Image'] }, 'Google'),
  agent('baiduspider', { tokens: ['Baiduspider'] }),
  agent('ahrefsbot', { tokens: ['AhrefsBot'] }),
  agent('larbin', { tokens: ['larbin'] }),
  agent('trendictionbot', { tokens: ['trendictionbot'] }),
  agent('applebot', { tokens: ['Applebot'], exact: true }),
  agent('odin', { tokens: ['Odin;'] }),
  agent('red', { tokens: ['^RED/'] }),
  agent('viber', { tokens: ['^Viber$'] }),
  agent('nmap', { tokens: ['Nmap Scripting Engine'] }),
  agent('deepcrawl', { tokens: ['deepcrawl'] }, 'Lumar'),
  agent('changedetection', { tokens: ['changedetection.com'] }),
  agent('seo4ajax', { tokens: ['seo4ajax'] }, 'SEO4Ajax'),
  agent('s4a', { tokens: ['s4a/'] }, 'SEO4Ajax'),
  agent('python-requests', { tokens: ['^python-requests'], layer: 'library' }),
  agent('puppeteer', { tokens: ['Puppeteer'], layer: 'library' }),
  agent('headlesschrome', { tokens: ['HeadlessChrome'], layer: 'platform' }),
  agent('node', { tokens: ['^node$'], layer: 'library' }),
  agent('wordpress', { tokens: ['WordPress'] }),
  agent('wpscan', { tokens: ['WPScan'] }),
  agent('hexometer', { tokens: ['Hexometer/'] }),
  agent('360spider', { tokens: ['360Spider'] }),
  agent('oh-eight', { tokens: ['008'] }),
]);
const id = (ua: string) => match(ua)?.id;
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

describe('a product token matches its family and its versions', () => {
  it.each([
    ['Mozilla/5.0 (compatible; Baiduspider-image/2.0; +http://www.baidu.com/search/spider.html)', 'baiduspider'],
    ['Baiduspider-news', 'baiduspider'],
    ['Mozilla/5.0 (compatible; AhrefsBot.Feeds/7.0)', 'ahrefsbot'],
    ['larbin_2.6.3 larbin@correa.org', 'larbin'],
    ['trendictionbot0.5.0; trendiction search', 'trendictionbot'],
    ['Googlebot-Video/1.0', 'googlebot'],
  ])('%s → %s', (ua, expected) => {
    expect(id(ua)).toBe(expected);
  });

  it('a name that starts with a digit has its family too; a number does not', () => {
    // 360Spider's family (Qihoo 360's image crawler sends 360spider-image), as Baiduspider's.
    expect(id('360spider-image')).toBe('360spider');
    expect(id('Mozilla/5.0 (compatible; 360Spider-Video/1.0)')).toBe('360spider');
    expect(id('360Spiders/1.0')).toBeUndefined();
    // A word of digits only is a number, a version's or a build's: matched whole, never as a family.
    expect(id('008')).toBe('oh-eight');
    expect(id('008-2.1 build')).toBeUndefined();
    expect(id('008.1')).toBeUndefined();
  });

  it('the longest token of a word wins: Googlebot-Image is its own agent', () => {
    expect(id('Googlebot-Image/1.0')).toBe('googlebot-image');
    expect(id('Googlebot-Image-Extra/1.0')).toBe('googlebot-image');
  });

  it('a letter after the token is another word; a digit after it only before a version', () => {
    expect(id('Googlebotx/1.0')).toBeUndefined();
    expect(id('NotGooglebot/1.0')).toBeUndefined();
    expect(id('trendictionbot9x')).toBeUndefined();
    expect(id('larbin_crawler')).toBe('larbin');
  });

  it('matches a family member or a version, never a longer word (property)', () => {
    const single = compileUserAgentMatcher([agent('examplebot', { tokens: ['Examplebot'] })]);
    const suffix = fc.stringMatching(/^[a-z0-9._-]{0,6}$/);
    const casing = fc.constantFrom('Examplebot', 'examplebot', 'EXAMPLEBOT');
    fc.assert(
      fc.property(fc.constantFrom('', 'Mozilla/5.0 (compatible; ', 'x;', 'Not', 'a-', '9.'), casing, suffix, fc.constantFrom('', '/1.0', ' (+https://example.com/bot)'), (before, token, after, rest) => {
        // Naive reading of the rules: the token starts a word, and what follows it in the word
        // is nothing, a family member ("-", "." or "_" first) or a version (a digit first, then
        // only digits, ".", "_" and "-").
        const startsWord = before === '' || !/[A-Za-z0-9_.-]$/.test(before);
        const expected = startsWord && (after === '' || /^[-._]/.test(after) || /^[0-9][0-9._-]*$/.test(after));
        expect(single(`${before}${token}${after}${rest}`)?.id === 'examplebot').toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('an exact token matches a version suffix but no family member', () => {
    expect(id('Mozilla/5.0 (Applebot/0.1; +http://www.apple.com/go/applebot)')).toBe('applebot');
    expect(id('Applebot_2.1')).toBe('applebot');
    expect(id('Safari/605.1.15 (Applebot-like Kagi Orion) Orion/0.99')).toBeUndefined();
  });
});

describe('a token keeps the context its source gives it', () => {
  it('"Odin;" is the crawler, "Odin/" (the Hisense VIDAA browser) is not', () => {
    expect(id('Mozilla/5.0 (compatible; Odin; https://docs.getodin.com/)')).toBe('odin');
    expect(id(`${CHROME} Hisense VIDAA/7.0 Odin/3.0`)).toBeUndefined();
  });

  it('"^RED/" must start the header: a phone model RED does not', () => {
    expect(id('RED/2.0.14 (https://redbot.org/)')).toBe('red');
    expect(id('Mozilla/5.0 (Linux; Android 10; RED) AppleWebKit/537.36')).toBeUndefined();
    expect(id('Mozilla/5.0 RED/1.0')).toBeUndefined();
  });

  it('"^Viber$" is the whole header; the Viber in-app browser is not', () => {
    expect(id('Viber')).toBe('viber');
    expect(id(`${CHROME} Viber/20.8.0.0`)).toBeUndefined();
  });

  it('a phrase must follow verbatim and end a word', () => {
    expect(id('Mozilla/5.0 (compatible; Nmap Scripting Engine; https://nmap.org/book/nse.html)')).toBe('nmap');
    expect(id('Nmap Scripting Enginex')).toBeUndefined();
    expect(id('Nmap Scripting')).toBeUndefined();
  });

  it('a "*" in a phrase takes a version, and the longer match of a word wins in either catalog order', () => {
    const preview = agent('messages-preview', { tokens: ['externalhit/* Facebot Twitterbot'] }, 'Apple');
    const externalhit = agent('externalhit', { tokens: ['externalhit/'] }, 'Meta');
    const facebot = agent('facebot', { tokens: ['Facebot'] }, 'Meta');
    for (const agents of [[preview, externalhit, facebot], [externalhit, facebot, preview]]) {
      const find = compileUserAgentMatcher(agents);
      const order = agents.map((a) => a.id).join(',');
      expect({ order, id: find(`${CHROME} externalhit/1.1 Facebot Twitterbot/1.0`)?.id }).toEqual({ order, id: 'messages-preview' });
      expect({ order, id: find('externalhit/2.0.1 facebot twitterbot')?.id }).toEqual({ order, id: 'messages-preview' });
      // No version, a word run on, or a part missing: the single tokens, leftmost first.
      expect({ order, id: find('externalhit/ Facebot Twitterbot')?.id }).toEqual({ order, id: 'externalhit' });
      expect({ order, id: find('externalhit/1.1 Facebot Twitterbots')?.id }).toEqual({ order, id: 'externalhit' });
      expect({ order, id: find('externalhit/1.1 Facebot')?.id }).toEqual({ order, id: 'externalhit' });
      expect({ order, id: find('externalhit/1.1')?.id }).toEqual({ order, id: 'externalhit' });
      expect({ order, id: find('Facebot/1.0')?.id }).toEqual({ order, id: 'facebot' });
    }
  });

  it('a product token ("Hexometer/") also matches a header that is only its name, with or without a version', () => {
    for (const ua of ['Hexometer', 'hexometer 1.0', 'Hexometer v2.1', 'Hexometer-3.1.21', 'Hexometer_2', 'Hexometer/1.0 (+https://hexometer.com)']) expect(id(ua), ua).toBe('hexometer');
    // Anything else beside the name is context the token does not give: no match.
    for (const ua of ['Hexometer rocks', 'Hexometer 1.0 (x)', 'Hexometer-beta', 'Hexometer 1.0x', 'Hexometer ', 'Mozilla/5.0 Hexometer', `${CHROME} Hexometer 2`]) expect(id(ua), ua).toBeUndefined();
    // An anchored product token too: a header that is only "RED" is no phone's browser.
    expect(id('RED')).toBe('red');
    expect(id('Mozilla/5.0 (Linux; Android 10; RED 2)')).toBeUndefined();
  });

  it('a host token matches with or without "www."', () => {
    expect(id('Mozilla/4.0 (compatible; MSIE 6.0; SV1;  http://www.changedetection.com/bot.html )')).toBe('changedetection');
    expect(id('changedetection.com monitor')).toBe('changedetection');
  });
});

describe('when several agents match, the one that names the sender wins', () => {
  it('a bot token in the URL host outranks a product token borrowed from another operator', () => {
    expect(id('Mozilla/5.0 (compatible; Googlebot/2.1; https://deepcrawl.com/bot)')).toBe('deepcrawl');
    expect(id('Mozilla/5.0 (compatible; Googlebot/2.1; +https://www.deepcrawl.com/bot)')).toBe('deepcrawl');
    expect(id('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)')).toBe('googlebot');
  });

  it("an operator's own product token and site read left to right", () => {
    expect(id('Mozilla/5.0 AppleWebKit (compatible; s4a/1.0; +https://www.seo4ajax.com/webscraper)')).toBe('s4a');
  });

  it('a URL path is an ordinary word: the leftmost bot still wins', () => {
    expect(id('WPScan v3.8.22 (https://wpscan.com/wordpress-security-scanner)')).toBe('wpscan');
    expect(id('Mozilla/5.0 (compatible; +https://example.com/wordpress/)')).toBe('wordpress');
  });

  it('a bot beats the library it is built with, which beats the platform it runs on', () => {
    expect(id('python-requests/2.31.0')).toBe('python-requests');
    expect(id('python-requests/2.31.0 (compatible; AhrefsBot/7.0)')).toBe('ahrefsbot');
    expect(id(`Mozilla/5.0 HeadlessChrome/120.0.0.0 Safari/537.36`)).toBe('headlesschrome');
    expect(id(`Mozilla/5.0 HeadlessChrome/120.0.0.0 Safari/537.36 Puppeteer`)).toBe('puppeteer');
    expect(id(`Mozilla/5.0 HeadlessChrome/120.0.0.0 Safari/537.36 Puppeteer Googlebot/2.1`)).toBe('googlebot');
  });

  it('among bots of equal rank the leftmost wins', () => {
    expect(id('Googlebot/2.1 AhrefsBot/7.0')).toBe('googlebot');
    expect(id('AhrefsBot/7.0 Googlebot/2.1')).toBe('ahrefsbot');
  });

  it('a whole-header token ("^node$") matches only the whole header', () => {
    expect(id('node')).toBe('node');
    expect(id('node/20')).toBeUndefined();
    expect(id('Mozilla/5.0 node')).toBeUndefined();
  });
});

describe('hostile input', () => {
  it('never throws and matches nothing in noise', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (ua) => {
        const found = match(ua);
        expect(found === undefined || typeof found.id === 'string').toBe(true);
      }),
      { numRuns: 2000 },
    );
    expect(id('')).toBeUndefined();
    expect(id('\u0000\uffff\ud800www.')).toBeUndefined();
    expect(id('www.')).toBeUndefined();
    expect(id(`${'a'.repeat(20_000)} Googlebot`)).toBe('googlebot');
  });

  it('matches a header longer than the scratch space it keeps, and goes on matching after it', () => {
    expect(id(`${'Mozilla/5.0 '.repeat(90_000)}Googlebot/2.1`)).toBe('googlebot');
    expect(id('AhrefsBot/7.0')).toBe('ahrefsbot');
    expect(id(`${'x'.repeat(20_000)} larbin_2.6.3`)).toBe('larbin');
    expect(id('Googlebot-Image/1.0')).toBe('googlebot-image');
  });

  it('finds a token whatever the header was before it (scratch buffer reuse)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 2000 }), (noise) => {
        match(noise);
        expect(id('Googlebot/2.1')).toBe('googlebot');
      }),
      { numRuns: 300 },
    );
  });
});
