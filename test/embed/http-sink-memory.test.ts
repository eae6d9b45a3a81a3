// The HTTP sink's queue holds what its byte bound counts: each queued visit as one flat string,
// not the tree of pieces it was built from (about three times the heap). Measured in a child Node
// with --expose-gc, over the built package, after the sink's code is warm (optimised).
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const script = `
import { createHttpSink, serializeVisit } from 'agentwarden';
const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
// A server that never answers: everything pushed stays queued.
const sinkOf = () => createHttpSink({ url: 'http://127.0.0.1:9', token: 't', fetch: () => new Promise(() => {}), maxQueueVisits: 100000, maxQueueBytes: 1 << 30, maxBatchVisits: 1000000, maxBatchBytes: 1 << 30, flushIntervalMs: 1e9 });
// Fresh strings per visit, as a server's parser makes them.
const visit = (i) => ({ request_path: '/page/' + i, request_method: 'GET', request_headers: { host: 'example.com', 'user-agent': UA + ' ' + i, accept: 'text/html', 'x-forwarded-for': '81.2.69.' + (i % 250) }, response_status_code: 200, created: '2026-11-26T06:00:00.123Z', client_ip: '81.2.69.' + (i % 250) });
const fill = (sink, n) => { for (let i = 0; i < n; i++) sink.push(visit(i)); };
for (let round = 0; round < 4; round++) fill(sinkOf(), 50000);
globalThis.gc(); globalThis.gc();
const before = process.memoryUsage().heapUsed;
const sink = sinkOf();
fill(sink, 50000);
globalThis.gc();
const held = (process.memoryUsage().heapUsed - before) / 50000;
console.log(JSON.stringify({ held, bytes: serializeVisit(visit(25000)).length, queued: sink.stats().queued }));
process.exit(0);
`;

describe('HTTP sink memory', () => {
  it('holds a queued visit in about the heap its JSON bytes count', () => {
    const run = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    const { held, bytes, queued } = JSON.parse(run.stdout) as { held: number; bytes: number; queued: number };
    expect(queued).toBe(50_000);
    // A flat one-byte string is its bytes plus a small header; the tree of pieces was 3.4 times them.
    expect(held).toBeLessThan(1.5 * bytes);
  }, 90_000);
});
