// Interned header pairs: what goes in comes back in order, pairs are interned on their second
// sighting only, per-visitor and per-message values never (their names are), a rolled-back
// transaction leaves no id behind, and two openers of one file (two processes) agree on every id.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { openHeaderPairs, type EncodedHeaders, type HeaderPairs } from '../../../src/adapters/node/sqlite-header-pairs.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function openDatabase(path?: string): { db: Database.Database; path: string } {
  let file = path;
  if (file === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'agentwarden-pairs-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    file = join(dir, 'pairs.db');
  }
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE IF NOT EXISTS visit_header_pairs (id INTEGER PRIMARY KEY, name TEXT NOT NULL, value TEXT NOT NULL, UNIQUE (name, value))');
  cleanups.push(() => db.close());
  return { db, path: file };
}

/** Encodes in a committed transaction, as the visit store does. */
function encodeCommitted(db: Database.Database, pairs: HeaderPairs, headers: Record<string, string>): EncodedHeaders {
  const encoded = db.transaction(() => pairs.encode(headers)).immediate();
  pairs.committed();
  return encoded;
}

const CHROME = {
  host: 'www.example.com',
  'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'x-forwarded-for': '203.0.113.9, 162.158.1.2',
  'cf-connecting-ip': '203.0.113.9',
  'accept-language': 'en-US,en;q=0.9',
};

describe('openHeaderPairs', () => {
  it('round-trips headers in order, interning a pair the second time it is seen', () => {
    const { db } = openDatabase();
    const pairs = openHeaderPairs(db);
    const first = encodeCommitted(db, pairs, CHROME);
    expect(first.every((item) => typeof item === 'string')).toBe(true);
    expect(pairs.size()).toBe(0);
    const second = encodeCommitted(db, pairs, CHROME);
    // Everything but the two address headers became an id; those keep their values inline, after
    // the number of their name.
    expect(second).toEqual([expect.any(Number), expect.any(Number), expect.any(Number), expect.any(Number), '203.0.113.9, 162.158.1.2', expect.any(Number), '203.0.113.9', expect.any(Number)]);
    expect(second.filter((item) => typeof item === 'number' && item < 0)).toHaveLength(2);
    expect(pairs.size()).toBe(6);
    const third = encodeCommitted(db, pairs, { ...CHROME, 'x-forwarded-for': '198.51.100.7' });
    expect(JSON.stringify(third).length).toBeLessThan(JSON.stringify(CHROME).length / 3);
    for (const encoded of [first, second]) {
      const decoded = pairs.decode(encoded);
      expect(decoded).toEqual(CHROME);
      expect(Object.keys(decoded)).toEqual(Object.keys(CHROME));
    }
    expect(pairs.decode(third)['x-forwarded-for']).toBe('198.51.100.7');
  });

  it('never interns the visitor-address headers, however often they repeat', () => {
    const { db } = openDatabase();
    const pairs = openHeaderPairs(db);
    const headers = { 'x-forwarded-for': '203.0.113.9', 'x-real-ip': '203.0.113.9', forwarded: 'for=203.0.113.9', 'true-client-ip': '203.0.113.9' };
    for (let i = 0; i < 5; i++) encodeCommitted(db, pairs, headers);
    // Only their names, each once, with an empty value.
    expect(db.prepare('SELECT name, value FROM visit_header_pairs ORDER BY id').raw().all()).toEqual(Object.keys(headers).map((name) => [name, '']));
    const encoded = encodeCommitted(db, pairs, { ...headers, 'x-real-ip': '198.51.100.4' });
    expect(encoded.filter((item) => typeof item === 'string')).toEqual(['203.0.113.9', '198.51.100.4', 'for=203.0.113.9', '203.0.113.9']);
    expect(pairs.decode(encoded)).toEqual({ ...headers, 'x-real-ip': '198.51.100.4' });
    // A header sent with an empty value is that very pair, and reads back as sent.
    const empty = encodeCommitted(db, pairs, { 'x-real-ip': '' });
    expect(empty).toEqual([expect.any(Number)]);
    expect(pairs.decode(empty)).toEqual({ 'x-real-ip': '' });
  });

  it('never interns per-message values (sizes, dates, validators, signatures, trace ids), even when two visits share one', () => {
    const { db } = openDatabase();
    const pairs = openHeaderPairs(db);
    const response = { 'content-type': 'text/html', 'content-length': '1450', date: 'Sun, 22 Nov 2026 05:30:00 GMT', etag: '"abc"', 'cf-ray': '8e1f-FRA', signature: 'sig1=:AAAA:' };
    for (let i = 0; i < 3; i++) encodeCommitted(db, pairs, response);
    const interned = db.prepare("SELECT name FROM visit_header_pairs WHERE value != '' ORDER BY id").pluck().all();
    expect(interned).toEqual(['content-type']);
    const encoded = encodeCommitted(db, pairs, response);
    expect(encoded.filter((item) => typeof item === 'string')).toEqual(['1450', 'Sun, 22 Nov 2026 05:30:00 GMT', '"abc"', '8e1f-FRA', 'sig1=:AAAA:']);
    expect(pairs.decode(encoded)).toEqual(response);
  });

  it('forgets pairs interned by a transaction that rolled back, and never hands out their ids', () => {
    const { db, path } = openDatabase();
    const pairs = openHeaderPairs(db);
    encodeCommitted(db, pairs, CHROME);
    const failing = db.transaction(() => {
      pairs.encode(CHROME);
      throw new Error('disk full');
    });
    expect(() => failing.immediate()).toThrow('disk full');
    pairs.rolledBack();
    expect(pairs.size()).toBe(0);
    expect(db.prepare('SELECT count(*) FROM visit_header_pairs').pluck().get()).toBe(0);
    // The next transaction interns them again, and another reader of the file decodes the row.
    const encoded = encodeCommitted(db, pairs, CHROME);
    expect(encoded.some((item) => typeof item === 'number')).toBe(true);
    const other = openHeaderPairs(openDatabase(path).db);
    expect(other.decode(encoded)).toEqual(CHROME);
  });

  it('agrees with another opener of the same file on every id, reading pairs it has not seen from the table', () => {
    const { db, path } = openDatabase();
    const a = openHeaderPairs(db);
    const { db: dbB } = openDatabase(path);
    const b = openHeaderPairs(dbB);
    encodeCommitted(db, a, CHROME);
    const fromA = encodeCommitted(db, a, CHROME);
    // B met the pairs too, twice: its upsert finds A's rows and uses their ids.
    encodeCommitted(dbB, b, CHROME);
    const fromB = encodeCommitted(dbB, b, CHROME);
    expect(fromB).toEqual(fromA);
    expect(db.prepare('SELECT count(*) FROM visit_header_pairs').pluck().get()).toBe(6);
    // A third opener, started before anything was interned, decodes through the table.
    const c = openHeaderPairs(openDatabase(path).db);
    expect(c.decode(fromA)).toEqual(CHROME);
  });

  it('decodes whatever it encoded, in order, through rollbacks, bounds and a second opener (property)', () => {
    // Few names and values, so pairs and names repeat and get interned; tricky names among them.
    const name = fc.constantFrom('user-agent', 'accept', 'x-forwarded-for', 'date', 'content-length', 'constructor', 'toString', '__proto__', '5', '-1', 'x', '');
    const value = fc.oneof(fc.constantFrom('', 'a', 'text/html', '203.0.113.9', '-1', '5'), fc.string({ unit: 'binary', maxLength: 12 }));
    const step = fc.record({ headers: fc.dictionary(name, value, { maxKeys: 6 }), rollBack: fc.boolean() });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 25 }), fc.integer({ min: 0, max: 8 }), (steps, maxPairs) => {
        const { db, path } = openDatabase();
        const pairs = openHeaderPairs(db, { maxPairs, maxValueLength: 8 });
        const stored: { headers: Record<string, string>; text: string }[] = [];
        for (const { headers, rollBack } of steps) {
          if (rollBack) {
            expect(() => db.transaction(() => {
              pairs.encode(headers);
              throw new Error('rolled back');
            }).immediate()).toThrow('rolled back');
            pairs.rolledBack();
          } else {
            stored.push({ headers, text: JSON.stringify(encodeCommitted(db, pairs, headers)) });
          }
        }
        expect(pairs.size()).toBeLessThanOrEqual(maxPairs);
        const other = openHeaderPairs(openDatabase(path).db);
        for (const { headers, text } of stored) {
          for (const reader of [pairs, other]) {
            const decoded = reader.decode(JSON.parse(text) as unknown[]);
            expect(decoded).toEqual(headers);
            expect(Object.keys(decoded)).toEqual(Object.keys(headers));
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it('keeps pairs inline past maxPairs, values past maxValueLength, and any text exactly', () => {
    const { db } = openDatabase();
    const pairs = openHeaderPairs(db, { maxPairs: 2, maxValueLength: 10 });
    const headers = { a: '1', b: '2', c: '3', long: 'x'.repeat(11), constructor: 'ctl\u0000\u2028"\\ ü 🙂', 'toString': '' };
    encodeCommitted(db, pairs, headers);
    const encoded = encodeCommitted(db, pairs, headers);
    expect(pairs.size()).toBe(2);
    expect(encoded.filter((item) => typeof item === 'number')).toHaveLength(2);
    expect(pairs.decode(JSON.parse(JSON.stringify(encoded)) as unknown[])).toEqual(headers);
  });

  it('refuses a damaged reference and bad options by name', () => {
    const { db } = openDatabase();
    const pairs = openHeaderPairs(db);
    expect(() => pairs.decode([42])).toThrow(/header pair 42/);
    expect(() => openHeaderPairs(db, { maxPairs: -1 })).toThrow(/maxPairs/);
    expect(() => openHeaderPairs(db, { maxValueLength: 1.5 })).toThrow(/maxValueLength/);
  });
});
