// A custom sink is the site's own code ("any { push, flush, close }"): the middleware gives it
// visits without credentials, and a sink that breaks its promise not to throw (an async push whose
// write failed, a flush that throws) loses its visit and nothing else: not the response, not the
// process (an unhandled rejection ends a Node process), not the other sinks' visits.
import { describe, expect, it } from 'vitest';
import { createAgentwarden, createFanoutSink, createFetchMiddleware, lowerCaseHeaderMap, type SinkVisit, type VisitSink } from '../../src/index.js';
import { embedEngine, GPTBOT_UA } from './fixtures.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const HEADERS = { 'user-agent': GPTBOT_UA, authorization: 'Bearer site-user-secret', cookie: 'session=abc', 'x-api-key': 'k', 'x-auth-token': 't', accept: 'text/html' };

/** Checks one request with the core and records it with a response that set a cookie. */
async function recordOne(sink: VisitSink | readonly VisitSink[]): Promise<void> {
  const core = createAgentwarden({ engine: embedEngine(), sink });
  const check = await core.check({ method: 'GET', path: '/', headers: lowerCaseHeaderMap(HEADERS), headerRecord: HEADERS, clientIp: '203.0.113.9' });
  core.record(check, { status: 200, headers: { 'content-type': 'text/html', 'set-cookie': ['a=1'] } });
}

/** Catches unhandled rejections while `run` and a few turns after it run. */
async function unhandledDuring(run: () => Promise<void>): Promise<unknown[]> {
  const caught: unknown[] = [];
  const listener = (reason: unknown) => void caught.push(reason);
  process.prependListener('unhandledRejection', listener);
  try {
    await run();
    await sleep(50);
  } finally {
    process.off('unhandledRejection', listener);
  }
  return caught;
}

describe('custom sinks', () => {
  it('get visits without secret headers: credentials never reach the site\'s own code through the middleware', async () => {
    const visits: SinkVisit[] = [];
    await recordOne({ push: (visit) => void visits.push(visit), flush: async () => {}, close: async () => {} });
    expect(visits).toHaveLength(1);
    expect(Object.keys(visits[0]!.request_headers).sort()).toEqual(['accept', 'user-agent']);
    expect(visits[0]!.response_headers).toEqual({ 'content-type': 'text/html' });
    // The request's own header object is left as it was.
    expect(HEADERS.authorization).toBe('Bearer site-user-secret');
  });

  it('an async push that rejects loses its visit, no more: no unhandled rejection, the other sinks still get it', async () => {
    const others: SinkVisit[] = [];
    const failing: VisitSink = {
      async push() {
        await sleep(1);
        throw new Error('database unavailable');
      },
      flush: async () => {},
      close: async () => {},
    } as unknown as VisitSink;
    const caught = await unhandledDuring(async () => {
      await recordOne(failing);
      await recordOne([failing, { push: (visit) => void others.push(visit), flush: async () => {}, close: async () => {} }]);
    });
    expect(caught).toEqual([]);
    expect(others).toHaveLength(1);
  });

  it('a flush or close that throws instead of rejecting rejects: the response a Worker hands to waitUntil is not lost', async () => {
    const throwing: VisitSink = {
      push() {},
      flush: () => {
        throw new Error('flush broke');
      },
      close: () => {
        throw new Error('close broke');
      },
    } as unknown as VisitSink;
    const core = createAgentwarden({ engine: embedEngine(), sink: throwing });
    await expect(core.flush()).rejects.toThrow('flush broke');
    await expect(core.close()).rejects.toThrow('close broke');
    const waited: Promise<unknown>[] = [];
    const run = createFetchMiddleware({ engine: embedEngine(), sink: throwing });
    const response = await run(new Request('https://site.example/', { headers: { 'user-agent': GPTBOT_UA } }), () => new Response('ok'), {
      clientIp: '203.0.113.9',
      waitUntil: (promise: Promise<unknown>) => void waited.push(promise.catch(() => undefined)),
    });
    expect(await response.text()).toBe('ok');
    await Promise.all(waited);
  });

  it('the sinks of a fan-out are guarded one by one: one that throws keeps the visit from none of the others', async () => {
    const kept: SinkVisit[] = [];
    const sink = createFanoutSink([
      { push: () => { throw new Error('broken'); }, flush: async () => {}, close: async () => {} },
      { push: (visit) => void kept.push(visit), flush: async () => {}, close: async () => {} },
    ]);
    sink.push({ request_path: '/', request_method: 'GET', request_headers: { cookie: 'c=1', accept: '*/*' } });
    expect(kept).toHaveLength(1);
    expect(kept[0]!.request_headers).toEqual({ accept: '*/*' });
  });
});
