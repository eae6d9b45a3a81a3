// Which built-in verification methods can check an agent: decided by its catalog record alone.
import type { Agent } from './types.js';

/** The verification methods the built-in verifiers offer, by the catalog data each needs. */
export const VERIFICATION_METHODS = ['web-bot-auth', 'ip-ranges', 'reverse-dns'] as const;
/** One of the built-in verification methods. */
export type CatalogVerificationMethod = (typeof VERIFICATION_METHODS)[number];

/** The methods that can verify an agent: what its catalog record gives them to check against. */
export function verificationMethodsOf(agent: Agent): CatalogVerificationMethod[] {
  const methods: CatalogVerificationMethod[] = [];
  if ((agent.signature_agents?.length ?? 0) > 0) methods.push('web-bot-auth');
  if ((agent.ip_ranges?.length ?? 0) > 0) methods.push('ip-ranges');
  if ((agent.reverse_dns?.length ?? 0) > 0) methods.push('reverse-dns');
  return methods;
}
