// What a server's event streams may hold together: how many are open (per credential and in all)
// and how many bytes they keep for readers that fell behind, so clients that connect and never read
// cannot make the server buffer without bound.

/** Limits of `GET /visits/stream`; every field has a default. */
export interface EventStreamLimits {
  /** Streams open at once on this server (default 1,000). */
  readonly maxStreams?: number;
  /** Streams open at once per project token or admin session (default 32). */
  readonly maxStreamsPerToken?: number;
  /** Bytes of events one stream keeps for a reader that fell behind; past it the stream is closed (default 16 MiB). */
  readonly maxQueuedBytes?: number;
  /** Events one stream keeps likewise (default 10,000). */
  readonly maxQueuedEvents?: number;
  /** Bytes all streams together keep; past it the stream keeping the most is closed (default 64 MiB). */
  readonly maxQueuedBytesTotal?: number;
}

/** The limits with their defaults applied. */
export type ResolvedEventStreamLimits = Required<EventStreamLimits>;

/** One open stream's place in the budget. */
export interface EventStreamSlot {
  /** Counts bytes the stream starts (positive) or stops (negative) keeping; may close the largest stream. */
  adjust(bytes: number): void;
  /** Frees the slot; called once the stream ended, any further call does nothing. */
  release(): void;
  /** Set by the stream: ends it because the server's byte budget is spent. */
  overflow: () => void;
}

/** The outcome of asking for a stream: a slot, or which cap refused it. */
export type EventStreamAdmission = { readonly ok: true; readonly slot: EventStreamSlot } | { readonly ok: false; readonly reason: 'per-token' | 'per-server' };

/** The open streams of one server. */
export interface EventStreamBudget {
  readonly limits: ResolvedEventStreamLimits;
  /** A slot for a new stream of credential `key`, unless a cap is reached. */
  admit(key: string): EventStreamAdmission;
  /** Streams open now. */
  open(): number;
  /** Bytes all open streams keep now. */
  queuedBytes(): number;
}

/** The limits a server has unless told otherwise. */
export const DEFAULT_EVENT_STREAM_LIMITS: ResolvedEventStreamLimits = {
  maxStreams: 1000,
  maxStreamsPerToken: 32,
  maxQueuedBytes: 16 * 1024 * 1024,
  maxQueuedEvents: 10_000,
  maxQueuedBytesTotal: 64 * 1024 * 1024,
};

function positiveInteger(name: keyof EventStreamLimits, value: number | undefined): number {
  if (value === undefined) return DEFAULT_EVENT_STREAM_LIMITS[name];
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`eventStream.${name} must be a positive integer, got ${String(value)}`);
  return value;
}

interface OpenSlot extends EventStreamSlot {
  queued: number;
}

/**
 * Creates the budget of a server's event streams.
 * @throws {RangeError} for a limit that is not a positive integer.
 * @example
 * const budget = createEventStreamBudget({ maxStreamsPerToken: 8 });
 * const admission = budget.admit(`project:${projectId}`);
 * if (!admission.ok) return problem('too-many-streams', ...);
 */
export function createEventStreamBudget(limits: EventStreamLimits = {}): EventStreamBudget {
  const resolved: ResolvedEventStreamLimits = {
    maxStreams: positiveInteger('maxStreams', limits.maxStreams),
    maxStreamsPerToken: positiveInteger('maxStreamsPerToken', limits.maxStreamsPerToken),
    maxQueuedBytes: positiveInteger('maxQueuedBytes', limits.maxQueuedBytes),
    maxQueuedEvents: positiveInteger('maxQueuedEvents', limits.maxQueuedEvents),
    maxQueuedBytesTotal: positiveInteger('maxQueuedBytesTotal', limits.maxQueuedBytesTotal),
  };
  const perKey = new Map<string, number>();
  const slots = new Set<OpenSlot>();
  let total = 0;

  // Over budget: close the streams keeping the most until under it. They are the ones furthest
  // behind; a reader that keeps up holds next to nothing and is never chosen while others hold more.
  const enforce = () => {
    while (total > resolved.maxQueuedBytesTotal) {
      let largest: OpenSlot | undefined;
      for (const slot of slots) if (largest === undefined || slot.queued > largest.queued) largest = slot;
      if (largest === undefined || largest.queued === 0) return;
      const before = total;
      largest.overflow();
      // A stream that did not let go of its bytes would loop here forever; give up on it instead.
      if (total >= before) {
        total -= largest.queued;
        largest.queued = 0;
        largest.release();
      }
    }
  };

  return {
    limits: resolved,
    admit(key) {
      if (slots.size >= resolved.maxStreams) return { ok: false, reason: 'per-server' };
      const count = perKey.get(key) ?? 0;
      if (count >= resolved.maxStreamsPerToken) return { ok: false, reason: 'per-token' };
      perKey.set(key, count + 1);
      let released = false;
      const slot: OpenSlot = {
        queued: 0,
        overflow: () => undefined,
        adjust(bytes) {
          if (released) return;
          slot.queued += bytes;
          total += bytes;
          if (bytes > 0) enforce();
        },
        release() {
          if (released) return;
          released = true;
          total -= slot.queued;
          slot.queued = 0;
          slots.delete(slot);
          const left = (perKey.get(key) ?? 1) - 1;
          if (left === 0) perKey.delete(key);
          else perKey.set(key, left);
        },
      };
      slots.add(slot);
      return { ok: true, slot };
    },
    open: () => slots.size,
    queuedBytes: () => total,
  };
}
