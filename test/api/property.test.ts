// Property tests: random JSON bodies, random header maps, methods and paths never make the API
// answer 5xx or throw, in-process and over a real server (which must stay up afterwards).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHandler, createEngine, createMemoryProjectStore, createMemoryVisitStore, type ApiHandler } from '../../src/index.js';
import { startTestServer, TEST_CATALOG, type TestServer } from '../server/helpers.js';

const PATHS = ['/agent-identifications', '/agent-verifications', '/robots-txts', '/visits', '/openapi.json', '/healthz', '/', '/nope', '/visits/../x'];
const headerValue = fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 3 }), fc.constant(undefined), fc.integer() as fc.Arbitrary<unknown>);
const headerMap = fc.dictionary(fc.string({ maxLength: 20 }), headerValue, { maxKeys: 8 });
// Bodies shaped like real ones often enough to reach deep code paths, arbitrary JSON otherwise.
const item = fc.record(
  {
    id: fc.oneof(fc.string(), fc.integer()),
    request_headers: fc.oneof(headerMap, fc.jsonValue()),
    request_path: fc.oneof(fc.string(), fc.jsonValue()),
    request_method: fc.oneof(fc.constantFrom('GET', 'POST'), fc.jsonValue()),
    response_status_code: fc.oneof(fc.integer(), fc.jsonValue()),
    created: fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.string()),
    agent_types: fc.oneof(fc.array(fc.constantFrom('AI Agent', 'Scraper', 'Headless Agent', 'nope', '')), fc.jsonValue()),
    disallow: fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 3 }), fc.jsonValue()),
  },
  { requiredKeys: [] },
);
const body = fc.oneof(fc.jsonValue(), item, fc.array(item, { maxLength: 5 }));

let handle: ApiHandler;
let token: string;
beforeAll(async () => {
  const projects = createMemoryProjectStore();
  ({ token } = await projects.createProject('fuzz'));
  handle = createApiHandler({ engine: createEngine({ catalog: TEST_CATALOG }), projects, visits: createMemoryVisitStore(), rateLimit: false });
});

describe('the handler never answers 5xx', () => {
  it('to random bodies on every route, authenticated', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PATHS), body, fc.boolean(), async (path, value, asText) => {
        const text = asText ? JSON.stringify(value) ?? '' : `${JSON.stringify(value)}`.slice(0, Math.max(0, (JSON.stringify(value) ?? '').length - 1));
        const response = await handle({
          method: 'POST',
          path,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: new TextEncoder().encode(text),
        });
        expect(response.status).toBeLessThan(500);
        if (response.status >= 400) expect(JSON.parse(response.body as string)).toMatchObject({ status: response.status });
      }),
      { numRuns: 400 },
    );
  });

  it('to random header maps, methods, paths and raw bytes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'HEAD', 'post', ''),
        fc.oneof(fc.constantFrom(...PATHS), fc.string()),
        headerMap,
        fc.option(fc.uint8Array({ maxLength: 64 }), { nil: undefined }),
        async (method, path, headers, bytes) => {
          const response = await handle({ method, path, headers: headers as Record<string, string>, body: bytes });
          expect(response.status).toBeLessThan(500);
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('a real server under random input', () => {
  let api: TestServer;
  let serverToken: string;
  beforeAll(async () => {
    api = await startTestServer();
    serverToken = api.store.createProject('fuzz').token;
  });
  afterAll(async () => api.stop());

  it('answers every random body and header set below 500 and stays up', async () => {
    const headerName = fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/).filter((name) => !['content-length', 'transfer-encoding', 'host', 'connection', 'expect', 'upgrade', 'keep-alive', 'te', 'trailer'].includes(name));
    const printable = fc.stringMatching(/^[\x20-\x7e]{0,40}$/).map((s) => s.trim());
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PATHS.slice(0, 4)), body, fc.dictionary(headerName, printable, { maxKeys: 6 }), async (path, value, headers) => {
        const response = await fetch(`${api.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${serverToken}`, 'content-type': 'application/json', ...headers },
          body: JSON.stringify(value) ?? 'null',
        });
        await response.arrayBuffer();
        expect(response.status).toBeLessThan(500);
      }),
      { numRuns: 120 },
    );
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
  });
});
