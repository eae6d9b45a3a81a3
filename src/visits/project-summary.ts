// A project's visit count and last visit for the projects list, read through any VisitStore's own
// stats and timeline (so every store answers alike), with test visits counted apart.
import { TEST_AGENT_ID } from '../catalog/test-agent.js';
import { bucketStart, INTERVAL_MS, MAX_STATS_BUCKETS } from './stats.js';
import type { StatsResult, VisitStore } from './visit-store.js';

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

/** All visits of a stats bucket. */
function total(bucket: StatsResult['buckets'][number]): number {
  return bucket.counts.reduce((sum, n) => sum + n, bucket.other);
}

/**
 * Counts a project's visits by the store's day counts (which stores keep past raw-visit retention)
 * over the longest range stats answer (10,000 days), not from the project's creation: a client may
 * send visits that happened before it (a backfill with `created`). Finds its newest visit too, by
 * when it happened (to the minute, exact when it is also the newest to arrive).
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
  const [all, test] = await Promise.all([store.stats(range), store.stats({ ...range, filter: testFilter })]);
  const visits = options.excludeTestVisits ? all.total - test.total : all.total;
  if (visits === 0) return { visits, test_visits: test.total, last_visit: null };

  // The newest visit by when it happened, not by when it arrived (a backfill with `created`
  // arrives late): the newest day with a counted visit, then that day's newest minute.
  const newestBucket = (counts: StatsResult, tests: StatsResult | undefined): number | null => {
    let newest: number | null = null;
    counts.buckets.forEach((bucket, i) => {
      const testBucket = tests?.buckets[i];
      const counted = total(bucket) - (testBucket === undefined ? 0 : total(testBucket));
      if (counted > 0) newest = bucket.start;
    });
    return newest;
  };
  const lastDay = newestBucket(all, options.excludeTestVisits ? test : undefined);
  if (lastDay === null) return { visits, test_visits: test.total, last_visit: null };
  const dayRange = { projectId, from: lastDay, to: Math.min(lastDay + day, to), interval: 'minute' as const, by: 'result' as const };
  const [minutes, testMinutes] = await Promise.all([store.stats(dayRange), options.excludeTestVisits ? store.stats({ ...dayRange, filter: testFilter }) : undefined]);
  const lastMinute = newestBucket(minutes, testMinutes) ?? lastDay;
  // The exact time when the newest arrival is that visit (the common case: visits arrive in order).
  const [newest] = await store.timeline({ projectId, limit: 1 });
  const exact = newest !== undefined && !(options.excludeTestVisits && newest.agent_id === TEST_AGENT_ID) && newest.time >= lastMinute && newest.time < lastMinute + 60_000;
  const last = exact ? newest.time : lastMinute;
  return { visits, test_visits: test.total, last_visit: last };
}
