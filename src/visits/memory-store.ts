// An in-memory VisitStore (lost at exit): the reference implementation of the contract, for
// tests and for embedding (a Worker, a script) where what fits in memory is enough.
import { createVisitFanout } from './fanout.js';
import { bucketStart, buildStatsResult, dimensionKey, matchesFilter, mergeSeen, validateSeenQuery, validateStatsQuery, type StatsCell } from './stats.js';
import { IDEMPOTENCY_WINDOW_MS, VisitQueryError, type EnrichedVisit, type IdempotencyRecord, type IdempotentAppendResult, type IdempotentBatch, type PathCount, type StoredVisit, type VisitStore } from './visit-store.js';

/** Options of `createMemoryVisitStore`. */
export interface MemoryVisitStoreOptions {
  /** Milliseconds since the epoch: when an idempotency key was seen (default `Date.now`). */
  readonly clock?: { now(): number };
}

/** An in-memory visit store. */
export interface MemoryVisitStore extends VisitStore {
  appendOnce(projectId: string, visits: readonly EnrichedVisit[], batch: IdempotentBatch): Promise<IdempotentAppendResult>;
  /** Every stored visit of one project, oldest first. */
  list(projectId: string): readonly StoredVisit[];
  /** Forgets every visit and idempotency key of a project (it was deleted); resolves to the visits removed. */
  deleteProject(projectId: string): Promise<number>;
}

// Ids are decimal sequence numbers: one counter for the store, so ids never repeat across projects.
const CURSOR = /^[1-9][0-9]{0,15}$/;

function parseCursor(parameter: string, cursor: string): number {
  if (!CURSOR.test(cursor)) throw new VisitQueryError(parameter, `${JSON.stringify(cursor)} is not a visit id from this store`);
  return Number(cursor);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Creates an in-memory visit store.
 * @example
 * const visits = createMemoryVisitStore();
 * await visits.append('prj_1', [enrichedVisit]);
 * (await visits.timeline({ projectId: 'prj_1', limit: 10 })).length; // 1
 */
export function createMemoryVisitStore(options: MemoryVisitStoreOptions = {}): MemoryVisitStore {
  const clock = options.clock ?? { now: () => Date.now() };
  if (typeof clock.now !== 'function') throw new TypeError('clock must be an object with now()');
  const byProject = new Map<string, StoredVisit[]>();
  const fanout = createVisitFanout();
  let sequence = 0;
  // Idempotency keys by project and key, oldest first (a key stored again moves to the end).
  const keys = new Map<string, { readonly at: number; readonly record: IdempotencyRecord }>();

  const append = (projectId: string, visits: readonly EnrichedVisit[]): StoredVisit[] => {
    let list = byProject.get(projectId);
    if (list === undefined) byProject.set(projectId, (list = []));
    // Object.assign, not `{ ...visit, id, ... }`: on Node 20 that spread takes V8's slow path (see enrich.ts).
    const stored = visits.map((visit: EnrichedVisit): StoredVisit => Object.assign({}, visit, { id: String(++sequence), project_id: projectId }));
    // A loop, not push(...stored): spreading a huge batch into arguments overflows the stack.
    for (const visit of stored) list.push(visit);
    fanout.publish(projectId, stored);
    return stored;
  };

  return {
    async append(projectId, visits) {
      return append(projectId, visits);
    },
    async appendOnce(projectId, visits, batch) {
      const now = clock.now();
      // Keys past the window are forgotten, oldest first.
      for (const [id, seen] of keys) {
        if (now - seen.at < IDEMPOTENCY_WINDOW_MS) break;
        keys.delete(id);
      }
      const id = `${projectId}\u0000${batch.key}`;
      const seen = keys.get(id);
      if (seen !== undefined && now - seen.at < IDEMPOTENCY_WINDOW_MS) return { outcome: 'replayed', record: seen.record };
      // No await between the check and the append: no other call can store the key in between.
      const stored = append(projectId, visits);
      keys.delete(id);
      keys.set(id, { at: now, record: { fingerprint: batch.fingerprint, response: batch.response } });
      return { outcome: 'stored', visits: stored };
    },
    async timeline(query) {
      // TimelineQuery: 1 to 1,000 visits a page.
      if (!Number.isSafeInteger(query.limit) || query.limit < 1 || query.limit > 1000) throw new VisitQueryError('limit', 'limit must be an integer from 1 to 1000');
      const list = byProject.get(query.projectId) ?? [];
      const before = query.before === undefined ? Infinity : parseCursor('before', query.before);
      const after = query.after === undefined ? 0 : parseCursor('after', query.after);
      const page: StoredVisit[] = [];
      if (query.after !== undefined) {
        for (const visit of list) {
          if (page.length >= query.limit) break;
          const id = Number(visit.id);
          if (id > after && id < before && matchesFilter(visit, query.filter)) page.push(visit);
        }
      } else {
        for (let i = list.length - 1; i >= 0 && page.length < query.limit; i--) {
          const visit = list[i]!;
          if (Number(visit.id) < before && matchesFilter(visit, query.filter)) page.push(visit);
        }
      }
      return page;
    },
    async getVisit(projectId, id) {
      if (!CURSOR.test(id)) return undefined;
      // Ids grow in append order: a binary search of the project's list.
      const list = byProject.get(projectId) ?? [];
      const wanted = Number(id);
      let low = 0;
      let high = list.length - 1;
      while (low <= high) {
        const middle = (low + high) >> 1;
        const found = Number(list[middle]!.id);
        if (found === wanted) return list[middle];
        if (found < wanted) low = middle + 1;
        else high = middle - 1;
      }
      return undefined;
    },
    async stats(query) {
      validateStatsQuery(query);
      const cells = new Map<string, { bucket: number; key: string | null; count: number }>();
      // `from` is floored to the interval (StatsQuery): the first bucket is always whole.
      const from = bucketStart(query.from, query.interval);
      for (const visit of byProject.get(query.projectId) ?? []) {
        if (visit.time < from || visit.time >= query.to || !matchesFilter(visit, query.filter)) continue;
        const bucket = bucketStart(visit.time, query.interval);
        const key = dimensionKey(visit, query.by);
        const id = `${bucket}\u0000${key ?? '\u0001'}`;
        const cell = cells.get(id);
        if (cell === undefined) cells.set(id, { bucket, key, count: 1 });
        else cell.count++;
      }
      return buildStatsResult(query, cells.values() as Iterable<StatsCell>);
    },
    async pathCounts(query) {
      const rows = new Map<string, { -readonly [K in keyof PathCount]: PathCount[K] }>();
      for (const visit of byProject.get(query.projectId) ?? []) {
        if (visit.time < query.from || visit.time >= query.to || !matchesFilter(visit, query.filter)) continue;
        if (query.agentsOnly === true && visit.agent_id === null) continue;
        const id = `${visit.agent_id ?? ''}\u0000${visit.request_path}`;
        const row = rows.get(id);
        if (row === undefined) rows.set(id, { agent_id: visit.agent_id, agent_type: visit.agent_type, path: visit.request_path, count: 1, last: visit.time });
        else {
          row.count++;
          if (visit.time > row.last) row.last = visit.time;
        }
      }
      return [...rows.values()]
        .sort((a, b) => b.count - a.count || compareText(a.agent_id ?? '', b.agent_id ?? '') || compareText(a.path, b.path))
        .slice(0, query.limit ?? 1000);
    },
    async seen(query) {
      validateSeenQuery(query);
      const visits = (byProject.get(query.projectId) ?? []).filter((visit) => visit.time >= query.from && visit.time < query.to && matchesFilter(visit, query.filter));
      return mergeSeen(visits.map((visit) => ({ agent_id: visit.agent_id, first: visit.time, last: visit.time })));
    },
    subscribe: (projectId, listener) => fanout.subscribe(projectId, listener),
    list(projectId) {
      return byProject.get(projectId) ?? [];
    },
    async deleteProject(projectId) {
      const removed = byProject.get(projectId)?.length ?? 0;
      byProject.delete(projectId);
      for (const id of keys.keys()) if (id.startsWith(`${projectId}\u0000`)) keys.delete(id);
      return removed;
    },
  };
}
