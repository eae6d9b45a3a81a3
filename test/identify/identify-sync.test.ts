// engine.identifySync: the result identify() gives, returned synchronously when the verifiers answer so.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, ipRangeVerifier, type Verifier } from '../../src/index.js';

const GPTBOT_LIST = { 'openai-gptbot.json': { creationTime: '2025-10-30T11:00:00.000000', prefixes: [{ ipv4Prefix: '52.230.152.0/24' }] } };

const userAgent = fc.oneof(
  fc.constantFrom(
    'Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)',
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    'curl/8.4.0',
    '',
  ),
  fc.string({ maxLength: 40 }),
);
// Header records as callers send them: any case, string or string[] values, odd entries.
const headers = fc.record(
  {
    'User-Agent': fc.oneof(userAgent, fc.array(userAgent, { maxLength: 2 })),
    'user-agent': userAgent,
    'X-Forwarded-For': fc.constantFrom('52.230.152.7', '203.0.113.9', 'not an address'),
    'signature-agent': fc.constantFrom('"https://chatgpt.com"', 'https://example.com'),
  },
  { requiredKeys: [] },
);

describe('engine.identifySync', () => {
  for (const [label, engine] of [
    ['without verifiers', createEngine()],
    ['with the IP-range verifier', createEngine({ verifiers: [ipRangeVerifier({ lists: GPTBOT_LIST })] })],
  ] as const) {
    it(`gives what identify() gives, ${label}`, async () => {
      await fc.assert(
        fc.asyncProperty(headers, fc.option(fc.string({ maxLength: 8 }), { nil: undefined }), async (request_headers, id) => {
          const item = id === undefined ? { request_headers } : { id, request_headers };
          expect(engine.identifySync(item)).toStrictEqual(await engine.identify(item));
        }),
        { numRuns: 300 },
      );
    });
  }

  it('returns the full record', () => {
    const engine = createEngine({ verifiers: [ipRangeVerifier({ lists: GPTBOT_LIST })] });
    expect(engine.identifySync({ id: 'r1', request_headers: { 'User-Agent': 'GPTBot/1.2', 'X-Forwarded-For': '52.230.152.7' } })).toStrictEqual({
      id: 'r1',
      result: 'verified',
      agent_id: 'gptbot',
      agent_token: 'GPTBot',
      agent_url: engine.catalog.getAgent('gptbot')!.url,
      agent_type_name: 'AI Data Scraper',
      operator_name: 'OpenAI',
    });
  });

  it('turns bad input into unknown_agent', () => {
    const engine = createEngine();
    for (const bad of [undefined, null, 42, 'GPTBot', { request_headers: 'GPTBot' }, { request_headers: { 'user-agent': 7 } }]) {
      expect(engine.identifySync(bad as never)).toStrictEqual({ result: 'unknown_agent' });
    }
  });

  it('throws when a verifier answers with a promise, and only for requests it applies to', () => {
    const waits: Verifier = { name: 'waits', appliesTo: (agent) => agent.id === 'gptbot', verify: async () => ({ method: 'waits', outcome: 'pass', reason: 'ok' }) };
    const engine = createEngine({ verifiers: [waits] });
    expect(() => engine.identifySync({ request_headers: { 'user-agent': 'GPTBot/1.2' } })).toThrow(TypeError);
    expect(engine.identifySync({ request_headers: { 'user-agent': 'curl/8.4.0' } })).toMatchObject({ result: 'not_verifiable', agent_id: 'curl' });
  });
});
