// Case-insensitive reads of request headers whose values may be string or string[].
import type { ApiHeaderValue } from './types.js';

/**
 * The value of a request header, repeated values joined with ", " (RFC 9110 §5.3).
 * `name` must be lower case; transports that keep the sender's case are handled by a scan.
 */
export function headerValue(headers: Readonly<Record<string, ApiHeaderValue>>, name: string): string | undefined {
  let value: unknown = headers[name];
  if (value === undefined) {
    for (const key of Object.keys(headers)) {
      if (key.length === name.length && key.toLowerCase() === name) {
        value = headers[key];
        break;
      }
    }
  }
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const strings = value.filter((item): item is string => typeof item === 'string');
    return strings.length === 0 ? undefined : strings.join(', ');
  }
  return undefined;
}

// RFC 6838 §4.2 restricted-name characters, at least one before a "+json" suffix ("application/+json" names nothing).
const JSON_SUFFIX_TYPE = /^application\/[a-z0-9][a-z0-9!#$&^_.+-]*\+json$/;
// json-patch+json, merge-patch+json, vnd.example-patch+json, patch+json.
const PATCH_TYPE = /[/.-]patch\+json$/;

/**
 * Whether a Content-Type names JSON (RFC 8259 §11 `application/json`, or a `+json` suffix, RFC
 * 6839 §3.1) in UTF-8: JSON has no charset parameter, but a client that sends one other than
 * UTF-8 means its body is not read as it would be. A patch format (`application/json-patch+json`,
 * RFC 6902; `application/merge-patch+json`, RFC 7396; any `*-patch+json`) is JSON with other
 * semantics, a list of changes rather than the document these routes take, so it is refused.
 */
export function isJsonMediaType(value: string | undefined): boolean {
  if (value === undefined) return false;
  // What nearly every client sends, answered without slicing and lower-casing.
  if (value === 'application/json') return true;
  const [media = '', ...parameters] = value.split(';');
  const type = media.trim().toLowerCase();
  if (type !== 'application/json' && !(JSON_SUFFIX_TYPE.test(type) && !PATCH_TYPE.test(type))) return false;
  return parameters.every((parameter) => {
    const equals = parameter.indexOf('=');
    if (equals === -1 || parameter.slice(0, equals).trim().toLowerCase() !== 'charset') return true;
    return /^"?utf-?8"?$/i.test(parameter.slice(equals + 1).trim());
  });
}
