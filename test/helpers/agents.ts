// Catalog records shared by verifier tests.
import type { Agent } from '../../src/index.js';

/** Googlebot as Google documents its reverse DNS (googlebot.com / google.com). */
export const googlebotAgent: Agent = {
  id: 'googlebot',
  name: 'Googlebot',
  type: 'Search Engine Crawler',
  operator: 'Google',
  url: 'https://developers.google.com/search/docs/crawling-indexing/googlebot',
  match: { tokens: ['Googlebot'] },
  robots_tokens: ['Googlebot'],
  reverse_dns: ['googlebot.com', 'google.com'],
};
