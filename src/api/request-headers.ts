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
