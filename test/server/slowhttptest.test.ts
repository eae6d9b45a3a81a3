// A real `agentwarden serve` process under slowhttptest (Debian's package), an attack tool nobody
// here wrote: Slowloris (heads sent a line every few seconds, more connections than the cap),
// Slow Read (a large answer read a few bytes at a time through a tiny TCP window) and R-U-Dead-Yet
// (1 MB bodies announced and dribbled, with the project's token), all three at once. Meanwhile a
// site keeps identifying its visitors over fresh connections. What a user depends on: every one of
// those requests is answered, promptly; the server's memory stays within the bound the other
// memory tests state; the server itself cuts the slow connections instead of waiting for the attacker
// to leave.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GPTBOT_UA, processMemoryKb, resetPeakMemory, spawnServe, stopServes, tempDir, writeTestCatalog, type ServeProcess } from './helpers.js';

const SLOWHTTPTEST = '/usr/bin/slowhttptest';
const available = existsSync(SLOWHTTPTEST);
if (!available) {
  if (process.env.CI === 'true') throw new Error(`slowhttptest is required in CI but ${SLOWHTTPTEST} is missing (.ci/run installs it)`);
  console.warn(`slowhttptest not found at ${SLOWHTTPTEST}: skipping the slow-HTTP attack test (install slowhttptest to run it)`);
}

/** The bound memory-bounds.test.ts states: peak resident memory during an attack above resident memory before it. */
const MAX_GROWTH_MB = 64;
/** How long each attack runs (slowhttptest -l). The server's header timeout is 10 s. */
const ATTACK_SECONDS = 24;
/** The slowest a legitimate request may be answered while the attacks run. */
const MAX_LEGIT_MS = 3_000;

let proc: ServeProcess;
let token: string;
let dir: string;
let cleanup: () => void;

beforeAll(async () => {
  if (!available) return;
  ({ dir, cleanup } = tempDir());
  proc = await spawnServe(['--data-dir', join(dir, 'data'), '--catalog', writeTestCatalog(dir), '--verifiers', 'none', '--rate-limit', '0', '--log', 'off']);
  token = proc.firstToken!;
  for (let i = 0; i < 50; i++) await legitimate();
});

afterAll(async () => {
  if (!available) return;
  await stopServes([proc]);
  cleanup();
});


/** Sockets the server process holds open (its listener included). */
function openSockets(): number {
  const fds = `/proc/${proc.child.pid}/fd`;
  let sockets = 0;
  for (const fd of readdirSync(fds)) {
    try {
      if (readlinkSync(join(fds, fd)).startsWith('socket:')) sockets++;
    } catch {
      // Closed between the listing and the read.
    }
  }
  return sockets;
}

/** One site request over a new connection (as a new visitor's would be): its status, agent and time taken. */
function legitimate(): Promise<{ status: number; agent: string | undefined; ms: number }> {
  const started = performance.now();
  const body = JSON.stringify({ request_headers: { 'user-agent': GPTBOT_UA } });
  return new Promise((resolve) => {
    const req = request(
      `${proc.url}/agent-identifications`,
      { method: 'POST', agent: false, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk));
        res.on('end', () => {
          let agent: string | undefined;
          try {
            agent = (JSON.parse(text) as { agent_id?: string }).agent_id;
          } catch {
            agent = undefined;
          }
          resolve({ status: res.statusCode ?? 0, agent, ms: performance.now() - started });
        });
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('no answer in 10 s')));
    req.on('error', () => resolve({ status: 0, agent: undefined, ms: performance.now() - started }));
    req.end(body);
  });
}

/** Runs slowhttptest with `args`; resolves, once it exits, with the most of its connections its statistics (`<name>.csv`) saw closed. */
function slowhttptest(name: string, args: string[]): Promise<number> {
  const prefix = join(dir, name);
  const child = spawn(SLOWHTTPTEST, [...args, '-l', String(ATTACK_SECONDS), '-p', '3', '-g', '-o', prefix], { stdio: 'ignore' });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', () => {
      // Rows of "Seconds,Closed,Pending,Connected,Service Available" after the heading.
      const rows = readFileSync(`${prefix}.csv`, 'utf8').trim().split('\n').slice(1);
      resolve(Math.max(0, ...rows.map((row) => Number(row.split(',')[1]))));
    });
  });
}

describe.skipIf(!available)('slowhttptest against a real serve process', () => {
  it('Slowloris, Slow Read and R-U-Dead-Yet at once: every site request answered within 3 s, memory bounded, the slow connections cut by the server', async () => {
    const url = new URL(proc.url);
    const before = processMemoryKb(proc.child.pid!, 'VmRSS');
    resetPeakMemory(proc.child.pid!);

    const attacks = Promise.all([
      // 1,200 heads that never end (a header line every 3 s): more than the 1,024-connection cap.
      slowhttptest('slowloris', ['-H', '-c', '1200', '-r', '400', '-i', '3', '-t', 'GET', '-u', `${url.origin}/healthz`]),
      // 200 clients reading the 100 KB OpenAPI document (three times per connection) 32 bytes every 5 s.
      slowhttptest('slow-read', ['-X', '-c', '200', '-r', '200', '-w', '512', '-y', '1024', '-n', '5', '-z', '32', '-k', '3', '-u', `${url.origin}/openapi.json`]),
      // 300 POST /visits announcing 1 MB each and sending 50 bytes every 2 s. slowhttptest has no
      // option for another header; its Accept value is written raw into the head, so the project's
      // token rides on it and the bodies get past the token check.
      slowhttptest('rudy', ['-B', '-c', '300', '-r', '300', '-i', '2', '-x', '50', '-s', '1000000', '-f', 'application/json', '-m', `application/json\r\nAuthorization: Bearer ${token}`, '-u', `${url.origin}/visits`]),
    ]);

    const answers: Awaited<ReturnType<typeof legitimate>>[] = [];
    const deadline = Date.now() + ATTACK_SECONDS * 1000 - 1500;
    while (Date.now() < deadline) {
      answers.push(await legitimate());
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // Near the attacks' end, before slowhttptest closes anything itself.
    const socketsAtEnd = openSockets();
    const [slowlorisClosed] = await attacks;
    const growthMb = (processMemoryKb(proc.child.pid!, 'VmHWM') - before) / 1024;

    const times = answers.map((answer) => answer.ms).sort((a, b) => a - b);
    console.log(
      `slowhttptest: ${answers.length} site requests, median ${times[times.length >> 1]!.toFixed(1)} ms, slowest ${times.at(-1)!.toFixed(1)} ms; ` +
        `peak memory +${growthMb.toFixed(1)} MB (bound ${MAX_GROWTH_MB} MB); Slowloris connections closed (as slowhttptest saw it when it stopped): ${slowlorisClosed} of 1,200; server sockets near the end: ${socketsAtEnd}`,
    );

    expect(answers.length).toBeGreaterThan(20);
    expect(answers.filter((answer) => answer.status !== 200 || answer.agent !== 'gptbot')).toEqual([]);
    expect(times.at(-1)!).toBeLessThan(MAX_LEGIT_MS);
    expect(growthMb).toBeLessThan(MAX_GROWTH_MB);
    // Near the end the server holds at most the uploads (within the 30 s request timeout) and the
    // listener: the Slowloris heads (refused over the cap, else cut at the 10 s header timeout) and
    // the slow readers are gone, though slowhttptest would have kept every one of them open.
    expect(socketsAtEnd).toBeLessThan(300 + 50);
    // And when the tools have gone, the server is itself.
    expect(await legitimate()).toMatchObject({ status: 200, agent: 'gptbot' });
  }, 90_000);
});
