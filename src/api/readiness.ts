// Readiness (`GET /readyz`): whether the visit store can take visits now. The route needs no
// token, so one probe serves every request for a second, and a store that does not answer within
// the deadline is called unavailable rather than holding the request. An optional watch asks the
// store on its own schedule, so that a change reaches the log while no balancer polls.
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
  /**
   * Also ask the store every `everyMs` milliseconds, for `onChange` only: the watch's checks never
   * answer a request, so a request right after a recovery is not answered from a check the watch
   * began during the outage. It stops when `signal` aborts; its timer never keeps a process alive.
   */
  readonly watch?: { readonly everyMs: number; readonly signal?: AbortSignal };
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
  // Checks are numbered as they begin. A check that began before the one reported last is out of
  // date when it ends (a watch's check begun during an outage, ending after a request's check saw
  // the recovery) and is not reported.
  let begun = 0;
  let reportedCheck = 0;

  const report = (check: number, health: StoreHealth): void => {
    if (check < reportedCheck) return;
    reportedCheck = check;
    if (health.status !== reported) {
      reported = health.status;
      options.onChange?.(health);
    }
  };
  const ask = async (): Promise<StoreHealth> => {
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
  const watch = options.watch;
  const check = async (byWatch: boolean): Promise<StoreHealth> => {
    const number = ++begun;
    const health = await ask();
    // A watch stopped (its server shutting down, the store closing) reports nothing more.
    if (!(byWatch && watch?.signal?.aborted === true)) report(number, health);
    return health;
  };

  if (watch !== undefined) {
    if (!Number.isSafeInteger(watch.everyMs) || watch.everyMs < 1) throw new RangeError(`watch.everyMs must be a positive integer of milliseconds, got ${String(watch.everyMs)}`);
    let watching = false;
    const timer = setInterval(() => {
      if (watching || watch.signal?.aborted === true) return;
      watching = true;
      void check(true).finally(() => (watching = false));
    }, watch.everyMs);
    (timer as { unref?: () => void }).unref?.();
    watch.signal?.addEventListener('abort', () => clearInterval(timer), { once: true });
  }

  return () => {
    if (last !== undefined && clock.now() - last.at < READINESS_REUSE_MS) return Promise.resolve(last.health);
    probing ??= check(false)
      .then((health) => {
        last = { health, at: clock.now() };
        return health;
      })
      .finally(() => (probing = undefined));
    return probing;
  };
}
