// A banner over every page while the server reports itself not ready (GET /readyz answers 503): the
// operator sees in the dashboard what a load balancer sees, and where to look for why.
import { apiUrl } from './api.js';
import { h, replace } from './dom.js';

/** How often the banner asks; the server answers from a check at most a second old, so asking costs it nothing. */
export const STORE_STATUS_POLL_MS = 15_000;

/** What the server's store status means, in the banner's words. */
const MEANING: Readonly<Record<string, string>> = {
  busy: 'its visit store has as many visits waiting to be written as it may hold',
  unavailable: 'its visit store cannot be reached, failed its last write, or is short of disk space',
};

/** The store status /readyz gives (undefined when ready, or when the server cannot be asked: pages show their own errors then). */
async function storeStatus(): Promise<string | undefined> {
  try {
    const response = await fetch(apiUrl('/readyz'), { cache: 'no-store', credentials: 'same-origin' });
    if (response.status !== 503) return undefined;
    const body = (await response.json()) as { checks?: { store?: unknown } };
    return typeof body.checks?.store === 'string' ? body.checks.store : 'unavailable';
  } catch {
    return undefined;
  }
}

/** Keeps `box` showing the server's readiness, asking now and every `pollMs` while the page is visible. */
export function watchStoreStatus(box: HTMLElement, pollMs = STORE_STATUS_POLL_MS): void {
  const show = (status: string | undefined) => {
    box.dataset['status'] = status ?? 'ready';
    box.hidden = status === undefined;
    if (status === undefined) replace(box);
    else {
      replace(
        box,
        h('strong', {}, 'This server is not ready: '),
        `${MEANING[status] ?? `its visit store is ${status}`}. A load balancer stops sending it traffic, and visits sent to it meanwhile may be refused (503; senders retry). The server log says why (its "not ready" line).`,
      );
    }
  };
  const check = async () => {
    // A hidden page asks nothing, and keeps what it shows until it is looked at again.
    if (!document.hidden) show(await storeStatus());
    setTimeout(() => void check(), pollMs);
  };
  void check();
}
