// Runs the verifier chain: each applicable verifier in order, stopping at the first pass or fail.
import type { Agent } from '../catalog/types.js';
import type { VerificationCheck, VerificationContext, VerificationMethod, VerificationRequest, Verifier } from './types.js';

/** The identification result a chain run yields for a known agent. */
export type VerifiedResult = 'verified' | 'verification_failed' | 'not_verifiable';

/** What the chain concluded and every check it made on the way. */
export interface ChainOutcome {
  readonly result: VerifiedResult;
  /** The method that decided (`pass` or `fail`), or null when none did. */
  readonly method: VerificationMethod | null;
  readonly checks: readonly VerificationCheck[];
}

const NOTHING_APPLIED: ChainOutcome = Object.freeze({ result: 'not_verifiable', method: null, checks: Object.freeze([]) as readonly VerificationCheck[] });

/**
 * Asks each applicable verifier in order and stops at the first `pass` (verified) or `fail`
 * (verification_failed). Only `inconclusive` answers, or none, give `not_verifiable`: a DNS
 * timeout or an unreachable key directory is never taken as evidence of spoofing. A verifier
 * that throws counts as inconclusive (`verifier-error`).
 */
export async function runVerifierChain(
  verifiers: readonly Verifier[],
  agent: Agent,
  request: VerificationRequest,
  context: VerificationContext,
): Promise<ChainOutcome> {
  return startVerifierChain(verifiers, agent, request, context);
}

/**
 * As runVerifierChain, but answers synchronously when no verifier applies, so identification
 * without applicable verifiers costs no promise round-trip (the engine's hot path).
 */
export function startVerifierChain(
  verifiers: readonly Verifier[],
  agent: Agent,
  request: VerificationRequest,
  context: VerificationContext,
): ChainOutcome | Promise<ChainOutcome> {
  for (let i = 0; i < verifiers.length; i++) {
    if (verifiers[i]!.appliesTo(agent, request)) return continueChain(verifiers, i, agent, request, context);
  }
  return NOTHING_APPLIED;
}

async function continueChain(
  verifiers: readonly Verifier[],
  first: number,
  agent: Agent,
  request: VerificationRequest,
  context: VerificationContext,
): Promise<ChainOutcome> {
  const checks: VerificationCheck[] = [];
  for (let i = first; i < verifiers.length; i++) {
    const verifier = verifiers[i]!;
    if (i !== first && !verifier.appliesTo(agent, request)) continue;
    let check: VerificationCheck;
    try {
      check = await verifier.verify(agent, request, context);
    } catch {
      check = { method: verifier.name, outcome: 'inconclusive', reason: 'verifier-error' };
    }
    checks.push(check);
    if (check.outcome === 'pass') return { result: 'verified', method: check.method, checks };
    if (check.outcome === 'fail') return { result: 'verification_failed', method: check.method, checks };
  }
  return { result: 'not_verifiable', method: null, checks };
}
