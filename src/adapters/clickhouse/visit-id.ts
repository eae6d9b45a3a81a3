// Visit ids for a store shared by several servers: time-ordered, unique without coordination.

/** Hex characters of an id: 12 of milliseconds, 4 of sequence within the millisecond, 12 of server. */
export const VISIT_ID_LENGTH = 28;
const VISIT_ID = /^[0-9a-f]{28}$/;

/** Whether a string has the shape of a visit id from this store. */
export function isVisitId(value: string): boolean {
  return VISIT_ID.test(value);
}

/** The smallest id at or after a time: every id issued at `ms` or later compares >= it. */
export function visitIdFloor(ms: number): string {
  return Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0') + '0'.repeat(16);
}

/** The milliseconds an id was issued at. */
export function visitIdTime(id: string): number {
  return parseInt(id.slice(0, 12), 16);
}

/**
 * Creates an id generator; `atLeast` (ms) makes an id no earlier than that time. Ids are
 * fixed-width lowercase hex, so string order is issue order:
 * milliseconds, then a sequence within the millisecond (so one server's ids strictly increase even
 * when its clock stands still or steps back), then 48 random bits naming this server, so two
 * servers never issue the same id and their ids interleave by time.
 * @example
 * const next = createVisitIdGenerator({ now: () => Date.now() });
 * next() < next(); // true
 */
export function createVisitIdGenerator(clock: { now(): number }): (atLeast?: number) => string {
  const server = [...crypto.getRandomValues(new Uint8Array(6))].map((b) => b.toString(16).padStart(2, '0')).join('');
  let lastMs = 0;
  let sequence = 0;
  return (atLeast = 0) => {
    const now = Math.floor(Math.max(clock.now(), Number.isFinite(atLeast) ? atLeast : 0));
    if (now > lastMs) {
      lastMs = now;
      sequence = 0;
    } else if (++sequence > 0xffff) {
      // 65,536 ids in one millisecond: borrow the next millisecond rather than repeat an id.
      lastMs++;
      sequence = 0;
    }
    return lastMs.toString(16).padStart(12, '0') + sequence.toString(16).padStart(4, '0') + server;
  };
}
