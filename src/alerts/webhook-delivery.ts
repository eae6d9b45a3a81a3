// Webhook deliveries: each event is POSTed as JSON, signed afresh at every attempt, and retried with
// exponential backoff (plus jitter, and Retry-After when the receiver asks) until a 2xx, a refusal
// that retrying cannot change, or the last attempt. Transport, clock, timers and randomness are injected.
import { generateId } from '../api/token.js';
import { signWebhook, WEBHOOK_DELIVERY_HEADER, WEBHOOK_EVENT_HEADER, WEBHOOK_SIGNATURE_HEADER } from './webhook-signature.js';

/** An event as delivered: the JSON body of the POST. */
export interface WebhookEvent {
  /** `evt_...`, unique per event. */
  readonly id: string;
  readonly type: string;
  /** ISO 8601. */
  readonly created: string;
  readonly project: { readonly id: string; readonly name: string };
  readonly data: Readonly<Record<string, unknown>>;
}

/** Where and how to deliver: a webhook's URL and its signing secret. */
export interface WebhookTarget {
  readonly id: string;
  readonly projectId: string;
  readonly url: string;
  readonly secret: string;
}

/** One delivery of one event to one webhook, as the delivery log keeps it. */
export interface WebhookDelivery {
  /** `dlv_...`: sent as `Agentwarden-Delivery`, the same on every attempt. */
  readonly id: string;
  readonly webhook_id: string;
  readonly project_id: string;
  readonly event_type: string;
  readonly event_id: string;
  /** The JSON body, byte for byte what is signed and sent. */
  readonly body: string;
  /** ms since the epoch. */
  readonly created: number;
  readonly attempts: number;
  readonly state: 'pending' | 'delivered' | 'failed';
  /** The receiver's last HTTP status; null when it never answered. */
  readonly last_status: number | null;
  /** Why the last attempt failed (a status or a transport error); null after a success. */
  readonly last_error: string | null;
  readonly last_attempt: number | null;
  /** When the next attempt is due (ms since the epoch); null once no attempt is left. */
  readonly next_attempt: number | null;
}

/** Sends one POST; resolves to the receiver's status, rejects for transport trouble (with a `code` when it has one). */
export type WebhookTransport = (url: string, request: { readonly headers: Readonly<Record<string, string>>; readonly body: Uint8Array }) => Promise<{ readonly status: number; readonly retryAfterSeconds?: number }>;

/** The retry schedule. */
export interface WebhookRetryPolicy {
  /** Attempts in all, the first included (default 7). */
  readonly maxAttempts: number;
  /** Delay before the first retry (default 10 s); each later one is `factor` times longer. */
  readonly baseDelayMs: number;
  /** Default 4: retries after about 10 s, 40 s, 2.7 min, 11 min, 43 min and 2.8 h. */
  readonly factor: number;
  /** Each delay is moved by up to this share either way (default 0.2), so receivers that failed together are not hit together. */
  readonly jitter: number;
  /** A Retry-After longer than this is cut to it (default one hour). */
  readonly maxRetryAfterMs: number;
}

/** The default schedule: 7 attempts over about 4 hours. */
export const DEFAULT_WEBHOOK_RETRY: WebhookRetryPolicy = { maxAttempts: 7, baseDelayMs: 10_000, factor: 4, jitter: 0.2, maxRetryAfterMs: 3_600_000 };

/**
 * The delay before attempt `attempt + 1` after `attempt` attempts failed (1 = the first), with
 * `random()` in [0, 1) placing it within the jitter band.
 * @example
 * retryDelayMs(DEFAULT_WEBHOOK_RETRY, 2, () => 0.5); // 40000
 */
export function retryDelayMs(policy: WebhookRetryPolicy, attempt: number, random: () => number): number {
  const base = policy.baseDelayMs * policy.factor ** (attempt - 1);
  return Math.round(base * (1 + policy.jitter * (2 * random() - 1)));
}

/**
 * Whether another attempt could succeed after this answer: no answer at all (network, timeout),
 * 408, 425, 429 and 5xx. Any other status is the receiver's considered refusal.
 */
export function isRetriableStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

// Transport failures that are the URL's fault, not the network's: retrying cannot help.
const FINAL_TRANSPORT_CODES = new Set(['refused-url', 'refused-address', 'redirect']);

/** Keeps the delivery log. */
export interface WebhookDeliveryLog {
  save(delivery: WebhookDelivery): void | Promise<void>;
}

/** Options of `createWebhookDispatcher`. */
export interface WebhookDispatcherOptions {
  readonly transport: WebhookTransport;
  readonly log: WebhookDeliveryLog;
  /** The webhook as it is now (it may have been deleted or given a new URL since the event). */
  readonly target: (webhookId: string) => WebhookTarget | undefined | Promise<WebhookTarget | undefined>;
  readonly clock?: { now(): number };
  readonly timers?: { set(run: () => void, ms: number): unknown; clear(handle: unknown): void };
  readonly random?: () => number;
  readonly retry?: Partial<WebhookRetryPolicy>;
  /** The User-Agent of deliveries. */
  readonly userAgent?: string;
}

/** Delivers events and keeps retrying them. */
export interface WebhookDispatcher {
  /** Makes the first attempt now; resolves to the delivery after it (retries, if any, are scheduled). */
  deliver(target: WebhookTarget, event: WebhookEvent): Promise<WebhookDelivery>;
  /** Schedules the next attempt of a delivery still pending (read back from the log after a restart). */
  resume(delivery: WebhookDelivery): void;
  /** Stops scheduling; pending deliveries stay pending in the log. */
  close(): void;
}

function transportError(error: unknown): { message: string; final: boolean } {
  const code = typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return { message: code === undefined ? message : `${code}: ${message}`, final: code !== undefined && FINAL_TRANSPORT_CODES.has(code) };
}

/**
 * Creates a dispatcher. Each attempt signs the body with the current time (so a receiver's replay
 * tolerance holds for retries too) and sends `Content-Type: application/json`, `Agentwarden-Event`,
 * `Agentwarden-Delivery` and `Agentwarden-Signature`. A 2xx delivers; a retriable answer or a
 * network failure schedules the next attempt; anything else, or the last attempt, fails it.
 * @throws {TypeError} when the transport, log or target lookup is missing.
 * @example
 * const dispatcher = createWebhookDispatcher({ transport: send, log, target: (id) => store.target(id) });
 * await dispatcher.deliver(target, event);
 */
export function createWebhookDispatcher(options: WebhookDispatcherOptions): WebhookDispatcher {
  if (typeof options?.transport !== 'function') throw new TypeError('transport must be a function');
  if (typeof options.log?.save !== 'function') throw new TypeError('log must be an object with save()');
  if (typeof options.target !== 'function') throw new TypeError('target must be a function');
  const clock = options.clock ?? { now: () => Date.now() };
  const timers = options.timers ?? { set: (run: () => void, ms: number) => setTimeout(run, ms), clear: (handle: unknown) => clearTimeout(handle as ReturnType<typeof setTimeout>) };
  const random = options.random ?? Math.random;
  const policy: WebhookRetryPolicy = { ...DEFAULT_WEBHOOK_RETRY, ...options.retry };
  if (!Number.isSafeInteger(policy.maxAttempts) || policy.maxAttempts < 1) throw new RangeError(`retry.maxAttempts must be an integer >= 1, got ${String(policy.maxAttempts)}`);
  const userAgent = options.userAgent ?? 'agentwarden-webhooks/1';
  const scheduled = new Map<string, unknown>();
  const encoder = new TextEncoder();
  let closed = false;

  const attempt = async (delivery: WebhookDelivery, target: WebhookTarget | undefined): Promise<WebhookDelivery> => {
    const now = clock.now();
    const attempts = delivery.attempts + 1;
    let status: number | null = null;
    let error: string | null = null;
    let final = false;
    let retryAfterMs: number | undefined;
    if (target === undefined) {
      error = 'the webhook was deleted';
      final = true;
    } else {
      try {
        const signature = await signWebhook(target.secret, Math.floor(now / 1000), delivery.body);
        const answer = await options.transport(target.url, {
          headers: {
            'content-type': 'application/json',
            'user-agent': userAgent,
            [WEBHOOK_EVENT_HEADER]: delivery.event_type,
            [WEBHOOK_DELIVERY_HEADER]: delivery.id,
            [WEBHOOK_SIGNATURE_HEADER]: signature,
          },
          body: encoder.encode(delivery.body),
        });
        status = answer.status;
        if (status < 200 || status > 299) {
          error = `answered ${status}`;
          final = !isRetriableStatus(status);
          if (answer.retryAfterSeconds !== undefined) retryAfterMs = Math.min(answer.retryAfterSeconds * 1000, policy.maxRetryAfterMs);
        }
      } catch (thrown) {
        ({ message: error, final } = transportError(thrown));
      }
    }
    const delivered = error === null;
    const more = !delivered && !final && attempts < policy.maxAttempts;
    const next = more ? now + Math.max(retryDelayMs(policy, attempts, random), retryAfterMs ?? 0) : null;
    const updated: WebhookDelivery = {
      ...delivery,
      attempts,
      state: delivered ? 'delivered' : more ? 'pending' : 'failed',
      last_status: status,
      last_error: error,
      last_attempt: now,
      next_attempt: next,
    };
    await options.log.save(updated);
    if (next !== null) schedule(updated);
    return updated;
  };

  const schedule = (delivery: WebhookDelivery): void => {
    if (closed || delivery.next_attempt === null) return;
    const previous = scheduled.get(delivery.id);
    if (previous !== undefined) timers.clear(previous);
    const handle = timers.set(() => {
      scheduled.delete(delivery.id);
      if (closed) return;
      void Promise.resolve(options.target(delivery.webhook_id))
        .then((target) => attempt(delivery, target))
        // A log that cannot be written leaves the delivery pending; the next start resumes it.
        .catch(() => undefined);
    }, Math.max(0, delivery.next_attempt - clock.now()));
    scheduled.set(delivery.id, handle);
  };

  return {
    async deliver(target, event) {
      const delivery: WebhookDelivery = {
        id: generateId('dlv'),
        webhook_id: target.id,
        project_id: target.projectId,
        event_type: event.type,
        event_id: event.id,
        body: JSON.stringify(event),
        created: clock.now(),
        attempts: 0,
        state: 'pending',
        last_status: null,
        last_error: null,
        last_attempt: null,
        next_attempt: clock.now(),
      };
      return attempt(delivery, target);
    },
    resume(delivery) {
      if (delivery.state === 'pending') schedule(delivery);
    },
    close() {
      closed = true;
      for (const handle of scheduled.values()) timers.clear(handle);
      scheduled.clear();
    },
  };
}
