// Idempotency keys over one ClickHouse shared by several servers. ClickHouse 18.16 has no
// transactions, no unique keys, and deduplicates repeated INSERTs only in Replicated tables (which
// need ZooKeeper); a plain MergeTree keeps both copies. So a batch is stored through claims:
//
// 1. The attempt reserves ids for its visits (visit-id.ts) and inserts a claim row naming the first
//    id and the count, with the body's fingerprint and the answer to replay.
// 2. Once ClickHouse acknowledged the claim, it reads every claim of the key. Of two attempts that
//    both insert and then read, at least one sees the other (the later read follows both inserts),
//    so an attempt that proceeds only when no other attempt may still store is never doubled.
// 3. Another attempt whose first or last id is in `visits` stored its batch (a request's rows go in
//    one INSERT block and one monthly partition, so ClickHouse writes them as one part): its answer
//    is replayed. One that is known not to have stored (a `released` row) is ignored. One whose
//    ids are absent may still be in flight: it is waited for (409) until it can no longer land.
// 4. An attempt that proceeds sends its INSERT only within `sendWithinMs` of its claim (the queue
//    drops it after), and every INSERT is aborted `requestTimeoutMs` after it is sent; ClickHouse is
//    assumed to finish an INSERT it received within `settleMs` after that. Past those, absent ids
//    mean the attempt stored nothing, and a retry proceeds. The server that ran an attempt knows
//    when its INSERT ended, and decides its own attempts from that.
import { rowsInLists, sqlString } from './sql.js';
import { visitIdAt } from './visit-id.js';

/** One attempt at storing a key's batch, as its claim rows say. */
export interface ClaimAttempt {
  /** The first id the attempt reserved; it names the attempt. */
  readonly attempt: string;
  /** How many ids it reserved (its visits; at least one id is reserved even for none). */
  readonly visits: number;
  /** A `released` row says it stored nothing and never will. */
  readonly released: boolean;
  /** Seconds since its claim, by ClickHouse's clock. */
  readonly age: number;
  readonly fingerprint: string;
  readonly response: string;
}

/** A claim row as read back. */
export interface ClaimRow {
  readonly project_id: string;
  readonly key: string;
  readonly attempt: string;
  readonly visits: number | string;
  readonly state: string;
  readonly age: number | string;
  readonly fingerprint: string;
  readonly response: string;
}

/** The attempts of one key, from its claim rows. */
export function attemptsOf(rows: readonly ClaimRow[]): ClaimAttempt[] {
  const byAttempt = new Map<string, { attempt: string; visits: number; released: boolean; age: number; fingerprint: string; response: string }>();
  for (const row of rows) {
    let attempt = byAttempt.get(row.attempt);
    if (attempt === undefined) byAttempt.set(row.attempt, (attempt = { attempt: row.attempt, visits: 0, released: false, age: -Infinity, fingerprint: '', response: '' }));
    if (row.state === 'released') attempt.released = true;
    else {
      attempt.visits = Number(row.visits);
      attempt.age = Number(row.age);
      attempt.fingerprint = row.fingerprint;
      attempt.response = row.response;
    }
  }
  // A release seen without its claim (the claim fell out of the window first) names nothing to wait for.
  return [...byAttempt.values()].filter((attempt) => attempt.age !== -Infinity);
}

/**
 * The ids that tell whether an attempt stored its batch: its first and its last. Both must be
 * there: ClickHouse 18.16 stores the whole rows of an INSERT whose body was cut short (a broken
 * connection, an aborted request) and answers as for a full one, so an INSERT cut between two rows
 * leaves its first rows only, and such an attempt did not store its batch.
 */
export function probeIds(attempt: ClaimAttempt): string[] {
  return attempt.visits <= 1 ? [attempt.attempt] : [attempt.attempt, visitIdAt(attempt.attempt, attempt.visits - 1)];
}

/** What an attempt does next, given the other attempts of its key. */
export type ClaimDecision =
  /** Store: no other attempt stored the key or may still. For an attempt of no visits, its claim stored it. */
  | { readonly kind: 'proceed' }
  /** The key is stored by this (older) attempt: answer with its record, store nothing. */
  | { readonly kind: 'replay'; readonly attempt: ClaimAttempt }
  /** Look up these attempts' ids first (`probeIds`), then decide again. */
  | { readonly kind: 'probe'; readonly attempts: readonly ClaimAttempt[] }
  /**
   * Another attempt may still store the key: store nothing, ask the client to retry.
   * `onlyYounger`: every attempt waited for is younger than this one (by `oldestFirst`), so it
   * steps aside for this one as soon as it sees it; looking again shortly may find it released.
   */
  | { readonly kind: 'wait'; readonly retryAfterSeconds: number; readonly onlyYounger: boolean };

/** Oldest claim first; ties (one ClickHouse second) by attempt id, as every server orders them. */
function oldestFirst(a: ClaimAttempt, b: ClaimAttempt): number {
  return b.age - a.age || (a.attempt < b.attempt ? -1 : a.attempt > b.attempt ? 1 : 0);
}

/**
 * Decides for attempt `mine` (pure), after its own claim was acknowledged. `stored` holds what
 * probes found (attempt -> whether its ids are in `visits`); `settledFor(attempt)` says how many
 * seconds ago the attempt's INSERT can have been sent last (Infinity: never), and `settleSeconds`
 * how long after that it may still land. An attempt of no visits is complete once claimed.
 *
 * While another attempt's ids are absent but may still land, nothing is decided (wait). Otherwise
 * the oldest complete attempt holds the key (replayed, or `proceed` when it is `mine`); with none,
 * `mine` proceeds.
 */
export function decideClaim(
  attempts: readonly ClaimAttempt[],
  mine: string,
  stored: ReadonlyMap<string, boolean>,
  settledFor: (attempt: ClaimAttempt) => number,
  settleSeconds: number,
): ClaimDecision {
  const live = attempts.filter((attempt) => !attempt.released);
  const others = live.filter((attempt) => attempt.attempt !== mine);
  const unprobed = others.filter((attempt) => attempt.visits > 0 && !stored.has(attempt.attempt));
  if (unprobed.length > 0) return { kind: 'probe', attempts: unprobed };
  const complete = live
    .filter((attempt) => attempt.visits === 0 || (attempt.attempt !== mine && stored.get(attempt.attempt) === true))
    .sort(oldestFirst);
  const own = live.find((attempt) => attempt.attempt === mine);
  let wait = 0;
  let onlyYounger = own !== undefined;
  for (const attempt of others) {
    if (attempt.visits === 0 || stored.get(attempt.attempt) === true) continue;
    const left = settleSeconds - settledFor(attempt);
    if (left > 0) {
      wait = Math.max(wait, left);
      if (own !== undefined && oldestFirst(own, attempt) > 0) onlyYounger = false;
    }
  }
  const first = complete[0];
  if (first !== undefined && first.attempt !== mine) return { kind: 'replay', attempt: first };
  if (wait === 0) return { kind: 'proceed' };
  // Most waits end with the other attempt's INSERT, within a second or two: ask again soon.
  return { kind: 'wait', retryAfterSeconds: Math.max(1, Math.min(5, Math.ceil(wait))), onlyYounger };
}

/** A claim or release row as inserted (`at` is ClickHouse's, materialized at insert). */
export interface ClaimInsert {
  readonly project_id: string;
  readonly key: string;
  readonly attempt: string;
  readonly visits: number;
  readonly state: 'claimed' | 'released';
  readonly fingerprint: string;
  readonly response: string;
}

/** What the claims read and write with, and their timing. */
export interface ClaimsOptions {
  /** Runs a SELECT (`{db}` is the database). */
  rows<T>(query: string): Promise<T[]>;
  /** Inserts claim rows; resolves once acknowledged. */
  insert(rows: readonly ClaimInsert[]): Promise<void>;
  /** Milliseconds: when this server's attempts ended. */
  readonly clock: { now(): number };
  /** Window of a key, in seconds (IDEMPOTENCY_WINDOW_MS / 1000). */
  readonly windowSeconds: number;
  /** An attempt sends its INSERT within this long after its claim, or never. */
  readonly sendWithinMs: number;
  /** The bound on one visits INSERT (it is aborted then): its rows reach ClickHouse within it, or never. */
  readonly requestTimeoutMs: number;
  /** How long ClickHouse may still apply an INSERT after the client stopped waiting for it. */
  readonly settleMs: number;
}

/** The claims of one store; see `createClaims`. */
export interface Claims {
  /** Inserts the claim of an attempt; resolves once ClickHouse acknowledged it. */
  claim(row: Omit<ClaimInsert, 'state'>): Promise<void>;
  /**
   * Reads the key's claims and decides for `attempt` (probing other attempts' ids as needed). While
   * it waits only for younger attempts, it reads them again every YIELD_PAUSE_MS until `until` (ms).
   */
  decide(projectId: string, key: string, attempt: string, until?: number): Promise<Exclude<ClaimDecision, { kind: 'probe' }>>;
  /** Whether an attempt's ids are in `visits` (it stored its batch). */
  landed(projectId: string, attempt: ClaimAttempt): Promise<boolean>;
  /** Records that this server's attempt stored nothing and never will: in memory, and as a row (best effort). */
  release(row: Omit<ClaimInsert, 'state' | 'fingerprint' | 'response'>): Promise<void>;
  /** Records that this server's attempt sent its INSERT and stopped waiting for it now. */
  ended(attempt: string): void;
}

// How long an attempt that waits only for younger ones pauses before reading the claims again.
const YIELD_PAUSE_MS = 100;

// This server's knowledge of its attempts, kept well past any wait it can shorten.
const LOCAL_KNOWLEDGE_MS = 10 * 60_000;

/**
 * Creates the claim operations over the `idempotency_claims` table.
 * @example
 * const claims = createClaims({ rows, insert, clock, windowSeconds: 86_400, sendWithinMs: 5000, requestTimeoutMs: 10_000, settleMs: 30_000 });
 */
export function createClaims(options: ClaimsOptions): Claims {
  const { rows, insert, clock } = options;
  const settleSeconds = options.settleMs / 1000;
  // Seconds from a claim to the last moment its INSERT's rows can reach ClickHouse; 2 more for the
  // whole seconds of `at` and of the age read against it.
  const sendSeconds = (options.sendWithinMs + options.requestTimeoutMs) / 1000 + 2;
  // attempt -> when its INSERT was given up (ms, this server's clock; Infinity: never sent), and
  // when that was learnt, oldest first.
  const local = new Map<string, { readonly ended: number; readonly learnt: number }>();
  const remember = (attempt: string, ended: number) => {
    const now = clock.now();
    for (const [id, known] of local) {
      if (now - known.learnt < LOCAL_KNOWLEDGE_MS) break;
      local.delete(id);
    }
    local.set(attempt, { ended, learnt: now });
  };
  const settledFor = (attempt: ClaimAttempt): number => {
    const known = local.get(attempt.attempt);
    if (known === undefined) return attempt.age - sendSeconds;
    return known.ended === Infinity ? Infinity : (clock.now() - known.ended) / 1000;
  };
  const landed = async (projectId: string, attempts: readonly ClaimAttempt[]): Promise<Set<string>> => {
    const ids = attempts.flatMap(probeIds);
    const found = await rowsInLists<{ id: string }>(rows, ids.map(sqlString), (list) => `SELECT id FROM {db}.visits WHERE project_id = ${sqlString(projectId)} AND id IN (${list})`);
    const present = new Set(found.map((row) => row.id));
    return new Set(attempts.filter((attempt) => probeIds(attempt).every((id) => present.has(id))).map((attempt) => attempt.attempt));
  };

  // Claims acknowledged by one INSERT are read together: reads asked for in the same turn of the
  // event loop wait for the next and go in as few SELECTs as max_query_size allows (every keyed
  // request of a burst gets here in one turn, and a key may be 255 characters).
  let reads: { readonly projectId: string; readonly key: string; readonly resolve: (rows: ClaimRow[]) => void; readonly reject: (error: unknown) => void }[] = [];
  const readClaims = async () => {
    const batch = reads;
    reads = [];
    try {
      const pairs = [...new Set(batch.map(({ projectId, key }) => `(${sqlString(projectId)}, ${sqlString(key)})`))];
      const found = await rowsInLists<ClaimRow>(
        rows,
        pairs,
        (list) => `SELECT project_id, key, attempt, visits, state, toInt64(now()) - toInt64(at) AS age, fingerprint, response FROM {db}.idempotency_claims
         WHERE (project_id, key) IN (${list}) AND at > now() - ${Math.floor(options.windowSeconds)}`,
      );
      for (const read of batch) read.resolve(found.filter((row) => row.project_id === read.projectId && row.key === read.key));
    } catch (error) {
      for (const read of batch) read.reject(error);
    }
  };
  const claimsOf = (projectId: string, key: string) =>
    new Promise<ClaimRow[]>((resolve, reject) => {
      if (reads.length === 0) setImmediate(() => void readClaims());
      reads.push({ projectId, key, resolve, reject });
    });

  return {
    claim: (row) => insert([{ ...row, state: 'claimed' }]),
    async decide(projectId, key, attempt, until = 0) {
      for (;;) {
        const attempts = attemptsOf(await claimsOf(projectId, key));
        const stored = new Map<string, boolean>();
        let decision = decideClaim(attempts, attempt, stored, settledFor, settleSeconds);
        while (decision.kind === 'probe') {
          const present = await landed(projectId, decision.attempts);
          for (const probed of decision.attempts) stored.set(probed.attempt, present.has(probed.attempt));
          decision = decideClaim(attempts, attempt, stored, settledFor, settleSeconds);
        }
        // Two attempts that claimed together each wait for the other; were both sent away, clients
        // retrying together would meet again, and again. The younger steps aside at once (it waits
        // for an older one); the older looks again and, once the younger's release shows, stores.
        if (decision.kind !== 'wait' || !decision.onlyYounger || clock.now() + YIELD_PAUSE_MS > until) return decision;
        await new Promise((resolve) => setTimeout(resolve, YIELD_PAUSE_MS));
      }
    },
    landed: async (projectId, attempt) => (await landed(projectId, [attempt])).size > 0,
    async release(row) {
      remember(row.attempt, Infinity);
      await insert([{ ...row, state: 'released', fingerprint: '', response: '' }]).catch(() => undefined);
    },
    ended(attempt) {
      remember(attempt, clock.now());
    },
  };
}
