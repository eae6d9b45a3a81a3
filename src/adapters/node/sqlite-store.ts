// The node adapter's embedded store: projects, access tokens (hashes only) and visits in one SQLite
// file under the data directory (better-sqlite3, WAL), with schema migrations versioned in code.
import * as nodeCrypto from 'node:crypto';
import { join } from 'node:path';
import { DATABASE_FILE, openDataDirDatabase } from './sqlite-driver.js';
import { generateId, generateToken, type CreatedProject, type Project, type ProjectLookup, type StoredVisit, type TokenRecord, type VisitStore } from '../../index.js';
import { openSqliteVisitStore, type SqliteVisitStore, type SqliteVisitStoreOptions } from './sqlite-visit-store.js';
import type { ProjectSettings, ProjectSettingsStore } from '../../index.js';

/** One token as listed: never the token itself, only its id, its first characters and its state. */
export interface TokenInfo {
  readonly id: string;
  /** The first 7 characters of the token (`aw_` + 4), enough to tell tokens apart. */
  readonly prefix: string;
  readonly created: string;
  readonly revoked: string | null;
}

/** A project as listed, with its tokens. */
export interface ProjectInfo extends Project {
  readonly created: string;
  readonly tokens: readonly TokenInfo[];
}

/** A visit as read back from the store (its enriched columns included). */
export type StoredVisitRow = StoredVisit;

/** The SQLite store: the API's project lookup and visit store, plus project administration. */
export interface SqliteStore extends ProjectLookup, VisitStore, ProjectSettingsStore {
  readonly file: string;
  /** Synchronous here: the live token with this hash, if any. */
  findByTokenHash(tokenHash: string): TokenRecord | undefined;
  createProject(name: string): CreatedProject;
  listProjects(): ProjectInfo[];
  /** Issues a new token; `revokeOthers` revokes every live token of the project first (rotation). */
  issueToken(projectId: string, options?: { revokeOthers?: boolean }): { tokenId: string; token: string };
  /** Revokes a token by id or by its clear text; true when a live token was revoked. */
  revokeToken(which: { tokenId: string } | { token: string }): boolean;
  /** Renames a project; false when there is no such project. */
  renameProject(projectId: string, name: string): boolean;
  /**
   * Deletes a project with its tokens, settings, visits and their rollups (in one transaction for
   * the project and one for its visits); false when there is no such project.
   */
  deleteProject(projectId: string): boolean;
  /** Visits of a project, oldest first. */
  listVisits(projectId: string, options?: { limit?: number }): StoredVisitRow[];
  countVisits(projectId?: string): number;
  /** Synchronous here: the project's saved settings, if any. */
  getProjectSettings(projectId: string): ProjectSettings | undefined;
  /** Saves a project's settings (validated by the caller, `parseProjectSettings`). */
  putProjectSettings(projectId: string, settings: ProjectSettings): void;
  /** The visit store itself: retention, group-commit counters. */
  readonly visits: SqliteVisitStore;
  /** Checkpoints the WAL into the main file and closes the database. */
  close(): void;
}

/** Options of `openSqliteStore`. */
export interface SqliteStoreOptions {
  /** Directory holding `agentwarden.db`; created when missing. */
  readonly dataDir: string;
  /**
   * `normal` (default): a commit survives a crash or kill -9 of the process (WAL, SQLite docs
   * "synchronous"); `full` also survives power loss, at one fsync per commit.
   */
  readonly synchronous?: 'normal' | 'full';
  /** Milliseconds, for `received` and `created` times. */
  readonly clock?: { now(): number };
  /**
   * Days raw visits are kept, deleted at open and hourly (default 0: forever, so a CLI command
   * never prunes; `agentwarden serve` passes 90). Hour and day rollups are kept forever.
   */
  readonly retentionDays?: number;
  /** Visits allowed to wait for the next group commit before appends answer busy (default 100,000). */
  readonly maxPendingVisits?: number;
  /** Below this many bytes free on the data directory's disk the store reports itself not ready (default 64 MiB; 0: never). */
  readonly minFreeDiskBytes?: number;
  /** What each scheduled retention pass deleted, or why it failed (see `SqliteVisitStoreOptions.onRetention`). */
  readonly onRetention?: SqliteVisitStoreOptions['onRetention'];
  /** Told before the visit schema is migrated (see `SqliteVisitStoreOptions.onMigration`). */
  readonly onMigration?: SqliteVisitStoreOptions['onMigration'];
}

// crypto.hash (Node >= 20.12) is a one-shot digest without a Hash object per call.
const oneShot = (nodeCrypto as { hash?: (algorithm: string, data: string) => string }).hash;

/** SHA-256 hex of a token with node:crypto (synchronous, so the API's hot path awaits nothing). */
export function hashTokenNode(token: string): string {
  return oneShot !== undefined ? oneShot('sha256', token) : nodeCrypto.createHash('sha256').update(token).digest('hex');
}

// Versioned migrations: each runs once, in order, inside a transaction; PRAGMA user_version
// records the last applied. Append new ones; never edit an applied one.
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE projects (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     created TEXT NOT NULL
   );
   CREATE TABLE tokens (
     id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL REFERENCES projects(id),
     hash TEXT NOT NULL UNIQUE,
     prefix TEXT NOT NULL,
     created TEXT NOT NULL,
     revoked TEXT
   );
   CREATE INDEX tokens_project ON tokens(project_id);
   CREATE TABLE visits (
     id INTEGER PRIMARY KEY,
     project_id TEXT NOT NULL REFERENCES projects(id),
     received TEXT NOT NULL,
     created TEXT,
     request_path TEXT NOT NULL,
     request_method TEXT NOT NULL,
     request_headers TEXT NOT NULL,
     response_status_code INTEGER,
     response_headers TEXT,
     response_duration_in_milliseconds REAL
   );
   CREATE INDEX visits_project ON visits(project_id, id);`,
  // 2: per-project settings (robots rules, client-IP rule) as one JSON document per project. No
  // foreign key: with --store clickhouse the projects live in ClickHouse and their settings here.
  `CREATE TABLE project_settings (
     project_id TEXT PRIMARY KEY,
     settings TEXT NOT NULL,
     updated TEXT NOT NULL
   );`,
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Opens (creating and migrating as needed) the store in a data directory.
 * @throws {RangeError} when the database was written by a newer schema than this code knows.
 * @example
 * const store = openSqliteStore({ dataDir: './data-dir' });
 * const { id, token } = store.createProject('example.com');
 */
export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  if (typeof options?.dataDir !== 'string' || options.dataDir === '') throw new TypeError(`dataDir must be a directory path, got ${JSON.stringify(options?.dataDir)}`);
  const synchronous = options.synchronous ?? 'normal';
  if (synchronous !== 'normal' && synchronous !== 'full') throw new RangeError(`synchronous must be "normal" or "full", got ${JSON.stringify(synchronous)}`);
  const clock = options.clock ?? { now: () => Date.now() };
  const file = join(options.dataDir, DATABASE_FILE);
  const db = openDataDirDatabase(options.dataDir);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous.toUpperCase()}`);
  // The CLI (project create, rotate) writes while the server runs: wait for the lock, do not fail.
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');

  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    db.close();
    throw new RangeError(`${file} has schema version ${current}; this agentwarden knows up to ${MIGRATIONS.length}`);
  }
  for (let version = current; version < MIGRATIONS.length; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version]!);
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
  // Visits, their rollups and retention live in their own module with their own schema versions.
  let visitStore: SqliteVisitStore;
  try {
    // No retention unless asked: a CLI command opening the file beside a running server must not
    // delete what the server's own --retention-days keeps.
    visitStore = openSqliteVisitStore(db, { clock, retentionDays: options.retentionDays ?? 0, maxPendingVisits: options.maxPendingVisits, minFreeDiskBytes: options.minFreeDiskBytes, onRetention: options.onRetention, onMigration: options.onMigration });
  } catch (error) {
    db.close();
    throw error;
  }

  const now = () => new Date(clock.now()).toISOString();
  const findToken = db.prepare<[string], { hash: string; id: string; name: string }>(
    'SELECT t.hash AS hash, p.id AS id, p.name AS name FROM tokens t JOIN projects p ON p.id = t.project_id WHERE t.hash = ? AND t.revoked IS NULL',
  );
  const insertProject = db.prepare('INSERT INTO projects (id, name, created) VALUES (?, ?, ?)');
  const insertToken = db.prepare('INSERT INTO tokens (id, project_id, hash, prefix, created) VALUES (?, ?, ?, ?, ?)');
  const revokeProjectTokens = db.prepare('UPDATE tokens SET revoked = ? WHERE project_id = ? AND revoked IS NULL');
  const revokeById = db.prepare('UPDATE tokens SET revoked = ? WHERE id = ? AND revoked IS NULL');
  const revokeByHash = db.prepare('UPDATE tokens SET revoked = ? WHERE hash = ? AND revoked IS NULL');
  const projectById = db.prepare<[string], { id: string; name: string }>('SELECT id, name FROM projects WHERE id = ?');
  const allProjects = db.prepare<[], { id: string; name: string; created: string }>('SELECT id, name, created FROM projects ORDER BY created, id');
  const tokensOf = db.prepare<[string], TokenInfo>('SELECT id, prefix, created, revoked FROM tokens WHERE project_id = ? ORDER BY created, id');
  const renameStatement = db.prepare('UPDATE projects SET name = ? WHERE id = ?');
  const deleteSettings = db.prepare('DELETE FROM project_settings WHERE project_id = ?');
  const deleteTokens = db.prepare('DELETE FROM tokens WHERE project_id = ?');
  const deleteProjectRow = db.prepare('DELETE FROM projects WHERE id = ?');
  const settingsOf = db.prepare<[string], { settings: string }>('SELECT settings FROM project_settings WHERE project_id = ?');
  const upsertSettings = db.prepare(
    'INSERT INTO project_settings (project_id, settings, updated) VALUES (?, ?, ?) ON CONFLICT (project_id) DO UPDATE SET settings = excluded.settings, updated = excluded.updated',
  );

  // Bumped by every token write through this store: the API handler, which keeps tokens it found
  // valid for a second, drops them when it changes. A revocation by another process (the CLI while
  // the server runs) applies within that second.
  let tokensVersion = 0;

  const issue = (projectId: string, revokeOthers: boolean) => {
    tokensVersion++;
    const token = generateToken();
    const tokenId = generateId('tok');
    const created = now();
    if (revokeOthers) revokeProjectTokens.run(created, projectId);
    insertToken.run(tokenId, projectId, hashTokenNode(token), token.slice(0, 7), created);
    return { tokenId, token };
  };

  return {
    file,
    findByTokenHash(tokenHash): TokenRecord | undefined {
      const row = findToken.get(tokenHash);
      return row === undefined ? undefined : { project: { id: row.id, name: row.name }, tokenHash: row.hash };
    },
    createProject(name) {
      if (typeof name !== 'string' || name.trim() === '') throw new TypeError(`name must be a non-empty string, got ${JSON.stringify(name)}`);
      const id = generateId('prj');
      const { token } = db.transaction(() => {
        insertProject.run(id, name, now());
        return issue(id, false);
      }).immediate();
      return { id, name, token };
    },
    listProjects() {
      return allProjects.all().map((p) => ({ ...p, tokens: tokensOf.all(p.id) }));
    },
    issueToken(projectId, issueOptions = {}) {
      return db.transaction(() => {
        if (projectById.get(projectId) === undefined) throw new RangeError(`project ${JSON.stringify(projectId)} does not exist`);
        return issue(projectId, issueOptions.revokeOthers === true);
      }).immediate();
    },
    tokensVersion: () => tokensVersion,
    getProjectSettings(projectId) {
      const row = settingsOf.get(projectId);
      return row === undefined ? undefined : (JSON.parse(row.settings) as ProjectSettings);
    },
    putProjectSettings(projectId, settings) {
      upsertSettings.run(projectId, JSON.stringify(settings), now());
    },
    revokeToken(which) {
      tokensVersion++;
      const result = 'tokenId' in which ? revokeById.run(now(), which.tokenId) : revokeByHash.run(now(), hashTokenNode(which.token));
      return result.changes > 0;
    },
    renameProject(projectId, name) {
      if (typeof name !== 'string' || name.trim() === '') throw new TypeError(`name must be a non-empty string, got ${JSON.stringify(name)}`);
      // The API keeps token lookups (with the project's name) for a second: they are dropped.
      tokensVersion++;
      return renameStatement.run(name, projectId).changes > 0;
    },
    deleteProject(projectId) {
      tokensVersion++;
      const deleted = db.transaction(() => {
        deleteSettings.run(projectId);
        deleteTokens.run(projectId);
        return deleteProjectRow.run(projectId).changes > 0;
      }).immediate();
      // Its tokens are gone, so no new visit can arrive for it; those queued are committed and deleted with the rest.
      if (deleted) visitStore.deleteProject(projectId);
      return deleted;
    },
    get retentionDays() {
      return visitStore.retentionDays;
    },
    append: (projectId, batch) => visitStore.append(projectId, batch),
    appendOnce: (projectId, batch, once) => visitStore.appendOnce(projectId, batch, once),
    timeline: (query) => visitStore.timeline(query),
    getVisit: (projectId, id) => visitStore.getVisit(projectId, id),
    stats: (query) => visitStore.stats(query),
    pathCounts: (query) => visitStore.pathCounts(query),
    seen: (query) => visitStore.seen(query),
    health: () => visitStore.health(),
    subscribe: (projectId, listener) => visitStore.subscribe(projectId, listener),
    listVisits: (projectId, listOptions = {}) => visitStore.list(projectId, listOptions.limit),
    countVisits: (projectId) => visitStore.count(projectId),
    visits: visitStore,
    close() {
      if (!db.open) return;
      // Commits appends still queued for the group commit before the database goes away.
      visitStore.close();
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
    },
  };
}
