// A real `agentwarden serve` process fed by zzuf (Debian's package), a mutation fuzzer nobody here
// wrote: each run, a client pipelines a stream of valid requests (batches of visits with an
// Idempotency-Key, identifications, verifications, robots.txt, reads) through socat, whose reads
// from the client zzuf flips a few bits of. Most requests pass unharmed, one or two come out
// malformed, and the rest of the stream behind them shows how the server copes. What a user depends
// on: the server never answers 500 and keeps serving; every answer is framed so the client can read
// it, a refusal is problem+json; and the visits the client was told were accepted are exactly the
// visits stored, no more (stored without the client hearing of it) and no fewer.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_UA, GPTBOT_UA, parseResponses, spawnServe, stopServes, tempDir, type RawResponse, type ServeProcess } from './helpers.js';

const ZZUF = '/usr/bin/zzuf';
const SOCAT = '/usr/bin/socat';
const available = existsSync(ZZUF) && existsSync(SOCAT);
if (!available) {
  if (process.env.CI === 'true') throw new Error(`zzuf and socat are required in CI but ${ZZUF} or ${SOCAT} is missing (.ci/run installs them)`);
  console.warn(`zzuf or socat not found: skipping the mutation-fuzzing test (install zzuf and socat to run it)`);
}

/** Streams fuzzed, one zzuf seed each. */
const RUNS = 300;
/** The share of bits zzuf flips, picked per seed from this range: about one to five flips in a stream of some 9 KB. */
const RATIO = '0.00001:0.00006';

let proc: ServeProcess;
let token: string;
let cleanup: () => void;

beforeAll(async () => {
  if (!available) return;
  let dir: string;
  ({ dir, cleanup } = tempDir());
  proc = await spawnServe(['--data-dir', join(dir, 'data'), '--verifiers', 'none', '--rate-limit', '0', '--log', 'off']);
  token = proc.firstToken!;
});

afterAll(async () => {
  if (!available) return;
  await stopServes([proc]);
  cleanup();
});

/** The pipelined stream of run `run`: six rounds of the API's routes, two visits per batch. */
function stream(run: number): string {
  const request = (method: string, path: string, body?: unknown, extra = '') => {
    const text = body === undefined ? '' : JSON.stringify(body);
    const length = body === undefined ? '' : `Content-Length: ${Buffer.byteLength(text)}\r\n`;
    return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n${extra}${length}\r\n${text}`;
  };
  const visit = (i: number) => ({
    request_path: `/run/${run}/${i}?q=${i}`,
    request_method: 'GET',
    request_headers: { 'user-agent': i % 2 === 0 ? GPTBOT_UA : BROWSER_UA, 'x-forwarded-for': `203.0.113.${i}`, accept: 'text/html' },
    response_status_code: 200,
    response_duration_in_milliseconds: i,
    created: new Date(Date.UTC(2026, 10, 27, 10, run, i)).toISOString(),
  });
  const parts: string[] = [];
  for (let round = 0; round < 6; round++) {
    parts.push(
      request('POST', '/visits', [visit(2 * round), visit(2 * round + 1)], `Idempotency-Key: zzuf-${run}-${round}\r\n`),
      request('POST', '/agent-identifications', { id: `r${round}`, request_headers: { 'user-agent': GPTBOT_UA } }),
      request('POST', '/agent-verifications', [{ request_headers: { 'user-agent': BROWSER_UA } }]),
      request('POST', '/robots-txts', { agent_types: ['AI Data Scraper'], disallow: '/' }),
      request('GET', '/visits?limit=2'),
      request('GET', '/healthz'),
    );
  }
  return parts.join('');
}

/** Starts socat under zzuf, forwarding one connection to the server; resolves once it listens. */
async function fuzzingProxy(seed: number, target: number): Promise<{ port: number; stop: () => void }> {
  // zzuf picks the sockets to fuzz by port, so socat listens on a chosen one; another taken is tried.
  for (let attempt = 0; ; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    // -M -1: no memory limit (zzuf's default kills a large process); -n -p: only the client's side.
    const child = spawn(ZZUF, ['-M', '-1', '-n', '-p', String(port), '-r', RATIO, '-s', String(seed), SOCAT, '-d', '-d', '-t', '15', `TCP-LISTEN:${port},reuseaddr,bind=127.0.0.1`, `TCP:127.0.0.1:${target}`], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    const listening = await new Promise<boolean>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`socat under zzuf did not listen within 10 s: ${log}`)), 10_000);
      child.stderr.on('data', (chunk: Buffer) => {
        log += chunk.toString();
        if (log.includes('listening on')) {
          clearTimeout(timer);
          resolve(true);
        }
      });
      child.once('exit', () => {
        clearTimeout(timer);
        resolve(false);
      });
    });
    if (listening) return { port, stop: () => child.kill('SIGKILL') };
    if (attempt === 4) throw new Error(`socat under zzuf did not start: ${log}`);
  }
}

/**
 * Sends the stream through the proxy and half-closes, as a client with nothing more to send does;
 * the server answers what it parsed (a request cut short by the end is refused) and closes. Reads
 * until then: cutting it short would leave stored visits unreported and fail the count.
 */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server did not close within 20 s; received ${JSON.stringify(received.slice(-500))}`));
    }, 20_000);
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.end(bytes);
  });
}

/** How many visits the project has stored, through the API's pages. */
async function storedVisitCount(): Promise<number> {
  let count = 0;
  let after: string | undefined;
  do {
    const answer = await fetch(`${proc.url}/visits?limit=1000${after === undefined ? '' : `&after=${encodeURIComponent(after)}`}`, { headers: { authorization: `Bearer ${token}` } });
    const page = (await answer.json()) as { visits: unknown[]; next?: string | null };
    count += page.visits.length;
    after = page.next ?? undefined;
  } while (after !== undefined);
  return count;
}

describe.skipIf(!available)('zzuf mutating pipelined request streams', () => {
  it(`never answers 500, frames every answer, and reports exactly the visits it stores (${RUNS} streams)`, async () => {
    const statuses = new Map<number, number>();
    let acceptedReported = 0;
    for (let seed = 1; seed <= RUNS; seed++) {
      const bytes = stream(seed);
      const proxy = await fuzzingProxy(seed, Number(new URL(proc.url).port));
      let responses: RawResponse[];
      try {
        responses = parseResponses(await exchange(proxy.port, bytes));
      } finally {
        proxy.stop();
      }
      for (const response of responses) {
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        expect(response.status, `seed ${seed}: ${response.body}`).not.toBe(500);
        if (response.status >= 400) expect(response.headers['content-type'], `seed ${seed}`).toBe('application/problem+json');
        // A flipped bit can make one batch's Idempotency-Key another's: that answer is the first one's again.
        if (response.status === 202 && response.headers['idempotent-replayed'] !== 'true') acceptedReported += (JSON.parse(response.body) as { accepted: number }).accepted;
      }
      expect(proc.child.exitCode, `serve exited at seed ${seed}: ${proc.stderr()}`).toBeNull();
    }
    const stored = await storedVisitCount();
    console.log(`zzuf: ${RUNS} streams, answers by status ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}; visits reported accepted ${acceptedReported}, stored ${stored}`);
    // Most requests came through whole: the test exercised the routes, not only refusals.
    expect(statuses.get(202) ?? 0).toBeGreaterThan(RUNS);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(0);
    expect(stored).toBe(acceptedReported);
    expect((await fetch(`${proc.url}/healthz`)).status).toBe(200);
  }, 180_000);
});
