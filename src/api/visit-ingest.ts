// POST /visits (and the WordPress plugin's log, read by its own body reader): validate each visit,
// enrich and store the valid ones, report the rest by index.
// With an Idempotency-Key a batch is stored at most once per project and key within the store's
// window (IDEMPOTENCY_WINDOW_MS), and every repeat is answered as the first time.
import { pointerTo, type FieldError } from '../field-error.js';
import { parseVisit, type Visit } from '../visits/visit.js';
import { VisitStoreUnavailableError, type EnrichedVisit, type VisitStore } from '../visits/visit-store.js';
import { bodyFingerprint, createKeyedQueue, parseIdempotencyKey } from './idempotency.js';
import { checkHeaderLimits, readItems } from './items.js';
import type { ApiLimits } from './limits.js';
import { headerProblem, problem } from './problem.js';
import { headerValue } from './request-headers.js';
import type { ApiRequest, ApiResponse } from './types.js';
import { JSON_NO_STORE_HEADERS } from './security-headers.js';

/** What the route needs from the handler. */
export interface VisitIngestOptions {
  readonly visits: VisitStore;
  readonly limits: ApiLimits;
  /** The enrichment step, with the project's client-IP rule. */
  readonly enrich: (projectId: string, visits: readonly Visit[]) => Promise<EnrichedVisit[]>;
  /** The handler's JSON body parser: the value, or the problem answering a bad body. */
  readonly parseBody: (request: ApiRequest) => { ok: true; value: unknown } | { ok: false; response: ApiResponse };
  /** The time against which the store's retention is counted (default Date.now). */
  readonly clock?: { now(): number };
}

const DAY_MS = 86_400_000;

/**
 * The most field errors one answer lists in all; past them each rejected item lists its first
 * only. Every rejected index is still listed, and an answer stays smaller than its request: a
 * 91 KB gzipped log of visits with hundreds of bad header values once answered 487 MB.
 */
const MAX_LISTED_ERRORS = 1_000;

interface Rejection {
  readonly index: number;
  readonly errors: readonly FieldError[];
}

function withinErrorBudget(rejected: readonly Rejection[]): Rejection[] {
  let left = MAX_LISTED_ERRORS;
  return rejected.map((rejection) => {
    const errors = rejection.errors.length <= left ? rejection.errors : rejection.errors.slice(0, Math.max(1, left));
    left = Math.max(0, left - errors.length);
    return errors === rejection.errors ? rejection : { index: rejection.index, errors };
  });
}

// Stripe's name for it: tells a client (and its logs) that this answer is the first request's.
const REPLAYED_HEADERS = { ...JSON_NO_STORE_HEADERS, 'idempotent-replayed': 'true' } as const;

function accepted(body: string, replayed = false): ApiResponse {
  return { status: 202, headers: replayed ? REPLAYED_HEADERS : JSON_NO_STORE_HEADERS, body };
}

/**
 * The 503 of a failed append, saying what became of the visits: nothing stored (the store knows),
 * or an unknown outcome (a write was under way), where only a retry with the same key is safe.
 */
function unavailable(error: VisitStoreUnavailableError, keyed: boolean): ApiResponse {
  const headers = { 'retry-after': String(error.retryAfterSeconds) };
  if (error.outcome === 'unknown') {
    return problem(
      'store-outcome-unknown',
      keyed
        ? `The visit store failed while writing this request (${error.reason}): some or all of its visits may be stored. Send it again after ${error.retryAfterSeconds} s with the same Idempotency-Key: the retry stores what is missing, or answers as the first time.`
        : `The visit store failed while writing this request (${error.reason}): some or all of its visits may be stored, and sending it again may store them twice. Send batches with an Idempotency-Key (the same on every retry) to store each exactly once.`,
      { headers },
    );
  }
  return problem(
    'service-unavailable',
    `The visit store cannot take visits now (${error.reason}); retry after ${error.retryAfterSeconds} s${keyed ? ' with the same Idempotency-Key' : ''}. Nothing from this request was stored.`,
    { headers },
  );
}

/**
 * A request body read as visit items: whether one object was sent, and the items; `refused` holds
 * the items refused before they could be read as visits (a line that is not JSON), by index.
 */
export type VisitItems =
  | {
      readonly ok: true;
      readonly single: boolean;
      readonly items: readonly unknown[];
      readonly refused?: ReadonlyMap<number, FieldError[]>;
      /**
       * Whether an item past the size limits is rejected by its index rather than the whole request
       * refused (413): for a client that cannot split its batch and retry (the WordPress plugin's log).
       */
      readonly rejectOversized?: boolean;
    }
  | { readonly ok: false; readonly response: ApiResponse };

/** Reads a request's visits from its body; POST /visits reads one JSON object or an array. */
export type VisitReader = (request: ApiRequest) => VisitItems | Promise<VisitItems>;

/** Stores the visits of a request for a project, read from its body by `read` (default: POST /visits's JSON). */
export type VisitIngest = (request: ApiRequest, projectId: string, read?: VisitReader) => Promise<ApiResponse>;

/**
 * Creates the POST /visits route function (token auth and content checks are the handler's).
 * @example
 * const ingest = createVisitIngest({ visits, limits, enrich, parseBody });
 * const response = await ingest(request, project.id);
 */
export function createVisitIngest(options: VisitIngestOptions): VisitIngest {
  const { visits, limits, enrich, parseBody } = options;
  const clock = options.clock ?? { now: () => Date.now() };
  const keyed = createKeyedQueue();
  const readJson: VisitReader = (request) => {
    const body = parseBody(request);
    return body.ok ? readItems(body.value, limits) : body;
  };

  return async (request, projectId, read = readJson) => {
    const keyHeader = headerValue(request.headers, 'idempotency-key');
    let key: string | undefined;
    if (keyHeader !== undefined) {
      const parsed = parseIdempotencyKey(keyHeader);
      if (!parsed.ok) return parsed.response;
      if (visits.appendOnce === undefined) return problem('not-implemented', "This server's visit store does not keep Idempotency-Keys; send the request without one.");
      key = parsed.key;
    }
    const reading = read(request);
    const items = reading instanceof Promise ? await reading : reading;
    if (!items.ok) return items.response;
    const tooLarge: FieldError[] = [];
    const valid: Visit[] = [];
    const rejected: Rejection[] = [];
    // A visit the store's next retention pass would delete is refused, not accepted and lost.
    const retentionDays = visits.retentionDays ?? 0;
    const oldest = retentionDays > 0 ? clock.now() - retentionDays * DAY_MS : undefined;
    items.items.forEach((item, index) => {
      const refused = items.refused?.get(index);
      if (refused !== undefined) {
        rejected.push({ index, errors: refused });
        return;
      }
      const at = items.single ? undefined : index;
      if (typeof item === 'object' && item !== null) {
        const base = at === undefined ? '' : pointerTo('', at);
        const oversized: FieldError[] = [];
        checkHeaderLimits((item as Record<string, unknown>)['request_headers'], base, 'request_headers', limits, oversized);
        checkHeaderLimits((item as Record<string, unknown>)['response_headers'], base, 'response_headers', limits, oversized);
        if (oversized.length > 0 && items.rejectOversized === true) {
          rejected.push({ index, errors: oversized });
          return;
        }
        tooLarge.push(...oversized);
      }
      const parsed = parseVisit(item, at);
      if (!parsed.ok) rejected.push({ index, errors: parsed.errors });
      else if (oldest !== undefined && parsed.visit.created !== undefined && Date.parse(parsed.visit.created) < oldest) {
        const pointer = pointerTo(at === undefined ? '' : pointerTo('', at), 'created');
        rejected.push({ index, errors: [{ pointer, code: 'too-old', message: `is older than the ${retentionDays} days this server keeps visits` }] });
      } else valid.push(parsed.visit);
    });
    if (tooLarge.length > 0) return problem('payload-too-large', 'A visit is past the size limits.', { errors: tooLarge });
    // DESIGN.md §7: 400 when none is valid; an empty array is nothing to reject.
    const reported = withinErrorBudget(rejected);
    if (valid.length === 0 && reported.length > 0) {
      return problem('validation-failed', 'No visit in the request is valid; see errors.', { errors: reported.flatMap((r) => r.errors).slice(0, MAX_LISTED_ERRORS), extra: { accepted: 0, rejected: reported } });
    }
    const answer = JSON.stringify({ accepted: valid.length, rejected: reported });

    if (key === undefined) {
      if (valid.length > 0) {
        try {
          await visits.append(projectId, await enrich(projectId, valid));
        } catch (error) {
          if (!(error instanceof VisitStoreUnavailableError)) throw error;
          // Backpressure (DESIGN.md §6): refuse the whole batch so the client retries it; never drop.
          return unavailable(error, false);
        }
      }
      return accepted(answer);
    }

    const batch = { key, fingerprint: await bodyFingerprint(request.body), response: answer };
    const enriched = valid.length === 0 ? [] : await enrich(projectId, valid);
    // One request per key at a time on this server: a repeat that arrives while the first is being
    // stored waits for it and is answered from its record. Across servers the store decides.
    return keyed.run(`${projectId}\u0000${key}`, async () => {
      let result;
      try {
        result = await visits.appendOnce!(projectId, enriched, batch);
      } catch (error) {
        if (!(error instanceof VisitStoreUnavailableError)) throw error;
        return unavailable(error, true);
      }
      switch (result.outcome) {
        case 'stored':
          return accepted(answer);
        case 'replayed':
          if (result.record.fingerprint === batch.fingerprint) return accepted(result.record.response, true);
          return headerProblem('idempotency-key-reused', 'This Idempotency-Key was used for a request with another body; nothing from this request was stored. Use a new key for a new batch.', {
            header: 'Idempotency-Key',
            code: 'reused',
            message: 'was used for a request with another body',
          });
        case 'in-progress':
          return headerProblem(
            'idempotency-key-in-use',
            `A request with this Idempotency-Key is being stored and its outcome is not known yet; nothing from this request was stored. Retry after ${result.retryAfterSeconds} s to get its answer.`,
            { header: 'Idempotency-Key', code: 'in-use', message: 'is in use by a request still being stored' },
            { 'retry-after': String(result.retryAfterSeconds) },
          );
      }
    });
  };
}
