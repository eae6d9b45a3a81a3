// The agent catalog as a read API: search agents by name, token or operator, filter by type or
// verification method, and read one agent. Public data (it ships with the package), so no auth.
import { resolveAgentType } from '../catalog/catalog.js';
import type { Catalog } from '../catalog/catalog.js';
import type { Agent, AgentType } from '../catalog/types.js';
import { AGENT_TYPES } from '../catalog/types.js';
import { VERIFICATION_METHODS, verificationMethodsOf } from '../catalog/verification-methods.js';
import { isUnlistedAgentId } from '../catalog/unlisted-agent.js';
import { problem } from './problem.js';
import { enumParam, integerParam, readProblem } from './read-query.js';
import type { Route, RouteContext, RouteTable } from './route.js';
import type { ApiResponse } from './types.js';
import { VisitQueryError } from '../visits/visit-store.js';

/** An agent as the catalog API answers it: its record without the matching internals. */
export function agentJson(agent: Agent): Record<string, unknown> {
  return {
    id: agent.id,
    name: agent.name,
    type: agent.type,
    operator: agent.operator,
    url: agent.url,
    description: agent.description ?? null,
    robots_tokens: agent.robots_tokens,
    verification_methods: verificationMethodsOf(agent),
    signature_agents: agent.signature_agents ?? [],
    reverse_dns: agent.reverse_dns ?? [],
    respects_robots_txt: agent.respects_robots_txt ?? null,
    // False for an unlisted agent or an attack probe: robots.txt cannot name it.
    listed: !isUnlistedAgentId(agent.id),
  };
}

const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-cache' } as const;

/** One agent's searchable text, lower-cased once: name, id, operator, robots tokens, aliases. */
function searchText(agent: Agent): string {
  return [agent.name, agent.id, agent.operator, ...agent.robots_tokens, ...(agent.aliases ?? [])].join('\u0000').toLowerCase();
}

/**
 * Creates `GET /agents` (search) and `GET /agents/{id}` over a catalog.
 * @throws {TypeError} for a missing catalog.
 * @example
 * createApiHandler({ ..., routes: [createCatalogRoutes(engine.catalog)] });
 */
export function createCatalogRoutes(catalog: Catalog): RouteTable {
  if (typeof catalog?.getAgent !== 'function') throw new TypeError('catalog must be a compiled catalog');
  // Display order: type order, then name; the search text of each, made once.
  const typeOrder = new Map<string, number>(AGENT_TYPES.map((type, i) => [type, i]));
  const sorted = [...catalog.agents].sort((a, b) => typeOrder.get(a.type)! - typeOrder.get(b.type)! || a.name.localeCompare(b.name, 'en', { sensitivity: 'base' }));
  const texts = new Map(sorted.map((agent) => [agent, searchText(agent)]));

  const publicRead = (run: (context: RouteContext) => ApiResponse): Route => ({
    auth: 'none',
    json: false,
    run(context) {
      try {
        return run(context);
      } catch (error) {
        const answer = readProblem(error);
        if (answer === undefined) throw error;
        return answer;
      }
    },
  });

  return {
    '/agents': {
      GET: publicRead(({ query }) => {
        const q = (query.get('q') ?? '').trim().toLowerCase();
        if (q.length > 200) throw new VisitQueryError('q', 'q must be at most 200 characters');
        const typeName = query.get('type') || undefined;
        let type: AgentType | undefined;
        if (typeName !== undefined) {
          type = resolveAgentType(typeName);
          if (type === undefined) throw new VisitQueryError('type', `${JSON.stringify(typeName.slice(0, 60))} is not an agent type`);
        }
        const method = query.get('verification') ? enumParam(query, 'verification', VERIFICATION_METHODS, 'web-bot-auth') : undefined;
        const operator = query.get('operator') || undefined;
        // What the catalog documents of its robots.txt compliance: true, false, or nothing (unknown).
        const respects = query.get('respects_robots_txt') ? enumParam(query, 'respects_robots_txt', ['true', 'false', 'unknown'] as const, 'true') : undefined;
        const limit = integerParam(query, 'limit', { min: 1, max: 2000, fallback: 50 });
        const offset = integerParam(query, 'offset', { min: 0, max: 1_000_000, fallback: 0 });
        const matches = sorted.filter(
          (agent) =>
            (type === undefined || agent.type === type) &&
            (operator === undefined || agent.operator === operator) &&
            (method === undefined || verificationMethodsOf(agent).includes(method)) &&
            (respects === undefined || String(agent.respects_robots_txt ?? 'unknown') === respects) &&
            (q === '' || texts.get(agent)!.includes(q)),
        );
        // An exact name, id or token first: searching "gptbot" should not bury GPTBot under its namesakes.
        if (q !== '') {
          const exact = (agent: Agent) => agent.id === q || agent.name.toLowerCase() === q || agent.robots_tokens.some((token) => token.toLowerCase() === q);
          matches.sort((a, b) => Number(exact(b)) - Number(exact(a)));
        }
        const page = matches.slice(offset, offset + limit);
        const body = { total: matches.length, agents: page.map(agentJson), next_offset: offset + limit < matches.length ? offset + limit : null };
        return { status: 200, headers: JSON_HEADERS, body: JSON.stringify(body) };
      }),
    },
    '/agents/{id}': {
      GET: publicRead(({ params }) => {
        const agent = catalog.getAgent(params['id']!);
        if (agent === undefined) return problem('not-found', `The catalog has no agent ${JSON.stringify(params['id']!.slice(0, 64))}.`);
        return { status: 200, headers: JSON_HEADERS, body: JSON.stringify(agentJson(agent)) };
      }),
    },
  };
}
