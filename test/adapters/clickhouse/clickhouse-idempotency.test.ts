// Idempotency keys of the ClickHouse store against a real ClickHouse 18.16: a key is stored once
// across a restart of the agentwarden server, across several servers receiving it at once, when
// ClickHouse is killed in the middle of the INSERT, and when a server dies holding a claim.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickHouseVisitStore, type ClickHouseVisitStore } from '../../../src/adapters/clickhouse/index.js';
import { VisitStoreUnavailableError, type EnrichedVisit, type IdempotentAppendResult } from '../../../src/index.js';
import { clickhouseAvailable, startClickHouse, type ClickHouseServer } from '../../helpers/clickhouse.js';
import { startClickHouseProxy } from '../../helpers/clickhouse-proxy.js';

const available = clickhouseAvailable();

function visit(path: string, padding = 0): EnrichedVisit {
  const now = Date.now();
  return {
    request_path: path,
    request_method: 'GET',
    request_headers: { 'user-agent': 'GPTBot/1.2', 'x-padding': 'p'.repeat(padding) },
    received: now,
    time: now,
    agent_id: 'gptbot',
    agent_type: 'AI Data Scraper',
    result: 'not_verifiable',
    client_ip: '192.0.2.1',
    referral: null,
  };
}

const batch = (key: string, fingerprint = 'f1') => ({ key, fingerprint, response: `{"key":"${key}","fingerprint":"${fingerprint}"}` });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(available)('ClickHouse idempotency keys', () => {
  let server: ClickHouseServer;
  const opened: ClickHouseVisitStore[] = [];
  const open = async (database: string, options: { requestTimeoutMs?: number; insertSettleMs?: number } = {}) => {
    const store = await openClickHouseVisitStore({ url: server.url, database, retryAfterSeconds: 1, ...options });
    opened.push(store);
    return store;
  };
  beforeAll(async () => {
    server = await startClickHouse();
  });
  afterAll(async () => {
    for (const store of opened) await store.close().catch(() => undefined);
    await server?.destroy();
  });

  /** How many times each path of the project is stored. */
  const copies = async (database: string, projectId: string): Promise<Map<string, number>> => {
    const text = (await server.query(`SELECT request_path, count() FROM ${database}.visits WHERE project_id = '${projectId}' GROUP BY request_path FORMAT TSV`)).trim();
    return new Map(text === '' ? [] : text.split('\n').map((line) => [line.split('\t')[0]!, Number(line.split('\t')[1])]));
  };

  /** Retries as a client does while the key is in progress or ClickHouse is away; the final answer. */
  const settle = async (attempt: () => Promise<IdempotentAppendResult>, untilMs = 40_000): Promise<IdempotentAppendResult> => {
    const until = Date.now() + untilMs;
    for (;;) {
      try {
        const result = await attempt();
        if (result.outcome !== 'in-progress' || Date.now() > until) return result;
      } catch (error) {
        if (!(error instanceof VisitStoreUnavailableError) || Date.now() > until) throw error;
      }
      await sleep(100 + Math.random() * 200);
    }
  };

  it('stores 1,000 keyed batches that arrive together, each with a 255-character key (their claim reads exceed max_query_size together)', async () => {
    const store = await open('aw_idem_burst');
    const keys = Array.from({ length: 1000 }, (_, i) => `${i}-`.padEnd(255, 'k'));
    const results = await Promise.allSettled(keys.map((key, i) => store.appendOnce('prj_burst', [visit(`/burst/${i}`)], batch(key))));
    const outcomes = results.map((result) => (result.status === 'fulfilled' ? result.value.outcome : String(result.reason)));
    expect(outcomes.filter((outcome) => outcome !== 'stored')).toEqual([]);
    expect([...(await copies('aw_idem_burst', 'prj_burst')).values()]).toEqual(Array(1000).fill(1));
  });

  it('answers a key from its first batch after the server restarts (a new store over the same database)', async () => {
    const first = await open('aw_idem_restart');
    const paths = ['/r/1', '/r/2', '/r/3'];
    expect((await first.appendOnce('prj_r', paths.map((p) => visit(p)), batch('k'))).outcome).toBe('stored');
    await first.close();
    const second = await open('aw_idem_restart');
    const again = await second.appendOnce('prj_r', [visit('/r/other')], batch('k', 'f2'));
    expect(again).toEqual({ outcome: 'replayed', record: { fingerprint: 'f1', response: batch('k').response } });
    expect(Object.fromEntries(await copies('aw_idem_restart', 'prj_r'))).toEqual({ '/r/1': 1, '/r/2': 1, '/r/3': 1 });
    // The timeline reads the reserved ids like any others.
    expect((await second.timeline({ projectId: 'prj_r', limit: 10 })).map((v) => v.request_path)).toEqual(['/r/3', '/r/2', '/r/1']);
  });

  it('stores a key once when three servers receive it at the same moment, and answers every sender from that batch', async () => {
    const servers = [await open('aw_idem_race'), await open('aw_idem_race'), await open('aw_idem_race')];
    for (let round = 0; round < 5; round++) {
      const key = `race-${round}`;
      // Two senders per server, each with a batch of its own under the one key.
      const senders = servers.flatMap((store, s) => [0, 1].map((n) => ({ store, id: `${s}${n}` })));
      const results = await Promise.all(senders.map(({ store, id }) => settle(() => store.appendOnce('prj_race', [visit(`/race/${round}/${id}/a`), visit(`/race/${round}/${id}/b`)], batch(key, `f${id}`)))));
      const stored = results.filter((result) => result.outcome === 'stored');
      expect(stored, `round ${round}`).toHaveLength(1);
      const winner = senders[results.indexOf(stored[0]!)]!.id;
      for (const result of results) if (result.outcome === 'replayed') expect(result.record.fingerprint).toBe(`f${winner}`);
      const onDisk = await copies('aw_idem_race', 'prj_race');
      expect([...onDisk].filter(([path]) => path.startsWith(`/race/${round}/`)).sort()).toEqual([
        [`/race/${round}/${winner}/a`, 1],
        [`/race/${round}/${winner}/b`, 1],
      ].sort());
    }
  });

  it('stores each visit exactly once when ClickHouse is killed mid-INSERT and the batch is retried with its key', async () => {
    const database = 'aw_idem_kill';
    const store = await open(database, { requestTimeoutMs: 3000, insertSettleMs: 1500 });
    const outcomes: string[] = [];
    // The kill lands at once, or a little later: while ClickHouse writes, or after it has written.
    const delays = [0, 0, 20, 60, 150];
    for (let round = 0; round < delays.length; round++) {
      const paths = Array.from({ length: 4000 }, (_, i) => `/kill/${round}/${i}`);
      const key = `kill-${round}`;
      const first = store.appendOnce('prj_kill', paths.map((p) => visit(p, 200)), batch(key)).then(
        (result) => result.outcome,
        (error: unknown) => (error instanceof VisitStoreUnavailableError ? `503 ${error.outcome}` : `error ${String(error)}`),
      );
      // Kill ClickHouse once it is running the visits INSERT (its response not sent yet).
      const until = Date.now() + 10_000;
      while (Date.now() < until) {
        const running = await server.query(`SELECT count() FROM system.processes WHERE query LIKE 'INSERT INTO \`${database}\`.visits%'`).catch(() => '0');
        if (Number(running.trim()) > 0) break;
        await sleep(2);
      }
      await sleep(delays[round]!);
      await server.stop('SIGKILL');
      outcomes.push(await first);
      await server.start();
      // The client retries with the same key (and its batch enriched again) until it gets an answer.
      const retried = await settle(() => store.appendOnce('prj_kill', paths.map((p) => visit(p, 200)), batch(key)));
      expect(['stored', 'replayed']).toContain(retried.outcome);
      const onDisk = await copies(database, 'prj_kill');
      const wrong = paths.filter((path) => onDisk.get(path) !== 1);
      expect(wrong.slice(0, 5), `round ${round}: first answer ${outcomes[round]}, retry ${retried.outcome}`).toEqual([]);
    }
    // The first answers: stored (the INSERT finished before the kill) or an honest "unknown", never "not stored".
    for (const outcome of outcomes) expect(['stored', '503 unknown']).toContain(outcome);
  });

  it('holds a key claimed by a server that died before its INSERT until that INSERT cannot land, then stores the retry', async () => {
    const database = 'aw_idem_dead';
    const store = await open(database, { requestTimeoutMs: 1000, insertSettleMs: 1000 });
    // A claim as a server writes it just before it dies: 2 reserved ids, never inserted.
    const dead = `${Date.now().toString(16).padStart(12, '0')}0000deaddeaddead`;
    await server.query(`INSERT INTO ${database}.idempotency_claims (project_id, key, attempt, visits, state, fingerprint, response) VALUES ('prj_dead', 'held', '${dead}', 2, 'claimed', 'fd', '{"dead":true}')`);
    const started = Date.now();
    const first = await store.appendOnce('prj_dead', [visit('/dead/mine')], batch('held'));
    expect(first.outcome).toBe('in-progress');
    expect(first.outcome === 'in-progress' && first.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    const final = await settle(() => store.appendOnce('prj_dead', [visit('/dead/mine')], batch('held')));
    expect(final.outcome).toBe('stored');
    // Not before the dead claim's INSERT could no longer land: 5 s to send, 1 s to run, 1 s to settle, 2 s of rounding.
    expect(Date.now() - started).toBeGreaterThanOrEqual(6000);
    expect(Object.fromEntries(await copies(database, 'prj_dead'))).toEqual({ '/dead/mine': 1 });
  });

  it('replays at once a dead server\'s claim whose visits did land', async () => {
    const database = 'aw_idem_landed';
    const store = await open(database);
    const dead = `${Date.now().toString(16).padStart(12, '0')}0000feedfeedfeed`;
    await server.query(`INSERT INTO ${database}.idempotency_claims (project_id, key, attempt, visits, state, fingerprint, response) VALUES ('prj_landed', 'done', '${dead}', 1, 'claimed', 'fd', '{"landed":true}')`);
    await server.query(`INSERT INTO ${database}.visits (project_id, id, received, time, path, request_path, agent_id, agent_type, result, referral, visit) VALUES ('prj_landed', '${dead}', 1, 1, '/landed', '/landed', '', '', 'unknown_agent', '', '{}')`);
    expect(await store.appendOnce('prj_landed', [visit('/not-again')], batch('done'))).toEqual({ outcome: 'replayed', record: { fingerprint: 'fd', response: '{"landed":true}' } });
    expect(Object.fromEntries(await copies(database, 'prj_landed'))).toEqual({ '/landed': 1 });
  });

  it('drops whole days of claims once they are three days old, at open and hourly', async () => {
    const database = 'aw_idem_days';
    const store = await open(database);
    await store.appendOnce('prj_days', [visit('/days')], batch('d'));
    expect((await server.query(`SELECT count() FROM ${database}.idempotency_claims`)).trim()).toBe('1');
    // A server whose clock says two days later keeps them; four days later, they are gone.
    const later = async (days: number) => {
      const other = await openClickHouseVisitStore({ url: server.url, database, clock: { now: () => Date.now() + days * 86_400_000 } });
      await other.close();
      return (await server.query(`SELECT count() FROM ${database}.idempotency_claims`)).trim();
    };
    expect(await later(2)).toBe('1');
    expect(await later(4)).toBe('0');
    expect(Object.fromEntries(await copies(database, 'prj_days'))).toEqual({ '/days': 1 });
  });

  it('says "not stored" when ClickHouse refused the connection, and then lets the retry store at once', async () => {
    const database = 'aw_idem_down';
    const store = await open(database, { requestTimeoutMs: 2000 });
    await store.append('prj_down', [visit('/warm')]);
    await server.stop('SIGKILL');
    try {
      for (const call of [() => store.append('prj_down', [visit('/down/plain')]), () => store.appendOnce('prj_down', [visit('/down/keyed')], batch('down'))]) {
        // The first request may meet a pooled socket the kill reset (outcome unknown); a new connection is refused.
        let error: unknown;
        for (let i = 0; i < 3; i++) {
          error = await call().then(
            () => undefined,
            (e: unknown) => e,
          );
          if ((error as VisitStoreUnavailableError | undefined)?.outcome === 'not-stored') break;
        }
        expect(error).toBeInstanceOf(VisitStoreUnavailableError);
        expect(error).toMatchObject({ reason: 'unavailable', outcome: 'not-stored' });
      }
    } finally {
      await server.start();
    }
    // The keyed attempt never sent its visits and is known here to have stored nothing: no wait.
    expect((await store.appendOnce('prj_down', [visit('/down/keyed')], batch('down'))).outcome).toBe('stored');
    expect(Object.fromEntries(await copies(database, 'prj_down'))).toEqual({ '/warm': 1, '/down/keyed': 1 });
  });
  // From a crash and fault audit: ClickHouse 18.16 stores the whole rows of an INSERT whose body
  // ends early, and answers as for a full one. An INSERT cut between rows 4 and 5 of 10 left 4, and
  // the batch was answered 202 (its first id was there), then replayed as stored on the keyed retry.
  it('never answers a batch stored when its INSERT was cut between rows: outcome unknown, and the keyed retry stores every visit', async () => {
    const database = 'aw_cut';
    const proxy = await startClickHouseProxy(server.url);
    const store = await openClickHouseVisitStore({ url: proxy.url, database, retryAfterSeconds: 1, insertSettleMs: 1000 });
    opened.push(store);
    try {
      const paths = Array.from({ length: 10 }, (_, i) => `/cut/${i}`);
      proxy.cutNext((statement) => /^INSERT INTO \S*\.visits\b/i.test(statement), 4);
      const first = await store.appendOnce('prj_cut', paths.map((p) => visit(p)), batch('cut')).catch((error: unknown) => error);
      expect(first).toBeInstanceOf(VisitStoreUnavailableError);
      expect(first).toMatchObject({ outcome: 'unknown' });
      // ClickHouse keeps the cut INSERT's first rows (they may land after the store gave up on it).
      await expect.poll(async () => [...(await copies(database, 'prj_cut')).keys()].sort(), { timeout: 10_000, interval: 100 }).toEqual(paths.slice(0, 4).sort());
      const retried = await settle(() => store.appendOnce('prj_cut', paths.map((p) => visit(p)), batch('cut')));
      expect(retried.outcome).toBe('stored');
      // Every visit stored; the first rows of the cut INSERT twice (README: a known limit).
      const stored = await copies(database, 'prj_cut');
      for (const path of paths) expect(stored.get(path), path).toBe(paths.indexOf(path) < 4 ? 2 : 1);
    } finally {
      await proxy.close();
    }
  });
});
