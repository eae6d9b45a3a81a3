// The live timeline as Server-Sent Events (WHATWG HTML §9.2): one event per stored visit, resumable
// from Last-Event-ID without gaps or duplicates, with heartbeats and cleanup when the client leaves.
import { matchesFilter } from '../visits/stats.js';
import type { StoredVisit, VisitFilter, VisitStore } from '../visits/visit-store.js';

/** Options of `openVisitEventStream`. */
export interface VisitEventStreamOptions {
  readonly visits: VisitStore;
  readonly projectId: string;
  readonly filter?: VisitFilter;
  /** The last event the client saw: every later visit is replayed before live ones. */
  readonly lastEventId?: string;
  /** Milliseconds between comment heartbeats, which keep proxies and idle timeouts from cutting the stream. */
  readonly heartbeatMs: number;
  /** The reconnection delay suggested to the client (`retry:`), in milliseconds. */
  readonly retryMs: number;
  /** One visit as the event's data: JSON on one line. */
  readonly serialize: (visit: StoredVisit) => string;
  /** A client this many events behind is cut off (it reconnects with Last-Event-ID and catches up from the store). */
  readonly maxQueuedEvents?: number;
}

// Replay reads the store in pages this size, one page per pull, so a slow client is never flooded.
const REPLAY_PAGE = 500;
const encoder = new TextEncoder();

/**
 * Opens an event stream of a project's visits. It subscribes FIRST and buffers, then replays the
 * visits after `lastEventId` from the store page by page, then sends the buffer minus what the
 * replay already sent: a visit stored at any moment arrives exactly once. Cancelling the stream
 * (the client left, the server shuts down) unsubscribes and stops the heartbeat.
 * @throws {VisitQueryError} (rejects) when the store does not know `lastEventId`.
 * @example
 * const body = await openVisitEventStream({ visits, projectId, heartbeatMs: 15_000, retryMs: 3000, serialize: JSON.stringify });
 */
export async function openVisitEventStream(options: VisitEventStreamOptions): Promise<ReadableStream<Uint8Array>> {
  const { visits, projectId, filter, serialize } = options;
  const maxQueued = options.maxQueuedEvents ?? 10_000;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let live = options.lastEventId === undefined;
  let cursor = options.lastEventId;
  const buffered: StoredVisit[] = [];
  // Ids the replay sent. A store may show a visit to readers a moment before it publishes it (commit,
  // then notify), so they are kept past the catch-up and forgotten after two heartbeats.
  const replayed = new Set<string>();
  let forgetReplayedIn = 2;
  let closed = false;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let unsubscribe: () => void = () => undefined;

  const stop = () => {
    if (closed) return;
    closed = true;
    unsubscribe();
    if (heartbeat !== undefined) clearInterval(heartbeat);
    buffered.length = 0;
    replayed.clear();
  };
  const send = (visit: StoredVisit) => controller.enqueue(encoder.encode(`id: ${visit.id}\ndata: ${serialize(visit)}\n\n`));
  const catchUp = (page: readonly StoredVisit[]) => {
    for (const visit of page) {
      replayed.add(visit.id);
      send(visit);
    }
    if (page.length > 0) cursor = page[page.length - 1]!.id;
    if (page.length < REPLAY_PAGE) {
      // Caught up: everything newer was published after subscribing, so it is in the buffer.
      live = true;
      for (const visit of buffered) if (!replayed.delete(visit.id)) send(visit);
      buffered.length = 0;
    }
  };

  const stream = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        c.enqueue(encoder.encode(`retry: ${options.retryMs}\n\n`));
      },
      async pull() {
        if (live || closed) return;
        let page: readonly StoredVisit[];
        try {
          page = await visits.timeline({ projectId, after: cursor, limit: REPLAY_PAGE, filter });
        } catch (error) {
          // The store failed mid-replay: release everything; the transport cuts the response and
          // the client reconnects from the last id it received.
          stop();
          throw error;
        }
        if (!closed) catchUp(page);
      },
      cancel: stop,
    },
    { highWaterMark: 1 },
  );

  unsubscribe = visits.subscribe(projectId, (batch) => {
    if (closed) return;
    try {
      for (const visit of batch) {
        if (!matchesFilter(visit, filter)) continue;
        if (!live) buffered.push(visit);
        else if (replayed.size === 0 || !replayed.delete(visit.id)) send(visit);
      }
      if ((controller.desiredSize ?? 0) < -maxQueued || buffered.length > maxQueued) {
        // Too far behind to buffer further: end the stream; the client resumes from its Last-Event-ID.
        stop();
        controller.close();
      }
    } catch {
      // The stream was errored or closed without a cancel: stop listening.
      stop();
    }
  });
  if (options.lastEventId !== undefined) {
    // Checked before the 200 goes out, so an unknown id is a 400 and not a broken stream.
    try {
      await visits.timeline({ projectId, after: options.lastEventId, limit: 1, filter });
    } catch (error) {
      stop();
      throw error;
    }
  }
  heartbeat = setInterval(() => {
    if (closed) return;
    if (live && replayed.size > 0 && --forgetReplayedIn <= 0) replayed.clear();
    try {
      controller.enqueue(encoder.encode(': heartbeat\n\n'));
    } catch {
      // The stream was errored or closed without a cancel: nothing more to send.
      stop();
    }
  }, options.heartbeatMs);
  return stream;
}
