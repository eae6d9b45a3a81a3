// The Web Bot Auth profile of RFC 9421 (architecture-05 / protocol-02 "Generating HTTP Message
// Signature"): required tag and parameters, bounded validity, required coverage, Ed25519.
import type { SignatureInput } from './signature-input.js';

/** The tag Web Bot Auth signatures carry. Signatures with another tag are not ours to judge. */
export const WEB_BOT_AUTH_TAG = 'web-bot-auth';

/** Time rules of the profile, in seconds. */
export interface ProfileLimits {
  /** Leeway for clocks: `created` may be this far in the future, `expires` this far in the past. */
  readonly clockSkewSeconds: number;
  /** Longest accepted `expires - created`. */
  readonly maxWindowSeconds: number;
}

/**
 * A profile violation: a broken MUST of the profile is evidence against the signature; an
 * algorithm we do not implement, or a window past our limit (the drafts only RECOMMEND 24 h, so a
 * genuine signer may exceed it), leaves it unjudged.
 */
export type ProfileViolation =
  | { readonly outcome: 'fail'; readonly reason: 'created-missing' | 'expires-missing' | 'keyid-missing' | 'signature-input-malformed' | 'signature-not-yet-valid' | 'signature-expired' | 'authority-not-covered' }
  | { readonly outcome: 'inconclusive'; readonly reason: 'algorithm-unsupported' | 'window-too-long' | 'too-many-components' };

/** The most components one signature may cover and still be checked. */
export const MAX_COVERED_COMPONENTS = 32;

/**
 * Checks one tagged signature against the profile at `nowSeconds`; undefined when it conforms.
 * Coverage of `signature-agent` is checked where the header is read (signature-agent.ts).
 */
export function checkProfile(input: SignatureInput, nowSeconds: number, limits: ProfileLimits): ProfileViolation | undefined {
  // Each covered component costs a field lookup and serialisation: a signature covering hundreds
  // is an attempt to spend the verifier's time, not one a crawler sends (they cover a handful).
  if (input.components.length > MAX_COVERED_COMPONENTS) return { outcome: 'inconclusive', reason: 'too-many-components' };
  const { created, expires, keyid, alg } = input.params;
  // architecture-05 §4.2: created, expires, keyid and tag are required.
  if (created === undefined) return { outcome: 'fail', reason: 'created-missing' };
  if (expires === undefined) return { outcome: 'fail', reason: 'expires-missing' };
  if (keyid === undefined || keyid === '') return { outcome: 'fail', reason: 'keyid-missing' };
  // RFC 9421 §3.2.1: the verifier decides which algorithms it accepts; this one knows Ed25519 only.
  if (alg !== undefined && alg !== 'ed25519') return { outcome: 'inconclusive', reason: 'algorithm-unsupported' };
  if (expires < created) return { outcome: 'fail', reason: 'signature-input-malformed' };
  if (created > nowSeconds + limits.clockSkewSeconds) return { outcome: 'fail', reason: 'signature-not-yet-valid' };
  if (expires + limits.clockSkewSeconds < nowSeconds) return { outcome: 'fail', reason: 'signature-expired' };
  // architecture-05: "RECOMMENDED that expiry be no more than 24 hours"; a long window widens
  // replay, so such a signature proves nothing here, but a SHOULD broken is no sign of forgery.
  if (expires - created > limits.maxWindowSeconds) return { outcome: 'inconclusive', reason: 'window-too-long' };
  // architecture-05 / GHSA-x9cc-346q-g27m: the signature must bind the target host.
  if (!input.components.some((c) => (c.name === '@authority' || c.name === '@target-uri') && c.params.size === 0)) {
    return { outcome: 'fail', reason: 'authority-not-covered' };
  }
  return undefined;
}
