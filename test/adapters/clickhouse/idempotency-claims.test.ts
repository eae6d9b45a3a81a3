// The claim decision of the ClickHouse idempotency keys (idempotency-claims.ts), on its own: which
// attempt holds a key, when another attempt must be waited for, and what its probes look up.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attemptsOf, createClaims, decideClaim, probeIds, type ClaimAttempt, type ClaimInsert, type ClaimRow } from '../../../src/adapters/clickhouse/idempotency-claims.js';
import { visitIdAt } from '../../../src/adapters/clickhouse/visit-id.js';

const id = (ms: number) => `${ms.toString(16).padStart(12, '0')}0000abcdefabcdef`;
const attempt = (ms: number, over: Partial<ClaimAttempt> = {}): ClaimAttempt => ({ attempt: id(ms), visits: 3, released: false, age: 0, fingerprint: `f${ms}`, response: `r${ms}`, ...over });
const SETTLE = 30;
// As a server without knowledge of the attempt judges it: its INSERT can land until 17 s after its claim.
const byAge = (a: ClaimAttempt) => a.age - 17;

describe('decideClaim', () => {
  it('proceeds when its claim is the only one, or every other attempt was released', () => {
    const mine = attempt(1);
    expect(decideClaim([mine], mine.attempt, new Map(), byAge, SETTLE)).toEqual({ kind: 'proceed' });
    expect(decideClaim([mine, attempt(2, { released: true })], mine.attempt, new Map(), byAge, SETTLE)).toEqual({ kind: 'proceed' });
  });

  it('probes other attempts with visits before deciding, then replays one that stored', () => {
    const mine = attempt(5);
    const other = attempt(1, { age: 40 });
    expect(decideClaim([mine, other], mine.attempt, new Map(), byAge, SETTLE)).toEqual({ kind: 'probe', attempts: [other] });
    expect(decideClaim([mine, other], mine.attempt, new Map([[other.attempt, true]]), byAge, SETTLE)).toEqual({ kind: 'replay', attempt: other });
  });

  it('waits for an absent attempt that may still land, and proceeds once it cannot', () => {
    const mine = attempt(5);
    const young = attempt(1, { age: 3 });
    const absent = new Map([[young.attempt, false]]);
    const decision = decideClaim([mine, young], mine.attempt, absent, byAge, SETTLE);
    expect(decision.kind).toBe('wait');
    expect(decision.kind === 'wait' && decision.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(decision.kind === 'wait' && decision.retryAfterSeconds).toBeLessThanOrEqual(5);
    const old = { ...young, age: 17 + SETTLE };
    expect(decideClaim([mine, old], mine.attempt, absent, byAge, SETTLE)).toEqual({ kind: 'proceed' });
    // This server ended that attempt's INSERT long ago, or never sent it: decided from that.
    expect(decideClaim([mine, young], mine.attempt, absent, () => SETTLE, SETTLE)).toEqual({ kind: 'proceed' });
    expect(decideClaim([mine, young], mine.attempt, absent, () => Infinity, SETTLE)).toEqual({ kind: 'proceed' });
  });

  it('takes the claim of a batch without visits as complete: the oldest complete attempt holds the key', () => {
    const empty = attempt(1, { visits: 0, age: 9 });
    const mine = attempt(5);
    expect(decideClaim([mine, empty], mine.attempt, new Map(), byAge, SETTLE)).toEqual({ kind: 'replay', attempt: empty });
    const mineEmpty = attempt(0, { visits: 0, age: 10 });
    expect(decideClaim([mineEmpty, empty], mineEmpty.attempt, new Map(), byAge, SETTLE)).toEqual({ kind: 'proceed' });
    expect(decideClaim([mineEmpty, empty], empty.attempt, new Map(), byAge, SETTLE)).toEqual({ kind: 'replay', attempt: mineEmpty });
  });

  it('never lets two fresh attempts that see each other both store, with or without visits', () => {
    // An attempt decides right after its own claim, so both are a few seconds old at most; neither
    // has stored yet, so the probes find both absent. (When one read misses the other's claim, the
    // other read sees it: this is the case where both decide with both claims.)
    fc.assert(
      fc.property(fc.nat(2), fc.nat(2), fc.nat(3), fc.nat(3), (ageA, ageB, visitsA, visitsB) => {
        const a = attempt(1, { age: ageA, visits: visitsA });
        const b = attempt(2, { age: ageB, visits: visitsB });
        const absent = new Map([
          [a.attempt, false],
          [b.attempt, false],
        ]);
        const stores = [a, b].filter((mine) => decideClaim([a, b], mine.attempt, absent, byAge, SETTLE).kind === 'proceed');
        expect(stores.length).toBeLessThanOrEqual(1);
      }),
      { numRuns: 200 },
    );
  });
});

describe('two attempts that claim together', () => {
  it('says which waits only for younger ones: the older of the two', () => {
    const older = attempt(1, { age: 1 });
    const younger = attempt(2, { age: 1 });
    const absent = new Map([
      [older.attempt, false],
      [younger.attempt, false],
    ]);
    expect(decideClaim([older, younger], older.attempt, absent, byAge, SETTLE)).toMatchObject({ kind: 'wait', onlyYounger: true });
    expect(decideClaim([older, younger], younger.attempt, absent, byAge, SETTLE)).toMatchObject({ kind: 'wait', onlyYounger: false });
  });

  it('end with one stored and the other sent away, not both sent away (clients retrying together would meet again)', async () => {
    // ClickHouse as the claims see it: claim rows in a table, no visit stored yet.
    const table: ClaimRow[] = [];
    const rows = async <T,>(query: string): Promise<T[]> => (query.includes('idempotency_claims') ? (table.slice() as T[]) : []);
    const insert = async (inserted: readonly ClaimInsert[]) => {
      for (const row of inserted) table.push({ ...row, age: 1 });
    };
    const server = () => createClaims({ rows, insert, clock: { now: () => Date.now() }, windowSeconds: 86_400, sendWithinMs: 5000, requestTimeoutMs: 10_000, settleMs: 30_000 });
    const [a, b] = [server(), server()];
    const claimOf = (ms: number) => ({ project_id: 'p', key: 'k', attempt: id(ms), visits: 3, fingerprint: 'f', response: 'r' });
    await Promise.all([a.claim(claimOf(1)), b.claim(claimOf(2))]);
    const until = Date.now() + 2000;
    const [first, second] = await Promise.all([
      a.decide('p', 'k', id(1), until),
      b.decide('p', 'k', id(2), until).then(async (decision) => {
        // The store releases an attempt sent away, as appendOnce does.
        if (decision.kind === 'wait') await b.release({ project_id: 'p', key: 'k', attempt: id(2), visits: 3 });
        return decision;
      }),
    ]);
    expect(second).toMatchObject({ kind: 'wait', onlyYounger: false });
    expect(first).toEqual({ kind: 'proceed' });
    // Without time to look again, the older one is sent away too, as before.
    table.length = 0;
    const [c, d] = [server(), server()];
    await Promise.all([c.claim(claimOf(3)), d.claim(claimOf(4))]);
    expect(await c.decide('p', 'k', id(3))).toMatchObject({ kind: 'wait', onlyYounger: true });
  });
});

describe('claim rows', () => {
  it('group into attempts: a release marks its attempt, a release without its claim names none', () => {
    const row = (attemptId: string, state: string, age: number) => ({ project_id: 'p', key: 'k', attempt: attemptId, visits: '2', state, age: String(age), fingerprint: state === 'claimed' ? 'f' : '', response: state === 'claimed' ? 'r' : '' });
    const attempts = attemptsOf([row('a', 'claimed', 5), row('a', 'released', 4), row('b', 'claimed', 3), row('c', 'released', 1)]);
    expect(attempts).toEqual([
      { attempt: 'a', visits: 2, released: true, age: 5, fingerprint: 'f', response: 'r' },
      { attempt: 'b', visits: 2, released: false, age: 3, fingerprint: 'f', response: 'r' },
    ]);
  });

  it('probe the first and the last id an attempt reserved', () => {
    const first = id(7);
    expect(probeIds(attempt(7, { visits: 1 }))).toEqual([first]);
    expect(probeIds(attempt(7, { visits: 70_000 }))).toEqual([first, visitIdAt(first, 69_999)]);
  });
});
