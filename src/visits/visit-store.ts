// The VisitStore contract (DESIGN.md §6): append enriched visits per project, read the timeline,
// count them over time buckets, count paths per agent, and subscribe to new visits.
import type { AgentType } from '../catalog/types.js';
import type { VerificationReport } from '../engine.js';
import type { IdentificationResult } from '../identify/identification.js';
import type { ReferralClass } from './referral.js';
import type { Visit } from './visit.js';

/** A parsed visit with what the pipeline learned about it; what a store is given. */
export interface EnrichedVisit extends Omit<Visit, 'client_ip'> {
  /** When the server accepted the visit, in milliseconds since the epoch. */
  readonly received: number;
  /** When the visit happened, ms since the epoch: `created` when sent (and not in the future), else `received`. */
  readonly time: number;
  /** The catalog agent that sent it; null for browsers and agents the catalog does not know. */
  readonly agent_id: string | null;
  readonly agent_type: AgentType | null;
  readonly result: IdentificationResult;
  /** The visitor's address: the visit's own `client_ip` when sent, else by the project's client-IP rule; null when neither gave one. */
  readonly client_ip: string | null;
  /** The (lower-case) request header `client_ip` was read from; absent when there is none or the rule does not say. */
  readonly client_ip_header?: string;
  /** What verifying the agent checked, every check with its reason; absent when nothing could be checked. */
  readonly verification?: VerificationReport;
  /** The AI product a human visitor came from; null for agents and other referrers. */
  readonly referral: ReferralClass | null;
}

/** A visit as stored: its id orders the project's timeline (later visits have later ids). */
export interface StoredVisit extends EnrichedVisit {
  /** Opaque cursor, unique in the store; the store alone compares ids. */
  readonly id: string;
  readonly project_id: string;
}

/** Visit fields the read queries filter on; null selects visits without a value (no agent, no referral). */
export interface VisitFilter {
  readonly agent_id?: string | null;
  readonly agent_type?: AgentType | null;
  readonly result?: IdentificationResult;
  readonly referral?: ReferralClass | null;
  /** The request path without its query string. */
  readonly path?: string;
  /** The response status code; null selects visits sent without one. */
  readonly status?: number | null;
  /** true: only visits of catalog agents; false: only visits without one (as `agent_id: null`). */
  readonly has_agent?: boolean;
  /** true: only human visits referred by an AI product; false: only visits without a referral. */
  readonly has_referral?: boolean;
}

/** A page of a project's timeline. */
export interface TimelineQuery {
  readonly projectId: string;
  /** At most this many visits (1 to 1,000). */
  readonly limit: number;
  /** Only visits older than this id, newest first (the next page of a timeline). */
  readonly before?: string;
  /** Only visits newer than this id, OLDEST first (catching up after a reconnect). */
  readonly after?: string;
  readonly filter?: VisitFilter;
}

/** Time bucket widths for stats. */
export type StatsInterval = 'minute' | 'hour' | 'day';
/**
 * What stats count visits by; `path` is the request path without its query string, `status` the
 * response status code as a string (null for visits sent without one).
 */
export type StatsDimension = 'agent' | 'agent_type' | 'result' | 'path' | 'referral' | 'status';

/** Counts over time buckets `[from, to)`, by one dimension. */
export interface StatsQuery {
  readonly projectId: string;
  /** Milliseconds since the epoch; floored to the interval (UTC). */
  readonly from: number;
  /** Milliseconds since the epoch, exclusive. */
  readonly to: number;
  readonly interval: StatsInterval;
  readonly by: StatsDimension;
  /** Keys to report one by one, the most frequent first (default 10); the rest add up in `other`. */
  readonly limit?: number;
  readonly filter?: VisitFilter;
}

/** One key of a stats result and its total over the range. */
export interface StatsSeries {
  /** The agent id, type, result, path, referral or status; null for visits without one. */
  readonly key: string | null;
  readonly total: number;
}

/** One time bucket: counts in the order of `series`, plus every other key together. */
export interface StatsBucket {
  /** Bucket start, ms since the epoch. */
  readonly start: number;
  readonly counts: readonly number[];
  readonly other: number;
}

/** What `stats` answers: every bucket of the range (zeros included), oldest first. */
export interface StatsResult {
  readonly series: readonly StatsSeries[];
  readonly buckets: readonly StatsBucket[];
  /** Visits in the range whose key is not in `series`. */
  readonly other: number;
  /** Visits in the range. */
  readonly total: number;
}

/** Visits per (agent, path) over a time range: the base of top paths and robots violations. */
export interface PathCountsQuery {
  readonly projectId: string;
  readonly from: number;
  readonly to: number;
  readonly filter?: VisitFilter;
  /** Only visits from catalog agents (agent_id not null). */
  readonly agentsOnly?: boolean;
  /** At most this many rows, the most visited first (default 1,000). */
  readonly limit?: number;
}

/** Visits of one agent to one path (with its query string, as robots.txt rules match it). */
export interface PathCount {
  readonly agent_id: string | null;
  readonly agent_type: AgentType | null;
  readonly path: string;
  readonly count: number;
  /** The latest visit's time, ms since the epoch. */
  readonly last: number;
}

/** When visits of a time range first and last happened, by agent: first and last seen, a project's last visit. */
export interface SeenQuery {
  readonly projectId: string;
  /** Milliseconds since the epoch, inclusive (not floored: the range is exactly [from, to)). */
  readonly from: number;
  /** Milliseconds since the epoch, exclusive. */
  readonly to: number;
  readonly filter?: VisitFilter;
}

/** The earliest and latest visit of one agent (or of visits without one) in a range: their exact times. */
export interface AgentSeen {
  readonly agent_id: string | null;
  /** The earliest visit's `time`, ms since the epoch. */
  readonly first: number;
  /** The latest visit's `time`, ms since the epoch. */
  readonly last: number;
}

/** Receives each appended batch of one project, in append order. */
export type VisitListener = (visits: readonly StoredVisit[]) => void;

/**
 * How long a store remembers an idempotency key (24 hours, as the window a client's retries of one
 * batch fall in many times over): a repeated key within it is answered from the first batch, a key
 * seen again after it is a new batch.
 */
export const IDEMPOTENCY_WINDOW_MS = 86_400_000;

/** A batch sent with an `Idempotency-Key`: the key, what identifies its body, and the answer to replay. */
export interface IdempotentBatch {
  /** The key as the client sent it (validated by the API); scoped to the project. */
  readonly key: string;
  /** A digest of the request body: a repeated key with another fingerprint is a client error. */
  readonly fingerprint: string;
  /** The response body the first acceptance answers with, kept to answer every repeat the same way. */
  readonly response: string;
}

/** What the first batch stored under a key: its fingerprint and its response. */
export interface IdempotencyRecord {
  readonly fingerprint: string;
  readonly response: string;
}

/**
 * What `appendOnce` did: stored the visits; found the key already stored (the record of the batch
 * that was); or found the key claimed by a batch whose outcome is not known yet (retry later).
 */
export type IdempotentAppendResult =
  | { readonly outcome: 'stored'; readonly visits: readonly StoredVisit[] }
  | { readonly outcome: 'replayed'; readonly record: IdempotencyRecord }
  | { readonly outcome: 'in-progress'; readonly retryAfterSeconds: number };

/**
 * How long a failed write keeps a store unready when no write succeeds after it: a server taken
 * out of rotation gets no visits to prove itself with, so it asks to be tried again after this.
 */
export const FAILED_WRITE_MEMORY_MS = 30_000;

/**
 * Whether a store can take visits now (`GET /readyz`). `detail` says why not, for the operator's
 * log: it may name hosts or files, so the API never puts it in an answer.
 */
export type StoreHealth = { readonly status: 'ok' } | { readonly status: 'busy' | 'unavailable'; readonly detail: string };

/** The health of a store that can take visits. */
export const STORE_READY: StoreHealth = Object.freeze({ status: 'ok' });

/**
 * Stores visits per project and answers the analytics over them.
 *
 * `append` resolves only once the visits are durable for the store (SQLite: committed; ClickHouse:
 * acknowledged), because the API answers 2xx right after it (DESIGN.md §6). When the store cannot
 * take them now it rejects with `VisitStoreUnavailableError`, and the API answers 503.
 */
export interface VisitStore {
  append(projectId: string, visits: readonly EnrichedVisit[]): Promise<readonly StoredVisit[]>;
  /**
   * Appends a batch at most once per (project, `batch.key`) within `IDEMPOTENCY_WINDOW_MS`, across
   * restarts and across servers sharing the store: the key is recorded atomically with the visits.
   * A batch of no visits records the key alone. Rejects as `append` does; an error whose
   * `outcome` is `'unknown'` means the batch may be stored, and a retry with the same key settles it.
   */
  appendOnce?(projectId: string, visits: readonly EnrichedVisit[], batch: IdempotentBatch): Promise<IdempotentAppendResult>;
  /** @throws {VisitQueryError} for a cursor the store did not issue. */
  timeline(query: TimelineQuery): Promise<readonly StoredVisit[]>;
  /** One visit of the project by its id; undefined when there is none (also for an id the store could not have issued). */
  getVisit(projectId: string, id: string): Promise<StoredVisit | undefined>;
  stats(query: StatsQuery): Promise<StatsResult>;
  pathCounts(query: PathCountsQuery): Promise<readonly PathCount[]>;
  /**
   * The exact times of the earliest and latest visit of each agent in the range (one row per agent
   * id, null for visits without one; none for an agent without visits there), in no set order.
   * Stores answer from what they keep past raw-visit retention, as stats do: from their rollups
   * where the filter and range allow (no path or status filter), from the visits kept otherwise.
   * @throws {VisitQueryError} for a non-finite or empty range.
   */
  seen(query: SeenQuery): Promise<readonly AgentSeen[]>;
  /** Calls `listener` with every batch appended to the project from now on; returns the unsubscribe. */
  subscribe(projectId: string, listener: VisitListener): () => void;
  /**
   * Days raw visits are kept, by their time (`created`); absent or 0 when they are kept for ever.
   * `POST /visits` refuses a visit older than this: the next retention pass would delete it.
   */
  readonly retentionDays?: number;
  /**
   * Whether the store can take visits now: reachable, not backed up, its last write not failed.
   * Resolves, never rejects, within a few seconds (the API gives up on it after 3 s and calls the
   * store not ready); a store without it is always ready.
   */
  health?(): Promise<StoreHealth>;
}

/**
 * The store cannot take visits now (overloaded or its database is unreachable); retry later.
 * `outcome` says what became of the visits of the failed call: `'not-stored'` when the store knows
 * none was stored (refused before writing, or rolled back), `'unknown'` when a write was under way
 * and its result could not be learnt (the connection broke mid-insert): some or all may be stored.
 */
export class VisitStoreUnavailableError extends Error {
  readonly reason: 'busy' | 'unavailable';
  readonly retryAfterSeconds: number;
  readonly outcome: 'not-stored' | 'unknown';
  constructor(reason: 'busy' | 'unavailable', retryAfterSeconds: number, message: string, options?: { cause?: unknown; outcome?: 'not-stored' | 'unknown' }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'VisitStoreUnavailableError';
    this.reason = reason;
    this.retryAfterSeconds = retryAfterSeconds;
    this.outcome = options?.outcome ?? 'not-stored';
  }
}

/** A read query the store cannot answer as asked; `parameter` names the query field at fault. */
export class VisitQueryError extends Error {
  readonly parameter: string;
  constructor(parameter: string, message: string) {
    super(message);
    this.name = 'VisitQueryError';
    this.parameter = parameter;
  }
}
