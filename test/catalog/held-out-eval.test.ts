// The held-out evaluation (npm run eval:catalog): no real browser UA of the held-out corpora is named
// as an agent, and recall on the held-out crawler sets and attack payloads does not fall below today's.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { evaluateHeldOut, formatReport } from '../../scripts/eval-catalog.js';
import { createCatalog, defaultCatalogDocument, isAttackProbeId } from '../../src/index.js';

const report = evaluateHeldOut();

// Recall today (percent, rounded down): a floor so a change cannot lower it unnoticed. Raise it
// when coverage grows; the goal (issue 14), 90% over all sets together, has its own test below.
const RECALL_FLOORS: Readonly<Record<string, number>> = {
  'isbot crawlers': 83,
  'CrawlerDetect crawlers': 91,
  'CrawlerDetect categories': 96,
};

describe('held-out evaluation', () => {
  it('names no real browser or in-app user agent as an agent', () => {
    const named = report.falsePositives.map((fp) => `${fp.agentId} <- ${fp.ua}  [${fp.set}]`);
    expect(named).toEqual([]);
  });

  it('the browser corpus holds at least 10,000 distinct UAs, with TVs, consoles, feature phones and Chinese and Korean browsers', () => {
    expect(report.browserTotal).toBeGreaterThanOrEqual(10_000);
    for (const [kind, count] of Object.entries(report.browserKinds)) expect(count, kind).toBeGreaterThanOrEqual(30);
  });

  it.each(Object.entries(RECALL_FLOORS))('recall on %s stays at or above %i%%', (name, floor) => {
    const set = report.crawlers.find((s) => s.name === name)!;
    expect(set.total).toBeGreaterThan(500);
    expect((100 * set.identified) / set.total).toBeGreaterThanOrEqual(floor);
  });

  it('names most attack payloads sent as the User-Agent as attack probes, and almost none as another agent', () => {
    // 55.8% when first measured, before any rule was looked at against these lists; 75.7% since
    // the fixes of outside checks on other payload lists and real tools (bare file paths among
    // them) and of the commands these lists run through eval() and exec().
    const [set] = report.attacks;
    expect(set!.total).toBeGreaterThan(2_500);
    expect((100 * set!.probes) / set!.total).toBeGreaterThanOrEqual(75);
    expect(set!.otherAgents).toBeLessThanOrEqual(5);
    expect(formatReport(report)).toContain(`named as attack probes ${((100 * set!.probes) / set!.total).toFixed(1)}%`);
  });

  it('names no crawler of the crawler sets as an attack probe, but the one that is a payload', () => {
    const catalog = createCatalog(defaultCatalogDocument);
    const probes = report.sets.filter((set) => set.kind === 'crawler').flatMap((set) => set.entries.filter(({ ua }) => isAttackProbeId(catalog.matchUserAgent(ua)?.id ?? '')).map(({ ua }) => ua));
    // isbot files a browser header with a SQL payload appended under its crawlers.
    expect(probes).toEqual([expect.stringMatching(/Safari\/537\.36'\+\(select load_file\(/)]);
  });

  it('recall over all crawler sets together meets the goal of 90%', () => {
    const identified = report.crawlers.reduce((sum, set) => sum + set.identified, 0);
    const total = report.crawlers.reduce((sum, set) => sum + set.total, 0);
    expect((100 * identified) / total).toBeGreaterThanOrEqual(90);
  });

  it('the report names each set, its recall and every false positive', () => {
    const text = formatReport(report);
    for (const name of Object.keys(RECALL_FLOORS)) expect(text).toContain(name);
    expect(text).toContain(`Browser false positives: ${report.falsePositives.length}`);
  });

  it('the catalog generator never reads the held-out fixtures', () => {
    const generator = readFileSync(new URL('../../scripts/build-catalog.ts', import.meta.url), 'utf8');
    expect(generator).not.toMatch(/held-out/);
  });
});
