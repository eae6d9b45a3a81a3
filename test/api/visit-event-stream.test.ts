// The event stream's resume logic, driven deterministically: visits arriving in the middle of the
// replay, and a store that shows a visit to readers before it publishes it, still give every visit
// exactly once and in order; a client too far behind is cut off and the subscription released.
import { describe, expect, it } from 'vitest';
import {
  createApiHandler,
  createEngine,
  createEventStreamBudget,
  createFetchHandler,
  createMemoryProjectStore,
  createMemoryVisitStore,
  createVisitFanout,
  type CredentialCheck,
  type CredentialStatus,
  type EnrichedVisit,
  type StoredVisit,
  type VisitStore,
} from '../../src/index.js';
import { openVisitEventStream } from '../../src/api/visit-event-stream.js';

function enriched(path: string): EnrichedVisit {
  return { request_path: path, request_method: 'GET', request_headers: {}, received: 0, time: 0, agent_id: null, agent_type: null, result: 'unknown_agent', client_ip: null, referral: null };
}

const decoder = new TextDecoder();

/** A memory store whose visits reach subscribers only when the test publishes them. */
function manualStore() {
  const fanout = createVisitFanout();
  const inner = createMemoryVisitStore();
  const store: VisitStore = { ...inner, subscribe: (projectId, listener) => fanout.subscribe(projectId, listener) };
  return { fanout, inner, store };
}

/** Everything the reader gets until the stream ends. */
async function readAll(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
  }
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
    // Pages of 20 (nothing is known yet about the visits' size), 500, 500, then the rest.
    const expectedCount = 1100 + 2 * 4;
    const ids = await readIds(stream, expectedCount);
    expect(replayReads).toBe(4);
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

  it('ends the stream of a client too far behind, with a last event, and unsubscribes', async () => {
    const { fanout, inner, store } = manualStore();
    const stream = await openVisitEventStream({ visits: store, projectId: 'p', heartbeatMs: 60_000, retryMs: 1000, serialize: () => '{}', maxQueuedEvents: 10 });
    expect(fanout.size()).toBe(1);
    const reader = stream.getReader();
    // The reader takes the retry hint and one visit, then stops reading while 20 more arrive.
    expect(decoder.decode((await reader.read()).value)).toBe('retry: 1000\n\n');
    const reading = reader.read();
    fanout.publish('p', await inner.append('p', [enriched('/read')]));
    expect(decoder.decode((await reading).value)).toBe('id: 1\ndata: {}\n\n');
    fanout.publish('p', await inner.append('p', Array.from({ length: 20 }, (_, i) => enriched(`/${i}`))));
    expect(fanout.size()).toBe(0);
    // What waited is dropped (the client catches up from the store with Last-Event-ID 1); the
    // stream says why and ends.
    expect(await readAll(reader)).toBe('event: closed\ndata: {"reason":"too-far-behind"}\n\n');
  });

  it('bounds what waits for a slow reader by bytes as well', async () => {
    const { fanout, inner, store } = manualStore();
    const big = 'x'.repeat(1000);
    const stream = await openVisitEventStream({ visits: store, projectId: 'p', heartbeatMs: 60_000, retryMs: 1000, serialize: () => JSON.stringify(big), maxQueuedBytes: 10_000 });
    const reader = stream.getReader();
    await reader.read();
    // Nine events of about 1 KB fit in 10,000 bytes; the tenth and eleventh do not.
    for (let i = 0; i < 9; i++) fanout.publish('p', await inner.append('p', [enriched(`/${i}`)]));
    expect(fanout.size()).toBe(1);
    fanout.publish('p', await inner.append('p', [enriched('/9'), enriched('/10')]));
    expect(fanout.size()).toBe(0);
    expect(await readAll(reader)).toBe('event: closed\ndata: {"reason":"too-far-behind"}\n\n');
  });

  it('hands a reader that keeps up each event at once, and heartbeats only to an idle reader', async () => {
    const { fanout, inner, store } = manualStore();
    const stream = await openVisitEventStream({ visits: store, projectId: 'p', heartbeatMs: 5, retryMs: 1000, serialize: () => '{}', maxQueuedEvents: 3 });
    const reader = stream.getReader();
    await reader.read();
    // Far more events than the bound, one at a time to a reader that reads each: none waits.
    for (let i = 0; i < 50; i++) {
      const reading = reader.read();
      fanout.publish('p', await inner.append('p', [enriched(`/${i}`)]));
      expect(decoder.decode((await reading).value)).toBe(`id: ${i + 1}\ndata: {}\n\n`);
    }
    expect(fanout.size()).toBe(1);
    // An idle reader gets heartbeats; a reader that does not read gets none queued up.
    expect(decoder.decode((await reader.read()).value)).toBe(': heartbeat\n\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const reading = reader.read();
    expect(decoder.decode((await reading).value)).toBe(': heartbeat\n\n');
    await reader.cancel();
    expect(fanout.size()).toBe(0);
  });
});

describe('createEventStreamBudget', () => {
  it('caps streams per token and per server, and frees a slot when its stream ends', () => {
    const budget = createEventStreamBudget({ maxStreams: 3, maxStreamsPerToken: 2 });
    const a1 = budget.admit('a');
    const a2 = budget.admit('a');
    expect(a1.ok && a2.ok).toBe(true);
    expect(budget.admit('a')).toEqual({ ok: false, reason: 'per-token' });
    const b1 = budget.admit('b');
    expect(b1.ok).toBe(true);
    expect(budget.admit('c')).toEqual({ ok: false, reason: 'per-server' });
    if (a1.ok) {
      a1.slot.release();
      a1.slot.release();
    }
    expect(budget.open()).toBe(2);
    expect(budget.admit('a').ok).toBe(true);
  });

  it('closes the stream keeping the most bytes when all streams together keep too many', async () => {
    const budget = createEventStreamBudget({ maxQueuedBytesTotal: 25_000 });
    const { fanout, inner, store } = manualStore();
    const open = async (project: string) => {
      const admission = budget.admit(project);
      if (!admission.ok) throw new Error('refused');
      const stream = await openVisitEventStream({ visits: store, projectId: project, heartbeatMs: 60_000, retryMs: 1000, serialize: (v) => JSON.stringify(v.request_path), slot: admission.slot });
      const reader = stream.getReader();
      await reader.read();
      return reader;
    };
    const slow = await open('slow');
    const slower = await open('slower');
    const path = (i: number) => `/${i}`.padEnd(1000, 'x');
    fanout.publish('slow', await inner.append('slow', Array.from({ length: 10 }, (_, i) => enriched(path(i)))));
    fanout.publish('slower', await inner.append('slower', Array.from({ length: 14 }, (_, i) => enriched(path(i)))));
    expect(budget.queuedBytes()).toBeGreaterThan(24_000);
    // One more for the first stream passes the shared 25,000 bytes: the second, keeping the most, goes.
    fanout.publish('slow', await inner.append('slow', [enriched(path(10))]));
    expect(await readAll(slower)).toBe('event: closed\ndata: {"reason":"too-far-behind"}\n\n');
    expect(budget.open()).toBe(1);
    expect(budget.queuedBytes()).toBeLessThanOrEqual(25_000);
    const first = decoder.decode((await slow.read()).value);
    expect(first).toMatch(/^id: 1\ndata: "\/0x+"\n\n$/);
    await slow.cancel();
    expect(budget.open()).toBe(0);
    expect(budget.queuedBytes()).toBe(0);
  });

  it('refuses limits that are not positive integers, naming the option', () => {
    expect(() => createEventStreamBudget({ maxStreamsPerToken: 0 })).toThrow(/eventStream.maxStreamsPerToken must be a positive integer, got 0/);
  });
});

describe('openVisitEventStream with the credential that opened it', () => {
  const REVOKED = 'event: closed\ndata: {"reason":"credential-revoked"}\n\n';

  /**
   * A stream of a credential the test controls, counting its asks, past its `retry:` line. The
   * clock is moved by hand unless `realClock` (for heartbeats, which follow the real one).
   */
  async function openWithCredential(status: CredentialStatus | (() => Promise<CredentialStatus>), options: { heartbeatMs?: number; credentialCheckMs?: number; realClock?: boolean } = {}) {
    const { fanout, inner, store } = manualStore();
    const state = { time: 0, version: 0, asks: 0, status };
    const credential: CredentialCheck = {
      changes: () => state.version,
      check: () => {
        state.asks++;
        return typeof state.status === 'function' ? state.status() : Promise.resolve(state.status);
      },
    };
    const stream = await openVisitEventStream({
      visits: store,
      projectId: 'p',
      heartbeatMs: options.heartbeatMs ?? 60_000,
      retryMs: 1000,
      serialize: (v) => JSON.stringify(v.request_path),
      credential,
      credentialCheckMs: options.credentialCheckMs ?? 1000,
      ...(options.realClock === true ? {} : { clock: { now: () => state.time } }),
    });
    const reader = stream.getReader();
    await reader.read();
    /** Stores and publishes one visit. */
    const publish = async (path: string) => fanout.publish('p', await inner.append('p', [enriched(path)]));
    return { fanout, state, reader, publish };
  }

  it('asks before an event only once the interval passed or the credential changed, never per event', async () => {
    const { state, reader, publish } = await openWithCredential('valid');
    const deliver = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const reading = reader.read();
        await publish(`/${i}`);
        expect(decoder.decode((await reading).value)).toMatch(/^id: \d+\ndata: "\/\d+"\n\n$/);
      }
    };
    // Just authenticated: 100 events within the interval ask nothing.
    state.time = 999;
    await deliver(100);
    expect(state.asks).toBe(0);
    // Past it: one ask, then 100 more events ask nothing until the next interval.
    state.time = 1000;
    await deliver(100);
    expect(state.asks).toBe(1);
    state.time = 1999;
    await deliver(10);
    expect(state.asks).toBe(1);
    // A revocation through this server (the version moves) is asked about at the next event.
    state.version++;
    await deliver(10);
    expect(state.asks).toBe(2);
    await reader.cancel();
  });

  it('ends the stream at the first ask after the revocation, without the event that triggered it', async () => {
    const { fanout, state, reader, publish } = await openWithCredential('valid');
    state.status = 'revoked';
    state.version++;
    await publish('/after-logout');
    expect(await readAll(reader)).toBe(REVOKED);
    expect(state.asks).toBe(1);
    expect(fanout.size()).toBe(0);
  });

  it('holds events while an ask is pending, then sends them in order when the credential is still good', async () => {
    let answer!: (status: CredentialStatus) => void;
    const { state, reader, publish } = await openWithCredential(() => new Promise<CredentialStatus>((resolve) => (answer = resolve)));
    state.time = 5000;
    const reading = reader.read();
    await publish('/a');
    await publish('/b');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(state.asks).toBe(1);
    answer('valid');
    expect(decoder.decode((await reading).value)).toBe('id: 1\ndata: "/a"\n\n');
    expect(decoder.decode((await reader.read()).value)).toBe('id: 2\ndata: "/b"\n\n');
    expect(state.asks).toBe(1);
    await reader.cancel();
  });

  it("keeps the stream when the store cannot answer ('unknown' or a rejection), asking again only after the interval", async () => {
    const { state, reader, publish } = await openWithCredential('unknown');
    for (const [time, status] of [[1000, 'unknown'], [1500, 'unknown'], [2000, () => Promise.reject(new Error('store down'))], [2500, 'unknown']] as const) {
      state.time = time;
      state.status = status;
      const reading = reader.read();
      await publish('/x');
      expect(decoder.decode((await reading).value)).toMatch(/^id: /);
    }
    // Asked at 1000 and 2000: within the interval after a failed ask, events go on without one.
    expect(state.asks).toBe(2);
    // The store answers again: revoked ends it.
    state.time = 3000;
    state.status = 'revoked';
    await publish('/y');
    expect(await readAll(reader)).toBe(REVOKED);
  });

  it('delivers the waiting event once an ask slower than the interval answers, and asks next an interval after that answer', async () => {
    // Each ask takes 60 ms, longer than the 50 ms interval (a store near its timeout), on the real clock.
    let slow = 'valid' as CredentialStatus;
    const { state, reader, publish } = await openWithCredential(() => new Promise((resolve) => setTimeout(() => resolve(slow), 60)), { credentialCheckMs: 50, realClock: true });
    await new Promise((resolve) => setTimeout(resolve, 60));
    const reading = reader.read();
    await publish('/a');
    const got = await Promise.race([reading.then((r) => decoder.decode(r.value)), new Promise<string>((resolve) => setTimeout(() => resolve('nothing after 1 s'), 1000))]);
    expect(got).toBe('id: 1\ndata: "/a"\n\n');
    expect(state.asks).toBe(1);
    slow = 'unknown';
    await new Promise((resolve) => setTimeout(resolve, 60));
    const second = reader.read();
    await publish('/b');
    expect(await Promise.race([second.then((r) => decoder.decode(r.value)), new Promise<string>((resolve) => setTimeout(() => resolve('nothing after 1 s'), 1000))])).toBe('id: 2\ndata: "/b"\n\n');
    expect(state.asks).toBe(2);
    await reader.cancel();
  });

  it('asks at the heartbeat too, so an idle stream ends', async () => {
    // Heartbeats every 10 ms, asks at most every 30 ms.
    const { fanout, state, reader } = await openWithCredential('valid', { heartbeatMs: 10, credentialCheckMs: 30, realClock: true });
    expect(decoder.decode((await reader.read()).value)).toBe(': heartbeat\n\n');
    await new Promise((resolve) => setTimeout(resolve, 100));
    // About three asks in 100 ms of heartbeats every 10 ms: the interval holds at the heartbeat too.
    expect(state.asks).toBeGreaterThanOrEqual(1);
    expect(state.asks).toBeLessThanOrEqual(5);
    state.status = 'revoked';
    expect(await readAll(reader)).toMatch(/(?:: heartbeat\n\n)*event: closed\ndata: \{"reason":"credential-revoked"\}\n\n$/);
    expect(fanout.size()).toBe(0);
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
