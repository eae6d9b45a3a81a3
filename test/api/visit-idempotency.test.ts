// POST /visits with an Idempotency-Key (draft-ietf-httpapi-idempotency-key-header-07): the header is
// checked, a repeated batch is stored once and answered byte for byte as the first time, another
// body under the key is a 422, a key in progress elsewhere a 409, and a failed store answers a 503
// that says whether anything may have been stored.
import { describe, expect, it } from 'vitest';
import {
  createApiHandler,
  createEngine,
  createMemoryProjectStore,
  createMemoryVisitStore,
  VisitStoreUnavailableError,
  type ApiRequest,
  type ApiResponse,
  type VisitStore,
} from '../../src/index.js';
import { DEFAULT_LIMITS } from '../../src/api/limits.js';
import { createOpenApiDocument } from '../../src/api/openapi.js';
import { TEST_CATALOG } from '../server/helpers.js';
import { checkResponse } from '../server/schema-check.js';

const visit = (path: string) => ({ request_path: path, request_method: 'GET', request_headers: { 'user-agent': 'Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)' } });

async function setup(visits: VisitStore = createMemoryVisitStore()) {
  const projects = createMemoryProjectStore();
  const { id: projectId, token } = await projects.createProject('example.com');
  const errors: unknown[] = [];
  const handle = createApiHandler({ engine: createEngine({ catalog: TEST_CATALOG }), projects, visits, rateLimit: false, onError: (error) => errors.push(error) });
  const post = (body: unknown, key?: string, extra: Record<string, string> = {}): Promise<ApiResponse> => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra };
    if (key !== undefined) headers['idempotency-key'] = key;
    const request: ApiRequest = { method: 'POST', path: '/visits', headers, body: new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body)) };
    return handle(request);
  };
  const stored = async () => (await visits.timeline({ projectId, limit: 1000 })).map((v) => v.request_path).sort();
  return { post, stored, errors, projectId };
}

const document = createOpenApiDocument({ basePath: '', limits: DEFAULT_LIMITS });
/** What the document says of a POST /visits answer that it does not describe (empty when it does). */
const undocumented = (response: ApiResponse) => checkResponse(document, '/visits', 'post', { ...response, json: JSON.parse(response.body as string) });

const problemOf = (response: ApiResponse) => JSON.parse(response.body as string) as { type: string; status: number; detail: string; errors?: { header?: string; code: string }[] };

describe('POST /visits with an Idempotency-Key', () => {
  it('stores a repeated batch once and answers the repeat exactly as the first time', async () => {
    const { post, stored } = await setup();
    const body = [visit('/a'), visit('/b'), { request_path: 5 }];
    const first = await post(body, 'batch-0001');
    expect(first.status).toBe(202);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post(body, 'batch-0001');
    expect(again.status).toBe(202);
    expect(undocumented(again)).toEqual([]);
    expect(again.body).toBe(first.body);
    expect(JSON.parse(again.body as string)).toMatchObject({ accepted: 2, rejected: [{ index: 2 }] });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await stored()).toEqual(['/a', '/b']);
    // The same visits under another key (or none) are another batch.
    expect((await post(body, 'batch-0002')).status).toBe(202);
    expect((await post(body)).status).toBe(202);
    expect(await stored()).toEqual(['/a', '/a', '/a', '/b', '/b', '/b']);
  });

  it('takes the key as a Structured Field String too, the same key as bare', async () => {
    const { post, stored } = await setup();
    expect((await post([visit('/q')], '"8e03978e-40d5-43e8-bc93-6894a57f9324"')).status).toBe(202);
    const bare = await post([visit('/q')], '8e03978e-40d5-43e8-bc93-6894a57f9324');
    expect(bare.headers['idempotent-replayed']).toBe('true');
    expect(await stored()).toEqual(['/q']);
  });

  it('answers 422 for the key reused with another body, storing nothing of it', async () => {
    const { post, stored } = await setup();
    expect((await post([visit('/one')], 'reused')).status).toBe(202);
    // One byte more is another body: a client must not reuse a key for a changed batch.
    const changed = await post(JSON.stringify([visit('/one')]) + ' ', 'reused');
    expect(changed.status).toBe(422);
    expect(problemOf(changed).type).toBe('urn:agentwarden:problem:idempotency-key-reused');
    expect(problemOf(changed).errors).toEqual([{ pointer: '', header: 'Idempotency-Key', code: 'reused', message: 'was used for a request with another body' }]);
    expect(undocumented(changed)).toEqual([]);
    expect((await post([visit('/two')], 'reused')).status).toBe(422);
    expect(await stored()).toEqual(['/one']);
  });

  it('refuses a malformed key with a 400 naming the header, before reading the body', async () => {
    const { post, stored } = await setup();
    for (const key of ['', '""', 'has space', 'a,b', 'x'.repeat(256), 'caf\u00e9', '"unterminated', 'tab\there']) {
      const response = await post([visit('/never')], key);
      expect(response.status, JSON.stringify(key)).toBe(400);
      const problem = problemOf(response);
      expect(problem.type).toBe('urn:agentwarden:problem:invalid-header');
      expect(problem.errors?.[0]).toMatchObject({ header: 'Idempotency-Key', code: 'format' });
    }
    expect((await post('not json', 'bad key')).status).toBe(400);
    expect((await post([visit('/ok')], 'x'.repeat(255))).status).toBe(202);
    expect(await stored()).toEqual(['/ok']);
  });

  it('records an empty batch under its key; an invalid one is not recorded', async () => {
    const { post, stored } = await setup();
    expect((await post([], 'empty')).body).toBe('{"accepted":0,"rejected":[]}');
    expect((await post([visit('/x')], 'empty')).status).toBe(422);
    // Nothing valid: a 400, and the key stays free for the corrected batch.
    expect((await post([{ request_path: 1 }], 'fixed')).status).toBe(400);
    expect((await post([visit('/fixed')], 'fixed')).status).toBe(202);
    expect(await stored()).toEqual(['/fixed']);
  });

  it('makes concurrent requests with one key wait for the first: one store, identical answers', async () => {
    const { post, stored } = await setup();
    const body = [visit('/c1'), visit('/c2')];
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(body, 'concurrent')));
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(202));
    expect(new Set(answers.map((answer) => answer.body)).size).toBe(1);
    expect(answers.filter((answer) => answer.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(await stored()).toEqual(['/c1', '/c2']);
  });

  it('answers 409 with Retry-After while the store reports the key in progress on another server', async () => {
    const memory = createMemoryVisitStore();
    const store: VisitStore = { ...memory, appendOnce: async () => ({ outcome: 'in-progress', retryAfterSeconds: 7 }) };
    const { post } = await setup(store);
    const response = await post([visit('/p')], 'elsewhere');
    expect(response.status).toBe(409);
    expect(response.headers['retry-after']).toBe('7');
    expect(problemOf(response).type).toBe('urn:agentwarden:problem:idempotency-key-in-use');
    expect(problemOf(response).errors).toEqual([{ pointer: '', header: 'Idempotency-Key', code: 'in-use', message: 'is in use by a request still being stored' }]);
    // Retry-After is part of the 409's contract, declared in the document.
    expect(undocumented(response)).toEqual([]);
  });

  it('answers 501 for a key when the store keeps no keys, rather than storing twice', async () => {
    const memory = createMemoryVisitStore();
    const store: VisitStore = { append: memory.append, timeline: memory.timeline, getVisit: memory.getVisit, stats: memory.stats, pathCounts: memory.pathCounts, seen: memory.seen, subscribe: memory.subscribe };
    const { post, stored } = await setup(store);
    expect((await post([visit('/n')], 'k')).status).toBe(501);
    expect((await post([visit('/n')])).status).toBe(202);
    expect(await stored()).toEqual(['/n']);
  });
});

describe('POST /visits when the store fails', () => {
  const failing = (outcome: 'not-stored' | 'unknown'): VisitStore => {
    const memory = createMemoryVisitStore();
    const error = () => new VisitStoreUnavailableError('unavailable', 3, 'down', { outcome });
    return { ...memory, append: async () => Promise.reject(error()), appendOnce: async () => Promise.reject(error()) };
  };

  it('says "nothing was stored" only when the store knows it', async () => {
    const { post } = await setup(failing('not-stored'));
    for (const key of [undefined, 'k-not-stored']) {
      const response = await post([visit('/f')], key);
      expect(response.status).toBe(503);
      expect(response.headers['retry-after']).toBe('3');
      const problem = problemOf(response);
      expect(problem.type).toBe('urn:agentwarden:problem:service-unavailable');
      expect(problem.detail).toContain('Nothing from this request was stored');
      expect(undocumented(response)).toEqual([]);
    }
  });

  it('says the outcome is unknown when a write was under way, and how to retry safely', async () => {
    const { post, errors } = await setup(failing('unknown'));
    const unkeyed = problemOf(await post([visit('/u')]));
    expect(unkeyed.type).toBe('urn:agentwarden:problem:store-outcome-unknown');
    expect(unkeyed.status).toBe(503);
    expect(unkeyed.detail).not.toContain('Nothing from this request was stored');
    expect(unkeyed.detail).toContain('Idempotency-Key');
    const keyed = await post([visit('/u')], 'k-unknown');
    expect(keyed.status).toBe(503);
    expect(keyed.headers['retry-after']).toBe('3');
    expect(problemOf(keyed).type).toBe('urn:agentwarden:problem:store-outcome-unknown');
    expect(problemOf(keyed).detail).toContain('with the same Idempotency-Key');
    expect(errors).toEqual([]);
  });
});
