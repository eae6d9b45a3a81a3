import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/index.js';
import { createIdentificationSerializer, type Identification } from '../../src/identify/identification.js';

describe('createIdentificationSerializer', () => {
  it('gives exactly JSON.stringify for real identifications, with and without ids', async () => {
    const engine = createEngine();
    const toJson = createIdentificationSerializer();
    const uas = ['Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'Mozilla/5.0 Firefox/130.0', 'ClaudeBot/1.0'];
    for (const ua of uas) {
      for (const id of [undefined, 'req-1', 'quote " and \\ and \u2028 and \ud800', '']) {
        const result = await engine.identify({ id, request_headers: { 'user-agent': ua } });
        expect(toJson(result)).toBe(JSON.stringify(result));
      }
    }
  });

  it('matches JSON.stringify for arbitrary field values and never serves a stale agent fragment', () => {
    const toJson = createIdentificationSerializer();
    const identification = fc.oneof(
      fc.record({ id: fc.option(fc.string(), { nil: undefined }), result: fc.constant('unknown_agent' as const) }, { requiredKeys: ['result'] }),
      fc.record(
        {
          id: fc.option(fc.string(), { nil: undefined }),
          result: fc.constantFrom('verified' as const, 'not_verifiable' as const, 'verification_failed' as const),
          agent_id: fc.constantFrom('a', 'b'),
          agent_token: fc.string(),
          agent_url: fc.string(),
          agent_type_name: fc.string(),
          operator_name: fc.string(),
        },
        { requiredKeys: ['result', 'agent_id', 'agent_token', 'agent_url', 'agent_type_name', 'operator_name'] },
      ),
    );
    fc.assert(
      fc.property(identification, (value) => {
        // Key order as identifiedAgent builds it: id first.
        const ordered = (value.id === undefined ? { ...value } : { id: value.id, ...value }) as Identification;
        if (value.id === undefined) delete (ordered as { id?: string }).id;
        expect(toJson(ordered)).toBe(JSON.stringify(ordered));
      }),
      { numRuns: 2000 },
    );
  });
});
