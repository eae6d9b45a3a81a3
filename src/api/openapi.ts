// The OpenAPI 3.1 document of everything the API serves: the contract (DESIGN.md §7, versioning),
// checked by a test against real responses.
import { AGENT_TYPES, AGENT_TYPE_ALIASES } from '../catalog/types.js';
import { MAX_LIST_ITEMS } from '../robots/options.js';
import type { ApiLimits } from './limits.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const headerMap = {
  type: 'object',
  description: 'Header names (any case) to a string or an array of strings.',
  additionalProperties: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
};
const clientIpField = {
  type: 'string',
  description:
    "The visitor's address as the caller saw it (its socket or platform): an IPv4 or IPv6 address, stored in canonical form (IPv4-mapped IPv6 as IPv4, an IPv6 zone id dropped). Used before any header; anything else is a 400 naming /client_ip.",
  examples: ['203.0.113.7', '2001:db8::7'],
};
// What the site did with the request: sent with a visit (POST /visits) and returned as sent (GET /visits).
const visitOutcomeFields = {
  is_blocked: {
    type: 'boolean',
    description:
      "Whether the site refused the request. agentwarden's middleware sends it with every decision: true when the policy denied the request (not in report-only mode) and answered it with the denial. The Known Agents WordPress plugin sends true when the site answered with a 403.",
  },
  decision: { ...ref('VisitDecision'), description: "What the site's access policy decided; absent when no rule applied (or the site has no policy)." },
};
// MCP calls (the SDKs take them from the JSON-RPC body and the response) and agentic-commerce
// response bodies, kept as sent and returned with the visit.
const visitProtocolFields = {
  mcp_request_method: { type: 'string', description: 'The JSON-RPC method of an MCP request (tools/call, ...).' },
  mcp_request_tool_name: { type: 'string', description: 'The tool an MCP tools/call named.' },
  mcp_request_client_info_name: { type: 'string', description: "The MCP client's clientInfo.name." },
  mcp_request_client_info_version: { type: 'string', description: "The MCP client's clientInfo.version." },
  mcp_response_result_is_error: { type: 'boolean', description: "The MCP result's isError." },
  mcp_response_error_code: { type: 'integer', description: 'The JSON-RPC error code of the MCP response.' },
  mcp_response_error_message: { type: 'string', description: 'The JSON-RPC error message of the MCP response.' },
  acp_response_body: { type: 'object', additionalProperties: true, description: 'An ACP (Agentic Commerce Protocol) response body, kept whole.' },
  ucp_response_body: { type: 'object', additionalProperties: true, description: 'A UCP (agentic commerce) response body, kept whole.' },
};
// Response headers of the contract, declared once in components.headers and referred to by every
// response that sends them.
const RESPONSE_HEADERS = {
  'WWW-Authenticate': {
    description: 'The challenge of a 401 (RFC 9110 §11.6.1): `Bearer realm="agentwarden"`, with `error="invalid_token"` when a token was sent but is not valid (RFC 6750 §3).',
    required: true,
    schema: { type: 'string' },
  },
  Allow: { description: 'The methods the resource takes (RFC 9110 §10.2.1); HEAD wherever GET is.', required: true, schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds to wait before sending the request again (RFC 9110 §10.2.3).', required: true, schema: { type: 'integer', minimum: 0 } },
  'Accept-Post': { description: 'The media types the route takes, when Content-Type was refused.', schema: { type: 'string' } },
  'Accept-Encoding': { description: 'The content codings the route takes, when Content-Encoding was refused (RFC 9110 §15.5.16).', schema: { type: 'string' } },
  ETag: { description: 'The entity tag of the representation; send it in If-None-Match to revalidate.', schema: { type: 'string' } },
  'Content-Disposition': { description: 'CSV only: `attachment; filename="<name>.csv"` (RFC 6266).', schema: { type: 'string' } },
  'X-Next-Cursor': { description: 'CSV pages only: the `after` of the next (older) page; absent on the last page.', schema: { type: 'string' } },
} as const;
type ResponseHeader = keyof typeof RESPONSE_HEADERS;
const headerRefs = (names: readonly ResponseHeader[]) => Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

/** A response with its description, the headers it sends (declared once) and its content. */
const response = (description: string, headers: readonly ResponseHeader[], content?: object) => ({
  description,
  ...(headers.length === 0 ? {} : { headers: headerRefs(headers) }),
  ...(content === undefined ? {} : { content }),
});
const problemResponse = (description: string, headers: readonly ResponseHeader[] = [], schema = 'Problem') => response(description, headers, { 'application/problem+json': { schema: ref(schema) } });

/** How an error status is documented: what it means, and the headers it comes with. */
interface ErrorDoc {
  readonly description: string;
  readonly headers?: readonly ResponseHeader[];
}

const ERROR_DOCS: Readonly<Record<number, ErrorDoc>> = {
  400: { description: 'Invalid JSON, wrong field types or values.' },
  401: {
    description:
      'Not authenticated (`unauthorized`): a project token missing, malformed, unknown or revoked (errors[].header `Authorization`, with the reason as its code), or no valid admin session cookie, as the operation\'s security says.',
    headers: ['WWW-Authenticate'],
  },
  403: { description: "An admin session request that changes state without the session's X-CSRF-Token (`forbidden`; errors[].header `X-CSRF-Token`)." },
  404: { description: 'An admin session named a project (?project=) that does not exist.' },
  405: { description: 'Method not allowed.', headers: ['Allow'] },
  409: { description: 'Conflict; retry after Retry-After.', headers: ['Retry-After'] },
  413: { description: 'Body, array, header or nesting limit exceeded.' },
  415: { description: 'Content-Type is not JSON (with Accept-Post), or a Content-Encoding other than identity (with Accept-Encoding); errors[].header names which.', headers: ['Accept-Post', 'Accept-Encoding'] },
  429: { description: 'Rate limit exceeded.', headers: ['Retry-After'] },
  500: { description: 'Unexpected error; details are logged, never returned.' },
  503: { description: 'A store (visits, or projects for the token check) cannot answer now; nothing was stored.', headers: ['Retry-After'] },
};

/**
 * Problem+json responses for the given statuses, described as this API answers them, with the
 * headers each status comes with (WWW-Authenticate on 401, Allow on 405, Retry-After on 409, 429
 * and 503, Accept-Post and Accept-Encoding on 415). `overrides` describes a status otherwise for one
 * operation: a string keeps the status's headers, an ErrorDoc replaces them too.
 */
export const openApiErrorResponses = (statuses: readonly number[], overrides: Readonly<Record<number, string | ErrorDoc>> = {}) =>
  Object.fromEntries(
    statuses.map((status) => {
      const override = overrides[status];
      const doc = typeof override === 'string' ? { ...ERROR_DOCS[status], description: override } : (override ?? ERROR_DOCS[status]);
      if (doc === undefined) throw new RangeError(`openApiErrorResponses: no description of status ${status}`);
      return [String(status), problemResponse(doc.description, doc.headers)];
    }),
  );

// A query parameter repeated or not percent-encoded UTF-8 is refused on every operation (the
// handler checks the query before any route runs).
const INVALID_QUERY = 'a query parameter given more than once or not percent-encoded UTF-8 (`invalid-query`; errors[].parameter names it).';

/** Every operation of `paths` with the invalid-query 400 documented, added to its 400 when it has one; the operations given are not changed. */
function withInvalidQuery(paths: Record<string, Record<string, unknown>>): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    Object.entries(paths).map(([path, operations]) => [
      path,
      Object.fromEntries(
        Object.entries(operations).map(([method, operation]) => {
          const { responses, ...rest } = operation as { responses: Record<string, { description: string }> };
          const bad = responses['400'];
          const documented = bad === undefined ? problemResponse(`The request has ${INVALID_QUERY}`) : { ...bad, description: `${bad.description} Or the request has ${INVALID_QUERY}` };
          return [method, { ...rest, responses: { ...responses, '400': documented } }];
        }),
      ),
    ]),
  );
}

const jsonBody = (schema: object) => ({ required: true, content: { 'application/json': { schema } } });
const oneOrMany = (name: string) => ({ oneOf: [ref(name), { type: 'array', items: ref(name) }] });
// The routes a project token opens (the Known Agents ones).
const TOKEN_ERRORS = [400, 401, 403, 405, 413, 415, 429, 500, 503] as const;
// The routes a project token or an admin session naming the project with ?project= opens.
const READ_ERRORS = [400, 401, 403, 404, 405, 429, 500, 503] as const;
const TOKEN_OR_ADMIN = [{ bearer: [] }, { adminSession: [] }];
// A token reaches its own project only: naming another with ?project= is refused, whatever the route.
const FORBIDDEN_OTHER_PROJECT =
  "The `project` query parameter names another project than the token's (`forbidden`; errors[].parameter `project`, code `other-project`): a token reaches only its own project.";
// Routes that change state and take an admin session too: it must send its CSRF token.
const FORBIDDEN_OTHER_PROJECT_OR_CSRF = `${FORBIDDEN_OTHER_PROJECT} Or an admin session request without the session's X-CSRF-Token (errors[].header \`X-CSRF-Token\`).`;
const queryParameter = (name: string, description: string, schema: object = { type: 'string' }) => ({ name, in: 'query', required: false, description, schema });
const TOKEN_PARAMETERS = [queryParameter('project', "The token's own project, or left out: a token reaches only its own project, and naming another is a 403.")];
const READ_PARAMETERS = [
  queryParameter('project', "The project: required with an admin session; with a token, the token's own project or left out (naming another is a 403)."),
];
const CSRF_PARAMETER = {
  name: 'X-CSRF-Token',
  in: 'header',
  required: false,
  description: "Admin sessions: the session's CSRF token (from POST /admin/login or GET /admin/session); without it a request that changes state is a 403. Tokens need none.",
  schema: { type: 'string' },
};
const FILTER_PARAMETERS = [
  queryParameter('agent', 'Only visits of this agent id (a catalog id, unlisted:<token> for a bot the catalog does not list, or probe:<kind> for an attack payload sent as the User-Agent, or as a Log4Shell or Shellshock payload in another header or the path); "none": visits without an agent (browsers and unknown clients); "any": visits of every agent, unlisted bots and probes included.'),
  queryParameter('agent_type', 'Only visits of agents of this type (legacy aliases accepted); "none": without a type.'),
  queryParameter('result', 'Only visits with this identification result.', { type: 'string', enum: ['verified', 'verification_failed', 'not_verifiable', 'unknown_agent'] }),
  queryParameter('referral', 'Only human visits referred by this AI product; "none": without a referral; "any": every AI referral.'),
  queryParameter('path', 'Only visits to this path (without its query string).'),
  queryParameter('status', 'Only visits answered with this status code (100-599); "none": sent without one. Per path (top paths, by=path), counted from the raw visits kept (retention).'),
];
const idParameter = (description: string) => ({ name: 'id', in: 'path', required: true, description, schema: { type: 'string' } });
const RANGE_PARAMETERS = [
  queryParameter('from', 'Range start: ISO 8601 or milliseconds since the epoch (default: 24 hours before `to`).'),
  queryParameter('to', 'Range end, exclusive: ISO 8601 or milliseconds since the epoch (default: now).'),
];
const FORMAT_PARAMETER = queryParameter(
  'format',
  "csv for a CSV download (RFC 4180; also chosen by Accept: text/csv). A text cell a spreadsheet could read as a formula (starting with = + - @ ; TAB or CR, the fullwidth forms of = + - @, or one of them after leading whitespace) gets a leading '.",
  { type: 'string', enum: ['json', 'csv'] },
);
// A robots.txt path or a list of them (POST /robots-txts, saved rules): never empty, at most MAX_LIST_ITEMS.
const robotsPaths = { oneOf: [{ type: 'string' }, { type: 'array', minItems: 1, maxItems: MAX_LIST_ITEMS, items: { type: 'string' } }] };
/** The 200 of a route that answers JSON or, asked for it, CSV (a download; `paged` with X-Next-Cursor). */
const jsonOrCsv = (description: string, schema: object, paged = false) =>
  response(description, paged ? ['Content-Disposition', 'X-Next-Cursor'] : ['Content-Disposition'], { 'application/json': { schema }, 'text/csv': { schema: { type: 'string' } } });

/**
 * Builds the OpenAPI 3.1 document for a base path and the limits in force.
 * @example
 * createOpenApiDocument({ basePath: '', limits: DEFAULT_LIMITS }).openapi; // '3.1.0'
 */
// RFC 9457 problem details, the body of every 4xx and 5xx; VisitsProblem extends it.
const PROBLEM_SCHEMA = {
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
};

// An identification's and a verification's robots.txt token, described alike.
const AGENT_TOKEN_SCHEMA = {
  type: 'string',
  description: "The agent's robots.txt token; empty for an attack probe and for an agent that sends no product token of its own (known only by a host or URL in its User-Agent).",
} as const;

export function createOpenApiDocument(options: {
  basePath: string;
  limits: ApiLimits;
  /** Operations of routes added beside the built-in ones (admin, dashboard), by path and lower-case method. */
  extraPaths?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}): Record<string, unknown> {
  const { limits } = options;
  const agentType = { type: 'string', enum: [...AGENT_TYPES, ...Object.keys(AGENT_TYPE_ALIASES)] };
  const document = {
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
          parameters: TOKEN_PARAMETERS,
          requestBody: jsonBody(oneOrMany('IdentificationRequest')),
          responses: {
            '200': { description: 'One result per input item; an object for an object, an array for an array.', content: { 'application/json': { schema: oneOrMany('Identification') } } },
            ...openApiErrorResponses(TOKEN_ERRORS, { 403: FORBIDDEN_OTHER_PROJECT }),
          },
        },
      },
      '/agent-verifications': {
        post: {
          summary: 'Identify and verify a request, reporting every check made.',
          parameters: TOKEN_PARAMETERS,
          requestBody: jsonBody(oneOrMany('VerificationRequest')),
          responses: {
            '200': { description: 'One verification per input item.', content: { 'application/json': { schema: oneOrMany('Verification') } } },
            ...openApiErrorResponses(TOKEN_ERRORS, { 403: FORBIDDEN_OTHER_PROJECT }),
          },
        },
      },
      '/robots-txts': {
        post: {
          summary:
            'A robots.txt disallowing every agent of the chosen types (text/plain), with agents disallowed or allowed by name on top (extensions disallow_agents, allow_agents); ETag and If-None-Match make daily refetches cheap.',
          security: TOKEN_OR_ADMIN,
          requestBody: jsonBody(ref('RobotsTxtRequest')),
          parameters: [{ name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } }, ...READ_PARAMETERS, CSRF_PARAMETER],
          responses: {
            '200': response('The robots.txt rules.', ['ETag'], { 'text/plain': { schema: { type: 'string' } } }),
            '304': response('Unchanged since the ETag given in If-None-Match.', ['ETag']),
            ...openApiErrorResponses([...TOKEN_ERRORS, 404], { 403: FORBIDDEN_OTHER_PROJECT_OR_CSRF }),
          },
        },
      },
      '/visits': {
        get: {
          security: TOKEN_OR_ADMIN,
          summary: 'A page of the timeline, newest first; follow `next` with `after` for older visits.',
          parameters: [
            queryParameter('limit', 'Visits per page: 1 to 1,000 (default 50); for CSV up to 100,000 (default 10,000). A page also ends once it holds 32 Mi characters of visits (large headers), with `next` (or the CSV\'s X-Next-Cursor header) going on from there.', { type: 'integer', minimum: 1 }),
            queryParameter('after', 'The `next` cursor of the previous page.'),
            ...FILTER_PARAMETERS,
            FORMAT_PARAMETER,
            ...READ_PARAMETERS,
          ],
          responses: { '200': jsonOrCsv('One page.', ref('VisitPage'), true), ...openApiErrorResponses(READ_ERRORS, { 403: FORBIDDEN_OTHER_PROJECT }) },
        },
        post: {
          summary: 'Record visits; invalid items are rejected by index, valid ones are stored durably before the answer.',
          description:
            'With an `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header), the batch is stored at most once per project and key within 24 hours, ' +
            'across restarts and across servers sharing the store: a repeat is answered with the first answer, byte for byte, and `Idempotent-Replayed: true`. ' +
            'Send one key per batch and the same key on every retry of it.',
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description: 'A key for this batch, unique per project within 24 hours (a UUID, say): 1 to 255 letters, digits and `. _ ~ : + / = -`, bare or as a Structured Field String in double quotes.',
              schema: { type: 'string', pattern: '^("[A-Za-z0-9._~:+/=-]{1,255}"|[A-Za-z0-9._~:+/=-]{1,255})$' },
            },
            ...TOKEN_PARAMETERS,
          ],
          requestBody: jsonBody(oneOrMany('Visit')),
          responses: {
            '202': {
              description: 'Accepted visits are stored (or, for a repeated Idempotency-Key, were stored by the first request, whose answer this is).',
              headers: { 'Idempotent-Replayed': { description: '"true" when this answers a repeated Idempotency-Key from the first request.', schema: { type: 'string', enum: ['true'] } } },
              content: { 'application/json': { schema: ref('VisitsAccepted') } },
            },
            ...openApiErrorResponses([...TOKEN_ERRORS, 409, 422, 501], {
              403: FORBIDDEN_OTHER_PROJECT,
              409: 'A request with this Idempotency-Key is being stored and its outcome is not known yet (`idempotency-key-in-use`); nothing from this request was stored. Retry after Retry-After to get its answer.',
              422: 'This Idempotency-Key was used for a request with another body (`idempotency-key-reused`); nothing from this request was stored.',
              501: "An Idempotency-Key was sent, but this server's visit store keeps no keys.",
              503:
                'The visit store cannot take the visits now. `service-unavailable`: nothing from this request was stored. ' +
                '`store-outcome-unknown`: a write was under way when the store failed, so some or all of the visits may be stored; only a retry with the same Idempotency-Key is safe.',
            }),
            '400': problemResponse(
              'Invalid JSON, wrong field types or values (when no visit is valid, with `accepted` and `rejected` as in a 202), or a malformed Idempotency-Key (`invalid-header`, naming the header in `errors[].header`).',
              [],
              'VisitsProblem',
            ),
          },
        },
      },
      '/logs/wordpress': {
        post: {
          summary: "Record the visit log of the WordPress plugin (Known Agents', formerly Dark Visitors'): NDJSON, one visit per line, gzip-compressed or not.",
          parameters: TOKEN_PARAMETERS,
          description:
            'Each line is a visit as POST /visits takes it (extra fields such as `wordpress_plugin_version` are ignored); lines that are not JSON or not a valid visit are rejected by index ' +
            '(non-empty lines counted from 0) while the others are stored. At most 16 MiB once decompressed (the plugin caps its log there) and 50,000 lines; the compressed body is held to the server body limit.',
          requestBody: {
            required: true,
            content: {
              'text/plain': { schema: { type: 'string', description: 'NDJSON: one Visit JSON object per line. Send with `Content-Encoding: gzip` to compress it.' } },
              'application/x-ndjson': { schema: { type: 'string' } },
            },
          },
          responses: {
            '202': { description: 'Accepted visits are stored.', content: { 'application/json': { schema: ref('VisitsAccepted') } } },
            ...openApiErrorResponses(TOKEN_ERRORS, {
              403: FORBIDDEN_OTHER_PROJECT,
              413: 'Past 16 MiB decompressed, past 50,000 lines, or a compressed body past the body limit.',
              415: 'Another media type than text/plain or NDJSON (with Accept-Post), or a content coding other than gzip (with Accept-Encoding).',
              503: 'The visit store cannot take the visits now; see POST /visits.',
            }),
            '400': problemResponse('Not gzip data (with Content-Encoding: gzip), not UTF-8, empty, or no line is a valid visit (then with `accepted` and `rejected` as in a 202).', [], 'VisitsProblem'),
          },
        },
      },
      '/user': {
        get: {
          summary: 'What the WordPress plugin asks before it tracks and blocks: both allowed (`is_analytics_allowed`, `is_robots_txt_enforcement_allowed`); no browser script (`analytics_script_tag` is empty).',
          parameters: TOKEN_PARAMETERS,
          responses: {
            '200': {
              description: 'The plugin\'s account fields.',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['is_analytics_allowed', 'is_robots_txt_enforcement_allowed', 'analytics_script_tag'],
                    properties: { is_analytics_allowed: { type: 'boolean' }, is_robots_txt_enforcement_allowed: { type: 'boolean' }, analytics_script_tag: { type: 'string', description: 'Always empty: this server has no browser script.' } },
                  },
                },
              },
            },
            ...openApiErrorResponses([400, 401, 403, 405, 429, 500, 503], { 403: FORBIDDEN_OTHER_PROJECT }),
          },
        },
      },
      '/user-agent-strings-lists': {
        post: {
          summary: "The WordPress plugin's blocking list: the whole User-Agent strings that this project's visits by agents of the given types carried, each one naming its agent by itself.",
          description:
            'The plugin answers 403 to a request whose User-Agent is exactly one of them, and fetches the list once a day. Only strings seen in the latest 1,000 visits of each type are known, ' +
            'so an agent is blocked from its next visit with a string on. A browser header that an agent known by its signature sent (ChatGPT agent) is never listed.',
          parameters: TOKEN_PARAMETERS,
          requestBody: jsonBody({
            type: 'object',
            required: ['agent_types'],
            properties: { agent_types: { type: 'array', minItems: 1, maxItems: limits.maxItems, items: { type: 'string' }, description: 'Agent types (legacy aliases accepted); past maxItems a 413 (max-items).' } },
          }),
          responses: {
            '200': { description: 'The strings, sorted.', content: { 'application/json': { schema: { type: 'array', items: { type: 'string' } } } } },
            ...openApiErrorResponses(TOKEN_ERRORS, { 403: FORBIDDEN_OTHER_PROJECT, 400: 'agent_types missing, empty, or naming an unknown type (errors[].pointer names the item).' }),
          },
        },
      },
      '/visits/{id}': {
        get: {
          security: TOKEN_OR_ADMIN,
          summary: 'One visit of the project, with everything stored about it: headers (secrets stripped), response, client address and its header, referral, and every verification check with its reason.',
          parameters: [idParameter('The visit id (as /visits lists it).'), ...READ_PARAMETERS],
          responses: {
            '200': { description: 'The visit.', content: { 'application/json': { schema: ref('StoredVisit') } } },
            ...openApiErrorResponses(READ_ERRORS, { 403: FORBIDDEN_OTHER_PROJECT, 404: 'The project has no visit with this id (or an admin session named a project that does not exist).' }),
          },
        },
      },
      '/visits/stream': {
        get: {
          security: TOKEN_OR_ADMIN,
          summary:
            'The live timeline as Server-Sent Events: `id: <visit id>` and `data: <StoredVisit JSON>` per visit, a `retry:` hint, a comment heartbeat every 15 s. ' +
            'Resume with Last-Event-ID (or ?last_event_id=): every later visit is replayed first, without gaps or duplicates.',
          parameters: [
            { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' } },
            queryParameter('last_event_id', 'As Last-Event-ID, for clients that cannot set headers.'),
            ...FILTER_PARAMETERS,
            ...READ_PARAMETERS,
          ],
          responses: {
            '200': {
              description:
                'An endless event stream. Events wait for a reader that falls behind up to a bound (default 10,000 events or 16 MiB per stream, 64 MiB over all streams of the server); ' +
                'past it the stream drops them, sends `event: closed` with `data: {"reason":"too-far-behind"}` (no id) and ends, and the client resumes with Last-Event-ID, missing nothing. ' +
                'The token or admin session that opened the stream is asked about again (about once a second while events flow, and at heartbeats): once it is no longer valid (logged out, a new admin secret, the token revoked or rotated, the project deleted), ' +
                'the stream sends `event: closed` with `data: {"reason":"credential-revoked"}` and ends, and a reconnect is refused (401, or 404 for a deleted project).',
              content: { 'text/event-stream': { schema: { type: 'string' } } },
            },
            ...openApiErrorResponses(READ_ERRORS, {
              403: FORBIDDEN_OTHER_PROJECT,
              429: 'Too many event streams open (`too-many-streams`): for this project token or admin session (default 32), or on this server (default 1,000). Or the token is over its rate limit (`rate-limited`).',
            }),
          },
        },
      },
      '/stats': {
        get: {
          security: TOKEN_OR_ADMIN,
          summary:
            'Visit counts over time buckets by one dimension: every bucket of the range (zeros included), the most frequent keys one by one, the rest in `other`. ' +
            'Buckets are whole: counting starts at the start of the bucket holding `from` (UTC), which the answer gives as its `from`; `to` cuts to the millisecond.',
          parameters: [
            ...RANGE_PARAMETERS,
            queryParameter('interval', 'Bucket width (default hour).', { type: 'string', enum: ['minute', 'hour', 'day'] }),
            queryParameter('by', 'What to count by (default agent_type); status is the response status code (null: none).', { type: 'string', enum: ['agent', 'agent_type', 'result', 'path', 'referral', 'status'] }),
            queryParameter('limit', 'Keys reported one by one: 1 to 1,000 (default 10).', { type: 'integer', minimum: 1, maximum: 1000 }),
            ...FILTER_PARAMETERS,
            FORMAT_PARAMETER,
            ...READ_PARAMETERS,
          ],
          responses: { '200': jsonOrCsv('The counts.', ref('Stats')), ...openApiErrorResponses(READ_ERRORS, { 403: FORBIDDEN_OTHER_PROJECT }) },
        },
      },
      '/stats/top-paths': {
        get: {
          security: TOKEN_OR_ADMIN,
          summary: 'The most visited (agent, path) pairs of catalog agents; agent=none for visitors without one.',
          parameters: [
            ...RANGE_PARAMETERS,
            queryParameter('limit', 'Rows: 1 to 1,000 (default 20).', { type: 'integer', minimum: 1, maximum: 1000 }),
            ...FILTER_PARAMETERS,
            FORMAT_PARAMETER,
            ...READ_PARAMETERS,
          ],
          responses: { '200': jsonOrCsv('The rows, most visited first.', ref('TopPaths')), ...openApiErrorResponses(READ_ERRORS, { 403: FORBIDDEN_OTHER_PROJECT }) },
        },
      },
      '/robots-violations': {
        get: {
          security: TOKEN_OR_ADMIN,
          summary:
            "Visits by catalog agents to paths the project's saved robots rules disallow for them (their type's rule, or their own when named in disallow_agents/allow_agents; RFC 9309 matching), with the deciding rule.",
          parameters: [
            ...RANGE_PARAMETERS,
            queryParameter('agent', "Only this catalog agent's violations."),
            queryParameter('limit', 'Rows: 1 to 10,000 (default 1,000).', { type: 'integer', minimum: 1, maximum: 10000 }),
            FORMAT_PARAMETER,
            ...READ_PARAMETERS,
          ],
          responses: { '200': jsonOrCsv('The violations, most visited first.', ref('RobotsViolations')), ...openApiErrorResponses(READ_ERRORS, { 403: FORBIDDEN_OTHER_PROJECT }) },
        },
      },
      '/stats/status-codes': {
        get: {
          security: TOKEN_OR_ADMIN,
          summary:
            "The response status codes catalog agents got: the most frequent codes as columns, the top agents as rows. Counting starts at the minute holding `from` (the hour past 10,000 minutes, the day past 10,000 hours), which the answer gives as its `from`.",
          parameters: [
            ...RANGE_PARAMETERS,
            queryParameter('limit', 'Agents: 1 to 100 (default 10).', { type: 'integer', minimum: 1, maximum: 100 }),
            queryParameter('statuses', 'Status columns: 1 to 20 (default 6).', { type: 'integer', minimum: 1, maximum: 20 }),
            ...FILTER_PARAMETERS,
            ...READ_PARAMETERS,
          ],
          responses: { '200': { description: 'The table.', content: { 'application/json': { schema: ref('StatusCodes') } } }, ...openApiErrorResponses(READ_ERRORS, { 403: FORBIDDEN_OTHER_PROJECT }) },
        },
      },
      '/stats/operators': {
        get: {
          security: TOKEN_OR_ADMIN,
          summary:
            'Crawl-to-referral ratio per AI operator: visits by its AI agents (AI types only) against human visits its AI products referred (ChatGPT for OpenAI, Gemini for Google, ...). ' +
            'Agents beyond the 1,000 most frequent of the range are not counted. Counting starts at the minute holding `from` (the hour past 10,000 minutes, the day past 10,000 hours), which the answer gives as its `from`.',
          parameters: [...RANGE_PARAMETERS, ...READ_PARAMETERS],
          responses: { '200': { description: 'The operators, most active first.', content: { 'application/json': { schema: ref('Operators') } } }, ...openApiErrorResponses(READ_ERRORS, { 403: FORBIDDEN_OTHER_PROJECT }) },
        },
      },
      '/stats/agents/{id}': {
        get: {
          security: TOKEN_OR_ADMIN,
          summary: "One agent's activity in the project over the last 10,000 days: visits by result, and when its first and last visit happened (to the millisecond).",
          parameters: [idParameter('The catalog agent id.'), ...READ_PARAMETERS],
          responses: { '200': { description: 'The activity.', content: { 'application/json': { schema: ref('AgentActivity') } } }, ...openApiErrorResponses(READ_ERRORS, { 403: FORBIDDEN_OTHER_PROJECT }) },
        },
      },
      '/agents': {
        get: {
          summary: 'Search the agent catalog (public data: no token needed), in type order then name; an exact name, id or token match comes first.',
          security: [],
          parameters: [
            queryParameter('q', 'Words in the name, id, operator, robots tokens or aliases (case-insensitive).'),
            queryParameter('type', 'Only agents of this type (legacy aliases accepted).'),
            queryParameter('operator', 'Only agents of this operator (exact).'),
            queryParameter('verification', 'Only agents this method can verify.', { type: 'string', enum: ['web-bot-auth', 'ip-ranges', 'reverse-dns'] }),
            queryParameter('respects_robots_txt', 'Only agents documented to obey robots.txt (`true`), not to (`false`), or neither (`unknown`).', { type: 'string', enum: ['true', 'false', 'unknown'] }),
            queryParameter('limit', 'Agents per page: 1 to 2,000 (default 50).', { type: 'integer', minimum: 1, maximum: 2000 }),
            queryParameter('offset', 'Skip this many (the `next_offset` of the previous page).', { type: 'integer', minimum: 0 }),
          ],
          responses: { '200': { description: 'One page of agents.', content: { 'application/json': { schema: ref('AgentPage') } } }, ...openApiErrorResponses([400, 405, 500]) },
        },
      },
      '/agents/{id}': {
        get: {
          summary: 'One catalog agent.',
          security: [],
          parameters: [idParameter('The catalog agent id.')],
          responses: {
            '200': { description: 'The agent.', content: { 'application/json': { schema: ref('CatalogAgent') } } },
            ...openApiErrorResponses([404, 405, 500], { 404: 'The catalog has no such agent.' }),
          },
        },
      },
      '/test-visits': {
        post: {
          security: TOKEN_OR_ADMIN,
          summary: "Records one visit of agentwarden's own test agent through the visit pipeline; it shows on /visits and the stream.",
          parameters: [...READ_PARAMETERS, CSRF_PARAMETER],
          requestBody: { required: false, content: { 'application/json': { schema: { type: 'object', properties: { request_path: { type: 'string', minLength: 1 } } } } } },
          responses: {
            '202': { description: 'The stored visit.', content: { 'application/json': { schema: ref('StoredVisit') } } },
            ...openApiErrorResponses([...READ_ERRORS, 413, 415], { 403: FORBIDDEN_OTHER_PROJECT_OR_CSRF }),
          },
        },
      },
      '/project-settings': {
        get: {
          security: TOKEN_OR_ADMIN,
          summary: "The project's saved robots rules and client-IP rule.",
          parameters: READ_PARAMETERS,
          responses: {
            '200': { description: 'The settings (defaults when none were saved).', content: { 'application/json': { schema: ref('ProjectSettings') } } },
            ...openApiErrorResponses(READ_ERRORS, { 403: FORBIDDEN_OTHER_PROJECT }),
          },
        },
        put: {
          security: TOKEN_OR_ADMIN,
          summary: 'Saves settings: an absent member keeps its value, robots null clears the rules. Visits use a new client-IP rule from the next request on.',
          parameters: [...READ_PARAMETERS, CSRF_PARAMETER],
          requestBody: jsonBody(ref('ProjectSettingsUpdate')),
          responses: {
            '200': { description: 'The saved settings.', content: { 'application/json': { schema: ref('ProjectSettings') } } },
            ...openApiErrorResponses([...READ_ERRORS, 413, 415], { 403: FORBIDDEN_OTHER_PROJECT_OR_CSRF }),
          },
        },
      },
      '/openapi.json': {
        get: {
          summary: 'This document.',
          security: [],
          responses: {
            '200': { description: 'The OpenAPI document.', content: { 'application/json': { schema: { type: 'object', required: ['openapi', 'paths'], additionalProperties: true } } } },
            ...openApiErrorResponses([405]),
          },
        },
      },
      '/healthz': {
        get: {
          summary: 'Liveness check.',
          security: [],
          responses: {
            '200': { description: 'The server is up.', content: { 'application/json': { schema: { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } } } } },
            ...openApiErrorResponses([405]),
          },
        },
      },
      '/readyz': {
        get: {
          summary: 'Readiness check: whether this server can take visits now.',
          description:
            'Not ready (503) while the visit store is unreachable, does not answer within 3 s, has a backlog of visits at its limit, or failed its last write in the past 30 s (no write has succeeded since; for ClickHouse, a write it refused or that timed out); with the embedded SQLite store also while its disk has less than 64 MiB free. One check serves every request for a second. Why the store is not ready goes to the server log, never into this answer.',
          security: [],
          responses: {
            '200': { description: 'Ready.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Readiness' } } } },
            '503': response('Not ready: take this server out of rotation.', ['Retry-After'], { 'application/json': { schema: { $ref: '#/components/schemas/Readiness' } } }),
            ...openApiErrorResponses([405]),
          },
        },
      },
    },
    components: {
      headers: RESPONSE_HEADERS,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A project access token: aw_ followed by 43 base64url characters.' },
        adminSession: { type: 'apiKey', in: 'cookie', name: 'aw_session', description: 'The dashboard admin session; state-changing requests also send X-CSRF-Token.' },
      },
      schemas: {
        Readiness: {
          type: 'object',
          required: ['status', 'checks'],
          properties: {
            status: { enum: ['ready', 'not_ready'] },
            checks: {
              type: 'object',
              required: ['store'],
              properties: { store: { enum: ['ok', 'busy', 'unavailable'], description: 'The visit store: ok, busy (its backlog is full) or unavailable.' } },
            },
          },
        },
        IdentificationRequest: {
          type: 'object',
          required: ['request_headers'],
          properties: {
            id: { type: 'string', description: 'Echoed in the result.' },
            request_headers: headerMap,
            request_path: { type: 'string', description: 'With its query string; signatures may cover it.' },
            request_method: { type: 'string', description: 'Signatures may cover it.' },
            client_ip: clientIpField,
          },
        },
        VerificationRequest: {
          type: 'object',
          required: ['request_headers'],
          properties: { id: { type: 'string' }, request_headers: headerMap, request_path: { type: 'string' }, request_method: { type: 'string' }, client_ip: clientIpField },
        },
        Identification: { oneOf: [ref('IdentifiedAgent'), ref('UnknownAgent')] },
        IdentifiedAgent: {
          type: 'object',
          required: ['result', 'agent_id', 'agent_token', 'agent_url', 'agent_type_name', 'operator_name'],
          additionalProperties: false,
          properties: {
            id: { type: 'string' },
            result: { type: 'string', enum: ['verified', 'verification_failed', 'not_verifiable'] },
            agent_id: { type: 'string', description: 'A catalog id; `unlisted:<token>` for a bot the catalog does not list but whose User-Agent names it (always not_verifiable, operator "Unknown", agent_url empty); or `probe:<kind>` for an attack payload sent as the User-Agent, or a Log4Shell or Shellshock payload in another header or the path (`probe:log4shell`, `probe:sql-injection`…: type Security Scanner, agent_token empty, always not_verifiable).' },
            agent_token: AGENT_TOKEN_SCHEMA,
            agent_url: { type: 'string', description: "The operator's documentation; empty for an unlisted agent." },
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
            agent_token: AGENT_TOKEN_SCHEMA,
            agent_url: { type: 'string' },
            agent_type_name: { type: 'string', enum: [...AGENT_TYPES] },
            operator_name: { type: 'string' },
            verification: ref('VerificationReport'),
          },
        },
        VerificationReport: {
          type: 'object',
          required: ['method', 'checks'],
          properties: {
            method: { type: ['string', 'null'], description: 'The method that decided, or null.' },
            checks: {
              type: 'array',
              description: 'Every verifier asked, in order; the chain stops at the first pass or fail.',
              items: {
                type: 'object',
                required: ['method', 'outcome', 'reason'],
                properties: { method: { type: 'string' }, outcome: { type: 'string', enum: ['pass', 'fail', 'inconclusive'] }, reason: { type: 'string' } },
              },
            },
          },
        },
        RobotsAgentRule: {
          description: 'An agent by catalog id or robots token (case-insensitive), or a rule with its own paths.',
          oneOf: [
            { type: 'string', minLength: 1 },
            {
              type: 'object',
              required: ['agent'],
              properties: {
                agent: { type: 'string', minLength: 1 },
                disallow: { ...robotsPaths, description: 'disallow_agents only: paths disallowed for this agent (default "/"), replacing the top-level ones.' },
                allow: { ...robotsPaths, description: 'Paths that stay allowed for this agent.' },
              },
            },
          ],
        },
        RobotsTxtRequest: {
          type: 'object',
          required: ['agent_types'],
          description: `Every list holds at most ${MAX_LIST_ITEMS} entries; a longer one is a 400 (too-many) at its pointer.`,
          properties: {
            agent_types: { type: 'array', maxItems: MAX_LIST_ITEMS, items: ref('AgentType'), description: 'Non-empty, unless disallow_agents or allow_agents names an agent.' },
            disallow_agents: {
              type: 'array',
              maxItems: MAX_LIST_ITEMS,
              items: ref('RobotsAgentRule'),
              description: 'Extension: agents disallowed by name on top of agent_types; without paths of their own they get disallow/allow. An unknown agent is a 400 at its index.',
            },
            allow_agents: {
              type: 'array',
              maxItems: MAX_LIST_ITEMS,
              items: ref('RobotsAgentRule'),
              description:
                'Extension: agents allowed by name, e.g. all AI Data Scrapers but one. Without paths the agent gets its own group with "Allow: /"; with allow paths, its type\'s lines plus those Allow lines. A "*" group elsewhere no longer applies to it (RFC 9309 §2.2.1).',
            },
            disallow: { ...robotsPaths, description: 'Path(s) to disallow, each starting with "/" (default "/").' },
            allow: { ...robotsPaths, description: 'Path(s) that stay allowed.' },
            comments: { type: 'boolean', description: 'Add "# <type>" and "# <agent url>" above each group.' },
            markers: {
              oneOf: [{ type: 'boolean' }, { type: 'string' }, { type: 'object', required: ['begin', 'end'], properties: { begin: { type: 'string' }, end: { type: 'string' } } }],
              description: 'Wrap the block in "# BEGIN ..." / "# END ..." lines.' },
          },
        },
        Visit: {
          type: 'object',
          required: ['request_path', 'request_method', 'request_headers'],
          description:
            "Fields not listed here (SDK versions, ...) are accepted and ignored; an optional field sent as null is taken as absent. Secret headers are stripped before storage. As in any HTTP request, header names are tokens (RFC 9110 §5.1) or HTTP/2 pseudo-headers (:authority), and header values, the path and the method hold no control characters (tab aside) and no unpaired surrogates: a visit with one is rejected at its pointer. A visit whose created time is older than the server's retention (--retention-days) is rejected with the code too-old, since retention would delete it.",
          properties: {
            request_path: { type: 'string', minLength: 1, maxLength: 16384 },
            request_method: { type: 'string', pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$", description: 'An HTTP method token (GET, POST, ...), at most 64 characters.' },
            request_headers: headerMap,
            response_status_code: { type: 'integer', minimum: 100, maximum: 599 },
            response_headers: headerMap,
            response_duration_in_milliseconds: { type: 'number', minimum: 0 },
            created: { type: 'string', format: 'date-time' },
            client_ip: clientIpField,
            ...visitOutcomeFields,
            ...visitProtocolFields,
          },
        },
        VisitDecision: {
          type: 'object',
          required: ['rule', 'action'],
          description: "What the site's access policy decided about the request. Other members are ignored.",
          properties: {
            rule: {
              type: 'string',
              pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$',
              description: "The rule that applied: 1 to 64 letters, digits, '.', '_' or '-'. agentwarden's middleware sends deny-verification-failed, deny-agent, deny-agent-type or allow-verified.",
            },
            action: { type: 'string', enum: ['allow', 'deny'] },
            report_only: { type: 'boolean', default: false, description: 'True when the policy only reported the decision and let the request through (is_blocked then says false). Stored visits always carry it.' },
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
          properties: {
            pointer: { type: 'string', description: 'RFC 6901 JSON pointer into the request body ("" for a query parameter or a header).' },
            parameter: { type: 'string', description: 'The query parameter at fault.' },
            header: { type: 'string', description: 'The request header at fault.' },
            code: { type: 'string' },
            message: { type: 'string' },
          },
        },
        StoredVisit: {
          type: 'object',
          description: 'A stored visit with what the pipeline learned; the optional Visit fields appear when the client sent them.',
          required: ['id', 'time', 'received', 'agent_id', 'agent_name', 'agent_type', 'result', 'client_ip', 'referral', 'request_method', 'request_path', 'request_headers'],
          properties: {
            id: { type: 'string', description: 'Opaque; orders the timeline and is the event id of the stream.' },
            time: { type: 'string', format: 'date-time', description: '`created` when sent, else `received`; a `created` more than 60 s ahead of the server\'s clock is a client clock error and gives `received`.' },
            received: { type: 'string', format: 'date-time' },
            agent_id: { type: ['string', 'null'] },
            agent_name: { type: ['string', 'null'] },
            agent_type: { type: ['string', 'null'], enum: [...AGENT_TYPES, null] },
            result: { type: 'string', enum: ['verified', 'verification_failed', 'not_verifiable', 'unknown_agent'] },
            client_ip: {
              type: ['string', 'null'],
              description: "The visitor's address, canonical IPv4 or IPv6: the client_ip the visit was sent with, else read from a header by the project's client-IP rule; null when neither gave one.",
            },
            client_ip_header: { type: 'string', description: 'The request header client_ip was read from (absent when none gave one).' },
            referral: { type: ['string', 'null'] },
            request_method: { type: 'string' },
            request_path: { type: 'string' },
            request_headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'Lower-case names; secret headers (authorization, cookie, tokens, API keys) were stripped before storage.' },
            verification: {
              ...ref('VerificationReport'),
              description: 'What verifying the agent checked when the visit was recorded; absent when nothing could be checked (no method applies to the agent, or no agent).',
            },
            response_status_code: { type: 'integer' },
            response_headers: { type: 'object', additionalProperties: { type: 'string' } },
            response_duration_in_milliseconds: { type: 'number' },
            created: { type: 'string', format: 'date-time' },
            ...visitOutcomeFields,
            ...visitProtocolFields,
          },
        },
        StatusCodes: {
          type: 'object',
          required: ['from', 'to', 'statuses', 'agents'],
          additionalProperties: false,
          properties: {
            from: { type: 'string', format: 'date-time' },
            to: { type: 'string', format: 'date-time' },
            statuses: { type: 'array', items: { type: ['string', 'null'] }, description: 'Status codes, most frequent first; null: visits sent without one.' },
            agents: {
              type: 'array',
              items: {
                type: 'object',
                required: ['agent_id', 'agent_name', 'agent_type', 'total', 'counts', 'other'],
                additionalProperties: false,
                properties: {
                  agent_id: { type: 'string' },
                  agent_name: { type: ['string', 'null'] },
                  agent_type: { type: ['string', 'null'] },
                  total: { type: 'integer', minimum: 0 },
                  counts: { type: 'array', items: { type: 'integer', minimum: 0 }, description: 'In the order of statuses.' },
                  other: { type: 'integer', minimum: 0, description: 'Visits with a status not in the columns.' },
                },
              },
            },
          },
        },
        Operators: {
          type: 'object',
          required: ['from', 'to', 'operators'],
          additionalProperties: false,
          properties: {
            from: { type: 'string', format: 'date-time' },
            to: { type: 'string', format: 'date-time' },
            operators: {
              type: 'array',
              items: {
                type: 'object',
                required: ['operator', 'crawled', 'referred', 'ratio', 'agents', 'referrals'],
                additionalProperties: false,
                properties: {
                  operator: { type: 'string' },
                  crawled: { type: 'integer', minimum: 0, description: "Visits by the operator's AI agents." },
                  referred: { type: 'integer', minimum: 0, description: "Human visits referred by the operator's AI products." },
                  ratio: { type: ['number', 'null'], description: 'crawled / referred; null when nothing was referred.' },
                  agents: {
                    type: 'array',
                    items: { type: 'object', required: ['agent_id', 'agent_name', 'count'], properties: { agent_id: { type: 'string' }, agent_name: { type: 'string' }, count: { type: 'integer', minimum: 1 } } },
                  },
                  referrals: {
                    type: 'array',
                    items: { type: 'object', required: ['referral', 'name', 'count'], properties: { referral: { type: 'string' }, name: { type: 'string' }, count: { type: 'integer', minimum: 1 } } },
                  },
                },
              },
            },
          },
        },
        AgentActivity: {
          type: 'object',
          required: ['agent_id', 'agent_name', 'visits', 'results', 'first_seen', 'last_seen'],
          additionalProperties: false,
          properties: {
            agent_id: { type: 'string' },
            agent_name: { type: ['string', 'null'] },
            visits: { type: 'integer', minimum: 0 },
            results: { type: 'object', additionalProperties: { type: 'integer' }, description: 'Visits by identification result.' },
            first_seen: { type: ['string', 'null'], format: 'date-time', description: "The time of the agent's earliest visit (when it happened, to the millisecond); null when there is none." },
            last_seen: { type: ['string', 'null'], format: 'date-time', description: "The time of the agent's latest visit (when it happened, to the millisecond); null when there is none." },
          },
        },
        CatalogAgent: {
          type: 'object',
          required: ['id', 'name', 'type', 'operator', 'url', 'description', 'robots_tokens', 'verification_methods', 'signature_agents', 'reverse_dns', 'respects_robots_txt', 'listed'],
          additionalProperties: false,
          properties: {
            id: { type: 'string' },
            name: { type: 'string' },
            type: { type: 'string', enum: [...AGENT_TYPES] },
            operator: { type: 'string' },
            url: { type: 'string', description: "The operator's documentation." },
            description: { type: ['string', 'null'] },
            robots_tokens: { type: 'array', items: { type: 'string' }, description: 'What robots.txt addresses the agent by; empty when it sends no product token of its own (known only by a host or URL in its User-Agent).' },
            verification_methods: { type: 'array', items: { type: 'string', enum: ['web-bot-auth', 'ip-ranges', 'reverse-dns'] }, description: 'Methods the catalog gives data for.' },
            signature_agents: { type: 'array', items: { type: 'string' } },
            reverse_dns: { type: 'array', items: { type: 'string' } },
            respects_robots_txt: {
              type: ['boolean', 'null'],
              description:
                "Whether the agent obeys robots.txt, as documented: by its operator where the operator says (a fetcher acting for a user, which operators say robots.txt may not stop, is false), else by ai.robots.txt; null when neither says.",
            },
            listed: { type: 'boolean', description: 'False for an agent the catalog does not list: an unlisted bot (`unlisted:<token>`) or an attack probe (`probe:<kind>`), which GET /agents/{id} also answers. robots.txt rules cannot name it.' },
          },
        },
        AgentPage: {
          type: 'object',
          required: ['total', 'agents', 'next_offset'],
          additionalProperties: false,
          properties: { total: { type: 'integer', minimum: 0 }, agents: { type: 'array', items: ref('CatalogAgent') }, next_offset: { type: ['integer', 'null'] } },
        },
        VisitPage: {
          type: 'object',
          required: ['visits', 'next'],
          additionalProperties: false,
          properties: { visits: { type: 'array', items: ref('StoredVisit') }, next: { type: ['string', 'null'], description: 'Pass as `after` for the next (older) page; null at the end.' } },
        },
        Stats: {
          type: 'object',
          required: ['from', 'to', 'interval', 'by', 'series', 'buckets', 'other', 'total'],
          additionalProperties: false,
          properties: {
            from: { type: 'string', format: 'date-time' },
            to: { type: 'string', format: 'date-time' },
            interval: { type: 'string', enum: ['minute', 'hour', 'day'] },
            by: { type: 'string', enum: ['agent', 'agent_type', 'result', 'path', 'referral', 'status'] },
            series: {
              type: 'array',
              items: {
                type: 'object',
                required: ['key', 'total'],
                additionalProperties: false,
                properties: {
                  key: { type: ['string', 'null'], description: 'null: visits without a value (no agent, no referral).' },
                  total: { type: 'integer', minimum: 0 },
                  agent_name: { type: ['string', 'null'], description: 'by=agent only.' },
                  agent_type: { type: ['string', 'null'], description: 'by=agent only.' },
                },
              },
            },
            buckets: {
              type: 'array',
              items: {
                type: 'object',
                required: ['start', 'counts', 'other'],
                additionalProperties: false,
                properties: { start: { type: 'string', format: 'date-time' }, counts: { type: 'array', items: { type: 'integer', minimum: 0 }, description: 'In the order of series.' }, other: { type: 'integer', minimum: 0 } },
              },
            },
            other: { type: 'integer', minimum: 0 },
            total: { type: 'integer', minimum: 0 },
          },
        },
        PathRow: {
          type: 'object',
          required: ['agent_id', 'agent_name', 'agent_type', 'path', 'count', 'last'],
          properties: {
            agent_id: { type: ['string', 'null'] },
            agent_name: { type: ['string', 'null'] },
            agent_type: { type: ['string', 'null'] },
            path: { type: 'string', description: 'With its query string, as robots.txt rules match it.' },
            count: { type: 'integer', minimum: 1 },
            last: { type: 'string', format: 'date-time' },
            rule: { type: 'string', description: 'The Disallow pattern that decided (violations only).' },
          },
        },
        TopPaths: {
          type: 'object',
          required: ['from', 'to', 'paths'],
          additionalProperties: false,
          properties: { from: { type: 'string', format: 'date-time' }, to: { type: 'string', format: 'date-time' }, paths: { type: 'array', items: ref('PathRow') } },
        },
        RobotsViolations: {
          type: 'object',
          required: ['from', 'to', 'robots', 'violations'],
          additionalProperties: false,
          properties: {
            from: { type: 'string', format: 'date-time' },
            to: { type: 'string', format: 'date-time' },
            robots: { oneOf: [ref('ProjectRobots'), { type: 'null' }] },
            agent_rule: {
              description: 'With ?agent=: the lines the saved rules give that agent and where they come from; null when they give it none.',
              oneOf: [
                {
                  type: 'object',
                  required: ['source', 'disallow', 'allow'],
                  additionalProperties: false,
                  properties: {
                    source: { enum: ['agent_types', 'disallow_agents', 'allow_agents'] },
                    disallow: { type: 'array', items: { type: 'string' } },
                    allow: { type: 'array', items: { type: 'string' } },
                  },
                },
                { type: 'null' },
              ],
            },
            violations: { type: 'array', items: ref('PathRow') },
          },
        },
        ProjectRobots: {
          type: 'object',
          required: ['agent_types'],
          properties: {
            agent_types: { type: 'array', items: ref('AgentType') },
            disallow: { type: 'array', items: { type: 'string' } },
            allow: { type: 'array', items: { type: 'string' } },
            disallow_agents: { type: 'array', items: ref('RobotsAgentRule'), description: 'Catalog ids, with paths where a rule has its own.' },
            allow_agents: { type: 'array', items: ref('RobotsAgentRule') },
          },
        },
        ProjectClientIp: {
          type: 'object',
          additionalProperties: false,
          description: 'Empty: the server default. See the serve flags --client-ip-headers and --trusted-proxies.',
          properties: {
            headers: {
              type: 'array',
              maxItems: 20,
              items: { type: 'string' },
              description:
                'Header names (RFC 9110 tokens), at most 20, read in order; secret headers (authorization, cookie, tokens, API keys) are refused. [] trusts no header, for a site with no proxy in front, where the client writes them all: its visits then have an address only when sent with client_ip.',
            },
            trusted_proxies: { oneOf: [{ type: 'integer', minimum: 0, maximum: 64 }, { type: 'array', maxItems: 100, items: { type: 'string' }, description: 'At most 100 CIDRs; the entry "cloudflare" stands for Cloudflare\'s published ranges.' }] },
          },
        },
        ProjectSettings: {
          type: 'object',
          required: ['robots', 'client_ip', 'site_hosts'],
          additionalProperties: false,
          properties: { robots: { oneOf: [ref('ProjectRobots'), { type: 'null' }] }, client_ip: ref('ProjectClientIp'), site_hosts: ref('SiteHosts') },
        },
        ProjectSettingsUpdate: {
          type: 'object',
          additionalProperties: false,
          description: 'Absent members keep their saved values; an unknown member is refused (400 unknown-field at its pointer).',
          properties: {
            robots: { oneOf: [ref('ProjectRobotsInput'), { type: 'null' }] },
            client_ip: ref('ProjectClientIp'),
            site_hosts: { oneOf: [ref('SiteHosts'), { type: 'null' }] },
          },
        },
        SiteHosts: {
          type: 'array',
          maxItems: 100,
          items: { type: 'string', examples: ['example.com', 'www.example.com', 'example.com:8443'] },
          description:
            'The hosts the site answers on, each listed (no wildcards), saved lower-case without the default port, international names in punycode. A Web Bot Auth signature whose covered @authority is another host fails verification (authority-not-ours): a crawler signature made for another site and replayed here. Empty (or null on update): any host.',
        },
        ProjectRobotsInput: {
          type: 'object',
          required: ['agent_types'],
          description: `The POST /robots-txts options the violations report checks (rendering options such as comments are refused); every list holds at most ${MAX_LIST_ITEMS} entries.`,
          properties: {
            agent_types: { type: 'array', maxItems: MAX_LIST_ITEMS, items: ref('AgentType'), description: 'Non-empty, unless disallow_agents or allow_agents names an agent.' },
            disallow: robotsPaths,
            allow: robotsPaths,
            disallow_agents: { type: 'array', maxItems: MAX_LIST_ITEMS, items: ref('RobotsAgentRule') },
            allow_agents: { type: 'array', maxItems: MAX_LIST_ITEMS, items: ref('RobotsAgentRule') },
          },
        },
        Problem: PROBLEM_SCHEMA,
        VisitsProblem: {
          ...PROBLEM_SCHEMA,
          description:
            'A problem of POST /visits or POST /logs/wordpress: a Problem, and when no visit of the request is valid (a 400 `validation-failed`) also `accepted` (0) and `rejected`, each rejected visit by index with its errors, as a 202 lists them.',
          properties: { ...PROBLEM_SCHEMA.properties, accepted: { type: 'integer', const: 0 }, rejected: { type: 'array', items: ref('RejectedItem') } },
        },
        AgentType: agentType,
      },
    },
  };
  const paths: Record<string, Record<string, unknown>> = { ...document.paths };
  for (const [path, operations] of Object.entries(options.extraPaths ?? {})) paths[path] = { ...paths[path], ...operations };
  return { ...document, paths: withInvalidQuery(paths) };
}
