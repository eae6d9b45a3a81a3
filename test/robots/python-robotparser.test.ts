// The rendered robots.txt under Python's urllib.robotparser (the real one, run in python3), which
// applies the first group whose User-agent value is found anywhere inside the crawler's name, as
// Scrapy's Protego does. An exception for one agent ("every search engine crawler but
// Googlebot-Image") must hold there too: the audit that found it broken in 125 of 2,629 such files
// had the Googlebot group written before Googlebot-Image's, so Python gave it Googlebot's.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createEngine, type AgentType } from '../../src/index.js';

interface Probe {
  readonly robots: string;
  readonly name: string;
  readonly allowed: boolean;
}

// Reads [{robots, name}] on stdin; prints can_fetch for each, as a JSON array.
const PYTHON = `
import json, sys, urllib.robotparser
out = []
for case in json.load(sys.stdin):
    parser = urllib.robotparser.RobotFileParser()
    parser.parse(case["robots"].splitlines())
    out.append(parser.can_fetch(case["name"], "https://example.com/page"))
print(json.dumps(out))
`;

function pythonCanFetch(cases: readonly Omit<Probe, 'allowed'>[]): boolean[] {
  return JSON.parse(execFileSync('python3', ['-c', PYTHON], { input: JSON.stringify(cases), maxBuffer: 64 * 1024 * 1024 }).toString()) as boolean[];
}

describe("robots.txt under Python's urllib.robotparser (first group whose value is inside the crawler's name)", () => {
  const engine = createEngine();

  it('keeps an exception for one agent of a denied type, for every agent of the search engine, AI scraper and AI search types', () => {
    const probes: Probe[] = [];
    for (const type of ['Search Engine Crawler', 'AI Data Scraper', 'AI Search Crawler'] as AgentType[]) {
      const agents = engine.catalog.agentsOfType(type).filter((agent) => agent.robots_tokens.length > 0);
      expect(agents.length).toBeGreaterThan(5);
      for (const agent of agents) {
        const robots = engine.robotsTxt({ agent_types: [type], allow_agents: [agent.id] });
        // The exception is allowed, by each of its tokens; the other agents of the type are not.
        for (const token of agent.robots_tokens) probes.push({ robots, name: token, allowed: true });
        const other = agents.find((candidate) => candidate.id !== agent.id && !agent.robots_tokens.some((token) => token.toLowerCase().includes(candidate.robots_tokens[0]!.toLowerCase())));
        if (other !== undefined) probes.push({ robots, name: other.robots_tokens[0]!, allowed: false });
      }
    }
    const answers = pythonCanFetch(probes);
    const wrong = probes.filter((probe, i) => answers[i] !== probe.allowed).map((probe) => `${probe.name} should be ${probe.allowed ? 'allowed' : 'disallowed'}`);
    expect(wrong).toEqual([]);
  });

  it('every search engine crawler but Googlebot-Image: Googlebot-Image allowed, Googlebot not', () => {
    const robots = engine.robotsTxt({ agent_types: ['Search Engine Crawler'], allow_agents: ['Googlebot-Image'] });
    expect(pythonCanFetch([{ robots, name: 'Googlebot-Image' }, { robots, name: 'Googlebot' }])).toEqual([true, false]);
  });
});
