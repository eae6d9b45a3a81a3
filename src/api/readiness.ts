// Readiness (`GET /readyz`): whether the visit store can take visits now. The route needs no
// token, so one probe serves every request for a second, and a store that does not answer within
// the deadline is called unavailable rather than holding the request.
import { STORE_READY, type StoreHealth, type VisitStore } from '../visits/visit-store.js';

/** How long a store's answer is reused: a balancer polling every server cannot make probes pile up. */
export const READINESS_REUSE_MS = 1000;
/** How long a probe may take before the store is called unavailable. */
export const READINESS_DEADLINE_MS = 3000;

/** Options of `createReadinessProbe`. */
export interface ReadinessProbeOptions {
  /** Milliseconds since the epoch. */
  readonly clock?: { now(): number };
  /** Called when the store's status changes (the first answer counts as a change when it is not ok), with its detail for the log. */
  readonly onChange?: (health: StoreHealth) => void;
  readonly deadlineMs?: number;
}

/**
 * The readiness probe over a store: at most one `health()` call in flight, its answer reused for
 * READINESS_REUSE_MS, and a call that outlives the deadline answered as unavailable.
 */
export function createReadinessProbe(store: Pick<VisitStore, 'health'>, options: ReadinessProbeOptions = {}): () => Promise<StoreHealth> {
  const clock = options.clock ?? { now: () => Date.now() };
  const deadlineMs = options.deadlineMs ?? READINESS_DEADLINE_MS;
  let last: { readonly health: StoreHealth; readonly at: number } | undefined;
  let probing: Promise<StoreHealth> | undefined;
  let reported: StoreHealth['status'] = 'ok';

  const settle = (health: StoreHealth): StoreHealth => {
    last = { health, at: clock.now() };
    if (health.status !== reported) {
      reported = health.status;
      options.onChange?.(health);
    }
    return health;
  };
  const probe = async (): Promise<StoreHealth> => {
    if (store.health === undefined) return STORE_READY;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<StoreHealth>((resolve) => {
      timer = setTimeout(() => resolve({ status: 'unavailable', detail: `the store did not answer its health check within ${deadlineMs} ms` }), deadlineMs);
    });
    try {
      return await Promise.race([
        store.health().catch((error: unknown): StoreHealth => ({ status: 'unavailable', detail: `the health check failed: ${error instanceof Error ? error.message : String(error)}` })),
        late,
      ]);
    } finally {
      clearTimeout(timer);
    }
  };
  return () => {
    if (last !== undefined && clock.now() - last.at < READINESS_REUSE_MS) return Promise.resolve(last.health);
    probing ??= probe()
      .then(settle)
      .finally(() => (probing = undefined));
    return probing;
  };
}
