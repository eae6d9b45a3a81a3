// Projects, access tokens (hashes only) and project settings in ClickHouse, shared by every server:
// append-only tables, so servers never overwrite each other and a revocation cannot be undone.
import { createHash } from 'node:crypto';
import { constantTimeEqual, generateId, generateToken, type CreatedProject, type Project, type ProjectSettings, type TokenRecord } from '../../index.js';
import { sqlString } from './sql.js';
import { unavailableError } from './unavailable.js';

/** One token as listed: never the token itself, only its id, its first characters and its state. */
export interface ClickHouseTokenInfo {
  readonly id: string;
  /** The first 7 characters of the token (`aw_` + 4). */
  readonly prefix: string;
  readonly created: string;
  readonly revoked: string | null;
}

/** A project as listed, with its tokens. */
export interface ClickHouseProjectInfo extends Project {
  readonly created: string;
  readonly tokens: readonly ClickHouseTokenInfo[];
}

/** Project administration, token lookup and settings over the shared tables. */
export interface ProjectTables {
  findByTokenHash(tokenHash: string): Promise<TokenRecord | undefined>;
  tokensVersion(): number;
  findProject(projectId: string): Promise<Project | undefined>;
  createProject(name: string): Promise<CreatedProject>;
  listProjects(): Promise<ClickHouseProjectInfo[]>;
  issueToken(projectId: string, options?: { revokeOthers?: boolean }): Promise<{ tokenId: string; token: string }>;
  revokeToken(which: { tokenId: string } | { token: string }): Promise<boolean>;
  getProjectSettings(projectId: string): Promise<ProjectSettings | undefined>;
  putProjectSettings(projectId: string, settings: ProjectSettings): Promise<void>;
  /** Renames a project (a row of project_renames); false when there is no such project. */
  renameProject(projectId: string, name: string): Promise<boolean>;
  /**
   * Hides a project at once (a row of project_deletions) and revokes its tokens; false when there
   * is none. The caller removes its rows from the other tables.
   */
  deleteProject(projectId: string): Promise<boolean>;
}

/** How the tables are read and written. */
export interface ProjectTablesOptions {
  /** Runs a SELECT (`{db}` is the database) and returns its rows. */
  rows<T>(query: string): Promise<T[]>;
  /** Inserts rows into a table of the database; resolves once acknowledged. */
  insert(table: string, values: readonly Record<string, unknown>[]): Promise<void>;
  readonly clock: { now(): number };
  /** How long a token lookup is trusted without asking again (0: always ask). */
  readonly tokenCacheMs: number;
  readonly retryAfterSeconds: number;
}

const TOKEN_CACHE_MAX = 10_000;

function sha256(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Creates the project tables' operations. Token lookups are cached per hash for `tokenCacheMs`,
 * misses too (a hash nobody was issued becomes valid only through a new random token, never one
 * already asked for), so a token issued or revoked through another server applies within that
 * time. When ClickHouse is down, a token seen before keeps working, so clients get the 503 of
 * the append (and retry) rather than a wrong 401.
 * @example
 * const projects = createProjectTables({ rows, insert, clock, tokenCacheMs: 1000, retryAfterSeconds: 2 });
 */
export function createProjectTables(options: ProjectTablesOptions): ProjectTables {
  const { clock, tokenCacheMs, retryAfterSeconds } = options;
  // ClickHouse unreachable or overloaded is a VisitStoreUnavailableError (a 503 with Retry-After
  // on every route), never a bare error that would be answered 500.
  const unavailable = (what: string) => (error: unknown): never => {
    throw unavailableError(error, retryAfterSeconds, what) ?? error;
  };
  const rows = <T>(query: string): Promise<T[]> => options.rows<T>(query).catch(unavailable('project tables'));
  const insert = (table: string, values: readonly Record<string, unknown>[]): Promise<void> => options.insert(table, values).catch(unavailable(table));
  const tokenCache = new Map<string, { record: TokenRecord | undefined; until: number }>();
  let tokensVersion = 0;
  // A project found is kept as long as a token lookup: a rename or deletion through another
  // server applies here within that time (at once through this one).
  const projectCache = new Map<string, { project: Project; until: number }>();
  const now = () => new Date(clock.now()).toISOString();
  const NOT_DELETED = 'NOT IN (SELECT project_id FROM {db}.project_deletions)';
  // The latest rename of each project (18.16 compares no tuples in argMax; two renames in one ms are a race either way).
  const latestNames = (where: string) =>
    rows<{ project_id: string; name: string }>(`SELECT project_id, argMax(name, saved) AS name FROM {db}.project_renames WHERE ${where} GROUP BY project_id`);

  const findProject = async (projectId: string): Promise<Project | undefined> => {
    const known = projectCache.get(projectId);
    if (known !== undefined && known.until > clock.now()) return known.project;
    const [row] = await rows<{ id: string; name: string }>(`SELECT id, name FROM {db}.projects WHERE id = ${sqlString(projectId)} AND id ${NOT_DELETED} ORDER BY created LIMIT 1`);
    if (row === undefined) {
      projectCache.delete(projectId);
      return undefined;
    }
    const [renamed] = await latestNames(`project_id = ${sqlString(projectId)}`);
    const project: Project = Object.freeze({ id: row.id, name: renamed?.name ?? row.name });
    if (tokenCacheMs > 0) {
      if (projectCache.size >= TOKEN_CACHE_MAX) projectCache.clear();
      projectCache.set(project.id, { project, until: clock.now() + tokenCacheMs });
    }
    return project;
  };
  const liveTokens = (where: string): Promise<{ id: string; project_id: string; hash: string }[]> =>
    rows(`SELECT id, project_id, hash FROM {db}.tokens WHERE ${where} AND id NOT IN (SELECT token_id FROM {db}.token_revocations)`);
  const revoke = async (tokenIds: readonly string[]): Promise<void> => {
    if (tokenIds.length === 0) return;
    const revoked = now();
    await insert('token_revocations', tokenIds.map((token_id) => ({ token_id, revoked })));
  };
  const issue = async (projectId: string, revokeOthers: boolean) => {
    tokenCache.clear();
    tokensVersion++;
    if (revokeOthers) await revoke((await liveTokens(`project_id = ${sqlString(projectId)}`)).map((t) => t.id));
    const token = generateToken();
    const tokenId = generateId('tok');
    await insert('tokens', [{ id: tokenId, project_id: projectId, hash: sha256(token), prefix: token.slice(0, 7), created: now() }]);
    return { tokenId, token };
  };

  return {
    async findByTokenHash(tokenHash) {
      const time = clock.now();
      const cached = tokenCache.get(tokenHash);
      if (cached !== undefined && cached.until > time) return cached.record;
      let record: TokenRecord | undefined;
      try {
        const [token] = await liveTokens(`hash = ${sqlString(tokenHash)}`);
        const project = token === undefined ? undefined : await findProject(token.project_id);
        record = token !== undefined && project !== undefined && constantTimeEqual(token.hash, tokenHash) ? { project, tokenHash: token.hash } : undefined;
      } catch (error) {
        if (cached?.record !== undefined) return cached.record;
        throw unavailableError(error, retryAfterSeconds, 'token lookup') ?? error;
      }
      if (tokenCacheMs > 0) {
        if (tokenCache.size >= TOKEN_CACHE_MAX) tokenCache.clear();
        tokenCache.set(tokenHash, { record, until: time + tokenCacheMs });
      }
      return record;
    },
    tokensVersion: () => tokensVersion,
    findProject,
    async createProject(name) {
      if (typeof name !== 'string' || name.trim() === '') throw new TypeError(`name must be a non-empty string, got ${JSON.stringify(name)}`);
      const id = generateId('prj');
      // The token first: ClickHouse has no transaction over two tables, and a token whose project
      // was never written authenticates nobody, where a project written without its token showed
      // in the dashboard with none.
      const { token } = await issue(id, false);
      await insert('projects', [{ id, name, created: now() }]);
      return { id, name, token };
    },
    async listProjects() {
      const projects = await rows<{ id: string; name: string; created: string }>(`SELECT id, name, created FROM {db}.projects WHERE id ${NOT_DELETED} ORDER BY created, id`);
      const names = new Map((await latestNames('1')).map((r) => [r.project_id, r.name]));
      const tokens = await rows<{ id: string; project_id: string; prefix: string; created: string }>(`SELECT id, project_id, prefix, created FROM {db}.tokens ORDER BY created, id`);
      const revocations = await rows<{ token_id: string; revoked: string }>(`SELECT token_id, min(revoked) AS revoked FROM {db}.token_revocations GROUP BY token_id`);
      const revokedAt = new Map(revocations.map((r) => [r.token_id, r.revoked]));
      return projects.map((p) => ({
        ...p,
        name: names.get(p.id) ?? p.name,
        tokens: tokens.filter((t) => t.project_id === p.id).map((t) => ({ id: t.id, prefix: t.prefix, created: t.created, revoked: revokedAt.get(t.id) ?? null })),
      }));
    },
    async issueToken(projectId, issueOptions = {}) {
      if ((await findProject(projectId)) === undefined) throw new RangeError(`project ${JSON.stringify(projectId)} does not exist`);
      return issue(projectId, issueOptions.revokeOthers === true);
    },
    async revokeToken(which) {
      tokenCache.clear();
      tokensVersion++;
      const live = await liveTokens('tokenId' in which ? `id = ${sqlString(which.tokenId)}` : `hash = ${sqlString(sha256(which.token))}`);
      await revoke(live.map((t) => t.id));
      return live.length > 0;
    },
    async getProjectSettings(projectId) {
      try {
        const [row] = await rows<{ settings: string }>(`SELECT settings FROM {db}.project_settings WHERE project_id = ${sqlString(projectId)} ORDER BY saved DESC, id DESC LIMIT 1`);
        return row === undefined ? undefined : (JSON.parse(row.settings) as ProjectSettings);
      } catch (error) {
        throw unavailableError(error, retryAfterSeconds, 'project settings') ?? error;
      }
    },
    async putProjectSettings(projectId, settings) {
      await insert('project_settings', [{ project_id: projectId, saved: Math.max(0, Math.floor(clock.now())), id: generateId('set'), settings: JSON.stringify(settings) }]);
    },
    async renameProject(projectId, name) {
      if (typeof name !== 'string' || name.trim() === '') throw new TypeError(`name must be a non-empty string, got ${JSON.stringify(name)}`);
      if ((await findProject(projectId)) === undefined) return false;
      await insert('project_renames', [{ project_id: projectId, saved: Math.max(0, Math.floor(clock.now())), id: generateId('ren'), name }]);
      projectCache.delete(projectId);
      tokenCache.clear();
      tokensVersion++;
      return true;
    },
    async deleteProject(projectId) {
      if ((await findProject(projectId)) === undefined) return false;
      tokenCache.clear();
      tokensVersion++;
      // Revoked first: its tokens stop working at once, even before the deletion row is written.
      await revoke((await liveTokens(`project_id = ${sqlString(projectId)}`)).map((t) => t.id));
      await insert('project_deletions', [{ project_id: projectId, deleted: now() }]);
      projectCache.delete(projectId);
      return true;
    },
  };
}
