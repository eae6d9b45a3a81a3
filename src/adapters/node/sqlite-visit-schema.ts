// The SQLite visit schema: its migrations (versioned apart from the project store's), and the rows
// of the first schema's bare `visits` table moved into the current one.
import type BetterSqlite3 from 'better-sqlite3';
import type { EnrichedVisit } from '../../index.js';
import { createVisitRowWriter, VISIT_ROW_COLUMNS } from './sqlite-visit-rows.js';

type Database = BetterSqlite3.Database;

// Visit schema migrations, versioned apart from the project store's (schema_versions, component
// 'visits'), so both can grow without renumbering each other. Append; never edit an applied one.
const VISIT_MIGRATIONS: readonly string[] = [
  `CREATE TABLE visits (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     project_id TEXT NOT NULL,
     time INTEGER NOT NULL,
     received INTEGER NOT NULL,
     request_method TEXT NOT NULL,
     request_path TEXT NOT NULL,
     path TEXT NOT NULL,
     agent_id TEXT,
     agent_type TEXT,
     result TEXT NOT NULL,
     client_ip TEXT,
     referral TEXT,
     extras TEXT NOT NULL
   );
   CREATE INDEX visits_by_project ON visits(project_id, id);
   CREATE INDEX visits_by_time ON visits(project_id, time);
   CREATE INDEX visits_by_agent ON visits(project_id, agent_id, id);
   CREATE INDEX visits_by_path ON visits(project_id, path, id);
   CREATE TABLE visit_dims_minute (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, agent_type TEXT NOT NULL, result TEXT NOT NULL, referral TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_id, agent_type, result, referral)) WITHOUT ROWID;
   CREATE TABLE visit_dims_hour (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, agent_type TEXT NOT NULL, result TEXT NOT NULL, referral TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_id, agent_type, result, referral)) WITHOUT ROWID;
   CREATE TABLE visit_dims_day (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, agent_type TEXT NOT NULL, result TEXT NOT NULL, referral TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_id, agent_type, result, referral)) WITHOUT ROWID;
   CREATE TABLE visit_by_agent_id_hour (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_id)) WITHOUT ROWID;
   CREATE INDEX visit_by_agent_id_hour_by_key ON visit_by_agent_id_hour(project_id, agent_id, bucket);
   CREATE TABLE visit_by_agent_id_day (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_id)) WITHOUT ROWID;
   CREATE TABLE visit_by_agent_type_hour (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_type TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_type)) WITHOUT ROWID;
   CREATE TABLE visit_by_agent_type_day (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_type TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_type)) WITHOUT ROWID;
   CREATE TABLE visit_by_result_hour (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, result TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, result)) WITHOUT ROWID;
   CREATE TABLE visit_by_result_day (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, result TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, result)) WITHOUT ROWID;
   CREATE TABLE visit_by_referral_hour (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, referral TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, referral)) WITHOUT ROWID;
   CREATE TABLE visit_by_referral_day (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, referral TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, referral)) WITHOUT ROWID;
   CREATE TABLE visit_by_path_hour (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, path TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, path)) WITHOUT ROWID;
   CREATE INDEX visit_by_path_hour_by_key ON visit_by_path_hour(project_id, path, bucket);
   CREATE TABLE visit_by_path_day (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, path TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, path)) WITHOUT ROWID;
   CREATE TABLE visit_agent_paths_hour (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, agent_type TEXT NOT NULL, result TEXT NOT NULL, referral TEXT NOT NULL, request_path TEXT NOT NULL,
     path TEXT NOT NULL, count INTEGER NOT NULL, last INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_id, agent_type, result, referral, request_path)) WITHOUT ROWID;
   CREATE INDEX visit_agent_paths_hour_by_path ON visit_agent_paths_hour(project_id, path, bucket);
   CREATE TABLE visit_agent_paths_day (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, agent_type TEXT NOT NULL, request_path TEXT NOT NULL,
     path TEXT NOT NULL, count INTEGER NOT NULL, last INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_id, agent_type, request_path)) WITHOUT ROWID;`,
  // Appends write raw rows only; a background pass folds rows past the watermark into the rollups
  // (exact: queries add the raw rows past it). Existing rollups are exact up to the last id, so
  // they are kept and the watermark starts there. Path-filtered stats get a table keyed by path
  // first (read in key order, not through an index); day tables the queries can do without (the
  // combined day table is small) are dropped, as are the agent and path indexes on raw rows (a
  // B-tree insert per visit each, for filtered timelines that walk the id index fast enough).
  `CREATE TABLE visit_rollup_state (id INTEGER PRIMARY KEY CHECK (id = 1), watermark INTEGER NOT NULL);
   INSERT INTO visit_rollup_state (id, watermark) SELECT 1, coalesce(max(id), 0) FROM visits;
   CREATE TABLE visit_paths_hour (project_id TEXT NOT NULL, path TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, agent_type TEXT NOT NULL, result TEXT NOT NULL, referral TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, path, bucket, agent_id, agent_type, result, referral)) WITHOUT ROWID;
   INSERT INTO visit_paths_hour SELECT project_id, path, bucket, agent_id, agent_type, result, referral, sum(count) FROM visit_agent_paths_hour
     GROUP BY project_id, path, bucket, agent_id, agent_type, result, referral;
   DROP INDEX visit_agent_paths_hour_by_path;
   DROP TABLE visit_by_agent_id_day;
   DROP TABLE visit_by_agent_type_day;
   DROP TABLE visit_by_result_day;
   DROP TABLE visit_by_referral_day;
   DROP INDEX visits_by_agent;
   DROP INDEX visits_by_path;`,
  // Header pairs most visits repeat, interned (sqlite-header-pairs.ts); rows written before keep
  // their headers as JSON objects, which reads tell apart from the encoded arrays.
  // Raw rows are found by minute, not by time: SDKs send batches late, so visit times arrive out
  // of order and an index on the exact time took a page write per visit (scattered over the last
  // seconds of entries), where entries of one minute sit in id order and a batch's land together.
  // Fields every visit has get columns rather than keys in extras: the keys cost bytes per row
  // (a fifth of a row), and JSON.stringify formats a fractional duration slowly. Rows written
  // before keep them in extras.
  `CREATE TABLE visit_header_pairs (id INTEGER PRIMARY KEY, name TEXT NOT NULL, value TEXT NOT NULL, UNIQUE (name, value));
   DROP INDEX visits_by_time;
   CREATE INDEX visits_by_minute ON visits(project_id, (time / 60000));
   ALTER TABLE visits ADD COLUMN response_status_code INTEGER;
   ALTER TABLE visits ADD COLUMN response_duration_in_milliseconds REAL;
   ALTER TABLE visits ADD COLUMN created TEXT;
   ALTER TABLE visits ADD COLUMN request_headers TEXT;
   ALTER TABLE visits ADD COLUMN response_headers TEXT;`,
  // Top paths without aggregating every (agent, path) of the range (pathCounts): the day table is
  // keyed by (agent, path) first, so one pair's count over any days is one short range read, and
  // triggers keep per-pair totals over all the days kept, read largest first. A pair's total bounds
  // its count in any range, so reading pairs by total can stop once the top is out of reach. Only
  // pairs of 16 visits or more are indexed by total: the long tail's updates, most of the fold's,
  // then leave the index alone, and a query that reaches the tail sorts it.
  `CREATE TABLE visit_agent_paths_day_by_key (project_id TEXT NOT NULL, agent_id TEXT NOT NULL, request_path TEXT NOT NULL, bucket INTEGER NOT NULL, agent_type TEXT NOT NULL,
     path TEXT NOT NULL, count INTEGER NOT NULL, last INTEGER NOT NULL,
     PRIMARY KEY (project_id, agent_id, request_path, bucket, agent_type)) WITHOUT ROWID;
   INSERT INTO visit_agent_paths_day_by_key SELECT project_id, agent_id, request_path, bucket, agent_type, path, count, last FROM visit_agent_paths_day;
   DROP TABLE visit_agent_paths_day;
   ALTER TABLE visit_agent_paths_day_by_key RENAME TO visit_agent_paths_day;
   CREATE INDEX visit_agent_paths_day_by_bucket ON visit_agent_paths_day(bucket);
   CREATE TABLE visit_agent_path_totals (project_id TEXT NOT NULL, agent_id TEXT NOT NULL, request_path TEXT NOT NULL, path TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, agent_id, request_path)) WITHOUT ROWID;
   INSERT INTO visit_agent_path_totals SELECT project_id, agent_id, request_path, min(path), sum(count) FROM visit_agent_paths_day GROUP BY project_id, agent_id, request_path;
   CREATE INDEX visit_agent_path_totals_by_count ON visit_agent_path_totals(project_id, count DESC) WHERE count >= 16;
   CREATE TRIGGER visit_agent_paths_day_inserted AFTER INSERT ON visit_agent_paths_day BEGIN
     INSERT INTO visit_agent_path_totals VALUES (NEW.project_id, NEW.agent_id, NEW.request_path, NEW.path, NEW.count)
       ON CONFLICT (project_id, agent_id, request_path) DO UPDATE SET count = count + excluded.count;
   END;
   CREATE TRIGGER visit_agent_paths_day_counted AFTER UPDATE OF count ON visit_agent_paths_day BEGIN
     UPDATE visit_agent_path_totals SET count = count + NEW.count - OLD.count WHERE project_id = NEW.project_id AND agent_id = NEW.agent_id AND request_path = NEW.request_path;
   END;
   CREATE TRIGGER visit_agent_paths_day_deleted AFTER DELETE ON visit_agent_paths_day BEGIN
     UPDATE visit_agent_path_totals SET count = count - OLD.count WHERE project_id = OLD.project_id AND agent_id = OLD.agent_id AND request_path = OLD.request_path;
     DELETE FROM visit_agent_path_totals WHERE project_id = OLD.project_id AND agent_id = OLD.agent_id AND request_path = OLD.request_path AND count <= 0;
   END;`,
  // The header the client address came from, and the verification checks (the dashboard's visit
  // detail), as columns: in extras each would cost its JSON key on every visit that has it.
  `ALTER TABLE visits ADD COLUMN client_ip_header TEXT;
   ALTER TABLE visits ADD COLUMN verification TEXT;`,
  // Idempotency keys of POST /visits: a row per (project, key), written in the transaction that
  // writes the batch's visits, so the key is stored exactly when they are. The response replays
  // the first answer; rows past the window are deleted with retention.
  `CREATE TABLE visit_idempotency_keys (project_id TEXT NOT NULL, key TEXT NOT NULL, created INTEGER NOT NULL, fingerprint TEXT NOT NULL, response TEXT NOT NULL,
     PRIMARY KEY (project_id, key)) WITHOUT ROWID;
   CREATE INDEX visit_idempotency_keys_by_created ON visit_idempotency_keys(created);`,
  // The access policy's decision (agentwarden's middleware) as a column, in the compact form of
  // encodeDecision: in extras its JSON keys would cost 40 bytes on every decided visit.
  `ALTER TABLE visits ADD COLUMN decision TEXT;`,
  // Visits per status code (0: none) and dimension, by hour and day: stats by status and status
  // filters without reading every raw row of the range. Counted from the raw rows the other rollups
  // already hold (up to the watermark; the pass folds the rest); rows retention deleted are gone.
  `CREATE TABLE visit_status_hour (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, agent_type TEXT NOT NULL, result TEXT NOT NULL, referral TEXT NOT NULL, status INTEGER NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_id, agent_type, result, referral, status)) WITHOUT ROWID;
   CREATE TABLE visit_status_day (project_id TEXT NOT NULL, bucket INTEGER NOT NULL, agent_id TEXT NOT NULL, agent_type TEXT NOT NULL, result TEXT NOT NULL, referral TEXT NOT NULL, status INTEGER NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (project_id, bucket, agent_id, agent_type, result, referral, status)) WITHOUT ROWID;
   INSERT INTO visit_status_hour SELECT project_id, time - ((time % 3600000) + 3600000) % 3600000, coalesce(agent_id, ''), coalesce(agent_type, ''), result, coalesce(referral, ''), coalesce(response_status_code, 0), count(*)
     FROM visits WHERE id <= (SELECT watermark FROM visit_rollup_state WHERE id = 1) GROUP BY 1, 2, 3, 4, 5, 6, 7;
   INSERT INTO visit_status_day SELECT project_id, bucket - ((bucket % 86400000) + 86400000) % 86400000, agent_id, agent_type, result, referral, status, sum(count)
     FROM visit_status_hour GROUP BY 1, 2, 3, 4, 5, 6, 7;`,
  // The exact times of the first and last visit of each combined rollup cell: first and last seen
  // and a project's last visit, to the millisecond, from the rollups (and past raw-visit retention)
  // instead of the start of a minute. Filled from the raw rows the rollups hold (up to the
  // watermark). A cell whose raw rows retention deleted, all or some (the older ones: it deletes by
  // time), cannot know its first visit: it keeps the start of its bucket, the precision these
  // times had before; its last visit is the newest raw row left, else the start of its bucket too.
  `ALTER TABLE visit_dims_minute ADD COLUMN first INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE visit_dims_minute ADD COLUMN last INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE visit_dims_hour ADD COLUMN first INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE visit_dims_hour ADD COLUMN last INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE visit_dims_day ADD COLUMN first INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE visit_dims_day ADD COLUMN last INTEGER NOT NULL DEFAULT 0;
   CREATE TEMP TABLE visit_times_fill AS
     SELECT project_id, time - ((time % 60000) + 60000) % 60000 AS bucket, coalesce(agent_id, '') AS agent_id, coalesce(agent_type, '') AS agent_type, result, coalesce(referral, '') AS referral,
       count(*) AS count, min(time) AS first, max(time) AS last
     FROM visits WHERE id <= (SELECT watermark FROM visit_rollup_state WHERE id = 1) GROUP BY 1, 2, 3, 4, 5, 6;
   UPDATE visit_dims_minute SET first = bucket, last = bucket;
   UPDATE visit_dims_minute AS r SET first = CASE WHEN f.count = r.count THEN f.first ELSE r.bucket END, last = f.last
     FROM (SELECT project_id, bucket - ((bucket % 60000) + 60000) % 60000 AS bucket, agent_id, agent_type, result, referral, sum(count) AS count, min(first) AS first, max(last) AS last
       FROM temp.visit_times_fill GROUP BY 1, 2, 3, 4, 5, 6) AS f
     WHERE f.project_id = r.project_id AND f.bucket = r.bucket AND f.agent_id = r.agent_id AND f.agent_type = r.agent_type AND f.result = r.result AND f.referral = r.referral;
   UPDATE visit_dims_hour SET first = bucket, last = bucket;
   UPDATE visit_dims_hour AS r SET first = CASE WHEN f.count = r.count THEN f.first ELSE r.bucket END, last = f.last
     FROM (SELECT project_id, bucket - ((bucket % 3600000) + 3600000) % 3600000 AS bucket, agent_id, agent_type, result, referral, sum(count) AS count, min(first) AS first, max(last) AS last
       FROM temp.visit_times_fill GROUP BY 1, 2, 3, 4, 5, 6) AS f
     WHERE f.project_id = r.project_id AND f.bucket = r.bucket AND f.agent_id = r.agent_id AND f.agent_type = r.agent_type AND f.result = r.result AND f.referral = r.referral;
   UPDATE visit_dims_day SET first = bucket, last = bucket;
   UPDATE visit_dims_day AS r SET first = CASE WHEN f.count = r.count THEN f.first ELSE r.bucket END, last = f.last
     FROM (SELECT project_id, bucket - ((bucket % 86400000) + 86400000) % 86400000 AS bucket, agent_id, agent_type, result, referral, sum(count) AS count, min(first) AS first, max(last) AS last
       FROM temp.visit_times_fill GROUP BY 1, 2, 3, 4, 5, 6) AS f
     WHERE f.project_id = r.project_id AND f.bucket = r.bucket AND f.agent_id = r.agent_id AND f.agent_type = r.agent_type AND f.result = r.result AND f.referral = r.referral;
   DROP TABLE temp.visit_times_fill;`,
  // Visits stored at visit schema 1 or 2 kept their status code in extras, where status filters and
  // the status rollups (schema 8 counted them as "no status") do not look. It moves into the column,
  // and the rollups' counts of the rows they hold move from status 0 to it. Rows retention already
  // deleted took their status with them: their counts stay "no status".
  `CREATE TEMP TABLE visit_status_fill AS
     SELECT id, project_id, time, coalesce(agent_id, '') AS agent_id, coalesce(agent_type, '') AS agent_type, result, coalesce(referral, '') AS referral, status
     FROM (SELECT *, CASE WHEN extras <> '' AND json_type(extras, '$.response_status_code') IN ('integer', 'real') THEN json_extract(extras, '$.response_status_code') END AS status
       FROM visits WHERE response_status_code IS NULL)
     WHERE status IS NOT NULL;
   UPDATE visits SET response_status_code = f.status, extras = CASE WHEN json_remove(visits.extras, '$.response_status_code') = '{}' THEN '' ELSE json_remove(visits.extras, '$.response_status_code') END
     FROM temp.visit_status_fill AS f WHERE visits.id = f.id;
   CREATE TEMP TABLE visit_status_moves AS
     SELECT 'hour' AS width, project_id, time - ((time % 3600000) + 3600000) % 3600000 AS bucket, agent_id, agent_type, result, referral, status, count(*) AS count
     FROM temp.visit_status_fill WHERE id <= (SELECT watermark FROM visit_rollup_state WHERE id = 1) GROUP BY 2, 3, 4, 5, 6, 7, 8
     UNION ALL
     SELECT 'day', project_id, time - ((time % 86400000) + 86400000) % 86400000, agent_id, agent_type, result, referral, status, count(*)
     FROM temp.visit_status_fill WHERE id <= (SELECT watermark FROM visit_rollup_state WHERE id = 1) GROUP BY 2, 3, 4, 5, 6, 7, 8;
   UPDATE visit_status_hour AS r SET count = r.count - m.count
     FROM (SELECT project_id, bucket, agent_id, agent_type, result, referral, sum(count) AS count FROM temp.visit_status_moves WHERE width = 'hour' GROUP BY 1, 2, 3, 4, 5, 6) AS m
     WHERE r.status = 0 AND m.project_id = r.project_id AND m.bucket = r.bucket AND m.agent_id = r.agent_id AND m.agent_type = r.agent_type AND m.result = r.result AND m.referral = r.referral;
   UPDATE visit_status_day AS r SET count = r.count - m.count
     FROM (SELECT project_id, bucket, agent_id, agent_type, result, referral, sum(count) AS count FROM temp.visit_status_moves WHERE width = 'day' GROUP BY 1, 2, 3, 4, 5, 6) AS m
     WHERE r.status = 0 AND m.project_id = r.project_id AND m.bucket = r.bucket AND m.agent_id = r.agent_id AND m.agent_type = r.agent_type AND m.result = r.result AND m.referral = r.referral;
   DELETE FROM visit_status_hour WHERE status = 0 AND count <= 0;
   DELETE FROM visit_status_day WHERE status = 0 AND count <= 0;
   INSERT INTO visit_status_hour SELECT project_id, bucket, agent_id, agent_type, result, referral, status, count FROM temp.visit_status_moves WHERE width = 'hour'
     ON CONFLICT (project_id, bucket, agent_id, agent_type, result, referral, status) DO UPDATE SET count = count + excluded.count;
   INSERT INTO visit_status_day SELECT project_id, bucket, agent_id, agent_type, result, referral, status, count FROM temp.visit_status_moves WHERE width = 'day'
     ON CONFLICT (project_id, bucket, agent_id, agent_type, result, referral, status) DO UPDATE SET count = count + excluded.count;
   DROP TABLE temp.visit_status_moves;
   DROP TABLE temp.visit_status_fill;`,
];

/** A schema migration about to run: from the version a database has to the one this code writes. */
export interface SchemaMigration {
  readonly from: number;
  readonly to: number;
}

/** The visit schema version this code writes (component 'visits' in schema_versions). */
export const VISIT_SCHEMA_VERSION = VISIT_MIGRATIONS.length;

/**
 * Runs the visit schema migrations on `db` in one transaction, moving rows of the first schema's
 * `visits` table over (they were never rolled up, so the rollups are then rebuilt from raw rows).
 * `onMigration` is told first, since some read every visit (seconds to minutes on a large file).
 * @throws {RangeError} when the database has a newer visit schema than this code.
 */
export function migrateVisitSchema(db: Database, onMigration?: (migration: SchemaMigration) => void): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)');
  const versionOf = db.prepare<[], { version: number }>("SELECT version FROM schema_versions WHERE component = 'visits'");
  const check = (current: number) => {
    if (current > VISIT_MIGRATIONS.length) {
      throw new RangeError(`the database has visit schema version ${current}; this agentwarden knows up to ${VISIT_MIGRATIONS.length}`);
    }
  };
  check(versionOf.get()?.version ?? 0);
  if ((versionOf.get()?.version ?? 0) === VISIT_MIGRATIONS.length) {
    checkVisitColumns(db);
    return;
  }
  // A new database is created, not migrated: nothing to tell.
  const before = versionOf.get()?.version ?? 0;
  if (before > 0 || db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'visits'").get() !== undefined) onMigration?.({ from: before, to: VISIT_MIGRATIONS.length });
  db.transaction(() => {
    // Another process (the CLI beside a starting server) may have migrated while this one waited
    // for the write lock: read the version again under the lock.
    const current = versionOf.get()?.version ?? 0;
    check(current);
    // The project store's first migration made a bare `visits` table (no enrichment columns): keep
    // its rows, moved into the new table with their ids once it has every column the writer fills.
    const legacy = current === 0 && db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'visits'").get() !== undefined;
    if (legacy) db.exec('ALTER TABLE visits RENAME TO visits_v1');
    for (let version = current; version < VISIT_MIGRATIONS.length; version++) {
      try {
        db.exec(VISIT_MIGRATIONS[version]!);
      } catch (error) {
        throw new Error(`visit schema migration ${version} to ${version + 1} failed, and the database was left as it was: ${(error as Error).message}`, { cause: error });
      }
    }
    checkVisitColumns(db);
    if (legacy) {
      copyLegacyVisits(db);
      db.exec('DROP TABLE visits_v1');
      // Never rolled up: the pass rebuilds the rollups from the raw rows.
      db.exec('UPDATE visit_rollup_state SET watermark = 0');
    }
    db.prepare("INSERT INTO schema_versions (component, version) VALUES ('visits', ?) ON CONFLICT (component) DO UPDATE SET version = excluded.version").run(VISIT_MIGRATIONS.length);
  }).immediate();
}

/**
 * Refuses a visits table without every column the writer fills: one a development build between
 * two schema versions left (it answered every append with a 500 while reporting itself ready).
 * Inside the migration's transaction, so such a database is left as it was.
 */
function checkVisitColumns(db: Database): void {
  const present = new Set(db.prepare<[], { name: string }>('SELECT name FROM pragma_table_info(\'visits\')').all().map((column) => column.name));
  const missing = VISIT_ROW_COLUMNS.filter((column) => !present.has(column));
  if (missing.length > 0) throw new Error(`the visits table has no column ${missing.join(', ')}, which its visit schema version has: it was written by a development build, not by a released schema`);
}

interface LegacyRow {
  id: number;
  project_id: string;
  received: string;
  created: string | null;
  request_path: string;
  request_method: string;
  request_headers: string;
  response_status_code: number | null;
  response_headers: string | null;
  response_duration_in_milliseconds: number | null;
}

// Header values of the first schema could be arrays; a Visit joins them (RFC 9110 §5.3).
function joinHeaderValues(json: string): Record<string, string> {
  const parsed = JSON.parse(json) as Record<string, string | string[]>;
  return Object.fromEntries(Object.entries(parsed).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]));
}

// Rows stored before enrichment existed carry no identification: they count as unknown agents
// without client IP or referral (re-identifying them would need the engine at open time).
function copyLegacyVisits(db: Database): void {
  const page = db.prepare<[number], LegacyRow>('SELECT * FROM visits_v1 WHERE id > ? ORDER BY id LIMIT 1000');
  const writer = createVisitRowWriter(db);
  for (let last = 0; ; ) {
    const rows = page.all(last);
    if (rows.length === 0) break;
    const batch = rows.map((row) => {
      const created = row.created === null ? Number.NaN : Date.parse(row.created);
      const parsed = Date.parse(row.received);
      const received = Number.isFinite(parsed) ? parsed : Number.isFinite(created) ? created : 0;
      const visit: Record<string, unknown> = {
        request_path: row.request_path,
        request_method: row.request_method,
        request_headers: joinHeaderValues(row.request_headers),
        received,
        time: Number.isFinite(created) ? created : received,
        agent_id: null,
        agent_type: null,
        result: 'unknown_agent',
        client_ip: null,
        referral: null,
      };
      if (row.created !== null) visit['created'] = row.created;
      if (row.response_status_code !== null) visit['response_status_code'] = row.response_status_code;
      if (row.response_headers !== null) visit['response_headers'] = joinHeaderValues(row.response_headers);
      if (row.response_duration_in_milliseconds !== null) visit['response_duration_in_milliseconds'] = row.response_duration_in_milliseconds;
      return { projectId: row.project_id, visit: visit as unknown as EnrichedVisit, id: row.id };
    });
    writer.write(batch);
    last = rows[rows.length - 1]!.id;
  }
}

