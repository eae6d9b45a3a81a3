// The visit pipeline's fast paths give exactly what the straightforward code gives: secret-header
// suffix checks, header joining, created normalisation, Referer host extraction, the path without
// its query, identification from one normalised header map, and whole enriched batches.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createClientIpRule, createEngine, createVisitEnricher, ipRangeVerifier, isSecretHeader, normalizeHeaders, parseVisit, type Visit } from '../../src/index.js';
import { headerMapOf } from '../../src/identify/headers.js';
import { isoUtcMillis } from '../../src/visits/iso-time.js';
import { pathWithoutQuery } from '../../src/visits/stats.js';
import { classifyReferral, refererHost } from '../../src/visits/referral.js';

// ---- Oracles: the plain versions the fast paths replace.

const SECRET_NAMES = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);
const SECRET_PATTERN = /(?:^|[-_])(?:token|secret|api[-_]?key|apikey)$/;
const plainIsSecret = (name: string) => SECRET_NAMES.has(name) || SECRET_PATTERN.test(name);

/** Joins and lower-cases as RFC 9110 §5.3 says, looking every name up. */
function plainHeaders(value: Record<string, unknown>): Record<string, string> {
  const headers = new Map<string, string>();
  for (const name of Object.keys(value)) {
    const item = value[name];
    if (!(typeof item === 'string' || (Array.isArray(item) && item.every((v) => typeof v === 'string')))) continue;
    const lower = name.toLowerCase();
    if (plainIsSecret(lower)) continue;
    const joined = typeof item === 'string' ? item : (item as string[]).join(', ');
    const previous = headers.get(lower);
    headers.set(lower, previous === undefined ? joined : `${previous}, ${joined}`);
  }
  // fromEntries defines each name as an own field, "__proto__" too.
  return Object.fromEntries(headers);
}

function plainNormalize(value: Record<string, unknown>): Map<string, string> {
  const headers = new Map<string, string>();
  for (const name of Object.keys(value)) {
    const item = value[name];
    const strings = typeof item === 'string' ? [item] : Array.isArray(item) ? item.filter((v): v is string => typeof v === 'string') : [];
    if (strings.length === 0) continue;
    const key = name.toLowerCase();
    const previous = headers.get(key);
    headers.set(key, previous === undefined ? strings.join(', ') : `${previous}, ${strings.join(', ')}`);
  }
  return headers;
}

function urlHost(referer: string): string | undefined {
  try {
    return new URL(referer).hostname;
  } catch {
    return undefined;
  }
}

// ---- Inputs: realistic names and values, with the spellings and shapes that take slow paths.

const HEADER_NAMES = ['user-agent', 'User-Agent', 'USER-AGENT', 'accept', 'Accept', 'referer', 'x-forwarded-for', 'X-Forwarded-For', 'cf-connecting-ip', 'host', 'priority', 'sec-ch-ua', 'x-auth-token', 'X-Api-Key', 'apikey', 'x-client-secret', 'cookie', 'constructor', 'toString', '__proto__', 'monkey', 'tokenizer', 'x-token-id', 'signature-agent'];
const headerName = fc.oneof(fc.constantFrom(...HEADER_NAMES), fc.stringMatching(/^[A-Za-z_-]{0,12}(?:token|secret|key|_api_key|-apikey)?$/));
const headerValue = fc.oneof(
  fc.constantFrom('GPTBot/1.2', 'Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/131.0.0.0', '52.230.152.7', '203.0.113.9, 52.230.152.7', 'https://chatgpt.com/'),
  fc.string({ maxLength: 12 }),
);
const headerInput = fc.dictionary(headerName, fc.oneof(headerValue, fc.array(headerValue, { maxLength: 3 })), { maxKeys: 10 });
// What a visit may carry (anything else is refused, tested in pipeline.test.ts): names
// that are HTTP tokens, values without control characters (tab aside) or unpaired surrogates.
const receivedName = headerName.filter((name) => /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name));
const receivedValue = headerValue.filter((value) => !/[\u0000-\u0008\u000a-\u001f\u007f]|[\ud800-\udfff]/u.test(value));
const receivedHeaders = fc.dictionary(receivedName, fc.oneof(receivedValue, fc.array(receivedValue, { maxLength: 3 })), { maxKeys: 10 });
const REFERERS = ['https://chatgpt.com/', 'https://www.perplexity.ai/search?q=1', 'http://gemini.google.com', 'https://www.google.com/', 'https://CHATGPT.com/', 'https://chatgpt.com:443/', 'https://chatgpt.com:x/', 'https://u@chatgpt.com/', 'https://chatgpt.com\\x', 'https://xn--a.chatgpt.com/', 'https://1.2.3.4/', 'https://claude.ai./', 'android-app://com.google.android.gm/', ' https://claude.ai/', 'https://cla\tude.ai/', 'https://', 'not a url'];
const referer = fc.oneof(
  fc.constantFrom(...REFERERS),
  fc.tuple(fc.constantFrom('https://', 'http://', 'HTTP://', 'https:/'), fc.stringMatching(/^[a-z0-9.\-:@\\/?#%A-Z \t]{0,16}$/)).map(([scheme, rest]) => scheme + rest),
);

describe('secret headers', () => {
  it('the suffix pre-check keeps isSecretHeader equal to the plain regex test', () => {
    fc.assert(
      fc.property(fc.oneof(headerName.map((name) => name.toLowerCase()), fc.string({ maxLength: 16 })), (name) => {
        expect(isSecretHeader(name)).toBe(plainIsSecret(name));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('parseVisit headers', () => {
  it('equal the plain join of every spelling, without secrets', () => {
    fc.assert(
      fc.property(receivedHeaders, receivedHeaders, (request, response) => {
        const parsed = parseVisit({ request_path: '/', request_method: 'GET', request_headers: request, response_headers: response });
        expect(parsed.ok).toBe(true);
        if (!parsed.ok) return;
        expect(parsed.visit.request_headers).toStrictEqual(plainHeaders(request));
        expect(parsed.visit.response_headers).toStrictEqual(plainHeaders(response));
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps a header named like an Object.prototype member as sent', () => {
    const parsed = parseVisit({ request_path: '/', request_method: 'GET', request_headers: { constructor: 'a', ToString: 'b', tostring: 'c' } });
    expect(parsed.ok && parsed.visit.request_headers).toStrictEqual({ constructor: 'a', tostring: 'b, c' });
    // As JSON.parse gives it: an own field named "__proto__", kept as one (assigned, it would vanish).
    const proto = parseVisit(JSON.parse('{"request_path":"/","request_method":"GET","request_headers":{"__proto__":"p","user-agent":"u"}}'));
    expect(proto.ok && JSON.stringify(proto.visit.request_headers)).toBe('{"__proto__":"p","user-agent":"u"}');
    expect(proto.ok && Object.getPrototypeOf(proto.visit.request_headers)).toBe(Object.prototype);
  });
});

describe('normalizeHeaders', () => {
  it('equals the plain lower-case-and-join on any spelling', () => {
    fc.assert(
      fc.property(headerInput, (input) => {
        expect(normalizeHeaders(input)).toStrictEqual(plainNormalize(input));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('pathWithoutQuery', () => {
  it('cuts at the first ? or #, as a split on either would', () => {
    const path = fc.array(fc.constantFrom('/', 'a', '?', '#', '=', '%', 'ü'), { maxLength: 12 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(path, (text) => {
        expect(pathWithoutQuery(text)).toBe(text.split(/[?#]/)[0]);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('created', () => {
  const visitAt = (created: unknown) => parseVisit({ request_path: '/', request_method: 'GET', request_headers: {}, created });

  it('refuses days past the end of the month and hour 24 (RFC 3339 §5.7) with the format error', () => {
    for (const created of ['2026-02-30T00:00:00Z', '2026-02-29T12:00:00.000Z', '1900-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-11-31T10:00:00+01:00', '2026-01-01T24:00:00Z']) {
      const parsed = visitAt(created);
      expect(parsed.ok, created).toBe(false);
      if (!parsed.ok) expect(parsed.errors).toEqual([{ pointer: '/created', code: 'format', message: expect.stringContaining('ISO 8601') }]);
    }
    for (const [created, normalised] of [
      ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
      ['2000-02-29T23:59:59.5+01:00', '2000-02-29T22:59:59.500Z'],
      ['2026-12-31t23:59:59z', '2026-12-31T23:59:59.000Z'],
      ['2026-04-30T00:00:00.000Z', '2026-04-30T00:00:00.000Z'],
    ]) {
      const parsed = visitAt(created);
      expect(parsed.ok && parsed.visit.created, created).toBe(normalised);
    }
  });

  it('is accepted exactly when the calendar has that day and hour, and normalised as toISOString', () => {
    const twoDigits = (n: number) => String(n).padStart(2, '0');
    fc.assert(
      fc.property(
        fc.record({
          year: fc.integer({ min: 0, max: 9999 }),
          month: fc.integer({ min: 0, max: 13 }),
          day: fc.integer({ min: 0, max: 32 }),
          hour: fc.integer({ min: 0, max: 25 }),
          minute: fc.integer({ min: 0, max: 60 }),
          fraction: fc.constantFrom('', '.5', '.123', '.1234'),
          zone: fc.constantFrom('Z', 'z', '+00:00', '-05:30', '+14:00'),
        }),
        ({ year, month, day, hour, minute, fraction, zone }) => {
          const created = `${String(year).padStart(4, '0')}-${twoDigits(month)}-${twoDigits(day)}T${twoDigits(hour)}:${twoDigits(minute)}:07${fraction}${zone}`;
          const calendar = new Date(Date.UTC(2000, month - 1, day));
          calendar.setUTCFullYear(year);
          const exists = month >= 1 && month <= 12 && calendar.getUTCMonth() === month - 1 && calendar.getUTCDate() === day && hour <= 23 && minute <= 59;
          const parsed = visitAt(created);
          expect(parsed.ok, created).toBe(exists);
          if (parsed.ok) expect(parsed.visit.created).toBe(new Date(Date.parse(created)).toISOString());
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('Referer host', () => {
  it('equals new URL(referer).hostname, or undefined where URL throws', () => {
    fc.assert(
      fc.property(referer, (value) => {
        expect(refererHost(value)).toBe(urlHost(value));
      }),
      { numRuns: 5000 },
    );
  });
});

const GPTBOT_LIST = { 'openai-gptbot.json': { creationTime: '2025-10-30T11:00:00.000000', prefixes: [{ ipv4Prefix: '52.230.152.0/24' }] } };
const engine = createEngine({ verifiers: [ipRangeVerifier({ lists: GPTBOT_LIST })] });

describe('engine.identifyNormalized', () => {
  it('gives what identify() gives for the same headers', async () => {
    await fc.assert(
      fc.asyncProperty(headerInput, fc.option(fc.string({ maxLength: 8 }), { nil: undefined }), async (headers, id) => {
        const expected = await engine.identify(id === undefined ? { request_headers: headers } : { id, request_headers: headers });
        expect(await engine.identifyNormalized(normalizeHeaders(headers), id)).toStrictEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('answers synchronously unless a verifier waits', async () => {
    const browser = engine.identifyNormalized(new Map([['user-agent', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/131.0.0.0']]));
    expect(browser).toStrictEqual({ result: 'unknown_agent' });
    const crawler = engine.identifyNormalized(new Map([['user-agent', 'GPTBot/1.2'], ['x-forwarded-for', '52.230.152.7']]), 'r1');
    expect(await crawler).toMatchObject({ id: 'r1', result: 'verified', agent_id: 'gptbot' });
  });
});

describe('engine.verifyNormalized', () => {
  it('gives what verify() gives for the same request', async () => {
    await fc.assert(
      fc.asyncProperty(headerInput, fc.option(fc.string({ maxLength: 8 }), { nil: undefined }), fc.constantFrom('GET', 'POST'), fc.constantFrom('/', '/a?b=c'), async (headers, id, method, path) => {
        const expected = await engine.verify({ ...(id === undefined ? {} : { id }), request_headers: headers, request_method: method, request_path: path });
        expect(await engine.verifyNormalized(normalizeHeaders(headers), { id, method, path })).toStrictEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it("checks the address a per-call rule picks instead of the engine's", async () => {
    const headers = new Map([['user-agent', 'GPTBot/1.2'], ['x-forwarded-for', '52.230.152.7'], ['x-real-ip', '203.0.113.9']]);
    // The engine's default rule prefers x-real-ip (outside OpenAI's list): spoofed.
    expect(await engine.verifyNormalized(headers)).toMatchObject({ result: 'verification_failed', verification: { method: 'ip-ranges', checks: [{ method: 'ip-ranges', outcome: 'fail', reason: 'ip-not-in-range' }] } });
    const rule = createClientIpRule({ headers: ['x-forwarded-for'] });
    expect(await engine.verifyNormalized(headers, { clientIp: rule })).toMatchObject({ result: 'verified', verification: { method: 'ip-ranges', checks: [{ method: 'ip-ranges', outcome: 'pass', reason: 'ip-in-range' }] } });
  });
});

describe('the enricher', () => {
  const visitInput = fc.record({
    request_path: fc.constantFrom('/', '/pricing?utm_source=chatgpt.com', '/docs?utm_source=perplexity#x', '/a#?utm_source=claude'),
    request_method: fc.constantFrom('GET', 'POST'),
    request_headers: fc.tuple(receivedHeaders, fc.option(referer, { nil: undefined })).map(([headers, value]) => (value === undefined ? headers : { ...headers, Referer: value })),
    created: fc.option(fc.constantFrom('2026-11-21T12:00:00.000Z', '2026-11-21T13:00:00+01:00', '2030-01-01T00:00:00Z'), { nil: undefined }),
  });

  it('gives each visit what verify, normalizeHeaders, classifyReferral and the client-IP rule give one by one', async () => {
    const received = Date.parse('2026-11-21T12:30:00.000Z');
    const rule = createClientIpRule({ headers: ['x-forwarded-for'] });
    const enrich = createVisitEnricher({ engine, clock: { now: () => received } });
    // The per-call rule decides the address of the IP checks too: the same verifiers under that rule.
    const verifyingEngine = createEngine({ verifiers: [ipRangeVerifier({ lists: GPTBOT_LIST })], clientIp: rule });
    await fc.assert(
      fc.asyncProperty(fc.array(visitInput, { maxLength: 12 }), async (inputs) => {
        const visits: Visit[] = inputs.map((input) => {
          const parsed = parseVisit(input);
          if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
          return parsed.visit;
        });
        const expected = await Promise.all(
          visits.map(async (visit) => {
            const identification = await verifyingEngine.verify({ request_headers: visit.request_headers, request_method: visit.request_method, request_path: visit.request_path });
            const known = identification.result !== 'unknown_agent';
            const headers = normalizeHeaders(visit.request_headers);
            const created = visit.created === undefined ? Number.NaN : Date.parse(visit.created);
            const referrerHost = headers.get('referer');
            const clientIp = rule(headers) ?? null;
            return {
              ...visit,
              received,
              time: Number.isFinite(created) && created <= received + 60_000 ? created : received,
              agent_id: known ? identification.agent_id : null,
              agent_type: known ? identification.agent_type_name : null,
              result: identification.result,
              client_ip: clientIp,
              ...(clientIp === null ? {} : { client_ip_header: 'x-forwarded-for' }),
              referral: known ? null : (classifyReferral(visit.request_path, referrerHost) ?? null),
              ...(identification.verification.checks.length === 0 ? {} : { verification: identification.verification }),
            };
          }),
        );
        expect(await enrich(visits, rule)).toStrictEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});

describe('headerMapOf', () => {
  it('reads like normalizeHeaders: get, has, size and iteration in the same order', () => {
    fc.assert(
      fc.property(fc.oneof(headerInput, headerInput.map((input) => plainHeaders(input))), fc.array(headerName, { maxLength: 4 }), (input, probes) => {
        const expected = normalizeHeaders(input);
        const view = headerMapOf(input);
        expect(view.size).toBe(expected.size);
        expect([...view]).toStrictEqual([...expected]);
        expect([...view.keys()]).toStrictEqual([...expected.keys()]);
        expect([...view.values()]).toStrictEqual([...expected.values()]);
        const seen: [string, string][] = [];
        view.forEach((value, key, map) => {
          expect(map).toBe(view);
          seen.push([key, value]);
        });
        expect(seen).toStrictEqual([...expected.entries()]);
        for (const name of [...probes, ...expected.keys()].map((probe) => probe.toLowerCase())) {
          expect(view.get(name)).toBe(expected.get(name));
          expect(view.has(name)).toBe(expected.has(name));
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('isoUtcMillis', () => {
  it('agrees with Date.parse wherever it answers, and answers for every valid toISOString form from year 100', () => {
    const iso = fc.date({ min: new Date(Date.UTC(100, 0, 1)), max: new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999)), noInvalidDate: true }).map((date) => date.toISOString());
    // Mutations of valid strings: a digit or separator replaced, as clients get it wrong.
    const mutated = fc.tuple(iso, fc.nat(23), fc.constantFrom('0', '1', '2', '3', '5', '6', '9', '-', ':', 'T', 'Z', '.', ' ', 'x')).map(([text, at, c]) => text.slice(0, at) + c + text.slice(at + 1));
    fc.assert(
      fc.property(iso, (text) => {
        expect(isoUtcMillis(text)).toBe(Date.parse(text));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(mutated, (text) => {
        const millis = isoUtcMillis(text);
        if (millis !== undefined) {
          expect(millis).toBe(Date.parse(text));
          expect(new Date(millis).toISOString()).toBe(text);
        }
      }),
      { numRuns: 5000 },
    );
    for (const text of ['2026-02-30T00:00:00.000Z', '2026-02-29T00:00:00.000Z', '2026-01-01T24:00:00.000Z', '2026-01-01T23:60:00.000Z', '2026-01-01T23:59:60.000Z', '2026-13-01T00:00:00.000Z', '0099-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000+', '2026-1-01T00:00:00.000Z0']) {
      expect(isoUtcMillis(text), text).toBeUndefined();
    }
    expect(isoUtcMillis('2024-02-29T23:59:59.999Z')).toBe(Date.parse('2024-02-29T23:59:59.999Z'));
  });
});
