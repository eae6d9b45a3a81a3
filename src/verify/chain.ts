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

/** The outcome when no verifier applies to the agent. */
export const NOTHING_APPLIED: ChainOutcome = Object.freeze({ result: 'not_verifiable', method: null, checks: Object.freeze([]) as readonly VerificationCheck[] });

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

/**
 * Runs the chain from verifier `from` on. Synchronous for as long as the verifiers answer
 * synchronously (the IP-range verifier does): a promise only once one of them returns one.
 */
function continueChain(
  verifiers: readonly Verifier[],
  from: number,
  agent: Agent,
  request: VerificationRequest,
  context: VerificationContext,
  checks: VerificationCheck[] = [],
): ChainOutcome | Promise<ChainOutcome> {
  for (let i = from; i < verifiers.length; i++) {
    const verifier = verifiers[i]!;
    // startVerifierChain found the first one applicable; every later one is asked here.
    const knownApplicable = i === from && checks.length === 0;
    if (!knownApplicable && !verifier.appliesTo(agent, request)) continue;
    let answer: VerificationCheck | Promise<VerificationCheck>;
    try {
      answer = verifier.verify(agent, request, context);
    } catch {
      answer = verifierError(verifier);
    }
    if (isThenable(answer)) {
      return Promise.resolve(answer).then(
        (check) => decide(check, checks) ?? continueChain(verifiers, i + 1, agent, request, context, checks),
        () => decide(verifierError(verifier), checks) ?? continueChain(verifiers, i + 1, agent, request, context, checks),
      );
    }
    const decided = decide(answer, checks);
    if (decided !== undefined) return decided;
  }
  return { result: 'not_verifiable', method: null, checks };
}

function isThenable(value: unknown): value is PromiseLike<VerificationCheck> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

/** A verifier that threw: inconclusive, never evidence of spoofing. */
function verifierError(verifier: Verifier): VerificationCheck {
  return { method: verifier.name, outcome: 'inconclusive', reason: 'verifier-error' };
}

/** Records a check; the outcome when it decides (`pass` or `fail`), undefined to go on. */
function decide(check: VerificationCheck, checks: VerificationCheck[]): ChainOutcome | undefined {
  checks.push(check);
  if (check.outcome === 'pass') return { result: 'verified', method: check.method, checks };
  if (check.outcome === 'fail') return { result: 'verification_failed', method: check.method, checks };
  return undefined;
}
