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

/** Issues visit ids; see `createVisitIdGenerator`. */
export interface VisitIdGenerator {
  /** The next id, no earlier than `atLeast` (ms). */
  (atLeast?: number): string;
  /**
   * Reserves `count` (>= 1) consecutive ids, no earlier than `atLeast`, and returns the first:
   * `visitIdAt(first, i)` is the i-th. Anyone holding the first id and the count can name them
   * all, as the idempotency claims of another server do.
   */
  reserve(count: number, atLeast?: number): string;
}

const SEQUENCES = 0x10000;

function formatId(ms: number, sequence: number, server: string): string {
  return ms.toString(16).padStart(12, '0') + sequence.toString(16).padStart(4, '0') + server;
}

/** The id `offset` places after `first` in its server's sequence (65,536 per millisecond). */
export function visitIdAt(first: string, offset: number): string {
  const sequence = parseInt(first.slice(12, 16), 16) + offset;
  return formatId(visitIdTime(first) + Math.floor(sequence / SEQUENCES), sequence % SEQUENCES, first.slice(16));
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
export function createVisitIdGenerator(clock: { now(): number }): VisitIdGenerator {
  const server = [...crypto.getRandomValues(new Uint8Array(6))].map((b) => b.toString(16).padStart(2, '0')).join('');
  let lastMs = 0;
  let sequence = 0;
  const next = (atLeast = 0) => {
    const now = Math.floor(Math.max(clock.now(), Number.isFinite(atLeast) ? atLeast : 0));
    if (now > lastMs) {
      lastMs = now;
      sequence = 0;
    } else if (++sequence >= SEQUENCES) {
      // 65,536 ids in one millisecond: borrow the next millisecond rather than repeat an id.
      lastMs++;
      sequence = 0;
    }
    return formatId(lastMs, sequence, server);
  };
  return Object.assign(next, {
    reserve(count: number, atLeast = 0): string {
      if (!Number.isSafeInteger(count) || count < 1) throw new RangeError(`count must be an integer >= 1, got ${String(count)}`);
      const first = next(atLeast);
      // The rest of the range is skipped: the next id issued follows the last reserved one.
      const last = sequence + count - 1;
      lastMs += Math.floor(last / SEQUENCES);
      sequence = last % SEQUENCES;
      return first;
    },
  });
}
