// Request headers as clients send them (any case, string or string[]) turned into one
// lower-case map, the only form the rest of the engine reads.

/** Headers as accepted from callers: names in any case, values string or string[]. */
export type HeadersInput = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * Lower-cases names and joins repeated values with ", " (RFC 9110 §5.3 field combination).
 * Non-string values are ignored, so hostile input can never throw here.
 */
export function normalizeHeaders(input: HeadersInput | Headers | undefined | null): Map<string, string> {
  const headers = new Map<string, string>();
  if (input === undefined || input === null || typeof input !== 'object') return headers;
  const add = (name: string, value: string) => {
    const key = name.toLowerCase();
    const previous = headers.get(key);
    headers.set(key, previous === undefined ? value : `${previous}, ${value}`);
  };
  if (typeof Headers !== 'undefined' && input instanceof Headers) {
    input.forEach((value, name) => add(name, value));
    return headers;
  }
  for (const name of Object.keys(input)) {
    const value = (input as Record<string, unknown>)[name];
    if (typeof value === 'string') add(name, value);
    else if (Array.isArray(value)) {
      const strings = value.filter((item): item is string => typeof item === 'string');
      if (strings.length > 0) add(name, strings.join(', '));
    }
  }
  return headers;
}
