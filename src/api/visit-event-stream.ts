// The live timeline as Server-Sent Events (WHATWG HTML §9.2): one event per stored visit, resumable
// from Last-Event-ID without gaps or duplicates, with heartbeats and cleanup when the client leaves.
// Events wait in the stream only for a reader that fell behind, bounded in events and bytes, and
// go out only while the credential that opened the stream is still good.
import { matchesFilter } from '../visits/stats.js';
import type { StoredVisit, VisitFilter, VisitStore } from '../visits/visit-store.js';
import { DEFAULT_EVENT_STREAM_LIMITS, type EventStreamSlot } from './event-stream-budget.js';
import type { CredentialCheck, CredentialStatus } from './route.js';

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
  /** A reader this many events behind is cut off (default 10,000): it reconnects with Last-Event-ID and catches up from the store. */
  readonly maxQueuedEvents?: number;
  /** Likewise for the bytes of those events (default 16 MiB). */
  readonly maxQueuedBytes?: number;
  /** The stream's place in the server's budget: told the bytes it keeps, released when it ends. */
  readonly slot?: EventStreamSlot;
  /** The token or session that opened the stream: once it is no longer valid, the stream ends. */
  readonly credential?: CredentialCheck;
  /** The least time between two asks of the credential's store, in milliseconds (default 1,000). */
  readonly credentialCheckMs?: number;
  /** Milliseconds, for the time between credential checks (default `Date.now`). */
  readonly clock?: { now(): number };
}

// Replay reads the store a page per pull, so a slow client is never flooded; the page shrinks so
// that one page of the visits seen so far takes at most half the byte bound. The first page is
// small, as nothing is known yet about the size of this project's visits.
const REPLAY_PAGE = 500;
const FIRST_REPLAY_PAGE = 20;
const encoder = new TextEncoder();
const HEARTBEAT = encoder.encode(': heartbeat\n\n');
// The last event of a stream closed for falling behind: a named event, so EventSource's onmessage
// ignores it, with no id, so Last-Event-ID stays the last visit the client received.
const TOO_FAR_BEHIND = encoder.encode('event: closed\ndata: {"reason":"too-far-behind"}\n\n');
// The last event of a stream whose token or session is no longer valid. EventSource reconnects
// after it and gets a 401, which tells the client to log in again or use another token.
const CREDENTIAL_REVOKED = encoder.encode('event: closed\ndata: {"reason":"credential-revoked"}\n\n');
const DEFAULT_CREDENTIAL_CHECK_MS = 1000;

// Streams given the same `serialize` share each visit's encoded event: the fan-out hands every
// subscriber the same visit objects, so ten streams behind on one visit hold one copy, not ten.
const encodedBySerializer = new WeakMap<(visit: StoredVisit) => string, WeakMap<StoredVisit, Uint8Array>>();

/** A live event held during the replay: its id decides whether the replay already sent it. */
interface HeldEvent {
  readonly id: string;
  readonly chunk: Uint8Array;
}

/**
 * Opens an event stream of a project's visits. It subscribes FIRST and holds, then replays the
 * visits after `lastEventId` from the store page by page, then sends what it held minus what the
 * replay already sent: a visit stored at any moment arrives exactly once.
 *
 * The stream hands out an event only when its reader asks for one (high-water mark 0), so a reader
 * that stops reading — a client that does not read its socket — leaves events waiting here, never
 * in the transport. Past `maxQueuedEvents` or `maxQueuedBytes` waiting, or when the server's budget
 * (`slot`) is spent and this stream keeps the most, it drops them, sends a last `event: closed`
 * (data `{"reason":"too-far-behind"}`) and ends; EventSource then reconnects with Last-Event-ID
 * and catches up from the store. Cancelling the stream (the client left, the server shuts down)
 * unsubscribes and stops the heartbeat.
 *
 * The `credential` that opened the stream is asked about again before an event goes out once
 * `credentialCheckMs` have passed since the last ask or `credential.changes()` moved (a revocation
 * through this server), and at each heartbeat on the same terms: a busy stream asks the store at
 * most about once a second, never per event. While an ask is pending, events wait. Once the
 * credential is revoked the stream drops what waited, sends `event: closed` (data
 * `{"reason":"credential-revoked"}`) and ends. A store that cannot answer ('unknown') does not end
 * the stream: the credential keeps the standing it had, and is asked again after the interval.
 * @throws {VisitQueryError} (rejects) when the store does not know `lastEventId`.
 * @example
 * const body = await openVisitEventStream({ visits, projectId, heartbeatMs: 15_000, retryMs: 3000, serialize: JSON.stringify });
 */
export async function openVisitEventStream(options: VisitEventStreamOptions): Promise<ReadableStream<Uint8Array>> {
  const { visits, projectId, filter, serialize, slot, credential } = options;
  const clock = options.clock ?? { now: () => Date.now() };
  const credentialCheckMs = options.credentialCheckMs ?? DEFAULT_CREDENTIAL_CHECK_MS;
  const maxEvents = options.maxQueuedEvents ?? DEFAULT_EVENT_STREAM_LIMITS.maxQueuedEvents;
  const maxBytes = options.maxQueuedBytes ?? DEFAULT_EVENT_STREAM_LIMITS.maxQueuedBytes;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let live = options.lastEventId === undefined;
  let cursor = options.lastEventId;
  let replayPage = FIRST_REPLAY_PAGE;
  // The current replay page, sent one event per read.
  let replayOut: Uint8Array[] = [];
  // Live events that arrived during the replay, and live events the reader has not asked for yet.
  const held: HeldEvent[] = [];
  const outbox: Uint8Array[] = [];
  let waitingBytes = 0;
  // True while the reader waits for an event and none is queued: the next one goes straight out.
  let readerWaiting = false;
  // Ids the replay sent. A store may show a visit to readers a moment before it publishes it (commit,
  // then notify), so they are kept past the catch-up and forgotten after two heartbeats.
  const replayed = new Set<string>();
  let forgetReplayedIn = 2;
  let closed = false;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let unsubscribe: () => void = () => undefined;
  // The request was authenticated a moment ago: that counts as the first ask.
  let checkedAt = clock.now();
  let changesSeen = credential?.changes();
  let checking: Promise<void> | undefined;

  const stop = () => {
    if (closed) return;
    closed = true;
    unsubscribe();
    if (heartbeat !== undefined) clearInterval(heartbeat);
    replayOut = [];
    held.length = 0;
    outbox.length = 0;
    replayed.clear();
    slot?.release();
  };
  let encoded = encodedBySerializer.get(serialize);
  if (encoded === undefined) encodedBySerializer.set(serialize, (encoded = new WeakMap()));
  const encode = (visit: StoredVisit): Uint8Array => {
    let chunk = encoded.get(visit);
    if (chunk === undefined) encoded.set(visit, (chunk = encoder.encode(`id: ${visit.id}\ndata: ${serialize(visit)}\n\n`)));
    return chunk;
  };
  const deliver = (chunk: Uint8Array) => {
    readerWaiting = false;
    controller.enqueue(chunk);
  };
  /** Drops what waited, sends a last named event and ends the stream. */
  const end = (lastEvent: Uint8Array) => {
    if (closed) return;
    stop();
    try {
      controller.enqueue(lastEvent);
      controller.close();
    } catch {
      // Already errored or closed.
    }
  };
  const fellBehind = () => end(TOO_FAR_BEHIND);
  /** Whether the credential must be asked about before the next event goes out. */
  const credentialDue = (): boolean =>
    credential !== undefined && (checking !== undefined || clock.now() - checkedAt >= credentialCheckMs || credential.changes() !== changesSeen);
  /** Asks about the credential (one ask at a time); ends the stream when it was revoked. */
  const recheck = (): Promise<void> =>
    (checking ??= (async () => {
      changesSeen = credential!.changes();
      let status: CredentialStatus;
      try {
        status = await credential!.check();
      } catch {
        status = 'unknown';
      }
      // The interval runs from the answer: an ask slower than the interval (a store timing out)
      // would otherwise be due again as it ends, and events would wait behind ask after ask.
      checkedAt = clock.now();
      checking = undefined;
      if (status === 'revoked') end(CREDENTIAL_REVOKED);
      else flush();
    })());
  const count = (bytes: number) => {
    waitingBytes += bytes;
    slot?.adjust(bytes);
  };
  /** Sends a live event now if the reader waits for one, else keeps it for the reader's next read. */
  const offer = (chunk: Uint8Array) => {
    if (closed) return;
    if (readerWaiting && outbox.length === 0 && replayOut.length === 0 && !credentialDue()) deliver(chunk);
    else {
      outbox.push(chunk);
      count(chunk.byteLength);
      flush();
    }
  };
  const next = (): Uint8Array | undefined => {
    const replayChunk = replayOut.shift();
    if (replayChunk !== undefined) {
      slot?.adjust(-replayChunk.byteLength);
      return replayChunk;
    }
    const chunk = outbox.shift();
    if (chunk !== undefined) count(-chunk.byteLength);
    return chunk;
  };
  /** Hands a waiting reader the next event, once the credential is known to be good. */
  const flush = () => {
    if (closed || !readerWaiting) return;
    if (credentialDue()) {
      void recheck();
      return;
    }
    const chunk = next();
    if (chunk === undefined) return;
    try {
      deliver(chunk);
    } catch {
      // The stream was errored or closed without a cancel (as at the heartbeat); after an ask
      // nothing else would catch this.
      stop();
    }
  };
  const checkBehind = () => {
    if (outbox.length + held.length > maxEvents || waitingBytes > maxBytes) fellBehind();
  };
  const catchUp = (page: readonly StoredVisit[], limit: number) => {
    let pageBytes = 0;
    for (const visit of page) {
      replayed.add(visit.id);
      const chunk = encode(visit);
      pageBytes += chunk.byteLength;
      replayOut.push(chunk);
    }
    if (page.length > 0) cursor = page[page.length - 1]!.id;
    if (page.length === limit) {
      replayPage = Math.max(1, Math.min(REPLAY_PAGE, Math.floor(maxBytes / 2 / (pageBytes / page.length))));
    } else {
      // Caught up: everything newer was published after subscribing, so it is held.
      live = true;
      for (const event of held.splice(0)) {
        count(-event.chunk.byteLength);
        if (!replayed.delete(event.id)) offer(event.chunk);
      }
    }
    slot?.adjust(pageBytes);
    checkBehind();
  };

  const stream = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        c.enqueue(encoder.encode(`retry: ${options.retryMs}\n\n`));
      },
      // Called only while the reader waits for an event (high-water mark 0).
      async pull() {
        // Asked again while it keeps changing: a revocation during an ask may have come after its read.
        while (credentialDue() && !closed) await recheck();
        if (closed) return;
        let chunk = next();
        while (chunk === undefined && !live && !closed) {
          const limit = replayPage;
          let page: readonly StoredVisit[];
          try {
            page = await visits.timeline({ projectId, after: cursor, limit, filter });
          } catch (error) {
            // The store failed mid-replay: release everything; the transport cuts the response and
            // the client reconnects from the last id it received.
            stop();
            throw error;
          }
          if (closed) return;
          catchUp(page, limit);
          chunk = next();
        }
        if (closed) return;
        if (chunk !== undefined) deliver(chunk);
        else readerWaiting = true;
      },
      cancel: stop,
    },
    { highWaterMark: 0 },
  );

  unsubscribe = visits.subscribe(projectId, (batch) => {
    if (closed) return;
    try {
      for (const visit of batch) {
        if (!matchesFilter(visit, filter)) continue;
        if (!live) {
          const chunk = encode(visit);
          held.push({ id: visit.id, chunk });
          count(chunk.byteLength);
        } else if (replayed.size === 0 || !replayed.delete(visit.id)) offer(encode(visit));
        // The server's budget may have closed this stream to make room.
        if (closed) return;
      }
      checkBehind();
    } catch {
      // The stream was errored or closed without a cancel: stop listening.
      stop();
    }
  });
  if (slot !== undefined) slot.overflow = fellBehind;
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
    // An idle stream is asked about too, so one whose credential went ends within a heartbeat.
    if (credentialDue()) void recheck();
    // Only to a reader waiting with nothing to read: one that is behind has events coming, and a
    // heartbeat queued behind them would only add to what waits.
    if (!readerWaiting) return;
    try {
      deliver(HEARTBEAT);
    } catch {
      // The stream was errored or closed without a cancel: nothing more to send.
      stop();
    }
  }, options.heartbeatMs);
  return stream;
}
