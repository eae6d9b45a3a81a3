// Reading one request body from node:http into one buffer, within a per-request limit and a cap
// on body bytes held across all connections. Chunks are copied into a buffer that grows by
// doubling, never kept one by one: a body sent as one-byte chunks would otherwise cost a Buffer
// object (over 100 bytes of heap) per byte.
import type { IncomingMessage } from 'node:http';
import { problem, type ApiResponse, type BodyRead } from '../../index.js';

/**
 * Body bytes reserved across all connections of one server, against one cap, and per owner (a
 * project, the admin, or anonymous clients) against a share of it; and per owner, the bodies still
 * arriving (uploads) against a count: one project's many or slow bodies leave room, and
 * connections, for the others.
 */
export class BodyBudget {
  private reserved = 0;
  private readonly byOwner = new Map<string, number>();
  private readonly uploadsByOwner = new Map<string, number>();
  constructor(
    readonly capBytes: number,
    readonly ownerCapBytes: number = capBytes,
    readonly ownerCapUploads: number = Number.POSITIVE_INFINITY,
  ) {}
  /** Reserves bytes for an owner; 'cap' or 'share' (nothing reserved) when the server's cap or the owner's share would be passed. */
  take(bytes: number, owner: string): true | 'cap' | 'share' {
    if (this.reserved + bytes > this.capBytes) return 'cap';
    const held = this.byOwner.get(owner) ?? 0;
    if (held + bytes > this.ownerCapBytes) return 'share';
    this.reserved += bytes;
    this.byOwner.set(owner, held + bytes);
    return true;
  }
  give(bytes: number, owner: string): void {
    this.reserved -= bytes;
    const left = (this.byOwner.get(owner) ?? 0) - bytes;
    if (left > 0) this.byOwner.set(owner, left);
    else this.byOwner.delete(owner);
  }
  /** Counts one more body arriving (an upload) for an owner; false (nothing counted) when the owner already has ownerCapUploads. */
  beginUpload(owner: string): boolean {
    const uploads = this.uploadsByOwner.get(owner) ?? 0;
    if (uploads >= this.ownerCapUploads) return false;
    this.uploadsByOwner.set(owner, uploads + 1);
    return true;
  }
  /** An upload counted by beginUpload() has ended, been refused or been cut off. */
  endUpload(owner: string): void {
    const left = (this.uploadsByOwner.get(owner) ?? 0) - 1;
    if (left > 0) this.uploadsByOwner.set(owner, left);
    else this.uploadsByOwner.delete(owner);
  }
  /** Bytes reserved now. */
  get held(): number {
    return this.reserved;
  }
}

/** Seconds a client refused for a full body budget is asked to wait. */
const BUSY_RETRY_SECONDS = 1;
/** The first buffer a body grows from, once it arrives in more than one chunk; what a declared length reserves before reading. */
const FIRST_CAPACITY = 16 * 1024;

/** One request body being read: its result, whether it ended cleanly, and the release of its reservation. */
export interface BodyReading {
  readonly result: Promise<BodyRead>;
  /** The Content-Length the request declared; undefined for a chunked body. */
  readonly declared: number | undefined;
  /** Whether the body was read to its end (false: refused or cut off, so the connection cannot be reused). */
  complete(): boolean;
  /** Body bytes received so far. */
  bytes(): number;
  /** Returns the reserved bytes to the budget; called once the exchange ends. */
  release(): void;
}

function tooLarge(maxBodyBytes: number): ApiResponse {
  return problem('payload-too-large', `The body is larger than ${maxBodyBytes} bytes.`, {
    errors: [{ pointer: '', code: 'max-body-bytes', message: `at most ${maxBodyBytes} bytes` }],
  });
}

function busy(refusal: 'cap' | 'share' | 'uploads', budget: BodyBudget): ApiResponse {
  const headers = { 'retry-after': String(BUSY_RETRY_SECONDS) };
  if (refusal === 'uploads') {
    // A client of this project holding connections with bodies sent just fast enough to be kept.
    return problem('rate-limited', `Requests of this project are sending as many bodies at once as one project may (${budget.ownerCapUploads}); retry after ${BUSY_RETRY_SECONDS} s.`, { headers });
  }
  if (refusal === 'cap') return problem('service-unavailable', `The server holds as many request bodies as it may; retry after ${BUSY_RETRY_SECONDS} s.`, { headers });
  // This client's own doing: too many bodies of one project at once.
  return problem('rate-limited', `Requests of this project hold as many body bytes at once as one project may (${budget.ownerCapBytes}); retry after ${BUSY_RETRY_SECONDS} s.`, { headers });
}

function cutOff(): ApiResponse {
  return problem('bad-request', 'The request body was cut off.');
}

/**
 * Starts reading a request's body. A body reserves its buffer against the shared cap as the buffer
 * grows with what has arrived; a declared length is refused at once past the per-request limit, and
 * reserves up to FIRST_CAPACITY before reading (refused at once when even that does not fit).
 * Declaring a length reserves no more than that: slow clients that declare large bodies and send
 * them a byte at a time (R.U.D.Y.) cannot take the whole cap without sending it. Nor can one
 * owner's clients hold more than its count of uploads, however fast they send.
 */
export function readRequestBody(req: IncomingMessage, maxBodyBytes: number, budget: BodyBudget, owner: string): BodyReading {
  const lengthHeader = req.headers['content-length'];
  // llhttp has checked the value is one decimal number (and refused it next to Transfer-Encoding).
  const declared = lengthHeader === undefined || req.headers['transfer-encoding'] !== undefined ? undefined : Number(lengthHeader);
  // The most the buffer may ever need to hold.
  const largest = declared ?? maxBodyBytes;
  let reserved = 0;
  let ended = false;
  let size = 0;
  let released = false;
  // Whether this body is counted among its owner's uploads, until it ends or is released.
  let uploading = false;
  const uploaded = () => {
    if (!uploading) return;
    uploading = false;
    budget.endUpload(owner);
  };
  const release = () => {
    uploaded();
    if (released) return;
    released = true;
    budget.give(reserved, owner);
    reserved = 0;
  };
  const reserveUpTo = (capacity: number): true | 'cap' | 'share' => {
    if (capacity <= reserved) return true;
    const taken = budget.take(capacity - reserved, owner);
    if (taken === true) reserved = capacity;
    return taken;
  };
  const reading = (result: Promise<BodyRead>): BodyReading => ({ result, declared, complete: () => ended, bytes: () => size, release });
  if (declared !== undefined) {
    if (declared > maxBodyBytes) return reading(Promise.resolve({ ok: false, response: tooLarge(maxBodyBytes) }));
    const taken = reserveUpTo(Math.min(declared, FIRST_CAPACITY));
    if (taken !== true) return reading(Promise.resolve({ ok: false, response: busy(taken, budget) }));
  }
  // The connection may have failed (a parse error, a reset) while the API authenticated the request.
  if (req.destroyed) return reading(Promise.resolve({ ok: false, response: cutOff() }));
  if (!budget.beginUpload(owner)) {
    release();
    return reading(Promise.resolve({ ok: false, response: busy('uploads', budget) }));
  }
  uploading = true;
  return reading(
    new Promise<BodyRead>((resolve) => {
      let first: Buffer | undefined;
      let gathered: Buffer | undefined;
      let settled = false;
      const refuse = (response: ApiResponse) => {
        settled = true;
        req.off('data', onData);
        first = gathered = undefined;
        release();
        resolve({ ok: false, response });
      };
      const onData = (chunk: Buffer) => {
        if (settled) return;
        const total = size + chunk.length;
        if (total > maxBodyBytes) return refuse(tooLarge(maxBodyBytes));
        if (size === 0) {
          // The common case: the whole body in one chunk, used as it is.
          const taken = reserveUpTo(chunk.length);
          if (taken !== true) return refuse(busy(taken, budget));
          first = chunk;
          size = total;
          return;
        }
        if (gathered === undefined || gathered.length < total) {
          let capacity = Math.min(largest, Math.max(FIRST_CAPACITY, 2 * total));
          if (reserveUpTo(capacity) !== true) {
            // Short of room for the doubled buffer, a smaller step will do (never one byte at a
            // time: a body sent in tiny chunks would be copied whole for each).
            capacity = Math.min(largest, total + FIRST_CAPACITY);
            const taken = reserveUpTo(capacity);
            if (taken !== true) return refuse(busy(taken, budget));
          }
          const grown = Buffer.allocUnsafeSlow(capacity);
          (gathered ?? first!).copy(grown, 0, 0, size);
          gathered = grown;
          first = undefined;
        }
        chunk.copy(gathered, size);
        size = total;
      };
      // on, not once: each fires at most once for a request, and both check `settled`.
      req.on('data', onData);
      req.on('end', () => {
        if (settled) return;
        settled = true;
        ended = true;
        uploaded();
        resolve({ ok: true, body: size === 0 ? undefined : (gathered?.subarray(0, size) ?? first) });
      });
      // A client that leaves mid-body gets no answer (its connection is gone); nothing reaches a route.
      req.on('close', () => {
        if (!settled) refuse(cutOff());
      });
    }),
  );
}
