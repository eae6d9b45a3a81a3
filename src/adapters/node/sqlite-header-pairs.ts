// Header (name, value) pairs interned in a table, so a stored visit keeps a small integer for the
// User-Agent, Accept or sec-ch-ua text most visits repeat instead of the text itself: a realistic
// visit shrinks from ~1.2 KB to ~0.3 KB, and the bytes written per visit are what SQLite's insert
// and WAL commit cost most for.
import type BetterSqlite3 from 'better-sqlite3';

/**
 * Headers as stored: a positive number is an interned pair's id; a negative number -id followed
 * by a value is the name of pair id (interned as (name, '')) with that value; a name followed by
 * its value is a pair kept inline. Header order is kept.
 */
export type EncodedHeaders = (number | string)[];

/** Options of `openHeaderPairs`. */
export interface HeaderPairsOptions {
  /** Pairs interned at most (default 100,000); past it new pairs stay inline. */
  readonly maxPairs?: number;
  /** Values longer than this stay inline (default 2,048 characters). */
  readonly maxValueLength?: number;
}

/** The interned pairs of one database: encode inside a write transaction, then report its outcome. */
export interface HeaderPairs {
  /** Encodes headers for a row written in the current transaction (may intern pairs in it). */
  encode(headers: Readonly<Record<string, string>>): EncodedHeaders;
  /** Headers of a stored row, in their stored order. */
  decode(encoded: readonly unknown[]): Record<string, string>;
  /** The transaction that encoded since the last call committed: its new pairs are in the table. */
  committed(): void;
  /** The transaction rolled back: its new pairs are not in the table; forget them. */
  rolledBack(): void;
  /** Pairs interned so far. */
  size(): number;
}

// Headers whose values are never interned (their names are): values that repeat only per visitor
// or per message would fill the table (and its bound) instead of the texts every visitor shares.
// A busy site sends two visits in one second, so the second-sighting rule alone would let dates,
// sizes and per-page validators in.
const NEVER_INTERNED = new Set([
  // The visitor's own address.
  'x-forwarded-for', 'x-real-ip', 'cf-connecting-ip', 'true-client-ip', 'forwarded', 'x-client-ip', 'fastly-client-ip', 'x-cluster-client-ip',
  // Per message: sizes, times, validators, cookies, signatures.
  'content-length', 'date', 'expires', 'last-modified', 'age', 'etag', 'if-none-match', 'if-modified-since', 'cookie', 'set-cookie',
  'signature', 'signature-input', 'content-digest', 'digest',
  // Per request: trace and request ids.
  'traceparent', 'tracestate', 'baggage', 'sentry-trace', 'x-request-id', 'request-id', 'x-correlation-id', 'x-amzn-trace-id',
  'x-cloud-trace-context', 'cf-ray', 'x-b3-traceid', 'x-b3-spanid', 'x-vercel-id', 'fly-request-id',
]);

// A pair is interned the second time it is seen (a one-off value of any other header is seen once
// and never fills the table). Sightings are remembered up to this many, then forgotten all at once.
const MAX_SIGHTINGS = 50_000;

/**
 * Opens the pair table of `db` (created by the visit schema migrations): loads its pairs into
 * memory. Pairs are never deleted, so an id keeps its meaning for every row and every process;
 * a pair another process added is read from the table when first met.
 * @throws {RangeError} for a bad option.
 * @example
 * const pairs = openHeaderPairs(db);
 * const stored = JSON.stringify(pairs.encode({ 'user-agent': ua })); // inside the transaction
 * pairs.committed(); // after it commits
 */
export function openHeaderPairs(db: BetterSqlite3.Database, options: HeaderPairsOptions = {}): HeaderPairs {
  const maxPairs = options.maxPairs ?? 100_000;
  const maxValueLength = options.maxValueLength ?? 2048;
  if (!Number.isSafeInteger(maxPairs) || maxPairs < 0) throw new RangeError(`maxPairs must be an integer >= 0, got ${String(maxPairs)}`);
  if (!Number.isSafeInteger(maxValueLength) || maxValueLength < 0) throw new RangeError(`maxValueLength must be an integer >= 0, got ${String(maxValueLength)}`);
  // A pair met twice is written with this upsert: if another process interned it meanwhile, its id is used.
  const intern = db.prepare<[string, string], { id: number }>(
    'INSERT INTO visit_header_pairs (name, value) VALUES (?, ?) ON CONFLICT (name, value) DO UPDATE SET name = excluded.name RETURNING id',
  );
  const byId = db.prepare<[number], { name: string; value: string }>('SELECT name, value FROM visit_header_pairs WHERE id = ?');
  // name -> value -> id, and id -> [name, value].
  const ids = new Map<string, Map<string, number>>();
  const pairs = new Map<number, readonly [string, string]>();
  let sightings = new Map<string, Set<string>>();
  let sighted = 0;
  // Pairs interned by the transaction in progress (name -> value -> id): known to this process
  // only once it commits.
  let fresh = new Map<string, Map<string, number>>();
  let freshCount = 0;

  const remember = (name: string, value: string, id: number) => {
    setPair(ids, name, value, id);
    pairs.set(id, [name, value]);
  };
  for (const row of db.prepare<[], { id: number; name: string; value: string }>('SELECT id, name, value FROM visit_header_pairs').all()) remember(row.name, row.value, row.id);

  /** The id of a pair met for the second time, interned now; undefined when it stays inline. */
  const secondSighting = (name: string, value: string): number | undefined => {
    const seen = sightings.get(name);
    if (seen === undefined || !seen.has(value)) {
      if (sighted >= MAX_SIGHTINGS) {
        sightings = new Map();
        sighted = 0;
      }
      let values = sightings.get(name);
      if (values === undefined) sightings.set(name, (values = new Set()));
      values.add(value);
      sighted++;
      return undefined;
    }
    const pending = fresh.get(name)?.get(value);
    if (pending !== undefined) return pending;
    if (pairs.size + freshCount >= maxPairs) return undefined;
    const id = intern.get(name, value)!.id;
    setPair(fresh, name, value, id);
    freshCount++;
    return id;
  };

  const forgetFresh = () => {
    fresh = new Map();
    freshCount = 0;
  };

  return {
    encode(headers) {
      const encoded: EncodedHeaders = [];
      for (const name in headers) {
        const value = headers[name]!;
        const values = ids.get(name);
        let id = values?.get(value);
        if (id === undefined && !NEVER_INTERNED.has(name) && value.length <= maxValueLength) id = secondSighting(name, value);
        if (id !== undefined) {
          encoded.push(id);
          continue;
        }
        // A value kept inline (an address, a request id) still has a name that repeats: its
        // number saves the name's bytes in every row (interned by the same second-sighting rule).
        const nameId = values?.get('') ?? (name.length <= maxValueLength ? secondSighting(name, '') : undefined);
        if (nameId === undefined) encoded.push(name, value);
        else encoded.push(-nameId, value);
      }
      return encoded;
    },
    decode(encoded) {
      const headers: Record<string, string> = {};
      for (let i = 0; i < encoded.length; i++) {
        const item = encoded[i];
        if (typeof item === 'number') {
          const id = Math.abs(item);
          let pair = pairs.get(id);
          if (pair === undefined) {
            const row = byId.get(id);
            // Never written without its pair (one transaction); a missing one means a damaged file.
            if (row === undefined) throw new RangeError(`stored visit refers to header pair ${id}, which the database lacks`);
            remember(row.name, row.value, id);
            pair = [row.name, row.value];
          }
          keep(headers, pair[0], item > 0 ? pair[1] : String(encoded[++i]));
        } else {
          keep(headers, String(item), String(encoded[++i]));
        }
      }
      return headers;
    },
    committed() {
      for (const [name, values] of fresh) for (const [value, id] of values) remember(name, value, id);
      forgetFresh();
    },
    rolledBack: forgetFresh,
    size: () => pairs.size,
  };
}

/** Sets name -> value -> id in a two-level map. */
/** Sets a header on a decoded row; "__proto__" is defined as an own field, as it was received (assigned, it would set the prototype and vanish). */
function keep(headers: Record<string, string>, name: string, value: string): void {
  if (name === '__proto__') Object.defineProperty(headers, name, { value, enumerable: true, writable: true, configurable: true });
  else headers[name] = value;
}

function setPair(map: Map<string, Map<string, number>>, name: string, value: string, id: number): void {
  let values = map.get(name);
  if (values === undefined) map.set(name, (values = new Map()));
  values.set(value, id);
}
