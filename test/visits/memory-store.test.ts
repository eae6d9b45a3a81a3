// The in-memory visit store runs the shared VisitStore contract suite, plus its key window.
import { describe, expect, it } from 'vitest';
import { createMemoryVisitStore, IDEMPOTENCY_WINDOW_MS } from '../../src/index.js';
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
