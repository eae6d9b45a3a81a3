// Durability of `agentwarden serve` (DESIGN.md §6) proven from outside: concurrent clients stream
// batches of visits while the server is killed with SIGKILL at random moments and restarted on
// the same data directory; every visit acknowledged with a 2xx must then be stored exactly once.
// A SIGTERM variant checks graceful shutdown under load.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_UA, CLI, GPTBOT_UA, spawnServe, tempDir, type ServeProcess } from './helpers.js';
import { prng } from '../helpers/prng.js';

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npx tsup" (npm test builds it first)`);
});

const WORKERS = 6;
const BATCH = 25;

// Seeded (mulberry32) so a failing run can be replayed with CRASH_SEED=<seed>.
const SEED = Number(process.env['CRASH_SEED'] ?? Math.floor(Math.random() * 2 ** 31));

/** One POST /visits as the client saw it: its visits' markers and the status, or none when no response came. */
interface Sent {
  readonly paths: readonly string[];
  readonly status: number | undefined;
}

async function start(dir: string): Promise<ServeProcess> {
  const proc = await spawnServe(['--data-dir', dir, '--log', 'off', '--verifiers', 'none', '--rate-limit', '0']);
  cleanups.push(async () => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) {
      proc.child.kill('SIGKILL');
      await proc.exited;
    }
  });
  return proc;
}

/**
 * Client loops posting batches of uniquely marked visits until `stopped()` or until the server
 * refuses connections. A request that fails in any way (reset, refused) is unacknowledged.
 */
function load(url: string, token: string, round: string, stopped: () => boolean): Promise<Sent[]> {
  const sent: Sent[] = [];
  const worker = async (w: number) => {
    for (let n = 0; !stopped(); n++) {
      const paths = Array.from({ length: BATCH }, (_, k) => `/crash/${round}/${w}/${n}/${k}`);
      const body = paths.map((path, k) => ({
        request_path: path,
        request_method: 'GET',
        request_headers: { 'user-agent': k % 3 === 0 ? GPTBOT_UA : BROWSER_UA, 'x-forwarded-for': `198.51.100.${k}` },
        response_status_code: 200,
        response_duration_in_milliseconds: k,
      }));
      let status: number | undefined;
      try {
        const response = await fetch(`${url}/visits`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        // The status line is the acknowledgement; the body may be cut by the kill.
        status = response.status;
        await response.arrayBuffer().catch(() => undefined);
      } catch {
        status = undefined;
      }
      sent.push({ paths, status });
      // Refused or reset: the server is gone (or going); this loop is done.
      if (status === undefined) return;
    }
  };
  return Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w))).then(() => sent);
}

/** How often each marker is stored, read from the SQLite file directly (the server is stopped). */
function storedCounts(dir: string): Map<string, number> {
  const db = new Database(join(dir, 'agentwarden.db'), { readonly: true });
  try {
    const rows = db.prepare<[], { path: string; n: number }>("SELECT request_path AS path, count(*) AS n FROM visits WHERE request_path LIKE '/crash/%' GROUP BY request_path").all();
    return new Map(rows.map((row) => [row.path, row.n]));
  } finally {
    db.close();
  }
}

/**
 * Every way the stored visits may contradict what the clients were told, as readable lines:
 * an acknowledged visit missing or duplicated, a refused one stored, an unanswered one stored
 * twice or only partly (a batch is one transaction), or a stored visit nobody sent.
 */
function contradictions(sent: readonly Sent[], stored: Map<string, number>): string[] {
  const problems: string[] = [];
  const known = new Set<string>();
  for (const request of sent) {
    const counts = request.paths.map((path) => stored.get(path) ?? 0);
    for (const path of request.paths) known.add(path);
    const acknowledged = request.status !== undefined && request.status >= 200 && request.status < 300;
    request.paths.forEach((path, k) => {
      const n = counts[k]!;
      if (acknowledged && n !== 1) problems.push(`${path}: acknowledged with ${request.status}, stored ${n} times`);
      if (request.status !== undefined && !acknowledged && n !== 0) problems.push(`${path}: refused with ${request.status}, stored ${n} times`);
      if (request.status === undefined && n > 1) problems.push(`${path}: unanswered, stored ${n} times`);
    });
    if (request.status === undefined && new Set(counts).size > 1) problems.push(`${request.paths[0]}...: unanswered batch stored in part (${counts.join('')})`);
  }
  for (const path of stored.keys()) if (!known.has(path)) problems.push(`${path}: stored but never sent`);
  return problems;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('crash safety of POST /visits', () => {
  it('kill -9 at random moments under concurrent load, restarting on the same data: every acknowledged visit stored exactly once', async () => {
    const random = prng(SEED);
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const sent: Sent[] = [];
    let token: string | undefined;
    const rounds = 5;
    const delays: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const proc = await start(dir);
      // Only the first start prints a token; it stays valid across every restart.
      token ??= proc.firstToken;
      expect(token, `round ${round}: no token printed on first start`).toBeDefined();
      let killed = false;
      const loads = load(proc.url, token!, String(round), () => killed);
      const delay = Math.round(150 + random() * 550);
      delays.push(delay);
      await sleep(delay);
      proc.child.kill('SIGKILL');
      killed = true;
      await proc.exited;
      sent.push(...(await loads));
    }
    const context = `CRASH_SEED=${SEED}, kill delays ${delays.join(', ')} ms`;
    const acknowledged = sent.filter((request) => request.status === 202);
    const unanswered = sent.filter((request) => request.status === undefined);
    // The load must have been real and the kills must have landed while requests were in flight.
    expect(acknowledged.length, context).toBeGreaterThan(rounds * 2);
    expect(unanswered.length, context).toBeGreaterThan(0);
    // 503 (the store refusing under backpressure) is an honest refusal; contradictions() checks nothing of it was stored.
    expect(sent.filter((request) => request.status !== undefined && request.status !== 202 && request.status !== 503).map((r) => r.status), context).toEqual([]);
    expect(contradictions(sent, storedCounts(dir)), context).toEqual([]);

    // A restart after the last crash serves again on the recovered data, with the same token.
    const proc = await start(dir);
    const response = await fetch(`${proc.url}/visits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ request_path: '/crash/after', request_method: 'GET', request_headers: { 'user-agent': GPTBOT_UA } }),
    });
    expect(response.status).toBe(202);
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    expect(storedCounts(dir).get('/crash/after')).toBe(1);
  });

  it('SIGTERM under concurrent load: exits 0, and every acknowledged visit is stored exactly once', async () => {
    const random = prng(SEED + 1);
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const sent: Sent[] = [];
    let token: string | undefined;
    const context = `CRASH_SEED=${SEED}`;
    for (let round = 0; round < 2; round++) {
      const proc = await start(dir);
      token ??= proc.firstToken;
      // The loops keep sending through the shutdown until connections are refused.
      const loads = load(proc.url, token!, `term${round}`, () => false);
      await sleep(Math.round(150 + random() * 350));
      proc.child.kill('SIGTERM');
      expect(await proc.exited, `${context}\nstderr: ${proc.stderr()}`).toBe(0);
      sent.push(...(await loads));
    }
    expect(sent.filter((request) => request.status === 202).length, context).toBeGreaterThan(4);
    expect(sent.filter((request) => request.status !== undefined && request.status !== 202 && request.status !== 503).map((r) => r.status), context).toEqual([]);
    expect(contradictions(sent, storedCounts(dir)), context).toEqual([]);
  });
});
