// Token checks while the project store is down: a store that cannot say whether a token is valid
// makes the API answer 503 with Retry-After (the client retries), never 401 (it would drop a good
// token) or a bare 500; any other store error stays a logged 500.
import { describe, expect, it } from 'vitest';
import { createApiHandler, createEngine, createMemoryVisitStore, sha256Hex, VisitStoreUnavailableError, type ApiRequest, type ProjectLookup } from '../../src/index.js';
import { TEST_CATALOG } from '../server/helpers.js';

const TOKEN = `aw_${'a'.repeat(43)}`;

function postVisit(path = '/visits'): ApiRequest {
  return {
    method: 'POST',
    path,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: new TextEncoder().encode(JSON.stringify({ request_path: '/', request_method: 'GET', request_headers: { 'user-agent': 'x' } })),
  };
}

function handlerOver(projects: ProjectLookup, errors: unknown[] = []) {
  const visits = createMemoryVisitStore();
  const handle = createApiHandler({ engine: createEngine({ catalog: TEST_CATALOG }), projects, visits, rateLimit: false, onError: (error) => errors.push(error) });
  return { handle, visits };
}

describe('token lookup while the project store is unavailable', () => {
  it('answers 503 with Retry-After on every token route, and stores nothing', async () => {
    const projects: ProjectLookup = {
      findByTokenHash: async () => {
        throw new VisitStoreUnavailableError('unavailable', 4, 'ClickHouse is unreachable (token lookup)');
      },
    };
    const errors: unknown[] = [];
    const { handle, visits } = handlerOver(projects, errors);
    for (const path of ['/visits', '/agent-identifications']) {
      const response = await handle(postVisit(path));
      expect(response.status, path).toBe(503);
      expect(response.headers['retry-after']).toBe('4');
      expect(response.headers['content-type']).toBe('application/problem+json');
      const body = JSON.parse(response.body as string);
      expect(body.status).toBe(503);
      expect(body.detail).toContain('retry after 4 s');
    }
    const read = await handle({ method: 'GET', path: '/visits', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(read.status).toBe(503);
    expect(read.headers['retry-after']).toBe('4');
    // An expected outage, not a bug: nothing reaches the error log.
    expect(errors).toEqual([]);
    expect(await visits.timeline({ projectId: 'prj_any', limit: 10 })).toEqual([]);
  });

  it('answers 503 when a synchronous lookup throws the busy error too', async () => {
    const { handle } = handlerOver({
      findByTokenHash: () => {
        throw new VisitStoreUnavailableError('busy', 1, 'busy');
      },
    });
    const response = await handle(postVisit());
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('1');
  });

  it('keeps any other store error a bare 500 that is logged, without its message in the body', async () => {
    const errors: unknown[] = [];
    const { handle } = handlerOver(
      {
        findByTokenHash: async () => {
          throw new Error('secret internals');
        },
      },
      errors,
    );
    const response = await handle(postVisit());
    expect(response.status).toBe(500);
    expect(response.headers['retry-after']).toBeUndefined();
    expect(response.body).not.toContain('secret internals');
    expect(errors).toHaveLength(1);
  });

  it('accepts the token again once the store answers', async () => {
    let down = true;
    const project = { id: 'prj_1', name: 'one' };
    const hash = await sha256Hex(TOKEN);
    const { handle } = handlerOver({
      findByTokenHash: async (tokenHash) => {
        if (down) throw new VisitStoreUnavailableError('unavailable', 2, 'down');
        return tokenHash === hash ? { project, tokenHash: hash } : undefined;
      },
    });
    expect((await handle(postVisit())).status).toBe(503);
    down = false;
    expect((await handle(postVisit())).status).toBe(202);
  });
});
