// The identification result shape, exactly as the REST contract returns it (DESIGN.md §3).
import type { Agent } from '../catalog/types.js';
import type { VerifiedResult } from '../verify/chain.js';

/** The four results of the identification contract. */
export type IdentificationResult = VerifiedResult | 'unknown_agent';

/** An identified agent with its verification result. */
export interface IdentifiedAgent {
  id?: string;
  result: VerifiedResult;
  agent_id: string;
  agent_token: string;
  agent_url: string;
  agent_type_name: string;
  operator_name: string;
}

/** Not an agent, or not one the catalog knows: carries only the echoed id and the result. */
export interface UnknownAgent {
  id?: string;
  result: 'unknown_agent';
}

/** One identification result. */
export type Identification = IdentifiedAgent | UnknownAgent;

/** Builds the result for a known agent; `id` comes first when echoed, as clients print it. */
export function identifiedAgent(agent: Agent, result: VerifiedResult, id: string | undefined): IdentifiedAgent {
  const item: IdentifiedAgent = id === undefined ? ({} as IdentifiedAgent) : ({ id } as IdentifiedAgent);
  item.result = result;
  item.agent_id = agent.id;
  item.agent_token = agent.robots_tokens[0]!;
  item.agent_url = agent.url;
  item.agent_type_name = agent.type;
  item.operator_name = agent.operator;
  return item;
}

/** Builds the result for a request no catalog agent claims. */
export function unknownAgent(id: string | undefined): UnknownAgent {
  return id === undefined ? { result: 'unknown_agent' } : { id, result: 'unknown_agent' };
}
