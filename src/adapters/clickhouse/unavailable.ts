// Which ClickHouse failures mean "retry later" (503) rather than a bad query, and what a failed
// INSERT says about its rows: known not stored, or unknown.
import { ClickHouseError } from '@clickhouse/client';
import { VisitStoreUnavailableError } from '../../index.js';
import { InsertDeadlineError } from './insert-queue.js';

// ClickHouse error codes that mean "too much right now" rather than "down": TOO_MANY_PARTS,
// TOO_MANY_SIMULTANEOUS_QUERIES, MEMORY_LIMIT_EXCEEDED.
const BUSY_CODES = new Set(['252', '202', '241']);

// ClickHouse out of disk space: NOT_ENOUGH_SPACE ("Cannot reserve ..."), or a write that failed
// with ENOSPC (errno 28) under whatever code the write had (18.16: 75, cannot write to file).
const NOT_ENOUGH_SPACE = '243';
const NO_SPACE_LEFT = /errno: 28\b|No space left on device/;

// How ClickHouse starts the text of an error it answers: `Code: 252, e.displayText() = ...` up to
// 19.x, `Code: 252. DB::Exception: ...` later. 18.16 sends no X-ClickHouse-Exception-Code header.
const SERVER_ERROR = /^Code: (\d+)[.,]/;

/**
 * The code of an error ClickHouse answered (the query reached it), else undefined (no answer:
 * a socket error, a timeout). The client makes a ClickHouseError only of a message that names the
 * error type in brackets, which 18.16 does not write: its errors come as a plain Error whose
 * message is the response text.
 */
function serverErrorCode(error: unknown): string | undefined {
  if (error instanceof ClickHouseError) return error.code;
  return error instanceof Error ? SERVER_ERROR.exec(error.message)?.[1] : undefined;
}

/**
 * The VisitStoreUnavailableError an error stands for: network errors, timeouts and a full disk are
 * `unavailable`, the server's overload codes `busy`; undefined for anything else (a query error).
 */
export function unavailableError(error: unknown, retryAfterSeconds: number, what: string): VisitStoreUnavailableError | undefined {
  if (error instanceof VisitStoreUnavailableError) return error;
  const code = serverErrorCode(error);
  if (code !== undefined) {
    const message = (error as Error).message;
    if (BUSY_CODES.has(code)) return new VisitStoreUnavailableError('busy', 1, `ClickHouse is overloaded (${what}): ${message}`, { cause: error });
    if (code === NOT_ENOUGH_SPACE || NO_SPACE_LEFT.test(message)) return new VisitStoreUnavailableError('unavailable', retryAfterSeconds, `ClickHouse has no disk space left (${what}): ${message}`, { cause: error });
    return undefined;
  }
  if (error instanceof Error) return new VisitStoreUnavailableError('unavailable', retryAfterSeconds, `ClickHouse is unreachable (${what}): ${error.message}`, { cause: error });
  return undefined;
}

// Socket errors that mean no connection was made, so no byte of the INSERT reached ClickHouse.
// ECONNRESET and timeouts are not among them: the rows may have been received and stored.
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

// TOO_MANY_PARTS and TOO_MANY_SIMULTANEOUS_QUERIES are raised before an INSERT writes anything,
// unless they come from a materialized view: ClickHouse writes the table first, then pushes the
// block to each view, and names the view in the error ("while pushing to view").
const BUSY_BEFORE_WRITING = new Set(['252', '202']);
const FROM_A_VIEW = /while pushing to view/;

/**
 * What a failed visits INSERT says about its rows: `not-stored` when they were never sent (a
 * deadline in the queue, no connection) or ClickHouse refused them before writing (too many parts
 * of `visits`, or too many queries: it checks those first); `unknown` otherwise (the connection
 * broke or timed out while ClickHouse had them, or it failed after writing some, as when the
 * per-minute counts' view refuses the block).
 */
export function insertOutcome(error: unknown): 'not-stored' | 'unknown' {
  if (error instanceof InsertDeadlineError) return 'not-stored';
  const code = serverErrorCode(error);
  if (code !== undefined) return BUSY_BEFORE_WRITING.has(code) && !FROM_A_VIEW.test((error as Error).message) ? 'not-stored' : 'unknown';
  const socketCode = (error as { code?: unknown } | undefined)?.code;
  return typeof socketCode === 'string' && NOT_CONNECTED.has(socketCode) ? 'not-stored' : 'unknown';
}

/**
 * Whether an error only says the connection to ClickHouse failed (none made, or it broke), not
 * that ClickHouse refused or could not finish the work: a later query that goes through shows
 * ClickHouse is back (readiness).
 */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return serverErrorCode(error) === undefined && typeof code === 'string' && (NOT_CONNECTED.has(code) || code === 'ECONNRESET' || code === 'EPIPE');
}

/** The VisitStoreUnavailableError of a failed visits INSERT, with its outcome. */
export function insertError(error: unknown, retryAfterSeconds: number): VisitStoreUnavailableError {
  const outcome = insertOutcome(error);
  if (error instanceof InsertDeadlineError) return new VisitStoreUnavailableError('busy', 1, 'the visits waited too long for an INSERT and were not sent', { cause: error, outcome });
  const known = unavailableError(error, retryAfterSeconds, 'insert');
  if (known !== undefined) return new VisitStoreUnavailableError(known.reason, known.retryAfterSeconds, known.message, { cause: error, outcome });
  return new VisitStoreUnavailableError('unavailable', retryAfterSeconds, `ClickHouse refused the insert: ${(error as Error).message}`, { cause: error, outcome });
}
