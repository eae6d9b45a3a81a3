// The store sink into the real embedded SQLite store and the memory store: what the middleware
// learnt is stored as it was learnt, invalid visits are counted, a busy store is retried once.
import { afterEach, describe, expect, it } from 'vitest';
import { createFanoutSink, createFetchMiddleware, createMemoryVisitStore, createStoreSink, VisitStoreUnavailableError, type SinkVisit, type VisitStore } from '../../src/index.js';
import { openSqliteStore } from '../../src/adapters/node/index.js';
import { tempDir } from '../server/helpers.js';
import { embedEngine, GOOGLEBOT_UA, GPTBOT_UA } from './fixtures.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()!();
});

const get = (path: string, ua: string) => new Request(`http://site.example${path}`, { headers: { 'user-agent': ua, authorization: 'Basic c2VjcmV0' } });

describe('store sink', () => {
  it('stores middleware visits in SQLite with their verdict, decision and socket address', async () => {
    const { dir, cleanup } = tempDir();
    const store = openSqliteStore({ dataDir: dir });
    cleanups.push(() => (store.close(), cleanup()));
    const { id: projectId } = store.createProject('site');
    const sink = createStoreSink({ store, projectId });
    const run = createFetchMiddleware({ engine: embedEngine(), sink, policy: { denyVerificationFailed: true } });
    await run(get('/ok', GOOGLEBOT_UA), () => new Response('ok'), { clientIp: '127.0.0.1' });
    await run(get('/no', GPTBOT_UA), () => new Response('never'), { clientIp: '127.0.0.1' });
    await sink.flush();
    const stored = await store.timeline({ projectId, limit: 10 });
    expect(stored.map((v) => [v.request_path, v.agent_id, v.result, v.client_ip, v.response_status_code, v.is_blocked, v.decision?.rule])).toEqual([
      ['/no', 'gptbot', 'verification_failed', '127.0.0.1', 403, true, 'deny-verification-failed'],
      ['/ok', 'googlebot', 'verified', '127.0.0.1', 200, undefined, undefined],
    ]);
    expect(stored[0]!.verification).toEqual({ method: 'ip-ranges', checks: [{ method: 'ip-ranges', outcome: 'fail', reason: 'ip-not-in-range' }] });
    expect(stored.every((v) => v.request_headers['authorization'] === undefined)).toBe(true);
    expect(sink.stats()).toMatchObject({ delivered: 2, dropped: 0, rejected: 0 });
    await sink.close();
  });

  it('identifies visits pushed without a verdict with its engine, and counts invalid ones as rejected', async () => {
    const store = createMemoryVisitStore();
    const errors: string[] = [];
    const sink = createStoreSink({ store, projectId: 'prj_1', engine: embedEngine(), onError: (e) => errors.push(e) });
    sink.push({ request_path: '/x', request_method: 'GET', request_headers: { 'user-agent': GOOGLEBOT_UA }, client_ip: '127.0.0.1' });
    sink.push({ request_path: '', request_method: 'GET', request_headers: {} } as SinkVisit);
    await sink.flush();
    const stored = await store.timeline({ projectId: 'prj_1', limit: 10 });
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ agent_id: 'googlebot', result: 'verified', client_ip: '127.0.0.1' });
    expect(sink.stats()).toMatchObject({ delivered: 1, rejected: 1, dropped: 0 });
    expect(errors[0]).toContain('/request_path');
  });

  it('retries a store that is busy after its Retry-After, storing the batch once', async () => {
    const memory = createMemoryVisitStore();
    let refusals = 1;
    const busy: VisitStore = Object.assign(Object.create(memory) as VisitStore, {
      appendOnce: undefined,
      append(projectId: string, visits: Parameters<VisitStore['append']>[1]) {
        if (refusals-- > 0) return Promise.reject(new VisitStoreUnavailableError('busy', 0, 'busy now'));
        return memory.append(projectId, visits);
      },
    });
    const sink = createStoreSink({ store: busy, projectId: 'prj_1', engine: embedEngine() });
    sink.push({ request_path: '/x', request_method: 'GET', request_headers: {} });
    await sink.flush();
    expect(await memory.timeline({ projectId: 'prj_1', limit: 10 })).toHaveLength(1);
    expect(sink.stats()).toMatchObject({ delivered: 1, retries: 1 });
  });

  it('waits for a batch another attempt is still storing (appendOnce "in-progress") past maxAttempts, with the same key', async () => {
    const memory = createMemoryVisitStore();
    const keys: string[] = [];
    const inFlightElsewhere: VisitStore = Object.assign(Object.create(memory) as VisitStore, {
      appendOnce(projectId: string, visits: Parameters<VisitStore['append']>[1], key: Parameters<NonNullable<VisitStore['appendOnce']>>[2]) {
        keys.push(key.key);
        if (keys.length <= 12) return Promise.resolve({ outcome: 'in-progress' as const, retryAfterSeconds: 0 });
        return memory.appendOnce!(projectId, visits, key);
      },
    });
    const sink = createStoreSink({ store: inFlightElsewhere, projectId: 'prj_1', engine: embedEngine(), maxAttempts: 2 });
    sink.push({ request_path: '/x', request_method: 'GET', request_headers: {} });
    await sink.flush();
    expect(keys).toHaveLength(13);
    expect(new Set(keys).size).toBe(1);
    expect(await memory.timeline({ projectId: 'prj_1', limit: 10 })).toHaveLength(1);
    expect(sink.stats()).toMatchObject({ delivered: 1, dropped: 0 });
  });

  it('fans out to several sinks; one that throws keeps the visit from none of the others', async () => {
    const a = createMemoryVisitStore();
    const b = createMemoryVisitStore();
    const broken = { push() { throw new Error('broken sink'); }, flush: async () => {}, close: async () => {} };
    const sink = createFanoutSink([createStoreSink({ store: a, projectId: 'p', engine: embedEngine() }), broken, createStoreSink({ store: b, projectId: 'p', engine: embedEngine() })]);
    sink.push({ request_path: '/x', request_method: 'GET', request_headers: {} });
    await sink.flush();
    expect(await a.timeline({ projectId: 'p', limit: 10 })).toHaveLength(1);
    expect(await b.timeline({ projectId: 'p', limit: 10 })).toHaveLength(1);
    expect(() => createFanoutSink([{}] as never)).toThrow(/sinks\[0\]/);
  });

  it('stores a visit past the per-visit limits (a padded request, a 20 KiB path) trimmed to them, rather than refusing it', async () => {
    const memory = createMemoryVisitStore();
    const sink = createStoreSink({ store: memory, projectId: 'p', engine: embedEngine() });
    const padding = Object.fromEntries(Array.from({ length: 250 }, (_, i) => [`x-pad-${i}`, 'p']));
    sink.push({ request_path: `/${'a'.repeat(20_000)}`, request_method: 'GET', request_headers: { ...padding, 'user-agent': GPTBOT_UA } });
    await sink.flush();
    expect(sink.stats()).toMatchObject({ delivered: 1, rejected: 0 });
    const [stored] = await memory.timeline({ projectId: 'p', limit: 1 });
    expect(stored!.request_path).toHaveLength(16 * 1024);
    expect(stored!.agent_id).toBe('gptbot');
    expect(Object.keys(stored!.request_headers)).toHaveLength(200);
  });

  it('refuses bad options at creation', () => {
    expect(() => createStoreSink({ store: {} as VisitStore, projectId: 'p' })).toThrow(/store/);
    expect(() => createStoreSink({ store: createMemoryVisitStore(), projectId: '' })).toThrow(/projectId/);
  });
});
