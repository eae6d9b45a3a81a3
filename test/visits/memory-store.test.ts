// The in-memory visit store runs the shared VisitStore contract suite, plus its key window.
import { describe, expect, it } from 'vitest';
import { createMemoryVisitStore, IDEMPOTENCY_WINDOW_MS, summarizeProjectVisits, TEST_AGENT_ID } from '../../src/index.js';
import { describeVisitStore, makeVisit } from './store-suite.js';

describeVisitStore('memory', async () => ({ store: createMemoryVisitStore(), close: async () => {} }));

describe('createMemoryVisitStore idempotency keys', () => {
  it('remembers a key for IDEMPOTENCY_WINDOW_MS, then takes it as a new batch', async () => {
    let now = 1_000_000;
    const store = createMemoryVisitStore({ clock: { now: () => now } });
    const batch = { key: 'k', fingerprint: 'f', response: '{}' };
    expect((await store.appendOnce('p', [makeVisit({ request_path: '/1' })], batch)).outcome).toBe('stored');
    now += IDEMPOTENCY_WINDOW_MS - 1;
    expect((await store.appendOnce('p', [makeVisit({ request_path: '/2' })], batch)).outcome).toBe('replayed');
    now += 1;
    expect((await store.appendOnce('p', [makeVisit({ request_path: '/3' })], batch)).outcome).toBe('stored');
    expect(store.list('p').map((v) => v.request_path)).toEqual(['/1', '/3']);
  });
});

describe('createMemoryVisitStore.deleteProject', () => {
  it('forgets a project\'s visits and keys, and no other project\'s', async () => {
    const store = createMemoryVisitStore();
    const batch = { key: 'k', fingerprint: 'f', response: '{}' };
    await store.appendOnce('gone', [makeVisit({ request_path: '/1' }), makeVisit({ request_path: '/2' })], batch);
    await store.appendOnce('kept', [makeVisit({ request_path: '/1' })], batch);
    expect(await store.deleteProject('gone')).toBe(2);
    expect(store.list('gone')).toEqual([]);
    expect(await store.timeline({ projectId: 'gone', limit: 10 })).toEqual([]);
    // The key is forgotten with the project: the same key is a new batch now.
    expect((await store.appendOnce('gone', [makeVisit()], batch)).outcome).toBe('stored');
    expect((await store.appendOnce('kept', [makeVisit()], batch)).outcome).toBe('replayed');
    expect(store.list('kept')).toHaveLength(1);
  });
});

describe('summarizeProjectVisits past a long run of test visits', () => {
  it('tells the newest counted visit when the newest 1,000 to arrive are all test visits', async () => {
    const store = createMemoryVisitStore();
    const day = 86_400_000;
    const start = Date.UTC(2026, 2, 1);
    await store.append('p', [makeVisit({ time: start + 2 * day + 3_600_000 + 35_123, received: start + 2 * day + 3_600_000 + 35_123 })]);
    const tests = Array.from({ length: 1000 }, (_, i) => makeVisit({ time: start + 3 * day + i, received: start + 3 * day + i, agent_id: TEST_AGENT_ID, agent_type: 'Developer Helper', result: 'not_verifiable' }));
    await store.append('p', tests);
    const summary = await summarizeProjectVisits(store, 'p', { now: start + 4 * day, excludeTestVisits: true });
    expect(summary).toEqual({ visits: 1, test_visits: 1000, last_visit: start + 2 * day + 3_600_000 + 35_123 });
  });

  it('tells the newest visit by when it happened, not by when it arrived (a backfill arrives late)', async () => {
    const store = createMemoryVisitStore();
    const day = 86_400_000;
    const start = Date.UTC(2026, 2, 1);
    const newest = start + 3 * day + 1234;
    await store.append('p', [makeVisit({ time: newest, received: newest })]);
    await store.append('p', [makeVisit({ time: start + day, received: start + 3 * day + 5000 })]);
    expect(await summarizeProjectVisits(store, 'p', { now: start + 4 * day, excludeTestVisits: true })).toEqual({ visits: 2, test_visits: 0, last_visit: newest });
  });
});
