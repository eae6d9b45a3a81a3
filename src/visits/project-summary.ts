// A project's visit count and last visit for the projects list, read through any VisitStore's own
// stats and first and last seen times (so every store answers alike), with test visits counted apart.
import { TEST_AGENT_ID } from '../catalog/test-agent.js';
import { bucketStart, INTERVAL_MS, MAX_STATS_BUCKETS } from './stats.js';
import type { VisitStore } from './visit-store.js';

/** Visits of one project, of any time the day counts reach. */
export interface ProjectVisitSummary {
  /** Visits counted, test visits included or not as asked. */
  readonly visits: number;
  /** Visits by the agentwarden test agent ("send a test visit"), counted whether or not left out. */
  readonly test_visits: number;
  /** The newest counted visit's time, exactly (ms since the epoch); null when there is none. */
  readonly last_visit: number | null;
}

/** Options of `summarizeProjectVisits`. */
export interface ProjectVisitSummaryOptions {
  /** Now, ms since the epoch. */
  readonly now: number;
  /** Leave the test agent's visits out of `visits` and `last_visit`. */
  readonly excludeTestVisits: boolean;
}

/**
 * Counts a project's visits by the store's day counts (which stores keep past raw-visit retention)
 * over the longest range stats answer (10,000 days), not from the project's creation: a client may
 * send visits that happened before it (a backfill with `created`). Finds its newest visit too, by
 * when it happened (not by when it arrived: a backfill arrives late), to the millisecond.
 * @example
 * await summarizeProjectVisits(store, 'prj_1', { now: Date.now(), excludeTestVisits: true });
 */
export async function summarizeProjectVisits(store: VisitStore, projectId: string, options: ProjectVisitSummaryOptions): Promise<ProjectVisitSummary> {
  const day = INTERVAL_MS.day;
  // Whole minutes: stores answer such ranges from their pre-aggregated counts.
  const to = bucketStart(options.now, 'minute') + 60_000;
  const from = bucketStart(to - (MAX_STATS_BUCKETS - 1) * day, 'day');
  const range = { projectId, from, to, interval: 'day' as const, by: 'result' as const };
  const testFilter = { agent_id: TEST_AGENT_ID };
  const [all, test, seen] = await Promise.all([store.stats(range), store.stats({ ...range, filter: testFilter }), store.seen({ projectId, from, to })]);
  const visits = options.excludeTestVisits ? all.total - test.total : all.total;
  if (visits === 0) return { visits, test_visits: test.total, last_visit: null };
  // The newest visit of every agent but the test agent when test visits are left out.
  let last: number | null = null;
  for (const agent of seen) {
    if (options.excludeTestVisits && agent.agent_id === TEST_AGENT_ID) continue;
    if (last === null || agent.last > last) last = agent.last;
  }
  return { visits, test_visits: test.total, last_visit: last };
}
