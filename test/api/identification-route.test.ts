// POST /agent-identifications through the handler's synchronous core: answers match the engine's,
// items naming a method or path are verified with them, and a route that throws is a logged 500.
import { describe, expect, it } from 'vitest';
import { createApiHandler, createEngine, createMemoryProjectStore, createMemoryVisitStore, type Verifier } from '../../src/index.js';
import { GPTBOT_UA, TEST_CATALOG } from '../server/helpers.js';

// Passes only a request whose signature would cover method POST and path /signed: it shows
// whether the handler handed the item's method and path to the verifier chain.
const coversPath: Verifier = {
  name: 'web-bot-auth',
  appliesTo: () => true,
  verify: (_agent, request) => ({ method: 'web-bot-auth', outcome: request.method === 'POST' && request.path === '/signed' ? 'pass' : 'inconclusive', reason: 'no-signature' }),
};

async function setup(verifiers: Verifier[] = []) {
  const projects = createMemoryProjectStore();
  const { token } = await projects.createProject('identify');
  const engine = createEngine({ catalog: TEST_CATALOG, verifiers });
  const handler = createApiHandler({ engine, projects, visits: createMemoryVisitStore(), rateLimit: false });
  const post = async (body: unknown) => {
    const response = await handler({
      method: 'POST',
      path: '/agent-identifications',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: new TextEncoder().encode(JSON.stringify(body)),
    });
    return { status: response.status, body: JSON.parse(response.body as string) as unknown };
  };
  return { engine, post };
}

describe('POST /agent-identifications', () => {
  it('answers each item as engine.identify does, before and after the token is cached', async () => {
    const { engine, post } = await setup();
    const items = [
      { id: 'r1', request_headers: { 'user-agent': GPTBOT_UA, 'x-forwarded-for': '203.0.113.9' } },
      { request_headers: { 'User-Agent': ['x', GPTBOT_UA] } },
      { id: 'r3', request_headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0' } },
    ];
    for (const item of items) {
      const expected = await engine.identify(item);
      expect(await post(item)).toEqual({ status: 200, body: expected });
      expect(await post(item)).toEqual({ status: 200, body: expected });
    }
    expect(await post(items)).toEqual({ status: 200, body: await engine.identifyMany(items) });
  });

  it('verifies items with the method and path they name', async () => {
    const { post } = await setup([coversPath]);
    const headers = { 'user-agent': GPTBOT_UA };
    expect((await post({ request_headers: headers, request_method: 'POST', request_path: '/signed' })).body).toMatchObject({ result: 'verified', agent_id: 'gptbot' });
    expect((await post({ request_headers: headers, request_method: 'GET', request_path: '/signed' })).body).toMatchObject({ result: 'not_verifiable' });
    expect((await post({ request_headers: headers })).body).toMatchObject({ result: 'not_verifiable', agent_id: 'gptbot' });
  });

  it('turns an error thrown on the way into a logged 500 without its details', async () => {
    const projects = createMemoryProjectStore();
    const errors: unknown[] = [];
    const handler = createApiHandler({
      engine: createEngine({ catalog: TEST_CATALOG }),
      projects,
      visits: createMemoryVisitStore(),
      routes: [
        {
          '/boom': {
            GET: {
              auth: 'none',
              json: false,
              run: () => {
                throw new Error('internal detail');
              },
            },
          },
        },
      ],
      onError: (error) => errors.push(error),
    });
    const response = await handler({ method: 'GET', path: '/boom', headers: {} });
    expect(response.status).toBe(500);
    expect(response.body).not.toContain('internal detail');
    expect(errors).toHaveLength(1);
  });
});
