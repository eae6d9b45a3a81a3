// The event stream's memory bound, measured on `agentwarden serve` as a child process: ten
// GET /visits/stream connections that never read while 1,500 large visits (about 40 KB of headers
// each) are posted. The server's resident set (VmRSS from /proc) must stay within the stated bound;
// before event queues were bounded by bytes it grew by about 1 GB here.
import { existsSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI, GPTBOT_UA, post, spawnServe, stopServes, tempDir, writeTestCatalog, type ServeProcess } from './helpers.js';

const MiB = 1024 * 1024;
const STREAMS = 10;
const VISITS = 1500;
const PER_REQUEST = 20;
// What the stated bound allows on top of the server's resident set before the streams opened: the
// streams' shared queue budget (--stream-queue-total-bytes, default 64 MiB), each connection's
// socket buffer (one event plus 16 KiB), and headroom for the ingestion itself (JSON parsing,
// SQLite's page cache, garbage not yet collected): the same posting with no stream open grows it
// by about 100 MiB on a quiet machine, more when the garbage collector runs behind on a busy one.
const QUEUE_TOTAL = 64 * MiB;
const ALLOWED_GROWTH = QUEUE_TOTAL + 200 * MiB;

function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** A visit with about 40 KB of distinct header text (values no two visits share). */
function largeVisit(i: number) {
  const headers: Record<string, string> = { 'user-agent': GPTBOT_UA };
  for (let h = 0; h < 8; h++) headers[`x-large-${h}`] = `${i}-${h}-`.padEnd(5000, String.fromCharCode(97 + ((i + h) % 26)));
  return { request_path: `/large/${i}`, request_method: 'GET', request_headers: headers };
}

/** Opens an event stream and never reads from it: the socket is paused before any byte arrives. */
function stalledStream(url: string, token: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.write(`GET /visits/stream HTTP/1.1\r\nhost: ${hostname}\r\nauthorization: Bearer ${token}\r\naccept: text/event-stream\r\n\r\n`);
      // Give the server time to answer the head; the paused socket then leaves everything to TCP.
      setTimeout(() => resolve(socket), 50);
    });
    socket.pause();
    socket.once('error', reject);
  });
}

/** Everything the server sent on a paused socket, read once the response ends (chunked last chunk). */
function readToEnd(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`the response did not end; it ends with ${JSON.stringify(text.slice(-200))}`)), 10_000);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (text.endsWith('\r\n0\r\n\r\n')) {
        clearTimeout(timer);
        resolve(text);
      }
    });
    socket.resume();
  });
}

const running: (ServeProcess | undefined)[] = [];
const sockets: Socket[] = [];
const cleanups: (() => void)[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await stopServes(running.splice(0));
  for (const cleanup of cleanups.splice(0)) cleanup();
});

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npx tsup" (npm test builds it first)`);
});

describe.runIf(process.platform === 'linux')('event streams that do not read', () => {
  it(`keep the server's memory within ${ALLOWED_GROWTH / MiB} MiB of growth: ${STREAMS} stalled streams, ${VISITS} visits of 40 KB`, { timeout: 120_000 }, async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const proc = await spawnServe(['--data-dir', dir, '--catalog', writeTestCatalog(dir), '--verifiers', 'none', '--log', 'off', '--rate-limit', '0', '--max-streams-per-token', String(STREAMS)]);
    running.push(proc);
    const pid = proc.child.pid!;
    const token = proc.firstToken!;
    // Warm up (JIT, SQLite, the first allocations) so the baseline is the server at work, not at rest.
    for (let i = 0; i < 3; i++) expect((await post(`${proc.url}/visits`, token, Array.from({ length: PER_REQUEST }, (_, j) => largeVisit(-1 - i * PER_REQUEST - j)))).status).toBe(202);
    const baseline = rssBytes(pid);

    for (let i = 0; i < STREAMS; i++) sockets.push(await stalledStream(proc.url, token));
    // One more for the same token is past --max-streams-per-token.
    const refused = await fetch(`${proc.url}/visits/stream`, { headers: { authorization: `Bearer ${token}` } });
    expect([refused.status, refused.headers.get('retry-after')]).toEqual([429, '5']);
    await refused.body?.cancel();
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 20);
    try {
      for (let sent = 0; sent < VISITS; sent += PER_REQUEST) {
        const batch = Array.from({ length: PER_REQUEST }, (_, j) => largeVisit(sent + j));
        const answer = await post(`${proc.url}/visits`, token, batch);
        expect(answer.status).toBe(202);
      }
      // Queued events are released when the server gives up on a stream; sample a moment longer.
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, rssBytes(pid));
    console.log(`serve RSS with ${STREAMS} stalled streams: ${(baseline / MiB).toFixed(0)} MiB before, peak ${(peak / MiB).toFixed(0)} MiB while ${VISITS} visits of 40 KB were posted (+${((peak - baseline) / MiB).toFixed(0)} MiB)`);
    expect(peak - baseline).toBeLessThan(ALLOWED_GROWTH);
    // The server still answers: the stalled streams hold no lock on anything.
    expect((await fetch(`${proc.url}/healthz`)).status).toBe(200);
    // Each stalled stream, read at last, got events up to where it fell behind, then the closing
    // event and the end of the response: the client would resume with Last-Event-ID.
    for (const socket of sockets) {
      const text = await readToEnd(socket);
      expect(text).toMatch(/^HTTP\/1\.1 200 /);
      expect(text).toMatch(/id: [0-9a-f]+\r?\n?.*data: \{/s);
      expect(text).toMatch(/event: closed\ndata: \{"reason":"too-far-behind"\}\n\n\r\n0\r\n\r\n$/);
    }
  });
});
