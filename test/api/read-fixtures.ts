// A known visit data set for the read API tests: which agents visited which paths when, so every
// count the timeline, stats, top paths and violations report can be asserted exactly.
import { defaultCatalogDocument, type CatalogDocument } from '../../src/index.js';
import { BROWSER_UA, GPTBOT_UA, TEST_CATALOG } from '../server/helpers.js';

/** The server tests' catalog plus agentwarden's own test agent (for POST /test-visits). */
export const READ_CATALOG: CatalogDocument = {
  version: 1,
  agents: [...TEST_CATALOG.agents, (defaultCatalogDocument as CatalogDocument).agents.find((agent) => agent.id === 'agentwarden-test')!],
};

export const CLAUDEBOT_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';
export const GOOGLEBOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

/** The fixed "now" of the data set: 2026-11-21T12:00:00Z. */
export const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);
const HOUR = 3_600_000;

function visit(path: string, userAgent: string, minutesAgo: number, extra: Record<string, string> = {}) {
  return {
    request_path: path,
    request_method: 'GET',
    request_headers: { 'user-agent': userAgent, ...extra },
    created: new Date(NOW - minutesAgo * 60_000).toISOString(),
  };
}

/**
 * Ten visits, oldest first:
 * gptbot: /private/a x3 (-180, -120, -119 min), /public x1 (-30 min);
 * claudebot: /private/b?x=1 x2 (-150, -60 min); googlebot: /private/a x1 (-90 min);
 * browsers: /pricing x2 from chatgpt.com (-100, -20 min), / x1 (-10 min).
 */
export const DATA_SET = [
  visit('/private/a', GPTBOT_UA, 180),
  visit('/private/b?x=1', CLAUDEBOT_UA, 150),
  visit('/private/a', GPTBOT_UA, 120),
  visit('/private/a', GPTBOT_UA, 119),
  visit('/pricing', BROWSER_UA, 100, { referer: 'https://chatgpt.com/' }),
  visit('/private/a', GOOGLEBOT_UA, 90),
  visit('/private/b?x=1', CLAUDEBOT_UA, 60),
  visit('/public', GPTBOT_UA, 30),
  visit('/pricing', BROWSER_UA, 20, { referer: 'https://chatgpt.com/' }),
  visit('/', BROWSER_UA, 10),
];

/** Hours of the data set: the 09:00, 10:00 and 11:00 UTC buckets. */
export const DATA_SET_HOURS = { from: NOW - 3 * HOUR, to: NOW };
