// Zero false positives: no real browser User-Agent may be identified as an agent (DESIGN.md §3).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/index.js';

const require = createRequire(import.meta.url);
const ROOT = join(import.meta.dirname, '..', '..');

/** The unique real browser UAs shipped by the `user-agents` package (v2, BSD-2-Clause). */
function userAgentsPackageCorpus(): string[] {
  // The data file is not in the package's exports map, so read it from the resolved package folder.
  const packageDir = dirname(require.resolve('user-agents'));
  const records = JSON.parse(readFileSync(join(packageDir, 'user-agents.json'), 'utf8')) as { userAgent: string }[];
  return [...new Set(records.map((record) => record.userAgent))];
}

function hardCases(): string[] {
  return (JSON.parse(readFileSync(join(ROOT, 'test/fixtures/browser-hard-cases.json'), 'utf8')) as { user_agents: string[] }).user_agents;
}

const engine = createEngine({ cache: false });

/** Every UA of the list that the engine names as an agent, with the agent it named. */
async function misidentified(userAgents: readonly string[]): Promise<string[]> {
  const results = await engine.identifyMany(userAgents.map((ua) => ({ request_headers: { 'user-agent': ua } })));
  return results.flatMap((result, i) => (result.result === 'unknown_agent' ? [] : [`${result.agent_id} <- ${userAgents[i]}`]));
}

describe('browser user agents are never agents', () => {
  it('the user-agents package corpus is large enough to mean something', () => {
    expect(userAgentsPackageCorpus().length).toBeGreaterThan(900);
  });

  it('no UA of the user-agents package corpus matches any agent', async () => {
    expect(await misidentified(userAgentsPackageCorpus())).toEqual([]);
  });

  it('no hard case (in-app browsers, Electron apps, DuckDuckGo/Yandex browsers, consoles, TVs) matches any agent', async () => {
    const cases = hardCases();
    expect(cases.length).toBeGreaterThan(50);
    expect(await misidentified(cases)).toEqual([]);
  });
});
