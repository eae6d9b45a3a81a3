// The core public API of agentwarden: explicit named exports only.
export { createEngine } from './engine.js';
export type { Engine, EngineOptions, IdentificationItem, VerificationItem, VerificationOutcome } from './engine.js';
export { createCatalog, resolveAgentType } from './catalog/catalog.js';
export type { Catalog } from './catalog/catalog.js';
export { defaultCatalogDocument } from './catalog/default-catalog.js';
export { AGENT_TYPES, AGENT_TYPE_ALIASES } from './catalog/types.js';
export type { Agent, AgentMatch, AgentType, CatalogDocument } from './catalog/types.js';
export { normalizeHeaders } from './identify/headers.js';
export type { HeadersInput } from './identify/headers.js';
export type { Identification, IdentificationResult, IdentifiedAgent, UnknownAgent } from './identify/identification.js';
export { runVerifierChain } from './verify/chain.js';
export type { ChainOutcome, VerifiedResult } from './verify/chain.js';
export type {
  CheckOutcome,
  IpRangeReason,
  ReverseDnsReason,
  VerificationCheck,
  VerificationContext,
  VerificationMethod,
  VerificationReason,
  VerificationRequest,
  Verifier,
  WebBotAuthReason,
} from './verify/types.js';
