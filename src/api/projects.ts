// Projects and their tokens as the API sees them: a lookup from a token hash to the project it
// opens, plus an in-memory implementation for tests and embedding (Workers, scripts).
import { constantTimeEqual, generateId, generateToken, sha256Hex, type TokenHasher } from './token.js';

/** A project: one website, with its own data. */
export interface Project {
  readonly id: string;
  readonly name: string;
}

/** What a token lookup finds: the project and the stored hash, compared by the caller in constant time. */
export interface TokenRecord {
  readonly project: Project;
  readonly tokenHash: string;
}

/** Read access the API needs: find the live (not revoked) token with this hash. */
export interface ProjectLookup {
  findByTokenHash(tokenHash: string): TokenRecord | undefined | Promise<TokenRecord | undefined>;
  /**
   * A number that changes whenever a token is issued or revoked through this store. The API keeps
   * tokens it found valid for a second without hashing them again, and drops them all when this
   * changes; without it, a revocation applies within that second.
   */
  tokensVersion?(): number;
}

/** A project created in a store, with its token in clear text: shown once, never stored. */
export interface CreatedProject extends Project {
  readonly token: string;
}

/** An in-memory project store (lost at exit): for tests and for embedding with fixed projects. */
export interface MemoryProjectStore extends ProjectLookup {
  createProject(name: string): Promise<CreatedProject>;
  /** Issues a new token for a project; `revokeOthers` revokes every previous one (rotation). */
  issueToken(projectId: string, options?: { revokeOthers?: boolean }): Promise<string>;
  /** Revokes a token given in clear text; resolves to whether a live token was revoked. */
  revokeToken(token: string): Promise<boolean>;
  /** Renames a project; resolves to false when there is no such project. */
  renameProject(projectId: string, name: string): Promise<boolean>;
  /** Deletes a project and its tokens (its visits live in the visit store); resolves to false when there is none. */
  deleteProject(projectId: string): Promise<boolean>;
}

/**
 * Creates an in-memory project store; tokens are kept only as hashes.
 * @throws {TypeError} when `hash` is given and is not a function.
 * @example
 * const projects = createMemoryProjectStore();
 * const { id, token } = await projects.createProject('example.com');
 */
export function createMemoryProjectStore(options: { hash?: TokenHasher } = {}): MemoryProjectStore {
  const hash = options.hash ?? sha256Hex;
  if (typeof hash !== 'function') throw new TypeError(`hash must be a function, got ${typeof hash}`);
  const projects = new Map<string, Project>();
  const tokens = new Map<string, TokenRecord>();
  let version = 0;
  const issue = async (project: Project, revokeOthers: boolean): Promise<string> => {
    version++;
    if (revokeOthers) for (const [key, record] of tokens) if (record.project.id === project.id) tokens.delete(key);
    const token = generateToken();
    const tokenHash = await hash(token);
    tokens.set(tokenHash, { project, tokenHash });
    return token;
  };
  return {
    findByTokenHash(tokenHash) {
      const record = tokens.get(tokenHash);
      return record !== undefined && constantTimeEqual(record.tokenHash, tokenHash) ? record : undefined;
    },
    async createProject(name) {
      if (typeof name !== 'string' || name.trim() === '') throw new TypeError(`name must be a non-empty string, got ${JSON.stringify(name)}`);
      const project: Project = Object.freeze({ id: generateId('prj'), name });
      projects.set(project.id, project);
      return { ...project, token: await issue(project, false) };
    },
    async issueToken(projectId, issueOptions = {}) {
      const project = projects.get(projectId);
      if (project === undefined) throw new RangeError(`projectId ${JSON.stringify(projectId)} does not exist`);
      return issue(project, issueOptions.revokeOthers === true);
    },
    async revokeToken(token) {
      version++;
      return tokens.delete(await hash(token));
    },
    async renameProject(projectId, name) {
      if (typeof name !== 'string' || name.trim() === '') throw new TypeError(`name must be a non-empty string, got ${JSON.stringify(name)}`);
      if (!projects.has(projectId)) return false;
      const renamed: Project = Object.freeze({ id: projectId, name });
      projects.set(projectId, renamed);
      // Token records hold the project: they answer with the new name from now on.
      for (const [key, record] of tokens) if (record.project.id === projectId) tokens.set(key, { project: renamed, tokenHash: record.tokenHash });
      return true;
    },
    async deleteProject(projectId) {
      if (!projects.delete(projectId)) return false;
      version++;
      for (const [key, record] of tokens) if (record.project.id === projectId) tokens.delete(key);
      return true;
    },
    tokensVersion: () => version,
  };
}
