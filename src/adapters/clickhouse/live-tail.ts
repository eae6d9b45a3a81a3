// The live tail across servers: each server polls ClickHouse for visits of the projects it has
// listeners for, so a visit accepted by any server reaches every server's subscribers, once.
import type { StoredVisit } from '../../index.js';
import { visitIdFloor } from './visit-id.js';

/** What the tail reads and where it delivers. */
export interface LiveTailOptions {
  readonly clock: { now(): number };
  /** Milliseconds between polls while any project is watched. */
  readonly pollMs: number;
  /** How far back each poll looks, covering insert latency and clock skew between servers. */
  readonly windowMs: number;
  /** Ids (with their projects) of these projects' visits at or after `floor`, in id order. */
  readIds(projectIds: readonly string[], floor: string): Promise<readonly { project_id: string; id: string }[]>;
  /** The visits of these (project, id) pairs, in id order (a list of any length). */
  readVisits(keys: readonly { project_id: string; id: string }[]): Promise<readonly StoredVisit[]>;
  publish(projectId: string, visits: readonly StoredVisit[]): void;
}

/** A running tail. */
export interface LiveTail {
  /** Counts one listener of a project (polling runs while any is counted); returns its release. */
  watch(projectId: string): () => void;
  watched(projectId: string): boolean;
  /** Ids this server is appending and publishes itself: the tail never delivers them. */
  claim(projectId: string, ids: readonly string[]): void;
  /** Ids whose append failed: forgotten again. */
  unclaim(ids: readonly string[]): void;
  close(): void;
}

/**
 * Creates the tail. Each poll reads the ids of the last `windowMs` (a primary-key range), skips
 * ids already delivered or appended here, and delivers the rest grouped by project. Visits older
 * than a project's first listener (by id) existed before it and are not delivered. A failed poll
 * is retried by the next one over the same window, so a short outage loses nothing.
 * @example
 * const tail = createLiveTail({ clock, pollMs: 250, windowMs: 5000, readIds, readVisits, publish: fanout.publish });
 * const release = tail.watch('prj_1');
 */
export function createLiveTail(options: LiveTailOptions): LiveTail {
  const listeners = new Map<string, number>();
  // Per watched project, the id floor of its first listener.
  const since = new Map<string, string>();
  const seen = new Map<string, string>(); // id -> project
  let timer: ReturnType<typeof setTimeout> | undefined;
  let polling = false;
  let closed = false;

  const schedule = (): void => {
    if (closed || timer !== undefined || listeners.size === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      void poll().finally(schedule);
    }, options.pollMs);
    timer.unref?.();
  };

  const poll = async (): Promise<void> => {
    if (polling || listeners.size === 0) return;
    polling = true;
    try {
      const floor = visitIdFloor(options.clock.now() - options.windowMs);
      for (const [id] of seen) if (id < floor) seen.delete(id);
      const projects = [...listeners.keys()];
      const fresh: { project_id: string; id: string }[] = [];
      for (const row of await options.readIds(projects, floor)) {
        if (seen.has(row.id)) continue;
        // Older than the project's first listener: never delivered, so settled now.
        if (row.id < (since.get(row.project_id) ?? row.id)) seen.set(row.id, row.project_id);
        else fresh.push(row);
      }
      if (fresh.length === 0) return;
      const visits = await options.readVisits(fresh);
      // Only now, with the visits read, are their ids done with: had the read failed, the next poll
      // would find them again. Ids appended here meanwhile were published by their append.
      const byProject = new Map<string, StoredVisit[]>();
      for (const visit of visits) {
        if (seen.has(visit.id)) continue;
        let list = byProject.get(visit.project_id);
        if (list === undefined) byProject.set(visit.project_id, (list = []));
        list.push(visit);
      }
      // An id read but not found was deleted in between (its project was): nothing to wait for.
      for (const row of fresh) seen.set(row.id, row.project_id);
      for (const [projectId, list] of byProject) options.publish(projectId, list);
    } catch {
      // ClickHouse unreachable, or a read failed: nothing was marked, and the next poll reads the
      // same window again.
    } finally {
      polling = false;
    }
  };

  return {
    watch(projectId) {
      listeners.set(projectId, (listeners.get(projectId) ?? 0) + 1);
      if (!since.has(projectId)) since.set(projectId, visitIdFloor(options.clock.now()));
      schedule();
      let active = true;
      return () => {
        if (!active) return;
        active = false;
        const left = (listeners.get(projectId) ?? 1) - 1;
        if (left > 0) {
          listeners.set(projectId, left);
          return;
        }
        listeners.delete(projectId);
        since.delete(projectId);
        for (const [id, project] of seen) if (project === projectId) seen.delete(id);
      };
    },
    watched: (projectId) => listeners.has(projectId),
    claim(projectId, ids) {
      for (const id of ids) seen.set(id, projectId);
    },
    unclaim(ids) {
      for (const id of ids) seen.delete(id);
    },
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
