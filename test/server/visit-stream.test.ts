// GET /visits/stream over the real node server on 127.0.0.1 with the SQLite store: live delivery
// within 1 s, Last-Event-ID resume without gaps or duplicates (also while visits keep arriving),
// heartbeats, unsubscribe on disconnect, shutdown ending streams, test visits and filters.
import { afterEach, describe, expect, it } from 'vitest';
import { createApiHandler, createEngine, type EventStreamLimits, type VisitStore } from '../../src/index.js';
import { hashTokenNode, openSqliteStore, startNodeServer, type NodeServer, type SqliteStore } from '../../src/adapters/node/index.js';
import { READ_CATALOG } from '../api/read-fixtures.js';
import { BROWSER_UA, GPTBOT_UA, post, tempDir } from './helpers.js';

interface Running {
  url: string;
  token: string;
  server: NodeServer;
  store: SqliteStore;
  subscriptions(): number;
  stop(): Promise<void>;
}

const running: Running[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

/** A store wrapper counting live subscriptions, to prove streams unsubscribe. */
function counting(store: VisitStore): { store: VisitStore; active: () => number } {
  let active = 0;
  return {
    active: () => active,
    store: {
      append: (projectId, visits) => store.append(projectId, visits),
      timeline: (query) => store.timeline(query),
      getVisit: (projectId, id) => store.getVisit(projectId, id),
      stats: (query) => store.stats(query),
      pathCounts: (query) => store.pathCounts(query),
      seen: (query) => store.seen(query),
      subscribe(projectId, listener) {
        const unsubscribe = store.subscribe(projectId, listener);
        active++;
        let done = false;
        return () => {
          if (done) return;
          done = true;
          active--;
          unsubscribe();
        };
      },
    },
  };
}

async function start(heartbeatMs = 15_000, limits: EventStreamLimits = {}): Promise<Running> {
  const { dir, cleanup } = tempDir();
  const store = openSqliteStore({ dataDir: dir });
  const { token } = store.createProject('site');
  const wrapped = counting(store);
  const handler = createApiHandler({
    engine: createEngine({ catalog: READ_CATALOG }),
    projects: store,
    visits: wrapped.store,
    hashToken: hashTokenNode,
    rateLimit: false,
    eventStream: { heartbeatMs, retryMs: 500, ...limits },
  });
  const server = await startNodeServer({ handler, port: 0, shutdownGraceMs: 5000 });
  const r: Running = {
    url: server.url,
    token,
    server,
    store,
    subscriptions: wrapped.active,
    async stop() {
      await server.close();
      store.close();
      cleanup();
    },
  };
  running.push(r);
  return r;
}

interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comment?: string;
}

/** An event-stream reader: parses events (WHATWG HTML §9.2.6) as they arrive. */
async function openStream(url: string, headers: Record<string, string> = {}) {
  const abort = new AbortController();
  const response = await fetch(url, { headers, signal: abort.signal });
  const events: SseEvent[] = [];
  let ended = false;
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const waiter of [...waiters]) waiter();
  };
  if (response.body !== null && response.status === 200) {
    void (async () => {
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          text += decoder.decode(value, { stream: true });
          let end: number;
          while ((end = text.indexOf('\n\n')) !== -1) {
            const block = text.slice(0, end);
            text = text.slice(end + 2);
            const event: SseEvent = {};
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) event.comment = line.slice(1).trim();
              else {
                const colon = line.indexOf(':');
                const field = line.slice(0, colon) as 'id' | 'event' | 'data' | 'retry';
                event[field] = line.slice(colon + 1).replace(/^ /, '');
              }
            }
            events.push(event);
            notify();
          }
        }
      } catch {
        // aborted
      }
      ended = true;
      notify();
    })();
  }
  const visitEvents = () => events.filter((e) => e.data !== undefined && e.event === undefined).map((e) => ({ id: e.id!, visit: JSON.parse(e.data!) }));
  return {
    response,
    events,
    visitEvents,
    ended: () => ended,
    abort: () => abort.abort(),
    /** Resolves once `test` holds, or rejects after `ms`. */
    waitFor(test: () => boolean, ms = 5000): Promise<void> {
      return new Promise((resolve, reject) => {
        if (test()) return resolve();
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out; events so far: ${JSON.stringify(events).slice(0, 500)}`));
        }, ms);
        const check = () => {
          if (!test()) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
  };
}

const visit = (path: string, userAgent = GPTBOT_UA) => ({ request_path: path, request_method: 'GET', request_headers: { 'user-agent': userAgent } });

describe('GET /visits/stream', () => {
  it('delivers a visit POSTed while the stream is open within 1 s', async () => {
    const api = await start();
    const stream = await openStream(`${api.url}/visits/stream`, { authorization: `Bearer ${api.token}` });
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    await stream.waitFor(() => stream.events.some((e) => e.retry === '500'));
    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      const sent = performance.now();
      const posted = await post(`${api.url}/visits`, api.token, visit(`/live-${i}`));
      expect(posted.status).toBe(202);
      await stream.waitFor(() => stream.visitEvents().some((e) => e.visit.request_path === `/live-${i}`));
      latencies.push(performance.now() - sent);
    }
    console.log(`SSE delivery latency (POST sent -> event received), ms: ${latencies.map((l) => l.toFixed(1)).join(', ')}`);
    expect(Math.max(...latencies)).toBeLessThan(1000);
    const received = stream.visitEvents();
    expect(received.map((e) => e.visit.agent_id)).toEqual(['gptbot', 'gptbot', 'gptbot', 'gptbot', 'gptbot']);
    expect(received[0]!.id).toBe(received[0]!.visit.id);
    stream.abort();
  });

  it('delivers to 100 open streams within 1 s', async () => {
    const api = await start(15_000, { maxStreamsPerToken: 100 });
    const streams = await Promise.all(Array.from({ length: 100 }, () => openStream(`${api.url}/visits/stream`, { authorization: `Bearer ${api.token}` })));
    await Promise.all(streams.map((s) => s.waitFor(() => s.events.length > 0)));
    const sent = performance.now();
    expect((await post(`${api.url}/visits`, api.token, visit('/fanout'))).status).toBe(202);
    const arrivals = await Promise.all(streams.map(async (s) => (await s.waitFor(() => s.visitEvents().length === 1), performance.now() - sent)));
    console.log(`SSE fan-out to 100 streams: last arrival ${Math.max(...arrivals).toFixed(1)} ms after the POST was sent`);
    expect(Math.max(...arrivals)).toBeLessThan(1000);
    for (const s of streams) s.abort();
  });

  it('resumes from Last-Event-ID without gaps or duplicates while visits keep arriving', async () => {
    const api = await start();
    for (let i = 0; i < 3; i++) expect((await post(`${api.url}/visits`, api.token, visit(`/before-${i}`))).status).toBe(202);
    const first = await openStream(`${api.url}/visits/stream`, { authorization: `Bearer ${api.token}` });
    await first.waitFor(() => first.events.length > 0);
    expect((await post(`${api.url}/visits`, api.token, visit('/seen'))).status).toBe(202);
    await first.waitFor(() => first.visitEvents().length === 1);
    const lastSeen = first.visitEvents()[0]!.id;
    first.abort();
    // Stored while disconnected: a large backlog (several replay pages) ...
    for (let batch = 0; batch < 3; batch++) {
      const res = await post(`${api.url}/visits`, api.token, Array.from({ length: 400 }, (_, i) => visit(`/missed-${batch}-${i}`)));
      expect(res.json.accepted).toBe(400);
    }
    // ... and more arriving while the client reconnects and replays.
    const concurrent = Array.from({ length: 20 }, (_, i) => post(`${api.url}/visits`, api.token, visit(`/during-${i}`)));
    const second = await openStream(`${api.url}/visits/stream`, { authorization: `Bearer ${api.token}`, 'last-event-id': lastSeen });
    await Promise.all(concurrent);
    const after = (await post(`${api.url}/visits`, api.token, visit('/after'))).status;
    expect(after).toBe(202);
    await second.waitFor(() => second.visitEvents().some((e) => e.visit.request_path === '/after'), 10_000);
    const ids = second.visitEvents().map((e) => Number(e.id));
    // Every visit stored after the cursor, from the timeline itself, oldest first.
    const stored: number[] = [];
    let cursor = '';
    for (;;) {
      const page = (await (await fetch(`${api.url}/visits?limit=1000${cursor}`, { headers: { authorization: `Bearer ${api.token}` } })).json()) as any;
      stored.push(...page.visits.map((v: any) => Number(v.id)));
      if (page.next === null) break;
      cursor = `&after=${page.next}`;
    }
    const expected = stored.filter((id) => id > Number(lastSeen)).sort((a, b) => a - b);
    expect(expected).toHaveLength(1200 + 20 + 1);
    // Replay, then buffered and live events: each visit exactly once, in store order.
    expect(ids).toEqual(expected);
    second.abort();
  });

  it('resumes with ?last_event_id= as well, and answers 400 to an id the store never issued', async () => {
    const api = await start();
    await post(`${api.url}/visits`, api.token, [visit('/1'), visit('/2'), visit('/3')]);
    const page = (await (await fetch(`${api.url}/visits`, { headers: { authorization: `Bearer ${api.token}` } })).json()) as any;
    const oldest = page.visits[2].id;
    const stream = await openStream(`${api.url}/visits/stream?last_event_id=${oldest}`, { authorization: `Bearer ${api.token}` });
    await stream.waitFor(() => stream.visitEvents().length === 2);
    expect(stream.visitEvents().map((e) => e.visit.request_path)).toEqual(['/2', '/3']);
    stream.abort();
    const bad = await fetch(`${api.url}/visits/stream`, { headers: { authorization: `Bearer ${api.token}`, 'last-event-id': 'garbage' } });
    expect(bad.status).toBe(400);
    const refusal = (await bad.json()) as any;
    // Named as the header it is, not as a query parameter.
    expect(refusal.errors).toEqual([expect.objectContaining({ pointer: '', header: 'Last-Event-ID' })]);
    expect(refusal.detail).not.toMatch(/query/i);
    const badQuery = await fetch(`${api.url}/visits/stream?last_event_id=garbage`, { headers: { authorization: `Bearer ${api.token}` } });
    expect(badQuery.status).toBe(400);
    expect(((await badQuery.json()) as any).errors).toEqual([expect.objectContaining({ parameter: 'last_event_id' })]);
  });

  it('sends comment heartbeats', async () => {
    const api = await start(150);
    const stream = await openStream(`${api.url}/visits/stream`, { authorization: `Bearer ${api.token}` });
    await stream.waitFor(() => stream.events.filter((e) => e.comment === 'heartbeat').length >= 2, 3000);
    stream.abort();
  });

  it('unsubscribes when the client disconnects (no listener leak)', async () => {
    const api = await start();
    const streams = await Promise.all(Array.from({ length: 5 }, () => openStream(`${api.url}/visits/stream`, { authorization: `Bearer ${api.token}` })));
    await Promise.all(streams.map((s) => s.waitFor(() => s.events.length > 0)));
    expect(api.subscriptions()).toBe(5);
    for (const s of streams) s.abort();
    const deadline = Date.now() + 3000;
    while (api.subscriptions() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(api.subscriptions()).toBe(0);
    expect(api.server.inFlight()).toBe(0);
    // Visits still go in after the listeners left.
    expect((await post(`${api.url}/visits`, api.token, visit('/after-leave'))).status).toBe(202);
  });

  it('ends open streams promptly when the server closes', async () => {
    const api = await start();
    const stream = await openStream(`${api.url}/visits/stream`, { authorization: `Bearer ${api.token}` });
    await stream.waitFor(() => stream.events.length > 0);
    const started = performance.now();
    await api.server.close();
    await stream.waitFor(() => stream.ended(), 2000);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(api.subscriptions()).toBe(0);
  });

  it('streams test visits and applies the filters', async () => {
    const api = await start();
    const agents = await openStream(`${api.url}/visits/stream?agent_type=Developer+Helper`, { authorization: `Bearer ${api.token}` });
    const browsers = await openStream(`${api.url}/visits/stream?agent=none`, { authorization: `Bearer ${api.token}` });
    await Promise.all([agents, browsers].map((s) => s.waitFor(() => s.events.length > 0)));
    await post(`${api.url}/visits`, api.token, [visit('/human', BROWSER_UA), visit('/bot')]);
    const test = await post(`${api.url}/test-visits`, api.token, undefined);
    expect(test.status).toBe(202);
    await agents.waitFor(() => agents.visitEvents().length === 1);
    await browsers.waitFor(() => browsers.visitEvents().length === 1);
    expect(agents.visitEvents()[0]!.visit).toEqual(test.json);
    expect(browsers.visitEvents()[0]!.visit.request_path).toBe('/human');
    const listed = (await (await fetch(`${api.url}/visits?limit=1`, { headers: { authorization: `Bearer ${api.token}` } })).json()) as any;
    expect(listed.visits[0]).toEqual(test.json);
    agents.abort();
    browsers.abort();
  });

  it("never streams one project's visits to another project's token", async () => {
    const api = await start();
    const other = api.store.createProject('other');
    const stream = await openStream(`${api.url}/visits/stream`, { authorization: `Bearer ${other.token}` });
    await stream.waitFor(() => stream.events.length > 0);
    await post(`${api.url}/visits`, api.token, visit('/mine'));
    await post(`${api.url}/visits`, other.token, visit('/theirs'));
    await stream.waitFor(() => stream.visitEvents().length === 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stream.visitEvents().map((e) => e.visit.request_path)).toEqual(['/theirs']);
    stream.abort();
  });

  it('refuses streams past the per-token and per-server caps with 429 and Retry-After, and frees a slot when a stream ends', async () => {
    const api = await start(15_000, { maxStreamsPerToken: 2, maxStreams: 3 });
    const other = api.store.createProject('other');
    const mine = [await openStream(`${api.url}/visits/stream`, { authorization: `Bearer ${api.token}` }), await openStream(`${api.url}/visits/stream`, { authorization: `Bearer ${api.token}` })];
    expect(mine.map((s) => s.response.status)).toEqual([200, 200]);
    const refused = await openStream(`${api.url}/visits/stream`, { authorization: `Bearer ${api.token}` });
    expect(refused.response.status).toBe(429);
    expect(refused.response.headers.get('content-type')).toBe('application/problem+json');
    expect(refused.response.headers.get('retry-after')).toBe('5');
    expect(await refused.response.json()).toMatchObject({ type: 'urn:agentwarden:problem:too-many-streams', status: 429, detail: expect.stringMatching(/already has 2 event streams open/) });
    // Another token has its own allowance, up to the server's cap.
    const theirs = await openStream(`${api.url}/visits/stream`, { authorization: `Bearer ${other.token}` });
    expect(theirs.response.status).toBe(200);
    const full = await openStream(`${api.url}/visits/stream`, { authorization: `Bearer ${other.token}` });
    expect(full.response.status).toBe(429);
    expect(await full.response.json()).toMatchObject({ type: 'urn:agentwarden:problem:too-many-streams', detail: expect.stringMatching(/server has 3 event streams open/) });
    // A client that leaves frees its slot.
    mine[0]!.abort();
    let again = await openStream(`${api.url}/visits/stream`, { authorization: `Bearer ${api.token}` });
    for (let tries = 0; again.response.status === 429 && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      again = await openStream(`${api.url}/visits/stream`, { authorization: `Bearer ${api.token}` });
    }
    expect(again.response.status).toBe(200);
    for (const s of [mine[1]!, theirs, again]) s.abort();
  });

  it('ends a stream whose reader falls behind with a last event; the client resumes with Last-Event-ID, missing nothing', async () => {
    const api = await start(15_000, { maxQueuedEvents: 5 });
    const stream = await openStream(`${api.url}/visits/stream`, { authorization: `Bearer ${api.token}` });
    await stream.waitFor(() => stream.events.length > 0);
    // Half a megabyte of visits in one batch: far more than 5 events can wait while the socket takes them.
    const paths = Array.from({ length: 200 }, (_, i) => `/burst-${i}`.padEnd(2500, 'x'));
    expect((await post(`${api.url}/visits`, api.token, paths.map((path) => visit(path)))).status).toBe(202);
    await stream.waitFor(() => stream.ended());
    const last = stream.events.at(-1)!;
    expect(last).toEqual({ event: 'closed', data: '{"reason":"too-far-behind"}' });
    const received = stream.visitEvents();
    expect(received.length).toBeLessThan(paths.length);
    const resumed = await openStream(`${api.url}/visits/stream`, { authorization: `Bearer ${api.token}`, 'last-event-id': received.at(-1)?.id ?? '' });
    await resumed.waitFor(() => received.length + resumed.visitEvents().length >= paths.length);
    expect([...received, ...resumed.visitEvents()].map((e) => e.visit.request_path)).toEqual(paths);
    resumed.abort();
  });
});
