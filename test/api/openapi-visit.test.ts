// The OpenAPI Visit and StoredVisit schemas against the code: every field POST /visits keeps and
// every field GET /visits returns is documented, no documented field is one the code drops, and
// each value the code produces is one its schema accepts.
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/api/limits.js';
import { createOpenApiDocument } from '../../src/api/openapi.js';
import { visitJson } from '../../src/api/visit-json.js';
import { createEngine } from '../../src/index.js';
import { parseVisit, type Visit } from '../../src/visits/visit.js';
import type { StoredVisit } from '../../src/visits/visit-store.js';
import { checkSchema } from '../server/schema-check.js';

// Every field of a Visit, as parseVisit returns it: `Required` makes tsc fail here when Visit
// gains a field this does not set, so a new field cannot go undocumented unnoticed.
const FULL_VISIT: Required<Visit> = {
  request_path: '/tools?q=1',
  request_method: 'POST',
  request_headers: { 'user-agent': 'GPTBot/1.2', host: 'example.com' },
  response_status_code: 403,
  response_headers: { 'content-type': 'text/plain' },
  response_duration_in_milliseconds: 1.5,
  created: '2026-11-21T12:00:00.000Z',
  client_ip: '203.0.113.7',
  is_blocked: true,
  decision: { rule: 'deny-verification-failed', action: 'deny', report_only: false },
  mcp_request_method: 'tools/call',
  mcp_request_tool_name: 'search',
  mcp_request_client_info_name: 'claude-ai',
  mcp_request_client_info_version: '0.1.0',
  mcp_response_result_is_error: false,
  mcp_response_error_code: -32602,
  mcp_response_error_message: 'Invalid params',
  acp_response_body: { id: 'checkout_1', status: 'ready_for_payment' },
  ucp_response_body: { status: 'completed' },
};

// Every field of a stored visit, the same way.
const { client_ip: _sent, ...visitFields } = FULL_VISIT;
const FULL_STORED: Required<StoredVisit> = {
  ...visitFields,
  id: '7',
  project_id: 'p1',
  received: Date.parse('2026-11-21T12:00:01.000Z'),
  time: Date.parse('2026-11-21T12:00:00.000Z'),
  agent_id: 'gptbot',
  agent_type: 'AI Data Scraper',
  result: 'verification_failed',
  client_ip: '203.0.113.7',
  client_ip_header: 'x-forwarded-for',
  verification: { method: 'ip-ranges', checks: [{ method: 'ip-ranges', outcome: 'fail', reason: 'ip-not-in-range' }] },
  referral: null,
};

const document = createOpenApiDocument({ basePath: '', limits: DEFAULT_LIMITS }) as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } };
const schemas = document.components.schemas;

/** The schema closed to undocumented members, so the check names any field it does not list. */
function closed(name: string) {
  return { ...schemas[name], additionalProperties: false };
}

describe('the OpenAPI Visit schema (POST /visits)', () => {
  it('lists exactly the fields parseVisit keeps', () => {
    const parsed = parseVisit(FULL_VISIT);
    expect(parsed).toEqual({ ok: true, visit: FULL_VISIT });
    expect(Object.keys(schemas['Visit']!.properties).sort()).toEqual(Object.keys(FULL_VISIT).sort());
  });

  it('accepts a visit with every field', () => {
    expect(checkSchema(FULL_VISIT, closed('Visit'), document)).toEqual([]);
  });

  it('documents is_blocked and decision, which the middleware sends', () => {
    expect(schemas['Visit']!.properties).toHaveProperty('is_blocked.type', 'boolean');
    expect(schemas['Visit']!.properties).toHaveProperty('decision.$ref', '#/components/schemas/VisitDecision');
    expect(checkSchema({ rule: 'deny-agent', action: 'block' }, schemas['VisitDecision']!, document)).toEqual(['/action: "block" not in enum']);
  });
});

describe('the OpenAPI StoredVisit schema (GET /visits, GET /visits/{id}, the stream)', () => {
  const json = visitJson(FULL_STORED, createEngine().catalog);

  it('lists exactly the fields a stored visit is answered with', () => {
    expect(Object.keys(schemas['StoredVisit']!.properties).sort()).toEqual(Object.keys(json).sort());
  });

  it('accepts a stored visit with every field', () => {
    expect(checkSchema(json, closed('StoredVisit'), document)).toEqual([]);
  });
});
