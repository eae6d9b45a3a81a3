// The HTTP sink writes each visit's JSON by hand (it runs once per request on the site's thread):
// for any visit, what it writes must be exactly what JSON.stringify writes of the visit's fields
// with the secret headers removed, whatever the strings hold (quotes, backslashes, control
// characters, non-ASCII, lone surrogates). Its `created` time, formatted once per second, is
// what Date#toISOString writes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAgentwarden, isSecretHeader, lowerCaseHeaderMap, serializeVisit, type SinkVisit } from '../../src/index.js';

/** The plain way: copy without secrets, then JSON.stringify. */
function reference(visit: SinkVisit): string {
  const strip = (headers: SinkVisit['request_headers']) => Object.fromEntries(Object.entries(headers).filter(([name, value]) => value !== undefined && !isSecretHeader(name.toLowerCase())));
  return JSON.stringify({
    request_path: visit.request_path,
    request_method: visit.request_method,
    request_headers: strip(visit.request_headers),
    response_status_code: visit.response_status_code,
    response_headers: visit.response_headers === undefined ? undefined : strip(visit.response_headers),
    response_duration_in_milliseconds: visit.response_duration_in_milliseconds,
    created: visit.created,
    is_blocked: visit.is_blocked,
    decision: visit.decision,
    client_ip: visit.client_ip,
  });
}

const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.constantFrom('"', '\\', '\n', '\u0000', '\ud800', 'a\udc00b', 'é€😀'));
const headerName = fc.oneof(fc.constantFrom('User-Agent', 'authorization', 'Cookie', 'x-api-key', 'x-auth-token', 'accept', 'set-cookie', 'X-Secret'), text);
const headers = fc.dictionary(headerName, fc.oneof(text, fc.array(text, { maxLength: 3 })), { maxKeys: 8 });
const decision = fc.record({ rule: fc.constantFrom('deny-agent', 'allow-verified'), action: fc.constantFrom('allow' as const, 'deny' as const), report_only: fc.boolean() });
const visit: fc.Arbitrary<SinkVisit> = fc.record(
  {
    request_path: text,
    request_method: text,
    request_headers: headers,
    response_status_code: fc.integer({ min: 100, max: 599 }),
    response_headers: headers,
    response_duration_in_milliseconds: fc.oneof(fc.nat(), fc.double({ min: 0, max: 1e6, noNaN: true })),
    created: text,
    is_blocked: fc.boolean(),
    decision: fc.oneof(decision, decision.map((d) => Object.freeze(d))),
    client_ip: text,
  },
  { requiredKeys: ['request_path', 'request_method', 'request_headers'] },
);

describe('serializeVisit', () => {
  it('writes exactly what JSON.stringify writes of the visit without its secret headers', () => {
    fc.assert(
      fc.property(visit, (v) => {
        expect(serializeVisit(v)).toBe(reference(v));
      }),
      { numRuns: 2000 },
    );
  });

  it('writes a frozen decision shared by many visits the same each time', () => {
    const shared = Object.freeze({ rule: 'deny-agent-type', action: 'deny' as const, report_only: false });
    const first = serializeVisit({ request_path: '/', request_method: 'GET', request_headers: {}, decision: shared });
    expect(serializeVisit({ request_path: '/', request_method: 'GET', request_headers: {}, decision: shared })).toBe(first);
    expect(JSON.parse(first)).toEqual({ request_path: '/', request_method: 'GET', request_headers: {}, decision: shared });
  });
});

describe('a recorded visit\'s created time', () => {
  it('is the request\'s arrival as Date#toISOString writes it, for any clock reading', () => {
    let now = 0;
    const visits: SinkVisit[] = [];
    const core = createAgentwarden({ clock: { now: () => now }, sink: { push: (v) => void visits.push(v), flush: async () => {}, close: async () => {} } });
    const reading = fc.oneof(fc.integer({ min: 0, max: 8.64e15 }), fc.double({ min: 0, max: 4e12, noNaN: true }), fc.integer({ min: 1.7e12, max: 1.7e12 + 5000 }));
    fc.assert(
      fc.property(fc.array(reading, { minLength: 1, maxLength: 20 }), (readings) => {
        for (const ms of readings) {
          now = ms;
          const check = core.check({ method: 'GET', path: '/', headers: lowerCaseHeaderMap({}), headerRecord: {} });
          core.record(check as Exclude<typeof check, Promise<unknown>>, { status: 200 });
          expect(visits.at(-1)!.created).toBe(new Date(ms).toISOString());
        }
      }),
      { numRuns: 300 },
    );
  });
});
