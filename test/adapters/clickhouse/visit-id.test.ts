// Visit ids of the ClickHouse store: fixed-width hex whose string order is issue order, unique
// across generators (servers) without coordination, whatever the clock does.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createVisitIdGenerator, isVisitId, visitIdAt, visitIdFloor, visitIdTime } from '../../../src/adapters/clickhouse/visit-id.js';
import { sqlLists, sqlString, sqlUInt } from '../../../src/adapters/clickhouse/sql.js';

describe('visit ids', () => {
  it('strictly increase from one generator even when its clock stands still or steps back', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 2_000 }), { minLength: 2, maxLength: 200 }), (steps) => {
        let now = 1_795_000_000_000;
        const next = createVisitIdGenerator({ now: () => now });
        const ids = steps.map((step, i) => {
          now += i % 3 === 0 ? -step : step % 2; // back, still, or one ms ahead
          return next();
        });
        for (const id of ids) expect(isVisitId(id)).toBe(true);
        for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('borrows the next millisecond after 65,536 ids in one, never repeating', () => {
    const next = createVisitIdGenerator({ now: () => 1_000 });
    const ids = Array.from({ length: 70_000 }, next);
    expect(new Set(ids).size).toBe(70_000);
    expect(visitIdTime(ids[65_535]!)).toBe(1_000);
    expect(visitIdTime(ids[65_536]!)).toBe(1_001);
    expect([...ids].sort()).toEqual(ids);
  });

  it('differ between two generators on the same clock, and interleave by time', () => {
    let now = 5_000;
    const a = createVisitIdGenerator({ now: () => now });
    const b = createVisitIdGenerator({ now: () => now });
    const first = [a(), b()];
    now = 5_001;
    const second = [b(), a()];
    expect(new Set([...first, ...second]).size).toBe(4);
    expect(Math.max(...first.map(visitIdTime))).toBeLessThan(Math.min(...second.map(visitIdTime)));
    expect(second.every((id) => first.every((earlier) => id > earlier))).toBe(true);
  });

  it('have a floor per millisecond that every later id compares above', () => {
    const next = createVisitIdGenerator({ now: () => 123_456 });
    const id = next();
    expect(id >= visitIdFloor(123_456)).toBe(true);
    expect(id < visitIdFloor(123_457)).toBe(true);
    expect(isVisitId("0' OR '1'='1")).toBe(false);
  });
});

describe('SQL literals', () => {
  it('escape quotes, backslashes and control characters', () => {
    expect(sqlString("it's")).toBe("'it\\'s'");
    expect(sqlString('a\\b')).toBe("'a\\\\b'");
    expect(sqlString('\n\r\t\u0000\u001f')).toBe("'\\n\\r\\t\\x00\\x1f'");
  });

  it('refuse what is not a non-negative safe integer', () => {
    expect(sqlUInt(42)).toBe('42');
    for (const bad of [-1, 1.5, Number.NaN, Infinity, 2 ** 53]) expect(() => sqlUInt(bad)).toThrow(RangeError);
  });

  it('go in lists of at most the byte budget each, in order, none lost (a longer literal alone)', () => {
    expect(sqlLists([])).toEqual([]);
    expect(sqlLists(["'a'", "'b'", "'c'"], 10)).toEqual(["'a', 'b'", "'c'"]);
    expect(sqlLists(["'ü'", "'toolong'", "'b'"], 6)).toEqual(["'ü'", "'toolong'", "'b'"]);
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 30 }).map(sqlString), { maxLength: 60 }), fc.integer({ min: 1, max: 200 }), (literals, budget) => {
        const lists = sqlLists(literals, budget);
        expect(lists.join(', ')).toBe(literals.join(', '));
        for (const list of lists) if (list.includes("', '")) expect(Buffer.byteLength(list)).toBeLessThanOrEqual(budget);
      }),
      { numRuns: 200 },
    );
  });
});

describe('reserved id ranges', () => {
  it('name consecutive ids that no later id repeats, across millisecond borrows', () => {
    fc.assert(
      // Counts around 65,536 make a range borrow the next millisecond or two.
      fc.property(fc.array(fc.tuple(fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 65_000, max: 140_000 })), fc.integer({ min: -3, max: 3 })), { minLength: 1, maxLength: 4 }), (steps) => {
        let now = 1_795_000_000_000;
        const generate = createVisitIdGenerator({ now: () => now });
        const issued: string[] = [generate()];
        for (const [count, step] of steps) {
          now += step;
          const first = generate.reserve(count);
          for (let i = 0; i < count; i++) issued.push(visitIdAt(first, i));
          issued.push(generate());
        }
        const malformed = issued.filter((id) => !isVisitId(id));
        const outOfOrder = issued.filter((id, i) => i > 0 && !(id > issued[i - 1]!));
        expect({ malformed, outOfOrder }).toEqual({ malformed: [], outOfOrder: [] });
      }),
      { numRuns: 20 },
    );
  });

  it('start no earlier than atLeast, and carry the server part of the first id', () => {
    const generate = createVisitIdGenerator({ now: () => 10 });
    const first = generate.reserve(3, 5_000);
    expect(visitIdTime(first)).toBe(5_000);
    expect(visitIdAt(first, 2).slice(16)).toBe(first.slice(16));
    expect(visitIdAt(first, 2)).toBe(`${(5000).toString(16).padStart(12, '0')}0002${first.slice(16)}`);
    expect(() => generate.reserve(0)).toThrow(RangeError);
  });
});
