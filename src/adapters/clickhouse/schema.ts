// The ClickHouse schema: versioned migrations applied on start, written for ClickHouse 18.16 and
// later (no TTL, no DateTime64, no LowCardinality, no query parameters: see README "ClickHouse").

/**
 * A migration's INSERT ... SELECT run one month at a time, so that no query groups more than a
 * month of rows in memory however long the history. `months` lists the months to copy, one row
 * each: `month` (YYYYMM) and, for a copy from raw visits, `lo` and `hi`, the least and greatest
 * `received` of that month, since 18.16 skips other months' parts for a range of the column but
 * not for toYYYYMM of it (the month grows with `received`, so that range holds the month's rows
 * and no other's). `copy` runs once per row, with `{month}`, `{lo}` and `{hi}` replaced.
 */
export interface MonthlyCopy {
  readonly months: string;
  readonly copy: string;
}

/**
 * Migrations in order; each statement is idempotent (IF NOT EXISTS, an ADD COLUMN whose "already
 * exists" the runner accepts, or an INSERT ... SELECT of minimum and maximum states, which rows
 * copied twice leave as they are), so two servers starting at once over an empty database both
 * succeed. `{db}` is replaced by the quoted database name; an INSERT gets a connection that waits
 * for it up to an hour.
 * Append new ones; never edit what an applied one stores (how a copy is run may change).
 */
export const MIGRATIONS: readonly (readonly (string | MonthlyCopy)[])[] = [
  [
    // One row per visit. Ordered by project, then id: ids begin with the receive time in ms, so
    // a project's rows lie in time order, the timeline and the live tail read a key range, and a
    // month's visits form one partition that retention drops whole. `visit` is the enriched visit
    // as JSON, returned as stored; the other columns are what queries filter and group on, with ''
    // for "none" (agent, type, referral): a Nullable column costs two more files per INSERT
    // (measured about 15% of its time on 18.16), and no agent id, type or referral is ''.
    `CREATE TABLE IF NOT EXISTS {db}.visits (
       project_id String,
       id String,
       received UInt64,
       time UInt64,
       path String,
       request_path String,
       agent_id String,
       agent_type String,
       result String,
       referral String,
       visit String
     ) ENGINE = MergeTree
     PARTITION BY toYYYYMM(toDateTime(intDiv(received, 1000)))
     ORDER BY (project_id, id)`,
    // Visits per project, minute and (agent, type, result, referral): what stats read for every
    // dimension but path, a few rows per minute however many visits. Partitioned like visits.
    `CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.visit_counts
     ENGINE = SummingMergeTree((visits))
     PARTITION BY month
     ORDER BY (project_id, minute, agent_id, agent_type, result, referral)
     AS SELECT
       project_id,
       toYYYYMM(toDateTime(intDiv(received, 1000))) AS month,
       intDiv(time, 60000) * 60000 AS minute,
       agent_id,
       agent_type,
       result,
       referral,
       toUInt64(count()) AS visits
     FROM {db}.visits
     GROUP BY project_id, month, minute, agent_id, agent_type, result, referral`,
    // Projects, tokens and revocations are append-only: a revocation is a row of its own, so two
    // servers whose clocks disagree can never resurrect a token by ordering versions wrongly.
    `CREATE TABLE IF NOT EXISTS {db}.projects (
       id String,
       name String,
       created String
     ) ENGINE = MergeTree ORDER BY id`,
    `CREATE TABLE IF NOT EXISTS {db}.tokens (
       id String,
       project_id String,
       hash String,
       prefix String,
       created String
     ) ENGINE = MergeTree ORDER BY hash`,
    `CREATE TABLE IF NOT EXISTS {db}.token_revocations (
       token_id String,
       revoked String
     ) ENGINE = MergeTree ORDER BY token_id`,
    // Project settings as saved, one row per save; the latest save (by time, then id) holds.
    `CREATE TABLE IF NOT EXISTS {db}.project_settings (
       project_id String,
       saved UInt64,
       id String,
       settings String
     ) ENGINE = MergeTree ORDER BY (project_id, saved, id)`,
  ],
  [
    // The response status code (0: sent without one), for stats by status and the status filter.
    // Parts written before have no such column: ClickHouse computes the DEFAULT when it reads them,
    // so older visits count by status too. The expression finds the field as a key with a number:
    // a header of that name has a quoted value, and inside a JSON string a quote follows a
    // backslash, never "{" or "," (18.16 has no JSONExtract, and mangles backslashes in a stored
    // DEFAULT). 18.16 has no ADD COLUMN IF NOT EXISTS either: the migration runner takes "already
    // exists" from a server that migrated at the same moment as done.
    `ALTER TABLE {db}.visits ADD COLUMN status UInt16 DEFAULT toUInt16OrZero(extract(visit, '[{,]"response_status_code":([1-5][0-9][0-9])[,}]'))`,
  ],
  [
    // Idempotency claims of POST /visits (idempotency-claims.ts): a row per attempt to store a
    // batch under a key, naming the visit ids it reserved, and a row when an attempt is known not
    // to have stored anything. `at` is ClickHouse's own clock at insert (a MATERIALIZED column is
    // computed whatever the input format), so every server judges an attempt's age by one clock.
    // Partitioned by day: retention drops whole days past the 24-hour window (18.16 has no TTL).
    `CREATE TABLE IF NOT EXISTS {db}.idempotency_claims (
       project_id String,
       key String,
       attempt String,
       visits UInt32,
       state String,
       fingerprint String,
       response String,
       at DateTime MATERIALIZED now()
     ) ENGINE = MergeTree
     PARTITION BY toYYYYMMDD(at)
     ORDER BY (project_id, key, attempt)`,
  ],
  [
    // Renames and deletions of projects, append-only like tokens: the latest rename (by time,
    // then id) names a project, and a deletion row hides it at once on every server while the
    // mutations that remove its rows elsewhere run in the background.
    `CREATE TABLE IF NOT EXISTS {db}.project_renames (
       project_id String,
       saved UInt64,
       id String,
       name String
     ) ENGINE = MergeTree ORDER BY (project_id, saved, id)`,
    `CREATE TABLE IF NOT EXISTS {db}.project_deletions (
       project_id String,
       deleted String
     ) ENGINE = MergeTree ORDER BY project_id`,
  ],
  [
    // The exact times of the first and last visit per project, agent, minute and (type, result,
    // referral): first and last seen and a project's last visit, to the millisecond, without
    // reading raw visits (visit_counts knows only the minute). Keyed by agent before the minute, so
    // one agent's times are a short key range; kept past raw-visit retention, like visit_counts.
    `CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.visit_times
     ENGINE = AggregatingMergeTree
     PARTITION BY month
     ORDER BY (project_id, agent_id, minute, agent_type, result, referral)
     AS SELECT
       project_id,
       toYYYYMM(toDateTime(intDiv(received, 1000))) AS month,
       intDiv(time, 60000) * 60000 AS minute,
       agent_id,
       agent_type,
       result,
       referral,
       minState(time) AS first,
       maxState(time) AS last
     FROM {db}.visits
     GROUP BY project_id, month, minute, agent_id, agent_type, result, referral`,
    // The visits stored before the view, from their raw rows. Visits INSERTed while this runs reach
    // the view too: a minimum or maximum counted twice is the same, so two servers migrating at
    // once, or this statement run again after a failure, change nothing.
    {
      months: `SELECT toYYYYMM(toDateTime(intDiv(received, 1000))) AS month, min(received) AS lo, max(received) AS hi FROM {db}.visits GROUP BY month`,
      copy: `INSERT INTO {db}.visit_times
       SELECT project_id, {month} AS month, intDiv(time, 60000) * 60000 AS minute, agent_id, agent_type, result, referral, minState(time), maxState(time)
       FROM {db}.visits
       WHERE received >= {lo} AND received <= {hi}
       GROUP BY project_id, minute, agent_id, agent_type, result, referral`,
    },
    // Months whose raw visits retention dropped are known only from the per-minute counts: their
    // times are the start of their minute, the precision they had before.
    {
      months: `SELECT month FROM {db}.visit_counts WHERE month NOT IN (SELECT DISTINCT toYYYYMM(toDateTime(intDiv(received, 1000))) FROM {db}.visits) GROUP BY month`,
      copy: `INSERT INTO {db}.visit_times
       SELECT project_id, month, minute, agent_id, agent_type, result, referral, minState(minute), maxState(minute)
       FROM {db}.visit_counts
       WHERE month = {month}
       GROUP BY project_id, month, minute, agent_id, agent_type, result, referral`,
    },
  ],
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** The table that records applied migrations (one row per version). */
export const MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS {db}.schema_migrations (version UInt32, applied String) ENGINE = MergeTree ORDER BY version`;

const DATABASE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/**
 * The database name, quoted for SQL.
 * @throws {RangeError} when it is not a plain identifier (letters, digits, underscore).
 */
export function quoteDatabase(name: string): string {
  if (typeof name !== 'string' || !DATABASE_NAME.test(name)) throw new RangeError(`database must be letters, digits and _ (not starting with a digit), got ${JSON.stringify(name)}`);
  return `\`${name}\``;
}
