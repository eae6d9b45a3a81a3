// Where accepted visits go: the VisitStore contract (append per project) and an in-memory store.
import type { Visit } from './visit.js';

/** A visit as stored: the validated visit plus when the server received it. */
export interface StoredVisit extends Visit {
  readonly project_id: string;
  /** ISO 8601 time the server accepted the visit. */
  readonly received: string;
}

/**
 * Stores visits per project. `append` resolves only once the visits are durable for the store's
 * promise (for SQLite: committed), because the API answers 202 right after it (DESIGN.md §6).
 */
export interface VisitStore {
  append(projectId: string, visits: readonly Visit[]): Promise<void>;
}

/** An in-memory visit store (lost at exit): for tests and embedding. */
export interface MemoryVisitStore extends VisitStore {
  /** The visits of one project, oldest first. */
  list(projectId: string): readonly StoredVisit[];
}

/**
 * Creates an in-memory visit store.
 * @example
 * const visits = createMemoryVisitStore();
 * await visits.append('prj_1', [visit]);
 * visits.list('prj_1').length; // 1
 */
export function createMemoryVisitStore(options: { clock?: { now(): number } } = {}): MemoryVisitStore {
  const clock = options.clock ?? { now: () => Date.now() };
  const byProject = new Map<string, StoredVisit[]>();
  return {
    async append(projectId, visits) {
      const received = new Date(clock.now()).toISOString();
      let list = byProject.get(projectId);
      if (list === undefined) byProject.set(projectId, (list = []));
      for (const visit of visits) list.push({ ...visit, project_id: projectId, received });
    },
    list(projectId) {
      return byProject.get(projectId) ?? [];
    },
  };
}
