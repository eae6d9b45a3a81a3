// The verifier chain: first pass or fail decides, inconclusive (or a throwing / rejecting verifier)
// goes on, nothing applicable is not_verifiable; synchronous answers keep the chain synchronous.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runVerifierChain, type VerificationCheck, type Verifier } from '../../src/index.js';
import { startVerifierChain } from '../../src/verify/chain.js';
import { googlebotAgent } from '../helpers/agents.js';

type Behaviour = { applies: boolean; outcome: 'pass' | 'fail' | 'inconclusive' | 'throw'; async: boolean };

function verifierOf(name: string, b: Behaviour): Verifier {
  return {
    name: name as Verifier['name'],
    appliesTo: () => b.applies,
    verify: () => {
      if (b.outcome === 'throw') {
        if (b.async) return Promise.reject(new Error('boom'));
        throw new Error('boom');
      }
      const check = { method: name, outcome: b.outcome, reason: 'test' } as unknown as VerificationCheck;
      return b.async ? Promise.resolve(check) : check;
    },
  };
}

// The chain's rule written plainly, as the reference.
function expected(behaviours: readonly Behaviour[]) {
  const checks: { method: string; outcome: string }[] = [];
  for (const [i, b] of behaviours.entries()) {
    if (!b.applies) continue;
    const outcome = b.outcome === 'throw' ? 'inconclusive' : b.outcome;
    checks.push({ method: `v${i}`, outcome });
    if (outcome === 'pass') return { result: 'verified', method: `v${i}`, checks };
    if (outcome === 'fail') return { result: 'verification_failed', method: `v${i}`, checks };
  }
  return { result: 'not_verifiable', method: null, checks };
}

const request = { headers: new Map<string, string>(), clientIp: '192.0.2.1' };
const context = { now: () => 0 };

describe('verifier chain', () => {
  it('decides like the plain rule for any mix of sync, async, throwing and rejecting verifiers', async () => {
    const behaviour = fc.record({ applies: fc.boolean(), outcome: fc.constantFrom('pass', 'fail', 'inconclusive', 'throw') as fc.Arbitrary<Behaviour['outcome']>, async: fc.boolean() });
    await fc.assert(
      fc.asyncProperty(fc.array(behaviour, { maxLength: 5 }), async (behaviours) => {
        const verifiers = behaviours.map((b, i) => verifierOf(`v${i}`, b));
        const outcome = await runVerifierChain(verifiers, googlebotAgent, request, context);
        const want = expected(behaviours);
        expect(outcome.result).toBe(want.result);
        expect(outcome.method).toBe(want.method);
        expect(outcome.checks.map((c) => ({ method: c.method, outcome: c.outcome }))).toEqual(want.checks);
      }),
      { numRuns: 500 },
    );
  });

  it('answers synchronously while every verifier that runs answers synchronously', () => {
    const sync = [verifierOf('v0', { applies: true, outcome: 'inconclusive', async: false }), verifierOf('v1', { applies: true, outcome: 'pass', async: false })];
    const outcome = startVerifierChain(sync, googlebotAgent, request, context);
    expect(outcome).not.toBeInstanceOf(Promise);
    expect((outcome as { result: string }).result).toBe('verified');
    const mixed = [verifierOf('v0', { applies: true, outcome: 'inconclusive', async: true }), verifierOf('v1', { applies: true, outcome: 'pass', async: false })];
    expect(startVerifierChain(mixed, googlebotAgent, request, context)).toBeInstanceOf(Promise);
  });
});
