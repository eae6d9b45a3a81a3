// Corpus test: every example UA of every source entry an agent cites is identified as that agent,
// unless overrides.json excludes it with a reason; no agent captures another agent's examples.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createCatalog, isUnlistedAgentId, type CatalogDocument } from '../../src/index.js';

const DATA = new URL('../../data/', import.meta.url);
const read = <T>(path: string): T => JSON.parse(readFileSync(new URL(path, DATA), 'utf8')) as T;

const catalog = createCatalog(read<CatalogDocument>('agents.json'));
const overrides = read<{ exclude_entries: Record<string, string>; exclude_examples: Record<string, Record<string, string>>; splits: Record<string, string[]> }>('overrides.json');

/** Example UAs of every source entry, keyed by the reference agents cite (`<source>:<key>`). */
function sourceExamples(): Map<string, string[]> {
  const examples = new Map<string, string[]>();
  for (const key of Object.keys(read<Record<string, unknown>>('sources/ai.robots.txt/robots.json'))) examples.set(`ai.robots.txt:${key}`, []);
  for (const bot of read<{ id: string; instances: { accepted: string[] } }[]>('sources/well-known-bots/well-known-bots.json')) {
    examples.set(`well-known-bots:${bot.id}`, bot.instances.accepted);
  }
  for (const crawler of read<{ pattern: string; instances: string[] }[]>('sources/crawler-user-agents/crawler-user-agents.json')) {
    examples.set(`crawler-user-agents:${crawler.pattern}`, crawler.instances);
  }
  // CrawlerDetect's list has patterns only: each must still be cited by one agent or excluded.
  for (const pattern of read<string[]>('sources/crawler-detect/crawlers.json')) examples.set(`crawler-detect:${pattern}`, []);
  return examples;
}

const examples = sourceExamples();

describe('source examples identify their agent', () => {
  it('every cited entry exists in data/sources', () => {
    const unknown = catalog.agents.flatMap((a) => (a.sources ?? []).filter((ref) => !examples.has(ref)).map((ref) => `${a.id}: ${ref}`));
    expect(unknown).toEqual([]);
  });

  it('every example of every cited entry maps to the citing agent', () => {
    const wrong: string[] = [];
    let checked = 0;
    for (const agent of catalog.agents) {
      for (const ref of agent.sources ?? []) {
        const excluded = overrides.exclude_examples[ref] ?? {};
        for (const ua of examples.get(ref) ?? []) {
          if (excluded[ua] !== undefined) continue;
          checked++;
          const got = catalog.matchUserAgent(ua)?.id ?? 'none';
          // An agent its operator documents apart from the family (overrides.splits) may name it,
          // and a bot naming itself beside a library or platform is that bot (data/README.md).
          const unlistedOverLayer = agent.match.layer !== undefined && isUnlistedAgentId(got);
          if (got !== agent.id && !unlistedOverLayer && !(overrides.splits[agent.id] ?? []).includes(got)) wrong.push(`${JSON.stringify(ua)} (${ref}): expected ${agent.id}, got ${got}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(2500);
  });

  it('every source entry is either cited by exactly one agent or excluded with a reason', () => {
    const citedBy = new Map<string, string[]>();
    for (const agent of catalog.agents) for (const ref of agent.sources ?? []) citedBy.set(ref, [...(citedBy.get(ref) ?? []), agent.id]);
    const problems: string[] = [];
    for (const ref of examples.keys()) {
      const owners = citedBy.get(ref) ?? [];
      const reason = overrides.exclude_entries[ref];
      if (reason !== undefined && owners.length > 0) problems.push(`${ref}: excluded but cited by ${owners.join(', ')}`);
      if (reason === undefined && owners.length !== 1) problems.push(`${ref}: cited by ${owners.length} agents (${owners.join(', ')})`);
    }
    expect(problems).toEqual([]);
  });

  it('every exclusion gives a reason and names a real entry and example', () => {
    const problems: string[] = [];
    for (const [ref, reason] of Object.entries(overrides.exclude_entries)) {
      if (!examples.has(ref)) problems.push(`unknown entry ${ref}`);
      if (reason.trim().length < 20) problems.push(`${ref}: reason too short`);
    }
    for (const [ref, excluded] of Object.entries(overrides.exclude_examples)) {
      for (const [ua, reason] of Object.entries(excluded)) {
        if (!(examples.get(ref) ?? []).includes(ua)) problems.push(`${ref}: no example ${JSON.stringify(ua)}`);
        if (reason.trim().length < 20) problems.push(`${ref}: reason too short for ${JSON.stringify(ua)}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
