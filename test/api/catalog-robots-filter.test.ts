// GET /agents?respects_robots_txt=: the catalog's agents by what is documented of their robots.txt
// compliance, for a site owner looking for the agents robots.txt may not keep out.
import { describe, expect, it } from 'vitest';
import { createApiHandler, createEngine, createMemoryProjectStore, createMemoryVisitStore } from '../../src/index.js';

const handler = createApiHandler({ engine: createEngine(), projects: createMemoryProjectStore(), visits: createMemoryVisitStore(), rateLimit: false });
const agents = async (query: string) => {
  const response = await handler({ method: 'GET', path: `/agents?${query}`, headers: {} });
  return { status: response.status, json: JSON.parse(response.body as string) as { total: number; agents: { id: string; respects_robots_txt: boolean | null }[] } };
};

describe('GET /agents?respects_robots_txt=', () => {
  it('lists the agents documented not to obey robots.txt, with the type filter, and each value apart', async () => {
    const ignoring = await agents('respects_robots_txt=false&limit=200');
    expect(ignoring.status).toBe(200);
    expect(ignoring.json.agents.map((a) => a.id)).toEqual(expect.arrayContaining(['chatgpt-user', 'perplexity-user', 'meta-externalfetcher', 'feedfetcher-google']));
    expect(ignoring.json.agents.every((a) => a.respects_robots_txt === false)).toBe(true);
    const assistants = await agents('respects_robots_txt=false&type=AI%20Assistant&limit=200');
    expect(assistants.json.agents.map((a) => a.id)).toContain('chatgpt-user');
    expect(assistants.json.total).toBeLessThan(ignoring.json.total);
    const obeying = await agents('respects_robots_txt=true&limit=2000');
    expect(obeying.json.agents.map((a) => a.id)).toEqual(expect.arrayContaining(['gptbot', 'googlebot']));
    const unknown = await agents('respects_robots_txt=unknown&limit=1');
    const all = await agents('limit=1');
    expect(ignoring.json.total + obeying.json.total + unknown.json.total).toBe(all.json.total);
  });

  it('refuses another value, naming the parameter', async () => {
    const bad = await agents('respects_robots_txt=maybe');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).toContain('respects_robots_txt');
  });
});
