// Catalog records and user agents shared by tests: small fixed records, so results do not move
// when data/agents.json is curated.
import type { Agent, AgentType } from '../../src/index.js';

export const gptbotAgent: Agent = {
  id: 'gptbot',
  name: 'GPTBot',
  type: 'AI Data Scraper',
  operator: 'OpenAI',
  url: 'https://platform.openai.com/docs/bots',
  match: { tokens: ['GPTBot'] },
  robots_tokens: ['GPTBot'],
};

export const claudebotAgent: Agent = {
  id: 'claudebot',
  name: 'ClaudeBot',
  type: 'AI Data Scraper',
  operator: 'Anthropic',
  url: 'https://support.anthropic.com/',
  match: { tokens: ['ClaudeBot'] },
  robots_tokens: ['ClaudeBot'],
};

/** Googlebot by its user agent alone (no verification data). */
export const googlebotRecord: Agent = {
  id: 'googlebot',
  name: 'Googlebot',
  type: 'Search Engine Crawler',
  operator: 'Google',
  url: 'https://developers.google.com/search/docs/crawling-indexing/googlebot',
  match: { tokens: ['Googlebot'] },
  robots_tokens: ['Googlebot'],
};

/** Googlebot as Google documents its reverse DNS (googlebot.com / google.com). */
export const googlebotAgent: Agent = { ...googlebotRecord, reverse_dns: ['googlebot.com', 'google.com'] };

export const GPTBOT_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
export const GOOGLEBOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
export const BROWSER_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** A minimal catalog record for robots.txt tests: named by its id, one or more robots tokens, no UA match. */
export function robotsTestAgent(id: string, type: AgentType, tokens: string[]): Agent {
  return { id, name: id, type, operator: 'Test', url: `https://example.org/${id}`, match: {}, robots_tokens: tokens };
}
