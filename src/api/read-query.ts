// Query parameters of the read APIs: integers, times, enums and the visit filter, each checked
// here so a bad value becomes a 400 naming the parameter (a VisitQueryError), never a 5xx.
import { resolveAgentType } from '../catalog/catalog.js';
import type { IdentificationResult } from '../identify/identification.js';
import { hasValidDayAndHour } from '../visits/iso-time.js';
import { REFERRAL_CLASSES, type ReferralClass } from '../visits/referral.js';
import { VisitQueryError, VisitStoreUnavailableError, type VisitFilter } from '../visits/visit-store.js';
import { problem } from './problem.js';
import type { Route, RouteContext } from './route.js';
import type { ApiResponse } from './types.js';

/** The value that selects visits without one (`agent=none`: humans and unknown agents). */
export const NONE = 'none';
/** The value that selects visits with any one (`agent=any`: every catalog agent; `referral=any`: every AI referral). */
export const ANY = 'any';

const RESULTS: readonly IdentificationResult[] = ['verified', 'verification_failed', 'not_verifiable', 'unknown_agent'];

/** A parameter's value, or undefined when absent or empty. */
function value(query: URLSearchParams, name: string): string | undefined {
  const raw = query.get(name);
  return raw === null || raw === '' ? undefined : raw;
}

/**
 * An integer parameter from `min` to `max`, `fallback` when absent.
 * @throws {VisitQueryError} naming the parameter for anything else.
 */
export function integerParam(query: URLSearchParams, name: string, range: { min: number; max: number; fallback: number }): number;
export function integerParam(query: URLSearchParams, name: string, range: { min: number; max: number }): number | undefined;
export function integerParam(query: URLSearchParams, name: string, range: { min: number; max: number; fallback?: number }): number | undefined {
  const raw = value(query, name);
  if (raw === undefined) return range.fallback;
  const number = /^[0-9]{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(number >= range.min && number <= range.max)) throw new VisitQueryError(name, `${name} must be an integer from ${range.min} to ${range.max}, got ${JSON.stringify(raw.slice(0, 40))}`);
  return number;
}

// ISO 8601 as JSON clients write it: a date, or a date-time with Z or an offset (a local time
// without offset would mean the server's zone, so it is refused).
const ISO = /^\d{4}-\d{2}-\d{2}(?:[Tt]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:[Zz]|[+-]\d{2}:\d{2}))?$/;

/**
 * A time parameter: ISO 8601 or milliseconds since the epoch; undefined when absent.
 * @throws {VisitQueryError} naming the parameter for anything else.
 */
export function timeParam(query: URLSearchParams, name: string): number | undefined {
  let raw = value(query, name);
  if (raw === undefined) return undefined;
  if (/^[0-9]{1,15}$/.test(raw)) return Number(raw);
  // An unescaped "+" of an offset arrives as a space (application/x-www-form-urlencoded).
  raw = raw.replace(/ (\d{2}:\d{2})$/, '+$1');
  const time = ISO.test(raw) && hasValidDayAndHour(raw) ? Date.parse(raw) : Number.NaN;
  if (!Number.isFinite(time)) throw new VisitQueryError(name, `${name} must be an ISO 8601 time such as 2026-11-21T12:00:00Z or milliseconds since the epoch`);
  return time;
}

/**
 * One of a closed set of values, `fallback` when absent.
 * @throws {VisitQueryError} naming the parameter and the allowed values.
 */
export function enumParam<T extends string>(query: URLSearchParams, name: string, allowed: readonly T[], fallback: T): T {
  const raw = value(query, name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new VisitQueryError(name, `${name} must be one of ${allowed.join(', ')}`);
  return raw as T;
}

/**
 * The visit filter of `agent`, `agent_type` (legacy aliases accepted), `result`, `referral`,
 * `path` and `status`; `none` selects visits without an agent, type, referral or status, and
 * `any` (agent, referral) those with one.
 * @throws {VisitQueryError} naming the parameter for a value that can never match.
 */
export function visitFilterParams(query: URLSearchParams): VisitFilter {
  const filter: { -readonly [K in keyof VisitFilter]: VisitFilter[K] } = {};
  const agent = value(query, 'agent');
  if (agent === ANY) filter.has_agent = true;
  else if (agent !== undefined) filter.agent_id = agent === NONE ? null : agent;
  const type = value(query, 'agent_type');
  if (type !== undefined) {
    if (type === NONE) filter.agent_type = null;
    else {
      const resolved = resolveAgentType(type);
      if (resolved === undefined) throw new VisitQueryError('agent_type', `${JSON.stringify(type.slice(0, 60))} is not an agent type`);
      filter.agent_type = resolved;
    }
  }
  const result = value(query, 'result');
  if (result !== undefined) {
    if (!(RESULTS as readonly string[]).includes(result)) throw new VisitQueryError('result', `result must be one of ${RESULTS.join(', ')}`);
    filter.result = result as IdentificationResult;
  }
  const referral = value(query, 'referral');
  if (referral !== undefined) {
    if (referral === NONE) filter.referral = null;
    else if (referral === ANY) filter.has_referral = true;
    else if ((REFERRAL_CLASSES as readonly string[]).includes(referral)) filter.referral = referral as ReferralClass;
    else throw new VisitQueryError('referral', `referral must be ${NONE}, ${ANY} or one of ${REFERRAL_CLASSES.join(', ')}`);
  }
  const path = value(query, 'path');
  if (path !== undefined) {
    if (!path.startsWith('/')) throw new VisitQueryError('path', 'path must start with "/"');
    filter.path = path;
  }
  const status = value(query, 'status');
  if (status !== undefined) {
    // RFC 9110 §15: three digits, 100 to 599.
    if (status === NONE) filter.status = null;
    else if (/^[1-5][0-9]{2}$/.test(status)) filter.status = Number(status);
    else throw new VisitQueryError('status', `status must be ${NONE} or an HTTP status code from 100 to 599`);
  }
  return filter;
}

/** Whether the client asked for CSV: `format=csv`, or `Accept: text/csv` without a format. @throws {VisitQueryError} for another format. */
export function wantsCsv(query: URLSearchParams, accept: string | undefined): boolean {
  const format = value(query, 'format');
  if (format !== undefined) {
    if (format !== 'csv' && format !== 'json') throw new VisitQueryError('format', 'format must be json or csv');
    return format === 'csv';
  }
  return accept !== undefined && accept.toLowerCase().includes('csv') && prefersCsv(accept);
}

/**
 * Whether an Accept header prefers CSV to JSON (RFC 9110 §12.5.1): each type's quality comes from
 * the most specific range naming it (`text/csv` over `text/*` over the wildcard); CSV wins on a
 * higher quality, or an equal one when it is named itself. `text/csv;q=0` refuses it.
 */
function prefersCsv(accept: string): boolean {
  // Per type: the quality of the most specific range seen so far, and how specific it was.
  const csv = { q: 0, specificity: -1 };
  const json = { q: 0, specificity: -1 };
  for (const range of accept.split(',')) {
    const [mediaRange = '', ...params] = range.split(';');
    const media = mediaRange.trim().toLowerCase();
    let q = 1;
    for (const param of params) {
      const [name, value] = param.split('=');
      if (name?.trim().toLowerCase() === 'q') q = Number(value?.trim());
    }
    if (!(q >= 0 && q <= 1)) continue;
    const consider = (type: { q: number; specificity: number }, exact: string, family: string) => {
      const specificity = media === exact ? 2 : media === family ? 1 : media === '*/*' ? 0 : -1;
      if (specificity > type.specificity) Object.assign(type, { q, specificity });
    };
    consider(csv, 'text/csv', 'text/*');
    consider(json, 'application/json', 'application/*');
  }
  return csv.q > json.q || (csv.q > 0 && csv.q === json.q && csv.specificity === 2);
}

/**
 * The answer to a read that failed on its input or its store: a 400 naming the parameter, or a 503
 * with Retry-After; undefined for any other error (a bug, answered as a logged 500).
 */
export function readProblem(error: unknown): ApiResponse | undefined {
  if (error instanceof VisitQueryError) {
    return problem('invalid-query', `Query parameter "${error.parameter}": ${error.message}`, {
      errors: [{ pointer: '', parameter: error.parameter, code: 'invalid', message: error.message }],
    });
  }
  if (error instanceof VisitStoreUnavailableError) {
    return problem('service-unavailable', `The visit store cannot answer now (${error.reason}); retry after ${error.retryAfterSeconds} s.`, {
      headers: { 'retry-after': String(error.retryAfterSeconds) },
    });
  }
  return undefined;
}

const DAY_MS = 86_400_000;

/**
 * `from`/`to` of a report, defaulting to the 24 hours before now.
 * @throws {VisitQueryError} for a bad time or an empty range.
 */
export function rangeParams(query: URLSearchParams, clock: { now(): number }): { from: number; to: number } {
  const sentTo = timeParam(query, 'to');
  const to = sentTo ?? clock.now();
  const from = timeParam(query, 'from') ?? to - DAY_MS;
  if (to <= from) {
    // The parameter the client sent is the one at fault: without `to`, it is "now".
    if (sentTo === undefined) throw new VisitQueryError('from', 'from is in the future; without to, the range ends now');
    throw new VisitQueryError('to', 'to must be later than from');
  }
  return { from, to };
}

/**
 * A read route of a project (a project token, or an admin session naming `?project=`): query
 * errors become a 400 naming the parameter, an unavailable store a 503.
 */
export function readRoute(run: (context: RouteContext, projectId: string) => Promise<ApiResponse>): Route {
  return {
    auth: 'token-or-admin',
    json: false,
    async run(context) {
      try {
        return await run(context, context.project!.id);
      } catch (error) {
        const answer = readProblem(error);
        if (answer === undefined) throw error;
        return answer;
      }
    },
  };
}
