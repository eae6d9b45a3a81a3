// loadIpRangeLists makes the checks refresh-ip-ranges makes before it saves a list (one function,
// parseIpRangeListFile): a file written by hand that refresh would refuse does not load either.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadIpRangeLists } from '../../src/adapters/node/index.js';
import { parseCreationTime } from '../../src/index.js';
import { parseIpRangeListFile } from '../../src/adapters/node/ip-ranges-loader.js';

const NOW = Date.parse('2026-11-26T12:00:00Z');
const PREFIXES = [{ ipv4Prefix: '192.0.2.0/24' }];

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentwarden-ip-lists-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const write = (document: unknown) => writeFileSync(join(dir, 'openai-gptbot.json'), JSON.stringify(document));

describe('loadIpRangeLists refuses what refresh-ip-ranges refuses, naming the file', () => {
  it.each([
    [{ creationTime: '2026-11-01T00:00:00Z', prefixes: [] }, /no prefixes \(an empty list would reject every address\)/],
    [{ prefixes: PREFIXES }, /no "creationTime" string/],
    [{ creationTime: 1764158400, prefixes: PREFIXES }, /no "creationTime" string/],
    [{ creationTime: 'banana', prefixes: PREFIXES }, /"creationTime" "banana" is not an ISO 8601 date and time/],
    [{ creationTime: '2026-02-30T00:00:00Z', prefixes: PREFIXES }, /"creationTime" "2026-02-30T00:00:00Z" is not an ISO 8601/],
    [{ creationTime: '2999-01-01T00:00:00Z', prefixes: PREFIXES }, /"creationTime" "2999-01-01T00:00:00Z" is more than a day in the future/],
    [{ creationTime: '2026-11-27T13:00:00Z', prefixes: PREFIXES }, /more than a day in the future/],
    [{ creationTime: '2026-11-01T00:00:00Z', prefixes: [{ ipv4Prefix: '0.0.0.0/0' }] }, /ipv4Prefix "0\.0\.0\.0\/0" is wider than \/8/],
    [{ creationTime: '2026-11-01T00:00:00Z', prefixes: [{ ipv6Prefix: '::/0' }] }, /ipv6Prefix "::\/0" reaches into ::ffff:0:0\/96/],
  ])('%j', (document, reason) => {
    write(document);
    let message = '';
    try {
      loadIpRangeLists(dir, NOW);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(reason);
    expect(message).toContain('IP list "openai-gptbot.json"');
    expect(message).toContain(join(dir, 'openai-gptbot.json'));
  });

  it('loads a list dated up to a day ahead (clocks and unzoned local times differ), and the bundled ones', () => {
    write({ creationTime: '2026-11-27T11:00:00', prefixes: PREFIXES });
    const lists = loadIpRangeLists(dir, NOW);
    expect(lists['openai-gptbot.json']).toEqual({ creationTime: '2026-11-27T11:00:00', prefixes: PREFIXES });
    expect(Object.keys(lists)).toHaveLength(18);
  });

  it('escapes control characters of a creationTime it quotes', () => {
    expect(() => parseIpRangeListFile({ creationTime: '\u001b[2K\rok\u009b', prefixes: PREFIXES }, 'x.json', NOW)).toThrow(
      'IP list "x.json": "creationTime" "\\u001b[2K\\rok\\u009b" is not an ISO 8601 date and time',
    );
  });
});

describe('parseCreationTime', () => {
  it.each([
    ['2026-08-21T14:45:42.000000', '2026-08-21T14:45:42.000Z'],
    ['2024-01-03T10:00:00.121331', '2024-01-03T10:00:00.121Z'],
    ['2026-10-07T00:00:00Z', '2026-10-07T00:00:00.000Z'],
    ['2026-11-25T10:00:00+02:00', '2026-11-25T08:00:00.000Z'],
    ['2028-02-29T23:59:59', '2028-02-29T23:59:59.000Z'],
  ])('reads %s as %s', (text, iso) => {
    expect(new Date(parseCreationTime(text)!).toISOString()).toBe(iso);
  });

  it.each(['banana', '', '2026-08-21', '2026-08-21 14:45:42', '2026-13-01T00:00:00Z', '2026-02-29T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01T00:60:00Z', '2026-01-01T00:00:00Zjunk', '+002026-01-01T00:00:00Z'])(
    'refuses %j',
    (text) => {
      expect(parseCreationTime(text)).toBeUndefined();
    },
  );
});
