// A stored visit as the read APIs answer it: ISO 8601 times, the agent's catalog name, and every
// field the client sent, in one fixed order (JSON, event streams and CSV rows share it).
import type { Catalog } from '../catalog/catalog.js';
import type { StoredVisit } from '../visits/visit-store.js';
import type { CsvCell } from './csv.js';

/**
 * The JSON object of one visit (the item of `GET /visits` and the data of each stream event).
 * @example
 * visitJson(stored, engine.catalog); // { id: '7', time: '2026-11-22T00:40:00.000Z', agent_id: 'gptbot', agent_name: 'GPTBot', ... }
 */
export function visitJson(visit: StoredVisit, catalog: Catalog): Record<string, unknown> {
  const { id, time, received, agent_id, agent_type, result, client_ip, referral, request_method, request_path, request_headers, project_id: _project, ...rest } = visit;
  return {
    id,
    time: new Date(time).toISOString(),
    received: new Date(received).toISOString(),
    agent_id,
    agent_name: agent_id === null ? null : (catalog.getAgent(agent_id)?.name ?? null),
    agent_type,
    result,
    client_ip,
    referral,
    request_method,
    request_path,
    request_headers,
    ...rest,
  };
}

/** Columns of the visits CSV export. */
export const VISIT_CSV_HEADER = [
  'id',
  'time',
  'received',
  'agent_id',
  'agent_name',
  'agent_type',
  'result',
  'client_ip',
  'referral',
  'request_method',
  'request_path',
  'response_status_code',
  'user_agent',
  'referer',
] as const;

/** One visit as a CSV row, in `VISIT_CSV_HEADER` order. */
export function visitCsvRow(visit: StoredVisit, catalog: Catalog): CsvCell[] {
  return [
    visit.id,
    new Date(visit.time).toISOString(),
    new Date(visit.received).toISOString(),
    visit.agent_id,
    visit.agent_id === null ? null : (catalog.getAgent(visit.agent_id)?.name ?? null),
    visit.agent_type,
    visit.result,
    visit.client_ip,
    visit.referral,
    visit.request_method,
    visit.request_path,
    visit.response_status_code,
    visit.request_headers['user-agent'],
    visit.request_headers['referer'],
  ];
}
