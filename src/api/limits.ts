// Request size limits (DESIGN.md §7): validated once at creation; a request past any of them is a 413.
import { MAX_VISIT_HEADERS, MAX_VISIT_HEADER_CHARS } from '../visits/visit.js';

/** Size limits of the API; every one is configurable. */
export interface ApiLimits {
  /** Maximum request body in bytes (default 1 MiB). */
  readonly maxBodyBytes: number;
  /** Maximum items in a JSON array body (default 1,000). */
  readonly maxItems: number;
  /** Maximum header names in one item's `request_headers` / `response_headers` (default 200). */
  readonly maxHeadersPerItem: number;
  /** Maximum characters (UTF-16 code units) of one item's header names and values together (default 65,536). */
  readonly maxHeaderCharsPerItem: number;
  /** Maximum nesting of arrays and objects in a JSON body (default 64). */
  readonly maxJsonDepth: number;
}

/** The defaults of DESIGN.md §7. */
export const DEFAULT_LIMITS: ApiLimits = Object.freeze({
  maxBodyBytes: 1024 * 1024,
  maxItems: 1000,
  maxHeadersPerItem: MAX_VISIT_HEADERS,
  maxHeaderCharsPerItem: MAX_VISIT_HEADER_CHARS,
  maxJsonDepth: 64,
});

/**
 * Merges partial limits over the defaults and checks each is a positive integer.
 * @throws {RangeError} naming the limit when a value is not a positive integer.
 */
export function resolveLimits(partial: Partial<ApiLimits> = {}): ApiLimits {
  const limits = { ...DEFAULT_LIMITS, ...partial };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || (value as number) < 1) {
      throw new RangeError(`limits.${name} must be a positive integer, got ${String(value)}`);
    }
  }
  return Object.freeze(limits);
}
