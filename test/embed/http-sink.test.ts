// The HTTP visit sink against a real agentwarden server on loopback (delivery, idempotent retries,
// secrets), and against stub servers where the test is about our own retry and queue logic.
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHttpSink, parseRetryAfter, serializeVisit, type SinkVisit, type Timers } from '../../src/index.js';
import { createNodeHttpSink } from '../../src/adapters/node/index.js';
import { startTestServer, type TestServer } from '../server/helpers.js';
import { GPTBOT_UA, startStub } from './fixtures.js';

const visit = (i: number, extra: Partial<SinkVisit> = {}): SinkVisit => ({
  request_path: `/page/${i}`,
  request_method: 'GET',
  request_headers: { 'User-Agent': GPTBOT_UA, authorization: 'Bearer site-secret', cookie: 'session=abc', 'x-api-key': 'k', accept: 'text/html' },
  response_status_code: 200,
  response_headers: { 'content-type': 'text/html', 'set-cookie': ['a=1'] },
  response_duration_in_milliseconds: 3,
  created: new Date(Date.UTC(2026, 10, 20, 12, 0, 0, i)).toISOString(),
  ...extra,
});

const REQUEST_TIMEOUT_MS = 10_000;

/**
 * Timers that remember each delay asked for and run every callback on the next turn, except
 * the requests' time limits, which never fire (the stubs answer at once).
 */
function recordingTimers(): Timers & { delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    setTimeout(callback, ms) {
      if (ms === REQUEST_TIMEOUT_MS) return undefined;
      delays.push(ms);
      return setImmediate(callback);
    },
    clearTimeout: (handle) => {
      if (handle !== undefined) clearImmediate(handle as NodeJS.Immediate);
    },
  };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function server(): Promise<{ srv: TestServer; token: string; projectId: string }> {
  const srv = await startTestServer();
  cleanups.push(() => srv.stop());
  const { id, token } = srv.store.createProject('embed.example');
  return { srv, token, projectId: id };
}

// Each delivery test runs with the global fetch (undici) and with Node's own client, which
// agentwarden/node's createNodeHttpSink posts through.
const SINKS = [
  ['fetch', createHttpSink],
  ['node:http (createNodeHttpSink)', createNodeHttpSink],
] as const;

describe.each(SINKS)('%s', (_transport, createSinkWarningOnConsole) => {
  // Without onError a sink warns on the console, which one test checks; the rest keep the run's
  // output to what fails.
  const createSink: typeof createSinkWarningOnConsole = (options) => createSinkWarningOnConsole({ onError: () => {}, ...options });
  describe('HTTP sink → a real agentwarden server', () => {
    // A client can pad its request past what POST /visits takes in one visit (200 header fields,
    // 64 Ki characters of them, a 16 Ki path): refused whole, the visit of a bot that did so was
    // lost, the bot hidden from the site's records. Trimmed, it is stored and named.
    it('stores the visit of a request padded past the server\'s per-visit limits, trimmed to them and still named', async () => {
      const { srv, token, projectId } = await server();
      const sink = createSink({ url: srv.url, token });
      const padding = Object.fromEntries(Array.from({ length: 250 }, (_, i) => [`x-pad-${i}`, 'p']));
      sink.push(visit(1, { request_headers: { ...padding, 'user-agent': GPTBOT_UA } }));
      sink.push(visit(2, { request_headers: { 'user-agent': GPTBOT_UA, 'x-long': 'v'.repeat(70_000), accept: 'text/html' } }));
      sink.push(visit(3, { request_path: `/${'a'.repeat(20_000)}` }));
      await sink.flush();
      expect(sink.stats()).toMatchObject({ delivered: 3, dropped: 0, rejected: 0 });
      const stored = await srv.store.timeline({ projectId, limit: 10 });
      expect(stored).toHaveLength(3);
      for (const v of stored) expect(v.agent_id).toBe('gptbot');
      const padded = stored.find((v) => 'x-pad-0' in v.request_headers)!;
      expect(Object.keys(padded.request_headers)).toHaveLength(200);
      expect(padded.request_headers['user-agent']).toBe(GPTBOT_UA);
      const long = stored.find((v) => 'x-long' in v.request_headers)!;
      expect(long.request_headers['user-agent']).toBe(GPTBOT_UA);
      expect(Object.entries(long.request_headers).reduce((n, [name, value]) => n + name.length + String(value).length, 0)).toBeLessThanOrEqual(64 * 1024);
      const path = stored.find((v) => v.request_path.startsWith('/aaa'))!.request_path;
      expect(path).toHaveLength(16 * 1024);
    });

    it('delivers every visit in batches of at most maxBatchVisits, with no secret header leaving the process', async () => {
      const { srv, token, projectId } = await server();
      const sink = createSink({ url: srv.url, token, maxBatchVisits: 100 });
      for (let i = 0; i < 250; i++) sink.push(visit(i, { decision: { rule: 'deny-agent-type', action: 'deny', report_only: true }, is_blocked: false, client_ip: '203.0.113.9' }));
      await sink.flush();
      expect(sink.stats()).toMatchObject({ delivered: 250, dropped: 0, rejected: 0, queued: 0, inFlight: 0 });
      const stored = await srv.store.timeline({ projectId, limit: 1000 });
      expect(stored).toHaveLength(250);
      expect(new Set(stored.map((v) => v.request_path)).size).toBe(250);
      for (const v of stored) {
        expect(Object.keys(v.request_headers).sort()).toEqual(['accept', 'user-agent']);
        expect(v.response_headers).toEqual({ 'content-type': 'text/html' });
        expect(v.agent_id).toBe('gptbot');
        expect(v.decision).toEqual({ rule: 'deny-agent-type', action: 'deny', report_only: true });
        expect(v.is_blocked).toBe(false);
        // The address the site saw travels as data and is stored as sent, no header needed.
        expect(v.client_ip).toBe('203.0.113.9');
      }
      // Batches of 100, 100 and 50: three POST /visits in the access log.
      expect(srv.logs.filter((entry) => entry['path'] === '/visits' && entry['status'] === 202)).toHaveLength(3);
      await sink.close();
    });

    it('stores a batch once when the answer to it was lost and it is retried with its Idempotency-Key', async () => {
      const { srv, token, projectId } = await server();
      const target = new URL(srv.url);
      let dropped = 0;
      const keys: string[] = [];
      // A proxy that forwards every request to the server but, the first time, cuts the client off
      // instead of relaying the answer: the batch is stored, and the sink cannot know it.
      const proxy = await startStub((req, res, body) => {
        keys.push(String(req.headers['idempotency-key']));
        const upstream = httpRequest({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
          let text = '';
          answer.on('data', (chunk: Buffer) => (text += chunk.toString()));
          answer.on('end', () => {
            if (dropped++ === 0) return void req.socket.destroy();
            res.writeHead(answer.statusCode!, answer.headers).end(text);
          });
        });
        upstream.on('error', () => res.destroy());
        upstream.end(body);
      });
      cleanups.push(() => proxy.close());
      const timers = recordingTimers();
      const sink = createSink({ url: proxy.url, token, timers });
      for (let i = 0; i < 20; i++) sink.push(visit(i));
      await sink.flush();
      expect(keys).toHaveLength(2);
      expect(keys[0]).toBe(keys[1]);
      expect(sink.stats()).toMatchObject({ delivered: 20, dropped: 0, retries: 1 });
      expect(await srv.store.timeline({ projectId, limit: 1000 })).toHaveLength(20);
    });

    it('sends the visits of a partial batch when its interval has passed (30 s by default)', async () => {
      const { srv, token, projectId } = await server();
      const timers = recordingTimers();
      const sink = createSink({ url: srv.url, token, timers });
      sink.push(visit(1));
      await new Promise<void>((resolve) => {
        const poll = () => (sink.stats().delivered === 1 ? resolve() : setTimeout(poll, 10));
        poll();
      });
      expect(timers.delays[0]).toBe(30_000);
      expect(await srv.store.timeline({ projectId, limit: 10 })).toHaveLength(1);
    });
  });

  /**
   * A stub that answers its requests with `statuses` in turn (each with `Retry-After: retryAfter`),
   * then 202; `keys` records each request's Idempotency-Key.
   */
  async function scriptedStub(statuses: readonly number[], retryAfter: string): Promise<{ url: string; keys: string[] }> {
    const keys: string[] = [];
    const stub = await startStub((req, res) => {
      const status = statuses[keys.length];
      keys.push(String(req.headers['idempotency-key']));
      if (status !== undefined) res.writeHead(status, { 'retry-after': retryAfter, 'content-type': 'application/problem+json' }).end('{}');
      else res.writeHead(202, { 'content-type': 'application/json' }).end('{"accepted":1,"rejected":[]}');
    });
    cleanups.push(() => stub.close());
    return { url: stub.url, keys };
  }

  describe('HTTP sink retries and queue (stub servers)', () => {
    it.each([429, 503])('waits as the Retry-After of a %i says, then delivers', async (status) => {
      const stub = await scriptedStub([status], '7');
      const timers = recordingTimers();
      const sink = createSink({ url: stub.url, token: 't', timers, flushIntervalMs: 0 });
      sink.push(visit(1));
      await sink.flush();
      expect(stub.keys).toHaveLength(2);
      expect(timers.delays).toContain(7_000);
      expect(sink.stats()).toMatchObject({ delivered: 1, retries: 1, dropped: 0 });
    });

    it('takes Retry-After as a minimum: a receiver answering "Retry-After: 0" every time still gets backoff after the first retry', async () => {
      const stub = await scriptedStub([429, 429, 429, 429], '0');
      const timers = recordingTimers();
      const sink = createSink({ url: stub.url, token: 't', timers, flushIntervalMs: 0, retryDelayMs: 1000, random: () => 0.9999999 });
      sink.push(visit(1));
      await sink.flush();
      expect(stub.keys).toHaveLength(5);
      expect(timers.delays).toEqual([0, 1000, 2000, 4000]);
      expect(sink.stats()).toMatchObject({ delivered: 1, retries: 4, dropped: 0 });
    });

    it('backs off exponentially (with jitter) on 5xx and network errors, and gives up after maxAttempts', async () => {
      const stub = await startStub((_req, res) => res.writeHead(500).end('broken'));
      cleanups.push(() => stub.close());
      const timers = recordingTimers();
      const errors: string[] = [];
      const sink = createSink({ url: stub.url, token: 't', timers, flushIntervalMs: 0, maxAttempts: 4, retryDelayMs: 1000, random: () => 0.9999999, onError: (e) => errors.push(e) });
      sink.push(visit(1));
      await sink.flush();
      // Each retry delay is the doubled base scaled by 0.5 + random / 2; the request timeouts (10 s) are the other delays.
      expect(timers.delays).toEqual([1000, 2000, 4000]);
      expect(sink.stats()).toMatchObject({ delivered: 0, dropped: 1, retries: 3 });
      expect(errors.at(-1)).toContain('answered 500');
    });

    it('keeps retrying a 409 (its key in flight on another server) with the same key past maxAttempts, as long as a ClickHouse store may answer it', async () => {
      // An agentwarden server over ClickHouse answers 409 + Retry-After for up to ~47 s after an
      // attempt of unknown outcome: 20 answers of 5 s (100 s) must not use up the 8 attempts.
      const stub = await scriptedStub(Array.from({ length: 20 }, () => 409), '5');
      const timers = recordingTimers();
      const sink = createSink({ url: stub.url, token: 't', timers, flushIntervalMs: 0 });
      sink.push(visit(1));
      await sink.flush();
      expect(stub.keys).toHaveLength(21);
      expect(new Set(stub.keys).size).toBe(1);
      expect(timers.delays).toEqual(Array.from({ length: 20 }, () => 5_000));
      expect(sink.stats()).toMatchObject({ delivered: 1, dropped: 0, retries: 20 });
    });

    it('counts 409s apart from failed attempts: a 409 between 5xx answers neither extends nor shortens maxAttempts', async () => {
      const stub = await scriptedStub([500, 409, 409, 500, 409, 500], '1');
      const sink = createSink({ url: stub.url, token: 't', timers: recordingTimers(), flushIntervalMs: 0, maxAttempts: 3 });
      sink.push(visit(1));
      await sink.flush();
      // The third 500 is the third failed attempt: dropped there, the 409s in between not counted.
      expect(stub.keys).toHaveLength(6);
      expect(sink.stats()).toMatchObject({ delivered: 0, dropped: 1 });
    });

    it('gives up on a batch still answered 409 after maxInProgressWaitMs, counting it dropped', async () => {
      let calls = 0;
      const stub = await startStub((_req, res) => (calls++, res.writeHead(409, { 'retry-after': '30' }).end()));
      cleanups.push(() => stub.close());
      const errors: string[] = [];
      const sink = createSink({ url: stub.url, token: 't', timers: recordingTimers(), flushIntervalMs: 0, maxInProgressWaitMs: 120_000, onError: (e) => errors.push(e) });
      sink.push(visit(1));
      await sink.flush();
      // Waits of 30 s until 120 s are used: four retries, five requests.
      expect(calls).toBe(5);
      expect(sink.stats()).toMatchObject({ delivered: 0, dropped: 1, retries: 4 });
      expect(errors.at(-1)).toMatch(/answered 409.*still in progress after 120 s/);
    });

    it('drops a batch the server refuses for good (401), counts it and reports the error', async () => {
      const stub = await startStub((_req, res) => res.writeHead(401, { 'content-type': 'application/problem+json' }).end('{"title":"Unauthorized"}'));
      cleanups.push(() => stub.close());
      const errors: string[] = [];
      const sink = createSink({ url: stub.url, token: 'wrong', flushIntervalMs: 0, onError: (e) => errors.push(e) });
      sink.push(visit(1));
      sink.push(visit(2));
      await sink.flush();
      expect(sink.stats()).toMatchObject({ delivered: 0, dropped: 2, retries: 0 });
      expect(errors.join('\n')).toContain('answered 401');
    });

    it('without an onError, says on the console why visits are not delivered: each message once a minute at most', async () => {
      const stub = await startStub((_req, res) => res.writeHead(401, { 'content-type': 'application/problem+json' }).end('{"title":"Unauthorized"}'));
      cleanups.push(() => stub.close());
      const warnings: string[] = [];
      const warn = vi.spyOn(console, 'warn').mockImplementation((message: string) => void warnings.push(message));
      cleanups.push(async () => warn.mockRestore());
      let now = 1_000_000;
      const sink = createSinkWarningOnConsole({ url: stub.url, token: 'wrong', flushIntervalMs: 0, clock: { now: () => now } });
      for (const i of [1, 2, 3]) {
        sink.push(visit(i));
        await sink.flush();
      }
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^agentwarden: visit delivery: POST .* answered 401/);
      now += 60_000;
      sink.push(visit(4));
      await sink.flush();
      expect(warnings).toHaveLength(2);
      // A server that is not there is named with the reason, not fetch's bare "fetch failed".
      const gone = await startStub((_req, res) => res.end());
      await gone.close();
      const refused = createSinkWarningOnConsole({ url: gone.url, token: 't', flushIntervalMs: 0, maxAttempts: 1 });
      refused.push(visit(6));
      await refused.flush();
      expect(warnings.at(-1)).toMatch(/ECONNREFUSED/);
      // A sink given onError leaves the console alone.
      const quiet = createSinkWarningOnConsole({ url: stub.url, token: 'wrong', flushIntervalMs: 0, onError: () => {} });
      quiet.push(visit(5));
      await quiet.flush();
      expect(warnings).toHaveLength(3);
    });

    it('does not follow a redirect: the visits and the token go only to the url given, and the batch is dropped with the reason', async () => {
      let elsewhere = 0;
      const other = await startStub((_req, res) => (elsewhere++, res.writeHead(202).end('{"accepted":1,"rejected":[]}')));
      cleanups.push(() => other.close());
      const stub = await startStub((_req, res) => res.writeHead(307, { location: `${other.url}/visits` }).end());
      cleanups.push(() => stub.close());
      const errors: string[] = [];
      const sink = createSink({ url: stub.url, token: 'site-token', flushIntervalMs: 0, onError: (e) => errors.push(e) });
      sink.push(visit(1));
      await sink.flush();
      expect(elsewhere).toBe(0);
      expect(sink.stats()).toMatchObject({ delivered: 0, dropped: 1, retries: 0 });
      expect(errors.join('\n')).toContain(`answered 307, a redirect to ${other.url}/visits`);
    });

    it('reads at most 1 MiB of an answer: a server that answers without end neither holds the delivery up nor fills memory', async () => {
      let written = 0;
      const stub = await startStub((_req, res) => {
        res.writeHead(202, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        const pour = () => {
          while (!res.destroyed && res.write(chunk)) written += chunk.length;
          if (!res.destroyed) res.once('drain', pour);
        };
        pour();
      });
      cleanups.push(() => stub.close());
      const sink = createSink({ url: stub.url, token: 't', flushIntervalMs: 0 });
      sink.push(visit(1));
      const started = Date.now();
      await sink.flush();
      // Delivered (the status says so) long before the 10 s request limit, the rest never read.
      expect(sink.stats()).toMatchObject({ delivered: 1, dropped: 0 });
      expect(Date.now() - started).toBeLessThan(5000);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const settled = written;
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(written).toBe(settled);
      expect(written).toBeLessThan(64 * 1024 * 1024);
    });

    it('splits a batch the server finds too large (413) and delivers the halves', async () => {
      const sizes: number[] = [];
      const stub = await startStub((_req, res, body) => {
        const count = (JSON.parse(body) as unknown[]).length;
        sizes.push(count);
        if (count > 3) res.writeHead(413).end();
        else res.writeHead(202, { 'content-type': 'application/json' }).end(`{"accepted":${count},"rejected":[]}`);
      });
      cleanups.push(() => stub.close());
      const sink = createSink({ url: stub.url, token: 't', maxBatchVisits: 10, flushIntervalMs: 60_000 });
      for (let i = 0; i < 10; i++) sink.push(visit(i));
      await sink.flush();
      expect(sizes[0]).toBe(10);
      expect(sink.stats()).toMatchObject({ delivered: 10, dropped: 0 });
      expect(sizes.slice(1).every((n) => n <= 5)).toBe(true);
    });

    it('keeps each request body within maxBatchBytes counted in UTF-8, for ASCII and non-ASCII visits alike', async () => {
      const bodies: number[] = [];
      const stub = await startStub((_req, res, body) => {
        bodies.push(Buffer.byteLength(body));
        res.writeHead(202, { 'content-type': 'application/json' }).end('{"accepted":1,"rejected":[]}');
      });
      cleanups.push(() => stub.close());
      const sink = createSink({ url: stub.url, token: 't', maxBatchBytes: 4096, flushIntervalMs: 60_000 });
      const values = ['plain', 'café ☕ 😀 Ünïcödé', 'quote " and \\ backslash', '€€€€€€€€€€€€€€€€€€€€'];
      const note = (i: number) => values[i % values.length]!.repeat(1 + (i % 5));
      // Non-ASCII text in a value, a repeated header's values, or a header's name.
      const headers = (i: number) => (i % 3 === 0 ? { 'user-agent': GPTBOT_UA, 'x-note': note(i) } : i % 3 === 1 ? { 'user-agent': GPTBOT_UA, 'x-notes': [note(i), note(i + 1)] } : { 'user-agent': GPTBOT_UA, [`x-${note(i + 1)}`]: 'v' });
      for (let i = 0; i < 300; i++) sink.push(visit(i, { request_headers: headers(i) }));
      await sink.flush();
      expect(sink.stats()).toMatchObject({ delivered: 300, dropped: 0 });
      expect(bodies.length).toBeGreaterThan(5);
      // Full batches come close to the limit and never pass it.
      expect(Math.max(...bodies)).toBeLessThanOrEqual(4096);
      expect(Math.max(...bodies)).toBeGreaterThan(3000);
    });

    it('sends each visit exactly as serialised, whatever its size or characters', async () => {
      const received: unknown[] = [];
      const stub = await startStub((_req, res, body) => {
        received.push(...(JSON.parse(body) as unknown[]));
        res.writeHead(202, { 'content-type': 'application/json' }).end('{"accepted":1,"rejected":[]}');
      });
      cleanups.push(() => stub.close());
      const sink = createSink({ url: stub.url, token: 't', maxBatchVisits: 37, flushIntervalMs: 60_000 });
      // Sizes from a few bytes to past the sink's 64 KiB byte chunks, so visits fill chunks, cross
      // into new ones and take arrays of their own; text of one to four UTF-8 bytes a character,
      // escapes, and a lone surrogate (which the JSON must carry as an escape: UTF-8 has no byte for it).
      const pieces = ['a', 'é', '☕', '😀', '"\\', '\u0001', '\ud800'];
      const sizes = [0, 1, 300, 5_000, 5_500, 21_000, 70_000];
      const sent: SinkVisit[] = [];
      for (let i = 0; i < 400; i++) {
        const note = pieces[i % pieces.length]!.repeat(sizes[(i * 5) % sizes.length]! / pieces[i % pieces.length]!.length);
        const v = visit(i, { request_headers: { 'user-agent': GPTBOT_UA, 'x-note': note } });
        sent.push(v);
        sink.push(v);
      }
      await sink.flush();
      expect(sink.stats()).toMatchObject({ delivered: 400, dropped: 0 });
      // flush() sends every queued batch at once, so batches may arrive in any order; within one, in order.
      const path = (v: unknown) => Number((v as { request_path: string }).request_path.slice('/page/'.length));
      received.sort((a, b) => path(a) - path(b));
      const expected = sent.map((v) => JSON.parse(serializeVisit(v)) as unknown);
      // Compared as text, so that a failure does not print 400 visits of up to 70,000 characters.
      const differing = expected.map((v, i) => JSON.stringify(v) === JSON.stringify(received[i])).filter((same) => !same).length;
      expect({ received: received.length, differing }).toEqual({ received: 400, differing: 0 });
    });

    it('counts visits the server rejected one by one', async () => {
      const stub = await startStub((_req, res) => res.writeHead(202, { 'content-type': 'application/json' }).end('{"accepted":1,"rejected":[{"index":1,"errors":[]}]}'));
      cleanups.push(() => stub.close());
      const sink = createSink({ url: stub.url, token: 't', flushIntervalMs: 60_000, maxBatchVisits: 2 });
      sink.push(visit(1));
      sink.push(visit(2));
      await sink.flush();
      expect(sink.stats()).toMatchObject({ delivered: 1, rejected: 1 });
    });

    it('holds at most maxQueueVisits while the server is down, dropping the oldest, and delivers the newest when it is back', async () => {
      let up = false;
      const received: string[] = [];
      const stub = await startStub((_req, res, body) => {
        if (!up) {
          res.writeHead(503, { 'retry-after': '0' }).end();
          return;
        }
        for (const v of JSON.parse(body) as { request_path: string }[]) received.push(v.request_path);
        res.writeHead(202, { 'content-type': 'application/json' }).end('{"accepted":1,"rejected":[]}');
      });
      cleanups.push(() => stub.close());
      let wake: (() => void) | undefined;
      // The retry waits until the test lets it go: the queue fills meanwhile.
      const timers: Timers = {
        setTimeout(callback, ms) {
          if (ms === REQUEST_TIMEOUT_MS) return undefined;
          wake = callback;
          return undefined;
        },
        clearTimeout() {},
      };
      const sink = createSink({ url: stub.url, token: 't', timers, maxBatchVisits: 1, maxQueueVisits: 10, flushIntervalMs: 0 });
      sink.push(visit(0));
      await new Promise<void>((resolve) => {
        const poll = () => (wake !== undefined ? resolve() : setTimeout(poll, 5));
        poll();
      });
      for (let i = 1; i <= 100; i++) sink.push(visit(i));
      expect(sink.stats()).toMatchObject({ queued: 10, inFlight: 1, dropped: 90 });
      up = true;
      wake!();
      await sink.flush();
      // The flush sends the queued batches at once, beside the batch being retried: order is not kept.
      expect([...received].sort()).toEqual(['/page/0', ...Array.from({ length: 10 }, (_, i) => `/page/${91 + i}`)].sort());
      expect(sink.stats()).toMatchObject({ delivered: 11, dropped: 90, queued: 0 });
    });

    it('flush() sends what is queued at once, beside a batch still in flight (a Worker request must start its own delivery)', async () => {
      const held: (() => void)[] = [];
      const paths: string[] = [];
      const stub = await startStub((_req, res, body) => {
        paths.push(...(JSON.parse(body) as { request_path: string }[]).map((v) => v.request_path));
        // The first request is answered only when the test says so.
        const answer = () => res.writeHead(202, { 'content-type': 'application/json' }).end('{"accepted":1,"rejected":[]}');
        if (paths.length === 1) held.push(answer);
        else answer();
      });
      cleanups.push(() => stub.close());
      const sink = createSink({ url: stub.url, token: 't' });
      sink.push(visit(1));
      const first = sink.flush();
      await new Promise<void>((resolve) => {
        const poll = () => (held.length === 1 ? resolve() : setTimeout(poll, 5));
        poll();
      });
      sink.push(visit(2));
      // This flush also waits for visit 1 (pushed before it), but sends visit 2 meanwhile.
      const second = sink.flush();
      await new Promise<void>((resolve) => {
        const poll = () => (sink.stats().delivered === 1 ? resolve() : setTimeout(poll, 5));
        poll();
      });
      expect(paths).toEqual(['/page/1', '/page/2']);
      expect(sink.stats()).toMatchObject({ delivered: 1, inFlight: 1 });
      held[0]!();
      await Promise.all([first, second]);
      expect(sink.stats()).toMatchObject({ delivered: 2, inFlight: 0 });
    });

    it('with overflow "drop-newest" keeps the oldest visits instead', async () => {
      const sink = createSink({ url: 'http://127.0.0.1:9', token: 't', maxQueueVisits: 3, flushIntervalMs: 60_000, overflow: 'drop-newest', closeTimeoutMs: 0 });
      for (let i = 0; i < 5; i++) sink.push(visit(i));
      expect(sink.stats()).toMatchObject({ queued: 3, dropped: 2 });
      await sink.close();
      // The batch close found in flight settles itself: dropped once its attempt fails.
      await sink.flush();
      expect(sink.stats()).toMatchObject({ dropped: 5, inFlight: 0 });
    });

    it('sends without an Idempotency-Key after a server answers 501 to one (a store that keeps no keys)', async () => {
      const seen: (string | undefined)[] = [];
      const stub = await startStub((req, res) => {
        const key = req.headers['idempotency-key'] as string | undefined;
        seen.push(key);
        if (key !== undefined) res.writeHead(501).end();
        else res.writeHead(202, { 'content-type': 'application/json' }).end('{"accepted":1,"rejected":[]}');
      });
      cleanups.push(() => stub.close());
      const sink = createSink({ url: stub.url, token: 't', flushIntervalMs: 0 });
      sink.push(visit(1));
      await sink.flush();
      sink.push(visit(2));
      await sink.flush();
      expect(seen.map((key) => key !== undefined)).toEqual([true, false, false]);
      expect(sink.stats().delivered).toBe(2);
    });

    it('close() gives up after closeTimeoutMs when the server is down, counting what it could not send', async () => {
      const sink = createSink({ url: 'http://127.0.0.1:9', token: 't', flushIntervalMs: 60_000, closeTimeoutMs: 200, retryDelayMs: 50 });
      for (let i = 0; i < 5; i++) sink.push(visit(i));
      await sink.close();
      expect(sink.stats()).toMatchObject({ delivered: 0, dropped: 5, queued: 0, inFlight: 0 });
      sink.push(visit(6));
      expect(sink.stats().dropped).toBe(6);
    });
  });
});

describe('HTTP sink options', () => {
  it.each([
    [{ url: 'ftp://x', token: 't' }, RangeError, /url/],
    [{ url: 'not a url', token: 't' }, RangeError, /url/],
    // Credentials in the url: fetch refuses them, and the password is not repeated in the message.
    [{ url: 'http://user:s3cret@127.0.0.1:8080', token: 't' }, RangeError, /^url must not carry a user name or password: [^3]*$/],
    [{ url: 'http://x', token: '' }, TypeError, /token/],
    [{ url: 'http://x', token: 't', maxBatchVisits: 0 }, RangeError, /maxBatchVisits/],
    [{ url: 'http://x', token: 't', flushIntervalMs: '5' }, TypeError, /flushIntervalMs/],
    [{ url: 'http://x', token: 't', overflow: 'drop-all' }, RangeError, /overflow/],
  ])('%j is refused at creation', (options, type, message) => {
    expect(() => createHttpSink(options as never)).toThrow(type);
    expect(() => createHttpSink(options as never)).toThrow(message);
  });

  it('reads Retry-After as seconds or an HTTP-date (RFC 9110 §10.2.3)', () => {
    const now = Date.UTC(2026, 10, 20, 12, 0, 0);
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Fri, 20 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});
