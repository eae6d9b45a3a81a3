// Retention of the SQLite visit store: raw rows and the minute rollup past `retentionDays`, hour and
// day rollups past `aggregateRetentionDays`, idempotency keys past their window, deleted in short
// chunks between which ingestion runs.
import type BetterSqlite3 from 'better-sqlite3';
import { IDEMPOTENCY_WINDOW_MS } from '../../index.js';
import { DIM_KEY, ROLLUPS } from './sqlite-visit-rollups.js';
import { DAY_MS, floorTo, indexMinute, MINUTE_MS } from './sqlite-visit-sql.js';

/** What one retention pass deleted. */
export interface RetentionResult {
  readonly visits: number;
  readonly rollupRows: number;
  /** Idempotency keys past their window. */
  readonly idempotencyKeys: number;
}

/** What a retention pass needs from its store. */
export interface RetentionOptions {
  /** Days raw visits and the minute rollup are kept (0: forever). */
  readonly retentionDays: number;
  /** Days hour and day rollups are kept (0: forever). */
  readonly aggregateRetentionDays: number;
  /** Milliseconds since the epoch: the cut-off. */
  readonly clock: { now(): number };
  /** Folds new visits into the rollups: runs before any deletion. */
  readonly rollUp: () => Promise<unknown>;
  /** True once the store is closed: the pass stops between chunks. */
  readonly closed: () => boolean;
}

// Rows deleted per retention statement: small enough that an append waits milliseconds, not seconds.
const RETENTION_CHUNK = 2000;

/**
 * The retention pass over `db`: a function that runs it (one pass at a time; a call during a pass
 * joins it). It folds new visits into the rollups first and never deletes a visit they lack.
 */
export function createRetention(db: BetterSqlite3.Database, options: RetentionOptions): () => Promise<RetentionResult> {
  const { retentionDays, aggregateRetentionDays, clock, rollUp, closed } = options;
  // Chunks of RETENTION_CHUNK rows, each its own short transaction, yielding between them so
  // appends queued meanwhile commit without waiting for the whole pass.
  const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const projectIds = db.prepare<[], { id: string | null }>(
    // A loose index scan over visits_by_project: one seek per project, not one row per visit.
    `WITH RECURSIVE p(id) AS (SELECT min(project_id) FROM visits
       UNION ALL SELECT (SELECT min(project_id) FROM visits WHERE project_id > p.id) FROM p WHERE p.id IS NOT NULL)
     SELECT id FROM p WHERE id IS NOT NULL`,
  );
  // Only rows the rollups hold: a visit past the watermark would vanish from every count.
  const deleteVisits = db.prepare(
    'DELETE FROM visits WHERE id IN (SELECT id FROM visits WHERE project_id = ? AND time / 60000 <= ? AND time < ? AND id <= (SELECT watermark FROM visit_rollup_state WHERE id = 1) LIMIT ?)',
  );
  const rollupDelete = (table: string, key: string) =>
    db.prepare(`DELETE FROM ${table} WHERE (project_id, bucket, ${key}) IN (SELECT project_id, bucket, ${key} FROM ${table} WHERE bucket < ? LIMIT ?)`);
  const deleteMinuteRollup = rollupDelete('visit_dims_minute', DIM_KEY);
  const deleteKeys = db.prepare(
    'DELETE FROM visit_idempotency_keys WHERE (project_id, key) IN (SELECT project_id, key FROM visit_idempotency_keys INDEXED BY visit_idempotency_keys_by_created WHERE created <= ? LIMIT ?)',
  );
  const deleteAggregates = ROLLUPS.filter((rollup) => rollup.width !== MINUTE_MS).map((rollup) => rollupDelete(rollup.table, rollup.key.join(', ')));

  const runRetention = async (): Promise<RetentionResult> => {
    await rollUp();
    let visits = 0;
    let rollupRows = 0;
    let idempotencyKeys = 0;
    const drain = async (step: () => number) => {
      for (;;) {
        if (closed() || !db.open) return 0;
        const deleted = step();
        if (deleted < RETENTION_CHUNK) return deleted;
        await yieldTurn();
      }
    };
    const now = clock.now();
    // Keys are remembered for their window whatever the visits' retention.
    await drain(() => {
      const n = deleteKeys.run(now - IDEMPOTENCY_WINDOW_MS, RETENTION_CHUNK).changes;
      idempotencyKeys += n;
      return n;
    });
    if (retentionDays > 0) {
      const cutoff = now - retentionDays * DAY_MS;
      for (const { id } of projectIds.all()) {
        await drain(() => {
          const n = deleteVisits.run(id, indexMinute(Math.ceil(cutoff) - 1), cutoff, RETENTION_CHUNK).changes;
          visits += n;
          return n;
        });
      }
      // The minute rollup goes with the raw rows: minute buckets only serve ranges of a few days.
      await drain(() => {
        const n = deleteMinuteRollup.run(floorTo(cutoff, MINUTE_MS), RETENTION_CHUNK).changes;
        rollupRows += n;
        return n;
      });
    }
    if (aggregateRetentionDays > 0) {
      const cutoff = floorTo(now - aggregateRetentionDays * DAY_MS, DAY_MS);
      for (const statement of deleteAggregates) {
        await drain(() => {
          const n = statement.run(cutoff, RETENTION_CHUNK).changes;
          rollupRows += n;
          return n;
        });
      }
    }
    return { visits, rollupRows, idempotencyKeys };
  };
  let retention: Promise<RetentionResult> | undefined;
  return () => {
    retention ??= runRetention().finally(() => {
      retention = undefined;
    });
    return retention;
  };
}
