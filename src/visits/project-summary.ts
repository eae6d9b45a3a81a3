// A project's visit count and last visit for the projects list, read through any VisitStore's own
// stats and timeline (so every store answers alike), with test visits counted apart.
import { TEST_AGENT_ID } from '../catalog/test-agent.js';
import { bucketStart, INTERVAL_MS, MAX_STATS_BUCKETS } from './stats.js';
import type { VisitStore } from './visit-store.js';

/** Visits of one project, of any time the day counts reach. */
export interface ProjectVisitSummary {
  /** Visits counted, test visits included or not as asked. */
  readonly visits: number;
  /** Visits by the agentwarden test agent ("send a test visit"), counted whether or not left out. */
  readonly test_visits: number;
  /** The newest counted visit's time (ms since the epoch); null when there is none. */
  readonly last_visit: number | null;
}

/** Options of `summarizeProjectVisits`. */
export interface ProjectVisitSummaryOptions {
  /** Now, ms since the epoch. */
  readonly now: number;
  /** Leave the test agent's visits out of `visits` and `last_visit`. */
  readonly excludeTestVisits: boolean;
}

// How many newest visits are looked through for one that is not a test visit. Test visits come
// from a button, so more than this in a row is unlikely; then the newest day that holds any is told.
const LAST_VISIT_SCAN = 1000;

/**
 * Counts a project's visits by the store's day counts (which stores keep past raw-visit retention)
 * over the longest range stats answer (10,000 days), not from the project's creation: a client may
 * send visits that happened before it (a backfill with `created`). Finds its newest visit too.
 * @example
 * await summarizeProjectVisits(store, 'prj_1', { now: Date.now(), excludeTestVisits: true });
 */
export async function summarizeProjectVisits(store: VisitStore, projectId: string, options: ProjectVisitSummaryOptions): Promise<ProjectVisitSummary> {
  const day = INTERVAL_MS.day;
  // Whole minutes: stores answer such ranges from their pre-aggregated counts.
  const to = bucketStart(options.now, 'minute') + 60_000;
  const from = bucketStart(to - (MAX_STATS_BUCKETS - 1) * day, 'day');
  const range = { projectId, from, to, interval: 'day' as const, by: 'result' as const };
  const [all, test] = await Promise.all([store.stats(range), store.stats({ ...range, filter: { agent_id: TEST_AGENT_ID } })]);
  const visits = options.excludeTestVisits ? all.total - test.total : all.total;
  if (visits === 0) return { visits, test_visits: test.total, last_visit: null };

  const [newest] = await store.timeline({ projectId, limit: 1 });
  let last = newest === undefined ? null : newest.time;
  if (options.excludeTestVisits && newest?.agent_id === TEST_AGENT_ID) {
    const page = await store.timeline({ projectId, limit: LAST_VISIT_SCAN });
    const found = page.find((visit) => visit.agent_id !== TEST_AGENT_ID);
    if (found !== undefined) last = found.time;
    else {
      // The newest day with a visit that is not a test visit; its end bounds the last one.
      let lastDay: number | null = null;
      all.buckets.forEach((bucket, i) => {
        const counted = bucket.counts.reduce((sum, n) => sum + n, bucket.other) - (test.buckets[i]!.counts.reduce((sum, n) => sum + n, test.buckets[i]!.other));
        if (counted > 0) lastDay = bucket.start;
      });
      last = lastDay === null ? null : Math.min(lastDay + day - 1, options.now);
    }
  }
  return { visits, test_visits: test.total, last_visit: last };
}
