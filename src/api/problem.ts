// RFC 9457 problem details (application/problem+json): the one shape of every 4xx/5xx body.
import type { FieldError } from '../field-error.js';
import { API_SECURITY_HEADERS } from './security-headers.js';
import type { ApiResponse } from './types.js';

/** The closed set of problem codes this API answers with. */
export type ProblemCode =
  | 'bad-request'
  | 'invalid-json'
  | 'validation-failed'
  | 'invalid-query'
  | 'invalid-header'
  | 'unauthorized'
  | 'wrong-admin-secret'
  | 'forbidden'
  | 'not-found'
  | 'method-not-allowed'
  | 'idempotency-key-in-use'
  | 'idempotency-key-reused'
  | 'unsupported-media-type'
  | 'request-timeout'
  | 'payload-too-large'
  | 'expectation-failed'
  | 'header-fields-too-large'
  | 'rate-limited'
  | 'too-many-streams'
  | 'internal-error'
  | 'not-implemented'
  | 'service-unavailable'
  | 'store-outcome-unknown'
  | 'http-version-not-supported';

const TITLES: Record<ProblemCode, { status: number; title: string }> = {
  'bad-request': { status: 400, title: 'Malformed HTTP request' },
  'invalid-json': { status: 400, title: 'Request body is not valid JSON' },
  'validation-failed': { status: 400, title: 'Request body failed validation' },
  'invalid-query': { status: 400, title: 'Query parameter is invalid' },
  'invalid-header': { status: 400, title: 'Request header is invalid' },
  unauthorized: { status: 401, title: 'Missing or invalid access token' },
  'wrong-admin-secret': { status: 401, title: 'Wrong admin secret' },
  forbidden: { status: 403, title: 'Forbidden' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  // draft-ietf-httpapi-idempotency-key-header-07, "Error Scenarios": a request still processed under the
  // key is a 409, the key reused with another request payload a 422.
  'idempotency-key-in-use': { status: 409, title: 'A request with this Idempotency-Key is in progress' },
  'idempotency-key-reused': { status: 422, title: 'Idempotency-Key reused with another request body' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'request-timeout': { status: 408, title: 'Request not received in time' },
  'payload-too-large': { status: 413, title: 'Request too large' },
  'expectation-failed': { status: 417, title: 'Expectation not supported' },
  'header-fields-too-large': { status: 431, title: 'Request header fields too large' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  'too-many-streams': { status: 429, title: 'Too many open event streams' },
  'internal-error': { status: 500, title: 'Internal server error' },
  'not-implemented': { status: 501, title: 'Not implemented' },
  'service-unavailable': { status: 503, title: 'Service unavailable' },
  'store-outcome-unknown': { status: 503, title: 'Visits may have been stored' },
  'http-version-not-supported': { status: 505, title: 'HTTP version not supported' },
};

/** The problem type URI for a code (RFC 9457 §3.1.1: a URI that identifies the problem type). */
export function problemType(code: ProblemCode): string {
  return `urn:agentwarden:problem:${code}`;
}

/** The HTTP status a problem code is answered with. */
export function problemStatus(code: ProblemCode): number {
  return TITLES[code].status;
}

/**
 * Builds a problem+json response. `detail` must never contain internal messages or stacks.
 * @example
 * problem('not-found', 'No route for POST /nope');
 */
export function problem(
  code: ProblemCode,
  detail: string,
  options: { errors?: readonly FieldError[]; headers?: Record<string, string>; extra?: Record<string, unknown> } = {},
): ApiResponse {
  const { status, title } = TITLES[code];
  const body: Record<string, unknown> = { type: problemType(code), title, status, detail };
  if (options.errors !== undefined) body['errors'] = options.errors;
  if (options.extra !== undefined) Object.assign(body, options.extra);
  return {
    status,
    // With the API's security headers here, not only at the handler's exit: the transports build
    // their own refusals (a malformed request, a body too large) with problem().
    headers: { 'content-type': 'application/problem+json', 'cache-control': 'no-store', ...API_SECURITY_HEADERS, ...options.headers },
    body: JSON.stringify(body),
  };
}

/**
 * A problem about one request header, which `errors[]` names (`pointer` "" and `header`), as every
 * other 4xx names its body field or query parameter.
 * @example
 * headerProblem('expectation-failed', 'Only "Expect: 100-continue" is supported.', { header: 'Expect', code: 'unsupported', message: 'must be 100-continue' });
 */
export function headerProblem(code: ProblemCode, detail: string, error: { header: string; code: string; message: string }, headers?: Record<string, string>): ApiResponse {
  return problem(code, detail, { errors: [{ pointer: '', ...error }], ...(headers === undefined ? {} : { headers }) });
}

/**
 * A 415 that names the request header at fault in `errors[]` and says what would be taken:
 * `Accept-Post` for a media type, `Accept-Encoding` for a content coding (RFC 9110 §15.5.16).
 */
export function unsupportedMediaType(header: 'Content-Type' | 'Content-Encoding', detail: string, accepted: string): ApiResponse {
  const mediaType = header === 'Content-Type';
  return headerProblem('unsupported-media-type', detail, { header, code: mediaType ? 'media-type' : 'content-coding', message: `must be ${accepted}` }, {
    [mediaType ? 'accept-post' : 'accept-encoding']: accepted,
  });
}

/** The 415 of a JSON endpoint sent something else. */
export function notJsonProblem(contentType: string | undefined): ApiResponse {
  const got = contentType === undefined ? 'no Content-Type' : JSON.stringify(contentType.slice(0, 64));
  return unsupportedMediaType('Content-Type', `Send the body as JSON with "Content-Type: application/json"; got ${got}.`, 'application/json');
}
