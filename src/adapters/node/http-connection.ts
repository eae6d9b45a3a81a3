// One HTTP/1.1 client connection of the node server: reads request heads and bodies as bytes
// arrive, hands each request to the API handler, writes the response in one write, keeps the
// connection alive, answers pipelined requests in order and enforces the server's limits.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { problem, type ApiHandler, type ApiResponse, type ProblemCode } from '../../index.js';
import { ChunkedBodyDecoder } from './chunked-body.js';
import { parseRequestHead, type HeadRefusal, type RequestHead } from './http-request-head.js';

/** What every connection of one server shares: configuration, counters and shutdown state. */
export interface ConnectionHost {
  readonly handler: ApiHandler;
  readonly maxBodyBytes: number;
  readonly maxHeaderBytes: number;
  readonly maxHeaders: number;
  readonly headersMs: number;
  readonly requestMs: number;
  readonly keepAliveMs: number;
  readonly idleMs: number;
  /** The `keep-alive: timeout=N` header line (RFC 9112 §9.3 leaves the hint to the server). */
  readonly keepAliveHint: string;
  /** Whether the server is shutting down: every response then closes its connection. */
  readonly shuttingDown: boolean;
  /** Called when a request is received (head complete) and when its exchange ends. */
  exchangeStarted(): void;
  exchangeEnded(): void;
  /** Registers an open response stream's end function, so shutdown can end it. */
  readonly openStreams: Set<() => void>;
  readonly logAccess?: (entry: AccessEntry) => void;
  readonly logError?: (msg: string, error: unknown) => void;
}

/** What the access log records of one exchange. */
export interface AccessEntry {
  readonly method: string;
  readonly target: string;
  readonly status: number;
  readonly started: number;
  readonly bytesIn: number;
  readonly projectId: string | undefined;
}

const HEAD_END = Buffer.from('\r\n\r\n');
// Header fields the transport writes itself; the same names from the API are dropped.
const TRANSPORT_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// RFC 9110 §5.5: what a field value may hold (node:http refuses the same set).
const INVALID_FIELD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
// Bytes a client may send ahead while its previous request is handled (pipelining) before
// reading from it pauses.
const PIPELINE_BUFFER_BYTES = 64 * 1024;

const REFUSAL_PROBLEMS: Record<HeadRefusal['status'], ProblemCode> = {
  400: 'bad-request',
  413: 'payload-too-large',
  417: 'expectation-failed',
  431: 'header-fields-too-large',
  501: 'not-implemented',
  505: 'http-version-not-supported',
};

let dateSecond = -1;
let dateText = '';
/** The Date header value (RFC 9110 §6.6.1), formatted at most once per second. */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

/** The path of a request target; absolute-form targets (RFC 9112 §3.2.2) are reduced to path and query. */
function targetPath(target: string): string {
  if (target.startsWith('/')) return target;
  try {
    const parsed = new URL(target);
    return parsed.pathname + parsed.search;
  } catch {
    return target;
  }
}

/** Whether a response with this status carries no body (RFC 9110 §6.4.1). */
function bodiless(status: number): boolean {
  return status < 200 || status === 204 || status === 304;
}

/** One client connection; created per accepted socket. */
export class HttpConnection {
  /** Received bytes not parsed yet. */
  private buffered: Buffer | undefined;
  /** The buffer trickled-in bytes are gathered in, and where its written part ends. */
  private grown: Buffer | undefined;
  private grownEnd = 0;
  /** Where the search for the end of the head resumes, so a dribbled head is not rescanned. */
  private scanFrom = 0;
  private phase: 'head' | 'body' | 'handling' | 'closed' = 'head';
  /** When the current request's first byte arrived; 0 while the connection waits for one. */
  private headStarted = 0;
  /** When the current request's head was complete (the access log's start). */
  private requestStarted = 0;
  private lastActivity: number;
  /** Whether any request has been answered on this connection (keep-alive vs first-request wait). */
  private served = false;
  private head: RequestHead | undefined;
  private bodyChunks: Uint8Array[] = [];
  private bodySize = 0;
  private bodyRemaining = 0;
  private chunked: ChunkedBodyDecoder | undefined;
  /** An exchange runs from a complete head (or a refusal) until its response is written. */
  private exchangeOpen = false;
  private handlerPending = false;
  private endStream: (() => void) | undefined;
  private paused = false;
  private readonly remoteAddress: string | undefined;

  constructor(
    readonly socket: Socket,
    private readonly host: ConnectionHost,
  ) {
    this.lastActivity = performance.now();
    this.remoteAddress = socket.remoteAddress;
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    // Errors (a reset, a write after the peer left) end in 'close'; nothing to answer.
    socket.on('error', () => undefined);
    socket.on('close', () => this.closed());
  }

  /** Closes the connection if no request is in progress on it; one in progress closes after its response. */
  closeIfIdle(): void {
    if (this.phase === 'head' && !this.exchangeOpen) this.socket.destroy();
  }

  /** Enforces the timeouts against slow or idle clients; the server calls it on a coarse interval. */
  checkTimeouts(now: number): void {
    const host = this.host;
    if (this.phase === 'head') {
      if (this.headStarted !== 0) {
        if (now - this.headStarted > host.headersMs) this.refuse('request-timeout', `The request head did not arrive within ${host.headersMs} ms.`);
      } else if (now - this.lastActivity > (this.served ? host.keepAliveMs : host.headersMs)) {
        this.socket.destroy();
      }
    } else if (this.phase === 'body') {
      if (now - this.headStarted > host.requestMs) this.refuse('request-timeout', `The request did not arrive within ${host.requestMs} ms.`);
    } else if (now - this.lastActivity > host.idleMs) {
      this.socket.destroy();
    }
  }

  private receive(chunk: Buffer): void {
    this.lastActivity = performance.now();
    if (this.phase === 'closed') return;
    this.append(chunk);
    if (this.phase === 'handling') {
      if (this.buffered!.length > PIPELINE_BUFFER_BYTES && !this.paused) {
        this.paused = true;
        this.socket.pause();
      }
      return;
    }
    this.advance();
  }

  /**
   * Appends received bytes to the unparsed ones. A request that arrives in one chunk is parsed
   * from that chunk; bytes that trickle in are gathered in a buffer that doubles as it fills, so
   * a client sending one byte at a time costs linear, not quadratic, copying. Bytes already
   * handed out (body views) are never written over: appends only go past the end.
   */
  private append(chunk: Buffer): void {
    const have = this.buffered;
    if (have === undefined) {
      this.buffered = chunk;
      return;
    }
    const total = have.length + chunk.length;
    const grown = this.grown;
    if (grown !== undefined && have.buffer === grown.buffer && have.byteOffset + have.length === grown.byteOffset + this.grownEnd && this.grownEnd + chunk.length <= grown.length) {
      chunk.copy(grown, this.grownEnd);
      this.grownEnd += chunk.length;
      this.buffered = grown.subarray(this.grownEnd - total, this.grownEnd);
      return;
    }
    const fresh = Buffer.allocUnsafe(Math.max(2 * total, 4096));
    have.copy(fresh, 0);
    chunk.copy(fresh, have.length);
    this.grown = fresh;
    this.grownEnd = total;
    this.buffered = fresh.subarray(0, total);
  }

  /** Parses what is buffered until a request is handed to the handler or more bytes are needed. */
  private advance(): void {
    while (this.buffered !== undefined) {
      if (this.phase === 'head') {
        if (!this.readHead()) return;
      } else if (this.phase === 'body') {
        if (!this.readBody()) return;
      } else {
        return;
      }
    }
  }

  private readHead(): boolean {
    let bytes = this.buffered!;
    // RFC 9112 §2.2: empty lines before a request line are ignored.
    let skip = 0;
    while (skip + 1 < bytes.length && bytes[skip] === 13 && bytes[skip + 1] === 10) skip += 2;
    if (skip > 0) {
      this.buffered = skip === bytes.length ? undefined : bytes.subarray(skip);
      if (this.buffered === undefined) return false;
      bytes = this.buffered;
      this.scanFrom = 0;
    }
    if (this.headStarted === 0) this.headStarted = this.lastActivity;
    const end = bytes.indexOf(HEAD_END, this.scanFrom);
    const limit = this.host.maxHeaderBytes;
    if (end === -1 ? bytes.length > limit : end + 4 > limit) {
      this.refuse('header-fields-too-large', `The request head is larger than ${limit} bytes.`);
      return false;
    }
    if (end === -1) {
      this.scanFrom = Math.max(0, bytes.length - 3);
      return false;
    }
    this.buffered = end + 4 === bytes.length ? undefined : bytes.subarray(end + 4);
    this.scanFrom = 0;
    const parsed = parseRequestHead(bytes.toString('latin1', 0, end), this.host);
    this.openExchange();
    if (!parsed.ok) {
      this.refuse(REFUSAL_PROBLEMS[parsed.status], parsed.detail);
      return false;
    }
    const head = parsed.head;
    this.head = head;
    const framing = head.framing;
    if (framing.kind === 'none') {
      this.dispatch();
      return true;
    }
    if (framing.kind === 'length') this.bodyRemaining = framing.length;
    else this.chunked = new ChunkedBodyDecoder(this.host.maxBodyBytes);
    this.phase = 'body';
    // RFC 9110 §10.1.1: a client that waits for 100 Continue is told to send its body.
    if (head.expectsContinue && this.buffered === undefined) this.socket.write('HTTP/1.1 100 Continue\r\n\r\n');
    return true;
  }

  private readBody(): boolean {
    const bytes = this.buffered!;
    if (this.chunked === undefined) {
      const take = Math.min(this.bodyRemaining, bytes.length);
      this.bodyChunks.push(take === bytes.length ? bytes : bytes.subarray(0, take));
      this.bodySize += take;
      this.bodyRemaining -= take;
      this.buffered = take === bytes.length ? undefined : bytes.subarray(take);
      if (this.bodyRemaining > 0) return false;
    } else {
      const progress = this.chunked.push(bytes, (data) => {
        this.bodyChunks.push(data);
        this.bodySize += data.length;
      });
      if (!progress.ok) {
        this.refuse(progress.status === 413 ? 'payload-too-large' : 'bad-request', progress.detail);
        return false;
      }
      this.buffered = progress.consumed === bytes.length ? undefined : bytes.subarray(progress.consumed);
      if (!progress.done) return false;
      this.chunked = undefined;
    }
    this.dispatch();
    return true;
  }

  private openExchange(): void {
    if (this.exchangeOpen) return;
    this.exchangeOpen = true;
    this.requestStarted = performance.now();
    this.host.exchangeStarted();
  }

  private dispatch(): void {
    const head = this.head!;
    const chunks = this.bodyChunks;
    const body = chunks.length === 0 ? undefined : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, this.bodySize);
    this.bodyChunks = [];
    this.phase = 'handling';
    this.handlerPending = true;
    this.host.handler({ method: head.method, path: targetPath(head.target), headers: head.headers, body, remoteAddress: this.remoteAddress }).then(
      (response) => this.respond(response, false),
      (error: unknown) => {
        // The API handler never rejects; if it ever does, answer a bare 500 and log.
        this.host.logError?.('handler rejected', error);
        this.respond(problem('internal-error', 'An unexpected error occurred. It has been logged.'), false);
      },
    );
  }

  /** Answers with a problem and closes: the rest of what the client sent cannot be trusted. */
  private refuse(code: ProblemCode, detail: string): void {
    if (this.phase === 'closed') return;
    this.openExchange();
    this.respond(problem(code, detail), true);
  }

  private respond(response: ApiResponse, mustClose: boolean): void {
    this.handlerPending = false;
    if (this.phase === 'closed' || this.socket.destroyed) {
      // The client left while the handler ran: nothing to write.
      if (typeof response.body === 'object') response.body.cancel().catch(() => undefined);
      this.endExchange(true);
      return;
    }
    const head = this.head;
    const status = response.status;
    const body = response.body;
    const withoutBody = head?.method === 'HEAD' || bodiless(status);
    const streamed = typeof body === 'object' && !withoutBody && head !== undefined;
    // An HTTP/1.0 client reads a streamed body until the connection closes (no chunked coding).
    const close = mustClose || head === undefined || !head.keepAlive || this.host.shuttingDown || (streamed && head.minorVersion === 0);
    let text = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}\r\n`;
    const headers = response.headers;
    for (const name in headers) {
      if (TRANSPORT_HEADERS.has(name)) continue;
      const value = headers[name]!;
      if (!FIELD_NAME.test(name) || INVALID_FIELD_VALUE.test(value)) {
        // A header the API built from bad data: never send it (response splitting); answer 500.
        if (typeof body === 'object') body.cancel().catch(() => undefined);
        this.host.logError?.('invalid response header', new Error(`header ${JSON.stringify(name)} has an invalid name or value`));
        this.respond(problem('internal-error', 'An unexpected error occurred. It has been logged.'), mustClose);
        return;
      }
      text += `${name}: ${value}\r\n`;
    }
    text += `date: ${httpDate()}\r\n`;
    if (close) text += 'connection: close\r\n';
    else text += head.minorVersion === 0 ? `connection: keep-alive\r\n${this.host.keepAliveHint}` : this.host.keepAliveHint;
    if (streamed) {
      this.stream(response, body, text, close, head.minorVersion === 1);
      return;
    }
    if (typeof body === 'object') {
      // HEAD of a streamed resource: the framing GET would have, without the body (RFC 9110 §9.3.2).
      body.cancel().catch(() => undefined);
      if (!bodiless(status) && head?.minorVersion === 1) text += 'transfer-encoding: chunked\r\n';
    } else if (!bodiless(status)) {
      text += `content-length: ${body === undefined ? 0 : Buffer.byteLength(body)}\r\n`;
    }
    this.socket.write(withoutBody || typeof body !== 'string' ? `${text}\r\n` : `${text}\r\n${body}`);
    this.lastActivity = performance.now();
    this.log(response);
    this.endExchange(close);
  }

  /**
   * Writes a streamed body chunk by chunk as the handler produces it (Server-Sent Events):
   * chunked framing (HTTP/1.0: delimited by closing), backpressure through 'drain', cancelled
   * when the client disconnects or the server shuts down.
   */
  private stream(response: ApiResponse, body: ReadableStream<Uint8Array>, text: string, close: boolean, chunked: boolean): void {
    // Headers go out now, not with the first chunk: an event stream may stay quiet for a while.
    this.socket.write(chunked ? `${text}transfer-encoding: chunked\r\n\r\n` : `${text}\r\n`);
    const reader = body.getReader();
    const socket = this.socket;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      this.endStream = undefined;
      this.host.openStreams.delete(end);
      reader.cancel().catch(() => undefined);
      if (this.phase !== 'closed' && !socket.destroyed && chunked) socket.write('0\r\n\r\n');
      this.log(response);
      this.endExchange(close || !chunked);
    };
    this.endStream = end;
    this.host.openStreams.add(end);
    const pump = async () => {
      while (!ended) {
        const { done, value } = await reader.read();
        if (done || ended) break;
        if (value.length === 0) continue;
        socket.cork();
        if (chunked) socket.write(`${value.length.toString(16)}\r\n`);
        let more = socket.write(value);
        if (chunked) more = socket.write('\r\n');
        socket.uncork();
        this.lastActivity = performance.now();
        if (!more) {
          await new Promise<void>((resolve) => {
            const go = () => {
              socket.off('drain', go);
              socket.off('close', go);
              resolve();
            };
            socket.on('drain', go);
            socket.on('close', go);
          });
        }
      }
    };
    pump().then(end, (error: unknown) => {
      // A failed stream cannot turn into an error status any more: log it and cut the connection.
      this.host.logError?.('response stream failed', error);
      if (!ended) socket.destroy();
      end();
    });
  }

  private log(response: ApiResponse): void {
    this.host.logAccess?.({
      method: this.head?.method ?? '',
      target: this.head?.target ?? '',
      status: response.status,
      started: this.requestStarted,
      bytesIn: this.bodySize,
      projectId: response.projectId,
    });
  }

  private endExchange(close: boolean): void {
    if (!this.exchangeOpen) return;
    this.exchangeOpen = false;
    this.head = undefined;
    this.bodySize = 0;
    this.bodyChunks = [];
    this.chunked = undefined;
    this.host.exchangeEnded();
    if (close || this.phase === 'closed') {
      this.phase = 'closed';
      this.buffered = undefined;
      // end() lets the response drain first; a client that never reads is cut by the idle timeout.
      this.socket.end();
      return;
    }
    this.served = true;
    this.phase = 'head';
    this.headStarted = 0;
    if (this.paused) {
      this.paused = false;
      this.socket.resume();
    }
    if (this.buffered === undefined) return;
    // Pipelined requests: answered one by one, but not faster than the client reads the answers.
    if (this.socket.writableNeedDrain) {
      this.phase = 'handling';
      this.socket.once('drain', () => {
        if (this.phase !== 'handling' || this.exchangeOpen) return;
        this.phase = 'head';
        this.advance();
      });
      return;
    }
    this.advance();
  }

  private closed(): void {
    const wasOpen = this.exchangeOpen;
    this.phase = 'closed';
    this.buffered = undefined;
    if (this.endStream !== undefined) this.endStream();
    // A request cut off mid-body never reaches the handler; one being handled ends when it settles.
    else if (wasOpen && !this.handlerPending) this.endExchange(true);
  }
}
