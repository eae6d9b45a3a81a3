// The identification result shape, exactly as the REST contract returns it (DESIGN.md §3).
import type { Agent } from '../catalog/types.js';
import type { VerifiedResult } from '../verify/chain.js';
import { jsonString } from '../json-string.js';

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

/**
 * Not an agent, or not one the catalog knows: carries only the echoed id and the result. The
 * agent fields are declared absent, so `identification.agent_id` reads as `string | undefined`
 * without narrowing on `result` first.
 */
export interface UnknownAgent {
  id?: string;
  result: 'unknown_agent';
  agent_id?: undefined;
  agent_token?: undefined;
  agent_url?: undefined;
  agent_type_name?: undefined;
  operator_name?: undefined;
}

/** One identification result. */
export type Identification = IdentifiedAgent | UnknownAgent;

/** Builds the result for a known agent; `id` comes first when echoed, as clients print it. */
export function identifiedAgent(agent: Agent, result: VerifiedResult, id: string | undefined): IdentifiedAgent {
  // Literals, not fields added one by one: V8 allocates each at its final shape in one step.
  const { id: agent_id, url: agent_url, type: agent_type_name, operator: operator_name } = agent;
  // An attack probe has no token (empty string): nothing in robots.txt addresses it.
  const agent_token = agent.robots_tokens[0] ?? '';
  if (id === undefined) return { result, agent_id, agent_token, agent_url, agent_type_name, operator_name };
  return { id, result, agent_id, agent_token, agent_url, agent_type_name, operator_name };
}

/** Builds the result for a request no catalog agent claims. */
export function unknownAgent(id: string | undefined): UnknownAgent {
  return id === undefined ? { result: 'unknown_agent' } : { id, result: 'unknown_agent' };
}

/**
 * Creates a serialiser of identification results that gives exactly `JSON.stringify(result)`,
 * but joins a per-agent fragment made once instead of serialising the agent fields every time:
 * identification answers are the API's hottest output.
 * @example
 * const toJson = createIdentificationSerializer();
 * toJson({ result: 'unknown_agent' }); // '{"result":"unknown_agent"}'
 */
export function createIdentificationSerializer(): (identification: Identification) => string {
  const fragments = new Map<string, { readonly source: IdentifiedAgent; readonly json: string }>();
  return (identification) => {
    const head = identification.id === undefined ? '{' : `{"id":${jsonString(identification.id)},`;
    if (identification.result === 'unknown_agent') return `${head}"result":"unknown_agent"}`;
    const item = identification;
    let fragment = fragments.get(item.agent_id);
    const s = fragment?.source;
    // Same agent id with other fields (another catalog) is rebuilt, never served stale.
    if (s === undefined || s.agent_token !== item.agent_token || s.agent_url !== item.agent_url || s.agent_type_name !== item.agent_type_name || s.operator_name !== item.operator_name) {
      const { agent_id, agent_token, agent_url, agent_type_name, operator_name } = item;
      fragment = { source: item, json: JSON.stringify({ agent_id, agent_token, agent_url, agent_type_name, operator_name }).slice(1) };
      if (fragments.size >= 10_000) fragments.clear();
      fragments.set(item.agent_id, fragment);
    }
    return `${head}"result":"${item.result}",${fragment!.json}`;
  };
}
