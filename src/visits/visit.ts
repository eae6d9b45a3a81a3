// A Visit as `POST /visits` accepts it (Known Agents field names): validated, header names
// lower-cased and secret headers stripped before anything is stored (DESIGN.md §6).
import { pointerTo, type FieldError } from '../field-error.js';
import { parseIpLiteral } from '../verify/client-ip.js';
import { hasValidDayAndHour, isoUtcMillis } from './iso-time.js';
import { isHttpToken } from '../http-token.js';
import { hasLoneSurrogate, isPlainText, longerThan } from '../json-string.js';

/** Header values as stored: one string per lower-case name (repeated values joined, RFC 9110 §5.3). */
export type VisitHeaders = Record<string, string>;

/** A JSON object as a client sent it (ACP/UCP response bodies). */
export type JsonObject = { readonly [key: string]: unknown };

/** One validated, normalised visit. Unknown input fields are dropped. */
export interface Visit {
  readonly request_path: string;
  readonly request_method: string;
  /** Lower-case names; secrets (authorization, cookie, *-token, ...) removed. */
  readonly request_headers: VisitHeaders;
  readonly response_status_code?: number;
  readonly response_headers?: VisitHeaders;
  readonly response_duration_in_milliseconds?: number;
  /** When the visit happened (ISO 8601, normalised to UTC); batches arrive late, so clients send it. */
  readonly created?: string;
  /**
   * The visitor's address as the site saw it (its socket or platform), canonical IPv4 or IPv6;
   * used before any header. agentwarden's middleware sends it.
   */
  readonly client_ip?: string;
  /** Sent by the WordPress plugin: true when the site answered the visit with a 403. */
  readonly is_blocked?: boolean;
  /** What the site's access policy decided (agentwarden's middleware sends it), absent when no rule applied. */
  readonly decision?: VisitDecision;
  // MCP calls (taken by the SDKs from the JSON-RPC body and the response).
  readonly mcp_request_method?: string;
  readonly mcp_request_tool_name?: string;
  readonly mcp_request_client_info_name?: string;
  readonly mcp_request_client_info_version?: string;
  readonly mcp_response_result_is_error?: boolean;
  readonly mcp_response_error_code?: number;
  readonly mcp_response_error_message?: string;
  // Agentic-commerce response bodies (ACP, UCP), kept whole.
  readonly acp_response_body?: JsonObject;
  readonly ucp_response_body?: JsonObject;
}

/**
 * An access policy's decision on a visit: the rule that applied, what it said, and whether it was
 * only reported (report-only mode lets the request through; `is_blocked` tells what happened).
 */
export interface VisitDecision {
  /** The rule's name: 1 to 64 letters, digits, `.`, `_` or `-` (agentwarden's: `deny-verification-failed`, `deny-agent`, `deny-agent-type`, `allow-verified`). */
  readonly rule: string;
  readonly action: 'allow' | 'deny';
  readonly report_only: boolean;
}

const DECISION_RULE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Validates a `decision` object; errors point below `pointer`. */
function parseDecision(value: unknown, pointer: string, errors: FieldError[]): VisitDecision | undefined {
  if (!isPlainObject(value)) {
    errors.push({ pointer, code: 'type', message: 'must be an object with rule, action and report_only' });
    return undefined;
  }
  const { rule, action } = value;
  const reportOnly = value['report_only'] ?? false;
  const before = errors.length;
  if (typeof rule !== 'string' || !DECISION_RULE.test(rule)) {
    errors.push({ pointer: pointerTo(pointer, 'rule'), code: rule === undefined ? 'required' : 'format', message: 'must be 1 to 64 letters, digits, ".", "_" or "-"' });
  }
  if (action !== 'allow' && action !== 'deny') errors.push({ pointer: pointerTo(pointer, 'action'), code: action === undefined ? 'required' : 'enum', message: 'must be "allow" or "deny"' });
  if (typeof reportOnly !== 'boolean') errors.push({ pointer: pointerTo(pointer, 'report_only'), code: 'type', message: 'must be a boolean' });
  return errors.length === before ? { rule: rule as string, action: action as 'allow' | 'deny', report_only: reportOnly as boolean } : undefined;
}

/** The optional Known Agents fields kept with a visit, by the JSON type each must have. */
const OPTIONAL_FIELDS: ReadonlyArray<readonly [keyof Visit, 'string' | 'boolean' | 'integer' | 'object']> = [
  ['is_blocked', 'boolean'],
  ['mcp_request_method', 'string'],
  ['mcp_request_tool_name', 'string'],
  ['mcp_request_client_info_name', 'string'],
  ['mcp_request_client_info_version', 'string'],
  ['mcp_response_result_is_error', 'boolean'],
  ['mcp_response_error_code', 'integer'],
  ['mcp_response_error_message', 'string'],
  ['acp_response_body', 'object'],
  ['ucp_response_body', 'object'],
];

function hasJsonType(value: unknown, type: 'string' | 'boolean' | 'integer' | 'object'): boolean {
  if (type === 'integer') return Number.isSafeInteger(value);
  if (type === 'object') return isPlainObject(value);
  return typeof value === type;
}

/** The result of parsing one visit: the visit, or every field error found (pointers into the body). */
export type VisitParseResult = { readonly ok: true; readonly visit: Visit } | { readonly ok: false; readonly errors: FieldError[] };

// Secrets a visit must never carry into storage: the Known Agents SDK's list, generalised to any
// name ending in token/secret or api-key (x-amz-security-token, x-client-secret, x-goog-api-key...).
const SECRET_NAMES = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);
const SECRET_PATTERN = /(?:^|[-_])(?:token|secret|api[-_]?key|apikey)$/;

/** Whether a (lower-case) header name holds a credential that must not be stored. */
export function isSecretHeader(name: string): boolean {
  return SECRET_NAMES.has(name) || (hasSecretSuffix(name) && SECRET_PATTERN.test(name));
}

// Every name SECRET_PATTERN matches ends in "token", "secret" or "key": a look at the last
// character spares the regex for nearly every header (a visit has about twenty).
function hasSecretSuffix(name: string): boolean {
  const last = name.charCodeAt(name.length - 1);
  if (last === 0x6e) return name.endsWith('token');
  if (last === 0x74) return name.endsWith('secret');
  return last === 0x79 && name.endsWith('key');
}

// RFC 3339 §5.6 date-time (the profile of ISO 8601 JSON clients emit via toISOString()).
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isString(value: unknown): boolean {
  return typeof value === 'string';
}

// What no field value, path or method received over HTTP holds: C0 controls but tab, and DEL
// (RFC 9110 §5.5; llhttp refuses them). Bytes 0x80-0xFF are kept: node:http reads header bytes
// as latin1, so a UTF-8 header arrives as such characters.
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;
/** The longest request path kept: node:http's whole request head is 16 KiB by default. */
export const MAX_PATH_LENGTH = 16 * 1024;
/** The most header fields one header object of a visit holds by default (DESIGN.md §7; `limits.maxHeadersPerItem`). */
export const MAX_VISIT_HEADERS = 200;
/** The most characters of one header object's names and values together by default (DESIGN.md §7; `limits.maxHeaderCharsPerItem`). */
export const MAX_VISIT_HEADER_CHARS = 64 * 1024;
/** Characters of one header value as POST /visits counts them: a string, or each string part of a repeated field. */
export function headerValueLength(value: unknown): number {
  if (typeof value === 'string') return value.length;
  let length = 0;
  if (Array.isArray(value)) for (const part of value) if (typeof part === 'string') length += part.length;
  return length;
}

/** The size of a header object as the per-visit limits count it: its fields, and the characters of their names and values. */
export function headerObjectSize(headers: Readonly<Record<string, unknown>>): { readonly count: number; readonly chars: number } {
  let count = 0;
  let chars = 0;
  for (const name in headers) {
    count++;
    chars += name.length + headerValueLength(headers[name]);
  }
  return { count, chars };
}

/** The longest MCP text field kept (a method, tool or client name, a version, an error message). */
export const MAX_VISIT_TEXT_FIELD = 4 * 1024;
/** The most characters of an ACP or UCP response body kept, written as JSON. */
export const MAX_VISIT_OBJECT_FIELD = 64 * 1024;
/**
 * The most field errors reported for one header object: a visit with hundreds of bad header
 * values is refused all the same, and listing each made a 91 KB gzipped log answer 487 MB.
 */
const MAX_HEADER_ERRORS = 10;

const COLON = 58;

/**
 * Whether a header name is an HTTP field name, a token (RFC 9110 §5.1): a name with a space, a
 * control character or a lone surrogate came from no real request, and could slip a secret past
 * the names stripped ("Cookie ", "authorization\u0000"). An HTTP/2 server's headers (Node's http2,
 * Fastify with http2) also hold the pseudo-headers, a colon and a token (":authority", RFC 9113 §8.3).
 */
function isFieldName(name: string): boolean {
  return name.charCodeAt(0) === COLON ? isHttpToken(name.slice(1)) : isHttpToken(name);
}

/** What is wrong with a received string (a path or a header value), if anything: a control character or a lone surrogate. */
function textProblem(value: string, what: string): { code: string; message: string } | undefined {
  if (isPlainText(value)) return undefined;
  if (CONTROL.test(value)) return { code: 'control-character', message: `${what} must not contain control characters (tab aside), CR or LF` };
  if (hasLoneSurrogate(value)) return { code: 'invalid-unicode', message: `${what} must be well-formed Unicode (it holds an unpaired surrogate)` };
  return undefined;
}

// A message may run over lines; no other control character belongs in one (NUL, ESC's terminal sequences).
const MESSAGE_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** What is wrong with an MCP text field, by the rules of paths and header values; an error message may also hold CR and LF. */
function mcpTextProblem(value: string, field: string): { code: string; message: string } | undefined {
  if (field !== 'mcp_response_error_message') return textProblem(value, field);
  if (isPlainText(value)) return undefined;
  if (MESSAGE_CONTROL.test(value)) return { code: 'control-character', message: `${field} must not contain control characters other than tab, CR and LF` };
  if (hasLoneSurrogate(value)) return { code: 'invalid-unicode', message: `${field} must be well-formed Unicode (it holds an unpaired surrogate)` };
  return undefined;
}

/** The JSON pointer of the first key or string in a JSON value that is not well-formed Unicode (it could not be stored as UTF-8 and read back). */
function loneSurrogatePointer(value: unknown, pointer: string): string | undefined {
  if (typeof value === 'string') return hasLoneSurrogate(value) ? pointer : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = loneSurrogatePointer(value[i], pointerTo(pointer, i));
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (hasLoneSurrogate(key)) return pointerTo(pointer, key);
    const found = loneSurrogatePointer((value as Record<string, unknown>)[key], pointerTo(pointer, key));
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Validates a header object (string or string[] values) and returns it normalised without
 * secrets. `base` and `field` name it for error pointers, built only when there is an error.
 */
function parseHeaders(value: unknown, base: string, field: string, errors: FieldError[]): VisitHeaders | undefined {
  // PHP writes an empty header list as [] (the WordPress plugin, when none of its headers is set).
  if (Array.isArray(value) && value.length === 0) return {};
  if (!isPlainObject(value)) {
    errors.push({ pointer: pointerTo(base, field), code: 'type', message: 'must be an object of header names to string or string[] values' });
    return undefined;
  }
  const headers: VisitHeaders = {};
  // Until a name needs lower-casing, every name kept is distinct from the next (object keys are
  // unique), so there is no earlier value to join and no lookup to make.
  let mixedCase = false;
  const names = Object.keys(value);
  const errorsBefore = errors.length;
  for (let i = 0; i < names.length; i++) {
    if (errors.length - errorsBefore === MAX_HEADER_ERRORS) {
      errors.push({ pointer: pointerTo(base, field), code: 'more-errors', message: `${field} has more invalid fields than the first ${MAX_HEADER_ERRORS} listed` });
      break;
    }
    const name = names[i]!;
    const item = value[name];
    if (!isFieldName(name)) {
      errors.push({ pointer: pointerTo(pointerTo(base, field), name), code: 'header-name', message: "a header name must be an HTTP token: letters, digits and !#$%&'*+-.^_`|~ (RFC 9110 §5.1)" });
      continue;
    }
    let joined: string;
    if (typeof item === 'string') joined = item;
    else if (Array.isArray(item) && item.every(isString)) joined = (item as string[]).join(', ');
    else {
      errors.push({ pointer: pointerTo(pointerTo(base, field), name), code: 'type', message: 'must be a string or an array of strings' });
      continue;
    }
    const invalid = textProblem(joined, 'a header value');
    if (invalid !== undefined) {
      errors.push({ pointer: pointerTo(pointerTo(base, field), name), ...invalid });
      continue;
    }
    const lower = name.toLowerCase();
    if (isSecretHeader(lower)) continue;
    if (lower !== name) mixedCase = true;
    // Repeated values, and two spellings of one name (User-Agent and user-agent), are one field
    // whose values join with ", " (RFC 9110 §5.3); set-cookie, the exception, is never stored.
    // Own values only: a header named "constructor" has no earlier value on Object.prototype.
    const previous = mixedCase && Object.hasOwn(headers, lower) ? headers[lower] : undefined;
    const kept = previous === undefined ? joined : `${previous}, ${joined}`;
    // Assigning "__proto__" would set the object's prototype and drop the header: define it instead.
    if (lower === '__proto__') Object.defineProperty(headers, lower, { value: kept, enumerable: true, writable: true, configurable: true });
    else headers[lower] = kept;
  }
  return headers;
}

/** The string at `field`, or undefined with a `required` or `type` error. */
function requiredString(input: Record<string, unknown>, field: string, base: string, errors: FieldError[]): string | undefined {
  const value = input[field];
  if (typeof value === 'string' && value !== '') return value;
  errors.push({
    pointer: pointerTo(base, field),
    code: value === undefined ? 'required' : 'type',
    message: value === undefined ? `${field} is required` : 'must be a non-empty string',
  });
  return undefined;
}

/**
 * Validates and normalises one visit. `index` is its position in an array body (absent for a
 * single object) and prefixes every error pointer, so `/3/request_path` names the field exactly.
 * Never throws on any input.
 * @example
 * parseVisit({ request_path: '/', request_method: 'GET', request_headers: { 'User-Agent': 'GPTBot/1.2' } });
 * // { ok: true, visit: { request_path: '/', request_method: 'GET', request_headers: { 'user-agent': 'GPTBot/1.2' } } }
 */
export function parseVisit(input: unknown, index?: number): VisitParseResult {
  const base = index === undefined ? '' : pointerTo('', index);
  if (!isPlainObject(input)) return { ok: false, errors: [{ pointer: base, code: 'type', message: 'a visit must be a JSON object' }] };
  const errors: FieldError[] = [];
  const request_path = requiredString(input, 'request_path', base, errors);
  if (request_path !== undefined) {
    const invalid = longerThan(request_path, MAX_PATH_LENGTH) ? { code: 'max-length', message: `at most ${MAX_PATH_LENGTH} characters` } : textProblem(request_path, 'a path');
    if (invalid !== undefined) errors.push({ pointer: pointerTo(base, 'request_path'), ...invalid });
  }
  const request_method = requiredString(input, 'request_method', base, errors);
  if (request_method !== undefined && (request_method.length > 64 || !isHttpToken(request_method))) {
    errors.push({ pointer: pointerTo(base, 'request_method'), code: 'format', message: "a method must be an HTTP token of at most 64 characters (GET, POST, ...; RFC 9110 §9.1)" });
  }
  const request_headers =
    input['request_headers'] === undefined
      ? (errors.push({ pointer: pointerTo(base, 'request_headers'), code: 'required', message: 'request_headers is required' }), undefined)
      : parseHeaders(input['request_headers'], base, 'request_headers', errors);

  const visit: Record<string, unknown> = { request_path, request_method, request_headers };
  const status = input['response_status_code'];
  if (status !== undefined && status !== null) {
    // RFC 9110 §15: status codes are three-digit integers 100-599.
    if (Number.isInteger(status) && (status as number) >= 100 && (status as number) <= 599) visit['response_status_code'] = status;
    else errors.push({ pointer: pointerTo(base, 'response_status_code'), code: 'type', message: 'must be an integer from 100 to 599' });
  }
  const responseHeaders = input['response_headers'];
  if (responseHeaders !== undefined && responseHeaders !== null) {
    const parsed = parseHeaders(responseHeaders, base, 'response_headers', errors);
    if (parsed !== undefined) visit['response_headers'] = parsed;
  }
  const duration = input['response_duration_in_milliseconds'];
  if (duration !== undefined && duration !== null) {
    if (typeof duration === 'number' && Number.isFinite(duration) && duration >= 0) visit['response_duration_in_milliseconds'] = duration;
    else errors.push({ pointer: pointerTo(base, 'response_duration_in_milliseconds'), code: 'type', message: 'must be a number >= 0' });
  }
  const created = input['created'];
  if (created !== undefined && created !== null) {
    // toISOString's own form (what SDKs send) is valid as it stands and is its own normalisation.
    if (typeof created === 'string' && isoUtcMillis(created) !== undefined) visit['created'] = created;
    else {
      const time = typeof created === 'string' && RFC3339.test(created) && hasValidDayAndHour(created) ? Date.parse(created) : Number.NaN;
      if (Number.isFinite(time)) visit['created'] = new Date(time).toISOString();
      else errors.push({ pointer: pointerTo(base, 'created'), code: 'format', message: 'must be an ISO 8601 date-time such as 2026-11-21T12:00:00.000Z' });
    }
  }
  const clientIp = input['client_ip'];
  if (clientIp !== undefined && clientIp !== null) {
    const address = typeof clientIp === 'string' ? parseIpLiteral(clientIp) : undefined;
    if (address !== undefined) visit['client_ip'] = address;
    else errors.push({ pointer: pointerTo(base, 'client_ip'), code: typeof clientIp === 'string' ? 'format' : 'type', message: 'must be an IPv4 or IPv6 address such as 203.0.113.7 or 2001:db8::7' });
  }
  const decision = input['decision'];
  if (decision !== undefined && decision !== null) {
    const parsed = parseDecision(decision, pointerTo(base, 'decision'), errors);
    if (parsed !== undefined) visit['decision'] = parsed;
  }
  for (const [field, type] of OPTIONAL_FIELDS) {
    const value = input[field];
    if (value === undefined || value === null) continue;
    if (!hasJsonType(value, type)) errors.push({ pointer: pointerTo(base, field), code: 'type', message: `must be ${type === 'integer' ? 'an integer' : type === 'object' ? 'an object' : `a ${type}`}` });
    else if (type === 'string' && longerThan(value as string, MAX_VISIT_TEXT_FIELD)) errors.push({ pointer: pointerTo(base, field), code: 'max-length', message: `at most ${MAX_VISIT_TEXT_FIELD} characters` });
    // A stored field must be one the read paths can serve: a 15 MiB body once made the timeline answer 500.
    else if (type === 'object' && JSON.stringify(value).length > MAX_VISIT_OBJECT_FIELD) errors.push({ pointer: pointerTo(base, field), code: 'max-length', message: `at most ${MAX_VISIT_OBJECT_FIELD} characters as JSON` });
    else {
      const problem = type === 'string' ? mcpTextProblem(value as string, field) : undefined;
      const unpaired = type === 'object' ? loneSurrogatePointer(value, pointerTo(base, field)) : undefined;
      if (problem !== undefined) errors.push({ pointer: pointerTo(base, field), ...problem });
      else if (unpaired !== undefined) errors.push({ pointer: unpaired, code: 'invalid-unicode', message: 'must be well-formed Unicode (it holds an unpaired surrogate)' });
      else visit[field] = value;
    }
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, visit: visit as unknown as Visit };
}
