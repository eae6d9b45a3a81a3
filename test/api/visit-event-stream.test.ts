// The event stream's resume logic, driven deterministically: visits arriving in the middle of the
// replay, and a store that shows a visit to readers before it publishes it, still give every visit
// exactly once and in order; a client too far behind is cut off and the subscription released.
import { describe, expect, it } from 'vitest';
import {
  createApiHandler,
  createEngine,
  createFetchHandler,
  createMemoryProjectStore,
  createMemoryVisitStore,
  createVisitFanout,
  type EnrichedVisit,
  type StoredVisit,
  type VisitStore,
} from '../../src/index.js';
import { openVisitEventStream } from '../../src/api/visit-event-stream.js';

function enriched(path: string): EnrichedVisit {
  return { request_path: path, request_method: 'GET', request_headers: {}, received: 0, time: 0, agent_id: null, agent_type: null, result: 'unknown_agent', client_ip: null, referral: null };
}

async function readIds(stream: ReadableStream<Uint8Array>, count: number): Promise<string[]> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const ids = () => [...text.matchAll(/^id: (.+)$/gm)].map((m) => m[1]!);
  while (ids().length < count) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return ids();
}

describe('openVisitEventStream', () => {
  it('replays, then sends what arrived during the replay, once each', async () => {
    const inner = createMemoryVisitStore();
    for (let i = 0; i < 1200; i++) await inner.append('p', [enriched(`/old-${i}`)]);
    let replayReads = 0;
    // Every replay page read is followed by two new visits, published while the replay is running.
    const store: VisitStore = {
      ...inner,
      async timeline(query) {
        const page = await inner.timeline(query);
        if (query.after !== undefined && query.limit > 1) {
          replayReads++;
          await inner.append('p', [enriched(`/new-${replayReads}-a`), enriched(`/new-${replayReads}-b`)]);
        }
        return page;
      },
    };
    const stream = await openVisitEventStream({ visits: store, projectId: 'p', lastEventId: '100', heartbeatMs: 60_000, retryMs: 1000, serialize: (v) => JSON.stringify(v.request_path) });
    const expectedCount = 1100 + 2 * 3;
    const ids = await readIds(stream, expectedCount);
    expect(replayReads).toBe(3);
    expect(ids).toEqual(Array.from({ length: expectedCount }, (_, i) => String(101 + i)));
  });

  it('skips a visit the replay already sent when its publish comes later', async () => {
    const fanout = createVisitFanout();
    const inner = createMemoryVisitStore();
    let held: StoredVisit[] = [];
    // Appends become visible at once but are published only on release(): a commit-then-notify store.
    const store: VisitStore = {
      ...inner,
      async append(projectId, visits) {
        const stored = await inner.append(projectId, visits);
        held.push(...stored);
        return stored;
      },
      subscribe: (projectId, listener) => fanout.subscribe(projectId, listener),
    };
    const release = () => {
      fanout.publish('p', held);
      held = [];
    };
    await store.append('p', [enriched('/a'), enriched('/b')]);
    release();
    await store.append('p', [enriched('/c')]);
    const stream = await openVisitEventStream({ visits: store, projectId: 'p', lastEventId: '1', heartbeatMs: 60_000, retryMs: 1000, serialize: (v) => JSON.stringify(v.request_path) });
    const reading = readIds(stream, 3);
    await new Promise((resolve) => setTimeout(resolve, 20));
    release();
    await store.append('p', [enriched('/d')]);
    release();
    expect(await reading).toEqual(['2', '3', '4']);
    expect(fanout.size()).toBe(0);
  });

  it('ends the stream of a client too far behind and unsubscribes', async () => {
    const fanout = createVisitFanout();
    const inner = createMemoryVisitStore();
    const store: VisitStore = { ...inner, subscribe: (projectId, listener) => fanout.subscribe(projectId, listener) };
    const stream = await openVisitEventStream({ visits: store, projectId: 'p', heartbeatMs: 60_000, retryMs: 1000, serialize: () => '{}', maxQueuedEvents: 10 });
    expect(fanout.size()).toBe(1);
    const batch = (await inner.append('p', Array.from({ length: 20 }, (_, i) => enriched(`/${i}`)))) as StoredVisit[];
    fanout.publish('p', batch);
    expect(fanout.size()).toBe(0);
    const ids = await readIds(stream, 100);
    expect(ids).toHaveLength(20);
  });
});

describe('openVisitEventStream when the store fails mid-replay', () => {
  it('errors the stream and releases the subscription and the heartbeat', async () => {
    const fanout = createVisitFanout();
    const inner = createMemoryVisitStore();
    await inner.append('p', [enriched('/a'), enriched('/b')]);
    let reads = 0;
    const store: VisitStore = {
      ...inner,
      subscribe: (projectId, listener) => fanout.subscribe(projectId, listener),
      async timeline(query) {
        // The resume check succeeds; the first replay page fails.
        if (reads++ === 0) return inner.timeline(query);
        throw new Error('database went away');
      },
    };
    const stream = await openVisitEventStream({ visits: store, projectId: 'p', lastEventId: '1', heartbeatMs: 10, retryMs: 1000, serialize: () => '{}' });
    const reader = stream.getReader();
    await reader.read();
    await expect(reader.read()).rejects.toThrow('database went away');
    expect(fanout.size()).toBe(0);
    // Heartbeats after the failure must not throw (an uncaught throw in a timer would end the process).
    await new Promise((resolve) => setTimeout(resolve, 50));
  });
});

describe('the event stream through createFetchHandler (Workers, Deno, Bun)', () => {
  it('streams a visit recorded through the same handler', async () => {
    const projects = createMemoryProjectStore();
    const { token } = await projects.createProject('p');
    const fetchHandler = createFetchHandler(createApiHandler({ engine: createEngine(), projects, visits: createMemoryVisitStore() }));
    const auth = { authorization: `Bearer ${token}` };
    const response = await fetchHandler(new Request('http://worker.example/visits/stream', { headers: auth }));
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = response.body!.getReader();
    await reader.read();
    const posted = await fetchHandler(
      new Request('http://worker.example/test-visits', { method: 'POST', headers: auth }),
    );
    expect(posted.status).toBe(202);
    const { value } = await reader.read();
    const event = new TextDecoder().decode(value);
    expect(event).toMatch(/^id: 1\ndata: \{.*"agent_id":"agentwarden-test".*\}\n\n$/s);
    await reader.cancel();
  });
});
