// data/agents.json must be exactly what scripts/build-catalog.ts generates from the sources and overrides.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../scripts/build-catalog.js';
import type { CatalogDocument } from '../../src/index.js';

const committedText = readFileSync(new URL('../../data/agents.json', import.meta.url), 'utf8');

/** Ids of agents that differ between two documents, for a readable failure. */
function changedIds(committed: CatalogDocument, generated: CatalogDocument): string[] {
  const before = new Map(committed.agents.map((agent) => [agent.id, JSON.stringify(agent)]));
  const after = new Map(generated.agents.map((agent) => [agent.id, JSON.stringify(agent)]));
  const ids = new Set([...before.keys(), ...after.keys()]);
  return [...ids].filter((id) => before.get(id) !== after.get(id)).sort();
}

describe('data/agents.json is current', () => {
  it('regenerating it in-process gives the committed bytes', () => {
    // buildCatalog throws, listing every problem, when the sources and overrides disagree.
    const generated = buildCatalog();
    if (generated !== committedText) {
      const changed = changedIds(JSON.parse(committedText) as CatalogDocument, JSON.parse(generated) as CatalogDocument);
      expect.fail(`data/agents.json is stale: run \`npm run catalog\`. Agents that differ: ${changed.slice(0, 30).join(', ') || '(formatting only)'}`);
    }
    expect(generated).toBe(committedText);
  });

  it('is 2-space indented JSON with a trailing newline', () => {
    expect(committedText.endsWith('}\n')).toBe(true);
    expect(committedText).toBe(`${JSON.stringify(JSON.parse(committedText), null, 2)}\n`);
  });

  it('lists agents sorted by id', () => {
    const ids = (JSON.parse(committedText) as CatalogDocument).agents.map((agent) => agent.id);
    expect(ids).toEqual([...ids].sort());
  });
});
