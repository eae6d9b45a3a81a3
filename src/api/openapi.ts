// The OpenAPI 3.1 document of everything the API serves: the contract (DESIGN.md §7, versioning),
// checked by a test against real responses.
import { AGENT_TYPES, AGENT_TYPE_ALIASES } from '../catalog/types.js';
import type { ApiLimits } from './limits.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const headerMap = {
  type: 'object',
  description: 'Header names (any case) to a string or an array of strings.',
  additionalProperties: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
};
const problemResponse = (description: string) => ({ description, content: { 'application/problem+json': { schema: ref('Problem') } } });
const errorResponses = (statuses: readonly number[]) => {
  const descriptions: Record<number, string> = {
    400: 'Invalid JSON, wrong field types or values.',
    401: 'Missing, malformed, unknown or revoked token (with WWW-Authenticate: Bearer).',
    405: 'Method not allowed (with Allow).',
    413: 'Body, array, header or nesting limit exceeded.',
    415: 'Content-Type is not JSON.',
    429: 'Rate limit exceeded (with Retry-After).',
    500: 'Unexpected error; details are logged, never returned.',
  };
  return Object.fromEntries(statuses.map((status) => [String(status), problemResponse(descriptions[status]!)]));
};
const jsonBody = (schema: object) => ({ required: true, content: { 'application/json': { schema } } });
const oneOrMany = (name: string) => ({ oneOf: [ref(name), { type: 'array', items: ref(name) }] });
const AUTH_ERRORS = [400, 401, 405, 413, 415, 429, 500] as const;

/**
 * Builds the OpenAPI 3.1 document for a base path and the limits in force.
 * @example
 * createOpenApiDocument({ basePath: '', limits: DEFAULT_LIMITS }).openapi; // '3.1.0'
 */
export function createOpenApiDocument(options: { basePath: string; limits: ApiLimits }): Record<string, unknown> {
  const { limits } = options;
  const agentType = { type: 'string', enum: [...AGENT_TYPES, ...Object.keys(AGENT_TYPE_ALIASES)] };
  return {
    openapi: '3.1.0',
    info: {
      title: 'agentwarden',
      version: '1',
      description:
        'Known Agents compatible REST interface: identify, verify and record automated visitors, and generate robots.txt rules. ' +
        `Limits: body ${limits.maxBodyBytes} bytes, ${limits.maxItems} items per array, ${limits.maxHeadersPerItem} headers per item, JSON depth ${limits.maxJsonDepth}.`,
    },
    servers: [{ url: options.basePath === '' ? '/' : options.basePath }],
    security: [{ bearer: [] }],
    paths: {
      '/agent-identifications': {
        post: {
          summary: 'Identify the agent behind one request or a batch (results keep the input order).',
          requestBody: jsonBody(oneOrMany('IdentificationRequest')),
          responses: {
            '200': { description: 'One result per input item; an object for an object, an array for an array.', content: { 'application/json': { schema: oneOrMany('Identification') } } },
            ...errorResponses(AUTH_ERRORS),
          },
        },
      },
      '/agent-verifications': {
        post: {
          summary: 'Identify and verify a request, reporting every check made.',
          requestBody: jsonBody(oneOrMany('VerificationRequest')),
          responses: {
            '200': { description: 'One verification per input item.', content: { 'application/json': { schema: oneOrMany('Verification') } } },
            ...errorResponses(AUTH_ERRORS),
          },
        },
      },
      '/robots-txts': {
        post: {
          summary: 'A robots.txt disallowing every agent of the chosen types (text/plain); ETag and If-None-Match make daily refetches cheap.',
          requestBody: jsonBody(ref('RobotsTxtRequest')),
          parameters: [{ name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } }],
          responses: {
            '200': {
              description: 'The robots.txt rules.',
              headers: { ETag: { schema: { type: 'string' } } },
              content: { 'text/plain': { schema: { type: 'string' } } },
            },
            '304': { description: 'Unchanged since the ETag given in If-None-Match.', headers: { ETag: { schema: { type: 'string' } } } },
            ...errorResponses(AUTH_ERRORS),
          },
        },
      },
      '/visits': {
        post: {
          summary: 'Record visits; invalid items are rejected by index, valid ones are stored durably before the answer.',
          requestBody: jsonBody(oneOrMany('Visit')),
          responses: {
            '202': { description: 'Accepted visits are stored.', content: { 'application/json': { schema: ref('VisitsAccepted') } } },
            ...errorResponses(AUTH_ERRORS),
          },
        },
      },
      '/openapi.json': {
        get: {
          summary: 'This document.',
          security: [],
          responses: { '200': { description: 'The OpenAPI document.', content: { 'application/json': { schema: { type: 'object', required: ['openapi', 'paths'] } } } }, ...errorResponses([405]) },
        },
      },
      '/healthz': {
        get: {
          summary: 'Liveness check.',
          security: [],
          responses: {
            '200': { description: 'The server is up.', content: { 'application/json': { schema: { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } } } } },
            ...errorResponses([405]),
          },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A project access token: aw_ followed by 43 base64url characters.' } },
      schemas: {
        IdentificationRequest: {
          type: 'object',
          required: ['request_headers'],
          properties: { id: { type: 'string', description: 'Echoed in the result.' }, request_headers: headerMap },
        },
        VerificationRequest: {
          type: 'object',
          required: ['request_headers'],
          properties: { id: { type: 'string' }, request_headers: headerMap, request_path: { type: 'string' }, request_method: { type: 'string' } },
        },
        Identification: { oneOf: [ref('IdentifiedAgent'), ref('UnknownAgent')] },
        IdentifiedAgent: {
          type: 'object',
          required: ['result', 'agent_id', 'agent_token', 'agent_url', 'agent_type_name', 'operator_name'],
          additionalProperties: false,
          properties: {
            id: { type: 'string' },
            result: { type: 'string', enum: ['verified', 'verification_failed', 'not_verifiable'] },
            agent_id: { type: 'string' },
            agent_token: { type: 'string' },
            agent_url: { type: 'string' },
            agent_type_name: { type: 'string', enum: [...AGENT_TYPES] },
            operator_name: { type: 'string' },
          },
        },
        UnknownAgent: {
          type: 'object',
          required: ['result'],
          additionalProperties: false,
          properties: { id: { type: 'string' }, result: { const: 'unknown_agent' } },
        },
        Verification: {
          type: 'object',
          required: ['result', 'verification'],
          properties: {
            id: { type: 'string' },
            result: { type: 'string', enum: ['verified', 'verification_failed', 'not_verifiable', 'unknown_agent'] },
            agent_id: { type: 'string' },
            agent_token: { type: 'string' },
            agent_url: { type: 'string' },
            agent_type_name: { type: 'string', enum: [...AGENT_TYPES] },
            operator_name: { type: 'string' },
            verification: {
              type: 'object',
              required: ['method', 'checks'],
              properties: {
                method: { type: ['string', 'null'], description: 'The method that decided, or null.' },
                checks: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['method', 'outcome', 'reason'],
                    properties: { method: { type: 'string' }, outcome: { type: 'string', enum: ['pass', 'fail', 'inconclusive'] }, reason: { type: 'string' } },
                  },
                },
              },
            },
          },
        },
        RobotsTxtRequest: {
          type: 'object',
          required: ['agent_types'],
          properties: {
            agent_types: { type: 'array', minItems: 1, items: ref('AgentType') },
            disallow: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }], description: 'Path(s) to disallow, each starting with "/" (default "/").' },
            allow: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }], description: 'Path(s) that stay allowed.' },
            comments: { type: 'boolean', description: 'Add "# <type>" and "# <agent url>" above each group.' },
            markers: {
              oneOf: [{ type: 'boolean' }, { type: 'string' }, { type: 'object', required: ['begin', 'end'], properties: { begin: { type: 'string' }, end: { type: 'string' } } }],
              description: 'Wrap the block in "# BEGIN ..." / "# END ..." lines.' },
          },
        },
        Visit: {
          type: 'object',
          required: ['request_path', 'request_method', 'request_headers'],
          description: 'Unknown fields (MCP/ACP fields, SDK versions) are accepted and ignored. Secret headers are stripped before storage.',
          properties: {
            request_path: { type: 'string', minLength: 1 },
            request_method: { type: 'string', minLength: 1 },
            request_headers: headerMap,
            response_status_code: { type: 'integer', minimum: 100, maximum: 599 },
            response_headers: headerMap,
            response_duration_in_milliseconds: { type: 'number', minimum: 0 },
            created: { type: 'string', format: 'date-time' },
          },
        },
        VisitsAccepted: {
          type: 'object',
          required: ['accepted', 'rejected'],
          additionalProperties: false,
          properties: {
            accepted: { type: 'integer', minimum: 0 },
            rejected: { type: 'array', items: ref('RejectedItem') },
          },
        },
        RejectedItem: {
          type: 'object',
          required: ['index', 'errors'],
          additionalProperties: false,
          properties: { index: { type: 'integer', minimum: 0 }, errors: { type: 'array', items: ref('FieldError') } },
        },
        FieldError: {
          type: 'object',
          required: ['pointer', 'code', 'message'],
          additionalProperties: false,
          properties: { pointer: { type: 'string', description: 'RFC 6901 JSON pointer into the request body.' }, code: { type: 'string' }, message: { type: 'string' } },
        },
        Problem: {
          type: 'object',
          description: 'RFC 9457 problem details.',
          required: ['type', 'title', 'status', 'detail'],
          properties: {
            type: { type: 'string' },
            title: { type: 'string' },
            status: { type: 'integer' },
            detail: { type: 'string' },
            errors: { type: 'array', items: ref('FieldError') },
          },
        },
        AgentType: agentType,
      },
    },
  };
}
