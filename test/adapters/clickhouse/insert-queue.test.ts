// Group commit of the ClickHouse store: appends waiting behind an INSERT in flight share the next
// one, each settles with the INSERT that carried it, and nothing resolves before its INSERT does.
import { describe, expect, it } from 'vitest';
import { createInsertQueue, InsertDeadlineError } from '../../../src/adapters/clickhouse/insert-queue.js';

function fakeInsert() {
  const calls: { rows: readonly number[]; resolve: () => void; reject: (error: Error) => void }[] = [];
  const insert = (rows: readonly number[]) => new Promise<void>((resolve, reject) => calls.push({ rows, resolve, reject }));
  return { calls, insert };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('insert queue', () => {
  it('sends the first batch at once and every batch that waited behind it in one INSERT', async () => {
    const { calls, insert } = fakeInsert();
    const queue = createInsertQueue({ insert, maxBatchRows: 100, maxConcurrent: 1 });
    const settled: string[] = [];
    const first = queue.enqueue([1]).then(() => settled.push('first'));
    const second = queue.enqueue([2, 3]).then(() => settled.push('second'));
    const third = queue.enqueue([4]).then(() => settled.push('third'));
    expect(calls.map((c) => c.rows)).toEqual([[1]]);
    expect(queue.queued()).toBe(3);
    await tick();
    expect(settled).toEqual([]);
    calls[0]!.resolve();
    await first;
    await tick();
    expect(settled).toEqual(['first']);
    expect(calls.map((c) => c.rows)).toEqual([[1], [2, 3, 4]]);
    calls[1]!.resolve();
    await Promise.all([second, third]);
    expect(settled).toEqual(['first', 'second', 'third']);
    await queue.drained();
  });

  it('says when the oldest INSERT in flight was sent, until it settles (a hung INSERT is visible to readiness)', async () => {
    const { calls, insert } = fakeInsert();
    let now = 1000;
    const queue = createInsertQueue({ insert, maxBatchRows: 1, maxConcurrent: 2, clock: { now: () => now } });
    expect(queue.inFlightSince()).toBeUndefined();
    const first = queue.enqueue([1]);
    now = 2000;
    const second = queue.enqueue([2]);
    expect(queue.inFlightSince()).toBe(1000);
    calls[0]!.resolve();
    await first;
    expect(queue.inFlightSince()).toBe(2000);
    calls[1]!.reject(new Error('broken'));
    await expect(second).rejects.toThrow('broken');
    expect(queue.inFlightSince()).toBeUndefined();
  });

  it('rejects every batch of a failed INSERT with its error, and goes on with the next', async () => {
    const { calls, insert } = fakeInsert();
    const queue = createInsertQueue({ insert, maxBatchRows: 100, maxConcurrent: 1 });
    const first = queue.enqueue([1]);
    const second = queue.enqueue([2]);
    const third = queue.enqueue([3]);
    calls[0]!.resolve();
    await first;
    await tick();
    const down = new Error('ECONNREFUSED');
    calls[1]!.reject(down);
    await expect(second).rejects.toBe(down);
    await expect(third).rejects.toBe(down);
    const later = queue.enqueue([4]);
    calls[2]!.resolve();
    await expect(later).resolves.toBeUndefined();
  });

  it('keeps an INSERT within maxBatchRows (a larger single batch goes alone) and honours maxConcurrent', async () => {
    const { calls, insert } = fakeInsert();
    const queue = createInsertQueue({ insert, maxBatchRows: 3, maxConcurrent: 2 });
    const all = [queue.enqueue([1, 2, 3, 4]), queue.enqueue([5]), queue.enqueue([6, 7]), queue.enqueue([8]), queue.enqueue([9])];
    // Two in flight at once; the rest wait.
    expect(calls.map((c) => c.rows)).toEqual([[1, 2, 3, 4], [5]]);
    calls[0]!.resolve();
    await tick();
    expect(calls.map((c) => c.rows)).toEqual([[1, 2, 3, 4], [5], [6, 7, 8]]);
    calls[1]!.resolve();
    await tick();
    expect(calls.map((c) => c.rows)).toEqual([[1, 2, 3, 4], [5], [6, 7, 8], [9]]);
    calls[2]!.resolve();
    calls[3]!.resolve();
    await Promise.all(all);
    expect(queue.queued()).toBe(0);
    await queue.drained();
  });

  it('never sends rows whose deadline passed while they waited, and sends the others', async () => {
    const { calls, insert } = fakeInsert();
    let now = 1000;
    const queue = createInsertQueue({ insert, maxBatchRows: 100, maxConcurrent: 1, clock: { now: () => now } });
    const first = queue.enqueue([1], 1000);
    const late = queue.enqueue([2], 1500);
    const patient = queue.enqueue([3], 5000);
    const unbounded = queue.enqueue([4]);
    expect(calls.map((c) => c.rows)).toEqual([[1]]);
    now = 2000;
    calls[0]!.resolve();
    await first;
    await expect(late).rejects.toBeInstanceOf(InsertDeadlineError);
    await tick();
    expect(calls.map((c) => c.rows)).toEqual([[1], [3, 4]]);
    expect(queue.queued()).toBe(0);
    calls[1]!.resolve();
    await Promise.all([patient, unbounded]);
    await queue.drained();
  });

  it('refuses rows whose deadline passes while the INSERT ahead of them hangs, without waiting for it to end', async () => {
    const { calls, insert } = fakeInsert();
    const queue = createInsertQueue({ insert, maxBatchRows: 100, maxConcurrent: 1 });
    void queue.enqueue([1]).catch(() => undefined);
    const started = Date.now();
    const behind = queue.enqueue([2], Date.now() + 50);
    await expect(behind).rejects.toBeInstanceOf(InsertDeadlineError);
    expect(Date.now() - started).toBeLessThan(1000);
    // The hung INSERT is still the only one sent, and nothing waits behind it.
    expect(calls.map((c) => c.rows)).toEqual([[1]]);
    expect(queue.queued()).toBe(0);
    calls[0]!.resolve();
    await queue.drained();
  });
});
