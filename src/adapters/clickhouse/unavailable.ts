// Which ClickHouse failures mean "retry later" (503) rather than a bad query.
import { ClickHouseError } from '@clickhouse/client';
import { VisitStoreUnavailableError } from '../../index.js';

// ClickHouse error codes that mean "too much right now" rather than "down": TOO_MANY_PARTS,
// TOO_MANY_SIMULTANEOUS_QUERIES, MEMORY_LIMIT_EXCEEDED.
const BUSY_CODES = new Set(['252', '202', '241']);

/**
 * The VisitStoreUnavailableError an error stands for: network errors and timeouts are
 * `unavailable`, the server's overload codes `busy`; undefined for anything else (a query error).
 */
export function unavailableError(error: unknown, retryAfterSeconds: number, what: string): VisitStoreUnavailableError | undefined {
  if (error instanceof VisitStoreUnavailableError) return error;
  if (error instanceof ClickHouseError) {
    return BUSY_CODES.has(error.code) ? new VisitStoreUnavailableError('busy', 1, `ClickHouse is overloaded (${what}): ${error.message}`, { cause: error }) : undefined;
  }
  if (error instanceof Error) return new VisitStoreUnavailableError('unavailable', retryAfterSeconds, `ClickHouse is unreachable (${what}): ${error.message}`, { cause: error });
  return undefined;
}
