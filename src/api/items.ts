// Request bodies of the batch endpoints: one object or an array of them (array order kept), and
// the checks shared by identification, verification and visits items (types, header limits).
import type { ApiLimits } from './limits.js';
import { pointerTo, type FieldError } from '../field-error.js';
import { problem } from './problem.js';
import { parseIpLiteral } from '../verify/client-ip.js';
import type { ApiResponse } from './types.js';
import { headerObjectSize } from '../visits/visit.js';

/** A body split into items, remembering whether the client sent one object or an array. */
export type ItemsResult = { readonly ok: true; readonly single: boolean; readonly items: readonly unknown[] } | { readonly ok: false; readonly response: ApiResponse };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The 413 of an array in a request body past `limits.maxItems` (DESIGN.md §7), at its pointer
 * ("" for the body itself); undefined when it is within the limit.
 */
export function tooManyItems(array: readonly unknown[], pointer: string, limits: ApiLimits): ApiResponse | undefined {
  if (array.length <= limits.maxItems) return undefined;
  return problem('payload-too-large', `${pointer === '' ? 'The array' : pointer.slice(1)} has ${array.length} items; at most ${limits.maxItems} are accepted per array.`, {
    errors: [{ pointer, code: 'max-items', message: `at most ${limits.maxItems} items` }],
  });
}

/** Accepts a JSON object or an array (at most `limits.maxItems` long); anything else is a 400. */
export function readItems(body: unknown, limits: ApiLimits): ItemsResult {
  if (Array.isArray(body)) {
    const tooMany = tooManyItems(body, '', limits);
    return tooMany === undefined ? { ok: true, single: false, items: body } : { ok: false, response: tooMany };
  }
  if (isPlainObject(body)) return { ok: true, single: true, items: [body] };
  return {
    ok: false,
    response: problem('validation-failed', 'The request body must be a JSON object or an array of objects.', {
      errors: [{ pointer: '', code: 'type', message: 'must be an object or an array of objects' }],
    }),
  };
}

/**
 * Checks the header object at `field` of the item at `base` against the per-item limits; pushes a
 * 413-class error when past them (its pointer built only then). Type errors are left to the item
 * validators.
 */
export function checkHeaderLimits(value: unknown, base: string, field: string, limits: ApiLimits, tooLarge: FieldError[]): void {
  if (!isPlainObject(value)) return;
  const { count, chars } = headerObjectSize(value);
  if (count > limits.maxHeadersPerItem) {
    tooLarge.push({ pointer: pointerTo(base, field), code: 'max-headers', message: `${count} headers; at most ${limits.maxHeadersPerItem} are accepted per item` });
  } else if (chars > limits.maxHeaderCharsPerItem) {
    tooLarge.push({ pointer: pointerTo(base, field), code: 'max-header-size', message: `${chars} characters of headers; at most ${limits.maxHeaderCharsPerItem} are accepted per item` });
  }
}

/** The fields of an identification or verification item the API reads; others are ignored. */
export interface RequestItem {
  readonly id?: string;
  readonly request_headers: Record<string, string | string[]>;
  readonly request_path?: string;
  readonly request_method?: string;
  /** The visitor's address as the caller saw it (canonical after validation); used before any header. */
  readonly client_ip?: string;
}

const OPTIONAL_STRINGS = ['id', 'request_path', 'request_method'] as const;

/**
 * Validates one identification/verification item: `request_headers` (object of string or
 * string[]) required, `id`, `request_path`, `request_method` optional strings, `client_ip` an
 * optional IP address (returned in canonical form).
 */
export function validateRequestItem(value: unknown, pointer: string, limits: ApiLimits, errors: FieldError[], tooLarge: FieldError[]): RequestItem | undefined {
  if (!isPlainObject(value)) {
    errors.push({ pointer, code: 'type', message: 'must be an object with request_headers' });
    return undefined;
  }
  const before = errors.length;
  for (const field of OPTIONAL_STRINGS) {
    const v = value[field];
    if (v !== undefined && v !== null && typeof v !== 'string') errors.push({ pointer: pointerTo(pointer, field), code: 'type', message: 'must be a string' });
  }
  // Pointers are built only for errors: valid items (nearly all) need none.
  const headers = value['request_headers'];
  if (headers === undefined) errors.push({ pointer: pointerTo(pointer, 'request_headers'), code: 'required', message: 'request_headers is required' });
  else if (!isPlainObject(headers)) errors.push({ pointer: pointerTo(pointer, 'request_headers'), code: 'type', message: 'must be an object of header names to string or string[] values' });
  else {
    checkHeaderLimits(headers, pointer, 'request_headers', limits, tooLarge);
    for (const name of Object.keys(headers)) {
      const v = headers[name];
      if (!(typeof v === 'string' || (Array.isArray(v) && v.every((part) => typeof part === 'string')))) {
        errors.push({ pointer: pointerTo(pointerTo(pointer, 'request_headers'), name), code: 'type', message: 'must be a string or an array of strings' });
      }
    }
  }
  const clientIp = value['client_ip'];
  let address: string | undefined;
  if (clientIp !== undefined && clientIp !== null) {
    address = typeof clientIp === 'string' ? parseIpLiteral(clientIp) : undefined;
    if (address === undefined) {
      errors.push({ pointer: pointerTo(pointer, 'client_ip'), code: typeof clientIp === 'string' ? 'format' : 'type', message: 'must be an IPv4 or IPv6 address such as 203.0.113.7 or 2001:db8::7' });
    }
  }
  if (errors.length !== before) return undefined;
  // Most items carry no address: they are answered as sent, without a copy.
  return address === undefined || address === clientIp ? (value as unknown as RequestItem) : ({ ...value, client_ip: address } as unknown as RequestItem);
}
