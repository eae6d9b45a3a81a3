// Live timeline fan-out: per-project listeners of newly stored visits, shared by every store.
import type { StoredVisit, VisitListener } from './visit-store.js';

/** Subscriptions per project; `publish` reaches every listener of that project. */
export interface VisitFanout {
  subscribe(projectId: string, listener: VisitListener): () => void;
  publish(projectId: string, visits: readonly StoredVisit[]): void;
  /** Listeners currently subscribed, over all projects. */
  size(): number;
}

/**
 * Creates a fan-out. A listener that throws does not stop the others and never fails the append
 * that published: the visits are stored whatever a subscriber (a closed SSE stream) does.
 * @example
 * const fanout = createVisitFanout();
 * const unsubscribe = fanout.subscribe('prj_1', (visits) => console.log(visits.length));
 */
export function createVisitFanout(): VisitFanout {
  const listeners = new Map<string, Set<VisitListener>>();
  let count = 0;
  return {
    subscribe(projectId, listener) {
      if (typeof listener !== 'function') throw new TypeError('listener must be a function');
      let set = listeners.get(projectId);
      if (set === undefined) listeners.set(projectId, (set = new Set()));
      const wrapped: VisitListener = (visits) => listener(visits);
      set.add(wrapped);
      count++;
      let active = true;
      return () => {
        if (!active) return;
        active = false;
        count--;
        set.delete(wrapped);
        if (set.size === 0 && listeners.get(projectId) === set) listeners.delete(projectId);
      };
    },
    publish(projectId, visits) {
      if (visits.length === 0) return;
      const set = listeners.get(projectId);
      if (set === undefined) return;
      for (const listener of [...set]) {
        try {
          listener(visits);
        } catch {
          // The subscriber's failure is its own.
        }
      }
    },
    size: () => count,
  };
}
