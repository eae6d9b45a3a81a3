// The read side of the visit pipeline: timeline pages, the live event stream, stats, top paths,
// robots.txt violations (each with CSV export) and "send a test visit", as one route table.
import { TEST_AGENT_USER_AGENT } from '../catalog/test-agent.js';
import type { Engine } from '../engine.js';
import { parseVisit, type Visit } from '../visits/visit.js';
import { bucketStart, validateStatsQuery } from '../visits/stats.js';
import { VisitQueryError, type EnrichedVisit, type PathCount, type StatsDimension, type StatsInterval, type StoredVisit, type VisitFilter, type VisitStore } from '../visits/visit-store.js';
import { csvLine, csvResponse, toCsv, type CsvCell } from './csv.js';
import { jsonBodyProblem, parseJsonBody } from './json-body.js';
import { pointerTo } from '../field-error.js';
import { headerProblem, notJsonProblem, problem } from './problem.js';
import { DEFAULT_PROJECT_SETTINGS, type ProjectSettingsStore } from './project-settings.js';
import { createSavedRobotsRules } from './saved-robots-rules.js';
import { enumParam, integerParam, NONE, rangeParams, readRoute, visitFilterParams, wantsCsv } from './read-query.js';
import { headerValue, isJsonMediaType } from './request-headers.js';
import type { RouteTable } from './route.js';
import type { ApiResponse } from './types.js';
import { visitCsvRow, visitJson, VISIT_CSV_HEADER } from './visit-json.js';
import { openVisitEventStream } from './visit-event-stream.js';
import { createEventStreamBudget, type EventStreamLimits } from './event-stream-budget.js';
import { JSON_NO_STORE_HEADERS } from './security-headers.js';

/** Options of `createVisitRoutes`. */
export interface VisitRoutesOptions {
  readonly engine: Engine;
  readonly visits: VisitStore;
  /** Where the project's robots rules are saved (for /robots-violations). */
  readonly settings: ProjectSettingsStore;
  /** The POST /visits enrichment, with the project's client-IP rule (for /test-visits). */
  readonly enrich: (projectId: string, visits: readonly Visit[]) => Promise<EnrichedVisit[]>;
  /** Milliseconds since the epoch: default time ranges and the test visit's time. */
  readonly clock?: { now(): number };
  /** Nesting limit of JSON bodies (default 64). */
  readonly maxJsonDepth?: number;
  /** Event stream timing (heartbeat comment interval, default 15,000 ms; the `retry:` hint, default 3,000 ms; credential checks, default 1,000 ms) and limits. */
  readonly eventStream?: EventStreamOptions;
}

/** Timing and limits of `GET /visits/stream`. */
export interface EventStreamOptions extends EventStreamLimits {
  readonly heartbeatMs?: number;
  readonly retryMs?: number;
  /** The least time between two asks whether the stream's token or session is still valid (default 1,000 ms). */
  readonly credentialCheckMs?: number;
}

const INTERVALS: readonly StatsInterval[] = ['minute', 'hour', 'day'];
const DIMENSIONS: readonly StatsDimension[] = ['agent', 'agent_type', 'result', 'path', 'referral', 'status'];
// A CSV export may hold more than one JSON page; the store is still read a page at a time.
const MAX_CSV_VISITS = 100_000;
const TIMELINE_PAGE = 1000;
/**
 * The most characters of visits one GET /visits answer holds (JSON or CSV): a page stops early
 * there and its cursor goes on from it. Visits within the limits can still be large (64 Ki of
 * headers each), and 10,000 such rows once made the CSV export answer 500 (past V8's longest string).
 */
const MAX_PAGE_CHARS = 32 * 1024 * 1024;
// Streams free their slots only when clients leave; a few seconds is a fair guess for a retry.
const STREAM_RETRY_AFTER_SECONDS = 5;
// Rows read per scan (a chosen type, or an agent named outside them) when looking for violations: the most visited (agent, path) pairs.
const VIOLATION_SCAN_ROWS = 10_000;

function json(status: number, value: unknown): ApiResponse {
  return { status, headers: JSON_NO_STORE_HEADERS, body: JSON.stringify(value) };
}

function iso(time: number): string {
  return new Date(time).toISOString();
}

/** A store cursor error names the store's field; the client knows the parameter it sent. */
/**
 * A series' column in the stats CSV: its key, "(none)" for visits without one. A key that reads as
 * one of those or as "start" or "other" (a path need not start with "/") is written "(key)" and
 * itself, so that no two columns share a name and none reads as another.
 */
function statsColumn(key: string | null): string {
  if (key === null) return `(${NONE})`;
  return key === 'start' || key === 'other' || key.startsWith('(') ? `(key)${key}` : key;
}

function renameCursorError(error: unknown, parameter: string): unknown {
  return error instanceof VisitQueryError ? new VisitQueryError(parameter, error.message) : error;
}

function positiveMs(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer of milliseconds, got ${String(value)}`);
  return value;
}

/**
 * Creates the read routes (auth: a project token, or an admin session naming `?project=`).
 * @throws {TypeError | RangeError} for a missing dependency or a bad event-stream timing.
 * @example
 * createApiHandler({ engine, projects, visits, routes: [createVisitRoutes({ engine, visits, settings, enrich })] });
 */
export function createVisitRoutes(options: VisitRoutesOptions): RouteTable {
  if (typeof options?.engine?.identify !== 'function') throw new TypeError('engine must be an engine from createEngine()');
  if (typeof options.visits?.timeline !== 'function') throw new TypeError('visits must be a VisitStore');
  if (typeof options.settings?.getProjectSettings !== 'function') throw new TypeError('settings must be a ProjectSettingsStore');
  if (typeof options.enrich !== 'function') throw new TypeError('enrich must be a function');
  const { engine, visits, settings, enrich } = options;
  const catalog = engine.catalog;
  const clock = options.clock ?? { now: () => Date.now() };
  const maxJsonDepth = options.maxJsonDepth ?? 64;
  const heartbeatMs = positiveMs('eventStream.heartbeatMs', options.eventStream?.heartbeatMs, 15_000);
  const retryMs = positiveMs('eventStream.retryMs', options.eventStream?.retryMs, 3000);
  // Often enough that a revoked credential reads little more; rarely enough that a busy stream
  // does not ask the token or session store for every visit.
  const credentialCheckMs = positiveMs('eventStream.credentialCheckMs', options.eventStream?.credentialCheckMs, 1000);
  const streams = createEventStreamBudget(options.eventStream);
  const { maxQueuedBytes, maxQueuedEvents } = streams.limits;
  const agentName = (id: string | null) => (id === null ? null : (catalog.getAgent(id)?.name ?? null));
  const serialize = (visit: StoredVisit) => JSON.stringify(visitJson(visit, catalog));

  const read = readRoute;
  const range = (query: URLSearchParams) => rangeParams(query, clock);

  const pathRow = (row: PathCount) => ({ agent_id: row.agent_id, agent_name: agentName(row.agent_id), agent_type: row.agent_type, path: row.path, count: row.count, last: iso(row.last) });

  const savedRules = createSavedRobotsRules(catalog);

  /**
   * Visits per agent and path, of the agents themselves: verified, or not verifiable. A visit whose
   * verification failed came from someone borrowing the agent's name, and its path is no violation
   * of the agent's (its operator may well obey robots.txt).
   */
  const claimedByTheAgent = async (projectId: string, from: number, to: number, filter: VisitFilter): Promise<PathCount[]> => {
    const merged = new Map<string, PathCount>();
    for (const result of ['verified', 'not_verifiable'] as const) {
      for (const row of await visits.pathCounts({ projectId, from, to, filter: { ...filter, result }, agentsOnly: true, limit: VIOLATION_SCAN_ROWS })) {
        const key = `${row.agent_id}\n${row.path}`;
        const seen = merged.get(key);
        merged.set(key, seen === undefined ? row : { ...row, count: seen.count + row.count, last: Math.max(seen.last, row.last) });
      }
    }
    return [...merged.values()];
  };

  return {
    '/visits': {
      GET: read(async ({ query, request }, projectId) => {
        const csv = wantsCsv(query, headerValue(request.headers, 'accept'));
        const limit = csv ? integerParam(query, 'limit', { min: 1, max: MAX_CSV_VISITS, fallback: 10_000 }) : integerParam(query, 'limit', { min: 1, max: 1000, fallback: 50 });
        const filter = visitFilterParams(query);
        let before = query.get('after') || undefined;
        // Each visit is written as it is read, and the page ends early past MAX_PAGE_CHARS.
        const written: string[] = [];
        let chars = 0;
        let last: string | undefined;
        let full = false;
        // `after` is the previous page's `next`: this page continues the newest-first list past it.
        while (written.length < limit && !full) {
          const want = Math.min(TIMELINE_PAGE, limit - written.length);
          let got: readonly StoredVisit[];
          try {
            got = await visits.timeline({ projectId, limit: want, before, filter });
          } catch (error) {
            throw renameCursorError(error, 'after');
          }
          for (const visit of got) {
            const text = csv ? csvLine(visitCsvRow(visit, catalog)) : serialize(visit);
            if (written.length > 0 && chars + text.length > MAX_PAGE_CHARS) {
              full = true;
              break;
            }
            written.push(text);
            chars += text.length;
            last = visit.id;
          }
          if (got.length < want) break;
          before = got[got.length - 1]!.id;
        }
        const next = full || written.length === limit ? last! : null;
        if (csv) return csvResponse(`visits-${projectId}.csv`, csvLine(VISIT_CSV_HEADER) + written.join(''), next === null ? {} : { 'x-next-cursor': next });
        return { status: 200, headers: JSON_NO_STORE_HEADERS, body: `{"visits":[${written.join(',')}],"next":${JSON.stringify(next)}}` };
      }),
    },
    '/visits/{id}': {
      GET: read(async ({ params }, projectId) => {
        const visit = await visits.getVisit(projectId, params['id']!);
        if (visit === undefined) return problem('not-found', `This project has no visit ${JSON.stringify(params['id']!.slice(0, 64))}.`);
        return { status: 200, headers: JSON_NO_STORE_HEADERS, body: serialize(visit) };
      }),
    },
    '/visits/stream': {
      GET: read(async ({ query, request, admin, credential }, projectId) => {
        const filter = visitFilterParams(query);
        // EventSource resends the last id it saw in Last-Event-ID (WHATWG HTML §9.2.4); the query form serves manual resumes.
        const header = headerValue(request.headers, 'last-event-id');
        const lastEventId = (header !== undefined && header !== '' ? header : undefined) ?? (query.get('last_event_id') || undefined);
        // A project has one token at a time; an admin session counts on its own.
        const admission = streams.admit(admin === undefined ? `project:${projectId}` : `admin:${admin.id}`);
        if (!admission.ok) {
          const detail =
            admission.reason === 'per-token'
              ? `This token (or session) already has ${streams.limits.maxStreamsPerToken} event streams open; close one or retry after ${STREAM_RETRY_AFTER_SECONDS} s.`
              : `The server has ${streams.limits.maxStreams} event streams open; retry after ${STREAM_RETRY_AFTER_SECONDS} s.`;
          return problem('too-many-streams', detail, { headers: { 'retry-after': String(STREAM_RETRY_AFTER_SECONDS) } });
        }
        const slot = admission.slot;
        let body: ReadableStream<Uint8Array>;
        try {
          // The token or session is asked about again while the stream is open: a logout, a new
          // admin secret, a revoked or rotated token or a deleted project ends it.
          body = await openVisitEventStream({ visits, projectId, filter, lastEventId, heartbeatMs, retryMs, serialize, maxQueuedBytes, maxQueuedEvents, slot, credential, credentialCheckMs });
        } catch (error) {
          slot.release();
          // A header is named as a header, as Idempotency-Key is, not as a query parameter.
          if (header !== undefined && header !== '' && error instanceof VisitQueryError) {
            return headerProblem('invalid-header', `Last-Event-ID: ${error.message}`, { header: 'Last-Event-ID', code: 'invalid', message: error.message });
          }
          throw renameCursorError(error, 'last_event_id');
        }
        // no-transform and X-Accel-Buffering: proxies must pass events through unbuffered.
        return { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store, no-transform', 'x-accel-buffering': 'no' }, body };
      }),
    },
    '/stats': {
      GET: read(async ({ query, request }, projectId) => {
        const csv = wantsCsv(query, headerValue(request.headers, 'accept'));
        const { from, to } = range(query);
        const interval = enumParam(query, 'interval', INTERVALS, 'hour');
        const by = enumParam(query, 'by', DIMENSIONS, 'agent_type');
        const limit = integerParam(query, 'limit', { min: 1, max: 1000 });
        const statsQuery = { projectId, from, to, interval, by, limit, filter: visitFilterParams(query) };
        validateStatsQuery(statsQuery);
        const result = await visits.stats(statsQuery);
        if (csv) {
          const header = ['start', ...result.series.map((s) => statsColumn(s.key)), 'other'];
          const rows = result.buckets.map((b): CsvCell[] => [iso(b.start), ...b.counts, b.other]);
          return csvResponse(`stats-${by}-${projectId}.csv`, toCsv(header, rows));
        }
        const series = result.series.map((s) => (by === 'agent' ? { key: s.key, total: s.total, agent_name: agentName(s.key), agent_type: s.key === null ? null : (catalog.getAgent(s.key)?.type ?? null) } : { key: s.key, total: s.total }));
        return json(200, {
          // Counting starts at the bucket holding `from` (StatsQuery floors it): said, not hidden.
          from: iso(bucketStart(from, interval)),
          to: iso(to),
          interval,
          by,
          series,
          buckets: result.buckets.map((b) => ({ start: iso(b.start), counts: b.counts, other: b.other })),
          other: result.other,
          total: result.total,
        });
      }),
    },
    '/stats/top-paths': {
      GET: read(async ({ query, request }, projectId) => {
        const csv = wantsCsv(query, headerValue(request.headers, 'accept'));
        const { from, to } = range(query);
        const limit = integerParam(query, 'limit', { min: 1, max: 1000, fallback: 20 });
        const filter = visitFilterParams(query);
        // Top paths are per agent: catalog agents only, unless agent=none asks for the rest.
        const rows = (await visits.pathCounts({ projectId, from, to, filter, agentsOnly: filter.agent_id !== null, limit })).map(pathRow);
        if (csv) return csvResponse(`top-paths-${projectId}.csv`, toCsv(['agent_id', 'agent_name', 'agent_type', 'path', 'count', 'last'], rows.map((r) => [r.agent_id, r.agent_name, r.agent_type, r.path, r.count, r.last])));
        return json(200, { from: iso(from), to: iso(to), paths: rows });
      }),
    },
    '/robots-violations': {
      GET: read(async ({ query, request }, projectId) => {
        const csv = wantsCsv(query, headerValue(request.headers, 'accept'));
        const { from, to } = range(query);
        const limit = integerParam(query, 'limit', { min: 1, max: 10_000, fallback: 1000 });
        // One agent's violations (its page), or every agent's.
        const agent = query.get('agent') || undefined;
        const robots = ((await settings.getProjectSettings(projectId)) ?? DEFAULT_PROJECT_SETTINGS).robots;
        const violations: (ReturnType<typeof pathRow> & { rule: string })[] = [];
        const agentRules = robots === null ? null : savedRules.rulesFor(robots);
        // What the rules say about the one agent asked for: where its group comes from and its lines.
        const agentRule = agent === undefined || agentRules === null ? undefined : (agentRules.ruleFor(agent) ?? null);
        if (agentRules !== null) {
          // Each chosen type at once, and each agent named outside them on its own (so a busy type's
          // other agents never crowd it out of the scan); then every row by its agent's rule.
          const scans: VisitFilter[] =
            agent !== undefined
              ? agentRule === null
                ? []
                : [{ agent_id: agent }]
              : [
                  ...[...agentRules.chosenTypes].map((type) => ({ agent_type: type })),
                  ...[...agentRules.namedAgents].filter((id) => !agentRules.chosenTypes.has(catalog.getAgent(id)!.type)).map((id) => ({ agent_id: id })),
                ];
          for (const filter of scans) {
            for (const row of await claimedByTheAgent(projectId, from, to, filter)) {
              const rule = row.agent_id === null ? undefined : agentRules.ruleFor(row.agent_id);
              if (rule === undefined || rule.disallow.length === 0) continue;
              const decision = savedRules.matcherFor(rule)(row.path);
              if (!decision.allowed) violations.push({ ...pathRow(row), rule: decision.rule!.pattern });
            }
          }
          violations.sort((a, b) => b.count - a.count || (a.agent_id ?? '').localeCompare(b.agent_id ?? '') || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
          violations.length = Math.min(violations.length, limit);
        }
        if (csv) {
          return csvResponse(`robots-violations-${projectId}.csv`, toCsv(['agent_id', 'agent_name', 'agent_type', 'path', 'count', 'last', 'rule'], violations.map((v) => [v.agent_id, v.agent_name, v.agent_type, v.path, v.count, v.last, v.rule])));
        }
        return json(200, { from: iso(from), to: iso(to), robots, ...(agentRule === undefined ? {} : { agent_rule: agentRule }), violations });
      }),
    },
    '/test-visits': {
      POST: read(async ({ request }, projectId) => {
        // Optional JSON body { request_path }; the route asks no Content-Type of a bare POST (a
        // button), but a body must be sent as JSON, like every other route's.
        let path = '/';
        if (request.body !== undefined && request.body.byteLength > 0) {
          const contentType = headerValue(request.headers, 'content-type');
          if (!isJsonMediaType(contentType)) {
            return notJsonProblem(contentType);
          }
          const parsed = parseJsonBody(request.body, maxJsonDepth);
          if (!parsed.ok) return jsonBodyProblem(parsed);
          const body = parsed.value;
          if (typeof body !== 'object' || body === null || Array.isArray(body)) {
            return problem('validation-failed', 'The body must be a JSON object such as {"request_path": "/"}.', { errors: [{ pointer: '', code: 'type', message: 'must be an object' }] });
          }
          const requested = (body as Record<string, unknown>)['request_path'];
          if (requested !== undefined) {
            if (typeof requested !== 'string' || !requested.startsWith('/') || requested.length > 2048) {
              return problem('validation-failed', 'request_path must be a path starting with "/".', { errors: [{ pointer: pointerTo('', 'request_path'), code: 'type', message: 'must be a path starting with "/" (at most 2,048 characters)' }] });
            }
            path = requested;
          }
        }
        const parsed = parseVisit({ request_path: path, request_method: 'GET', request_headers: { 'user-agent': TEST_AGENT_USER_AGENT }, created: iso(clock.now()) });
        if (!parsed.ok) return problem('validation-failed', 'The test visit is invalid.', { errors: parsed.errors });
        const [stored] = await visits.append(projectId, await enrich(projectId, [parsed.visit]));
        return json(202, visitJson(stored!, catalog));
      }),
    },
  };
}
