// The node transport of the API on node:http: llhttp parses every request (we keep no parser of
// our own), node:http's timeouts, header limits and connection cap hold off slow and greedy
// clients, request bodies are read only once the API has authenticated the request, and bodies
// held across connections have one cap. Also graceful shutdown and JSON-line access logs.
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { headerProblem, problem, type ApiHandler, type ApiRequest, type ApiResponse, type BodyRead } from '../../index.js';
import { BodyBudget, readRequestBody, type BodyReading } from './request-body.js';

/** Timeouts in milliseconds against slow or idle clients. */
export interface ServerTimeouts {
  /** Whole request headers must arrive within this (slowloris; default 10,000). */
  readonly headersMs?: number;
  /** The whole request, body included, must arrive within this (default 30,000). */
  readonly requestMs?: number;
  /**
   * An idle keep-alive connection is closed after this (default 5,000). One that keeps sending
   * bytes without completing a request (a `\r\n` every few seconds) is closed `headersMs` later.
   */
  readonly keepAliveMs?: number;
  /** A socket with no traffic at all is destroyed after this (default 60,000). */
  readonly idleMs?: number;
}

/** One access-log entry; never holds a token or the Authorization header. */
export type LogEntry = Record<string, unknown>;

/** Options of `startNodeServer`. */
export interface NodeServerOptions {
  readonly handler: ApiHandler;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 8080; 0 picks a free port. */
  readonly port?: number;
  /** Bodies past this are refused with 413: a declared length before reading, a chunked body as it passes it (default 1 MiB). */
  readonly maxBodyBytes?: number;
  /** Request bodies held at once across all connections; past it requests are answered 503 with Retry-After (default 64 MiB). */
  readonly maxBufferedBodyBytes?: number;
  /**
   * Of those, the bodies of one project (or of the admin, or of unauthenticated clients) at once;
   * past it that project's requests are answered 429 with Retry-After while others go on (default
   * half of maxBufferedBodyBytes, and at least one body of maxBodyBytes).
   */
  readonly maxBufferedBodyBytesPerProject?: number;
  /** Request heads (request line and header fields) past this are refused with 431 (node:http's maxHeaderSize; default 16 KiB). */
  readonly maxHeaderBytes?: number;
  /** Requests with more header fields than this are refused with 431 (default 100). */
  readonly maxHeaders?: number;
  /**
   * Connections open at once (default 1,024). At the cap, a new connection takes the place of the
   * oldest one that has had no request in progress for a second (a head never finished, an idle
   * keep-alive); when there is none, the new one is closed.
   */
  readonly maxConnections?: number;
  /**
   * Request bodies one project (or the admin, or unauthenticated clients) may be sending at once;
   * past it that project's requests are answered 429 with Retry-After before their bodies are read
   * (default half of maxConnections): a project's clients holding connections with bodies sent just
   * fast enough to be kept cannot take every connection.
   */
  readonly maxUploadsPerProject?: number;
  readonly timeouts?: ServerTimeouts;
  /** Receives one entry per unexpected event (a rejected handler, a response header node:http refused); omit for none. */
  readonly log?: (entry: LogEntry) => void;
  /** Receives one access-log line per request, serialised JSON without newline; omit for none. */
  readonly accessLog?: (line: string) => void;
  /** After this many milliseconds of shutdown, connections still open are cut (default 10,000). */
  readonly shutdownGraceMs?: number;
}

/** A running server. */
export interface NodeServer {
  /** `http://host:port`, with IPv6 hosts in brackets. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** The listening node:http server. */
  readonly server: Server;
  /** Requests received and not yet answered. */
  inFlight(): number;
  /** Request body bytes reserved across all connections now. */
  bufferedBodyBytes(): number;
  /** Stops accepting, ends open response streams, lets in-flight requests finish (up to the grace period), then resolves. */
  close(): Promise<void>;
}

function positiveInteger(name: string, value: number | undefined, fallback: number, unit: 'milliseconds' | 'bytes' | 'header fields' | 'connections'): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer of ${unit}, got ${String(value)}`);
  return value;
}

let lastMs = 0;
let lastIso = '';
/** The current time in ISO 8601, formatted at most once per millisecond. */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

// scheme "://" authority of an absolute-form target (RFC 9112 §3.2.2).
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/**
 * The path (and query) of a request target, as the client wrote it. An absolute-form target keeps
 * its path text too, never normalised by a URL parser: `http://x/admin/../healthz` is the path
 * `/admin/../healthz`, answered as the same origin-form target would be, so a front proxy's path
 * rules cannot be bypassed by switching forms.
 */
export function targetPath(target: string): string {
  if (target.startsWith('/')) return target;
  const authority = ABSOLUTE_FORM.exec(target);
  if (authority === null) return target;
  const rest = target.slice(authority[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** The path of a request target without its query (clients may put anything in a query), for the access log. */
function logPath(target: string): string {
  const path = targetPath(target);
  const query = path.indexOf('?');
  return query === -1 ? path : path.slice(0, query);
}

/** Whether a response with this status carries no body (RFC 9110 §6.4.1). */
function bodiless(status: number): boolean {
  return status < 200 || status === 204 || status === 304;
}

// Header fields the transport writes itself; the same names from the API are dropped.
const TRANSPORT_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);

/** The 505 of a request in an HTTP version other than 1.x (RFC 9110 §15.6.6). */
function versionNotSupported(major: number, minor: number): ApiResponse {
  return problem('http-version-not-supported', `HTTP/${major}.${minor} is not served here; send HTTP/1.1 (HTTP/2 and HTTP/3 belong to a proxy in front).`);
}

// RFC 9110 §5.6.2 tchar: a method is a token.
const METHOD_THEN_SPACE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) /;
const VERSION_AT_END = / HTTP\/([0-9])\.([0-9])$/;

/**
 * The line of a packet llhttp failed in, as latin1 text without its line break: the line holding
 * byte `at` (where it stopped), from its start.
 */
function lineAt(packet: Buffer | undefined, at: number | undefined): string {
  if (packet === undefined) return '';
  const stopped = Math.min(Math.max(at ?? 0, 0), packet.length);
  const start = stopped === 0 ? 0 : packet.lastIndexOf(0x0a, stopped - 1) + 1;
  const end = packet.indexOf(0x0a, start);
  return packet.toString('latin1', start, end === -1 ? packet.length : end).replace(/\r$/, '');
}

/** How node:http's parse errors (llhttp's codes) are answered; `line` is the line of the request it failed in. */
function clientErrorProblem(code: string | undefined, line: string): ApiResponse {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return problem('header-fields-too-large', 'The request head is larger than the server accepts.');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return problem('payload-too-large', 'The chunk extensions are larger than the server accepts.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return problem('request-timeout', 'The request did not arrive in time.');
    case 'HPE_PAUSED_H2_UPGRADE':
      return problem('http-version-not-supported', 'Only HTTP/1.1 and 1.0 are served; HTTP/2 belongs to a proxy in front.');
    case 'HPE_INVALID_METHOD': {
      // RFC 9110 §9.1: a method the server does not know is a 501 (methods are case-sensitive, so
      // "get" is one). Bytes that do not start with a method at all stay a malformed request.
      const method = METHOD_THEN_SPACE.exec(line)?.[1];
      if (method !== undefined) return problem('not-implemented', `The method ${JSON.stringify(method.slice(0, 32))} is not implemented here (methods are case-sensitive); use one the API lists in Allow.`);
      break;
    }
    case 'HPE_INVALID_VERSION': {
      // llhttp takes 0.9, 1.0, 1.1 and 2.0 only: HTTP/3.0 fails here. HTTP/1.2 stays a 400.
      const version = VERSION_AT_END.exec(line);
      if (version !== null && Number(version[1]) >= 2) return versionNotSupported(Number(version[1]), Number(version[2]));
      break;
    }
  }
  return problem('bad-request', 'The request is not valid HTTP/1.1.');
}

/** A problem response as raw bytes, for a socket no ServerResponse can write to any more. */
function rawProblem(response: ApiResponse): string {
  const body = typeof response.body === 'string' ? response.body : '';
  let text = `HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? 'Unknown'}\r\n`;
  for (const [name, value] of Object.entries(response.headers)) text += `${name}: ${value}\r\n`;
  return `${text}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\ndate: ${new Date().toUTCString()}\r\n\r\n${body}`;
}

/** How long a closing connection still reads (and discards) what its client sends. */
const LINGER_MS = 2000;

/** Half-closes, discards what the client still sends for a moment, then closes. */
function lingeringClose(socket: Socket): void {
  if (socket.destroyed) return;
  socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/** How long a connection at the cap must have gone without a request in progress before a new one may take its place. */
const EVICT_AFTER_MS = 1000;
/** The slowest a chunked body (no declared length to finish) may arrive and not count as stalling, in bytes a second. */
const MIN_CHUNKED_BYTES_PER_SECOND = 1024;
/**
 * A declared body this small still arriving after a second is stalling whatever its rate: it is
 * a login or a batch of a few visits, which fits a packet or two on any link (a client dribbling
 * one at 150 bytes a second would otherwise hold its connection for the whole request timeout).
 */
const SMALL_BODY_BYTES = 16 * 1024;
/** How long connections closed or refused at the cap are counted before the count is logged. */
const CAP_LOG_MS = 60_000;
/** Connections node:http may hold past the cap while the ones closed to make room finish closing. */
const CONNECTION_SLACK = 64;

/** What the server tracks of one connection: requests not yet answered, and since when it has been idle. */
interface ConnectionState {
  /** Its requests whose answers have not gone out (or whose handlers have not settled), in arrival order. */
  readonly open: Set<OpenRequest>;
  idleSince: number;
  /** A response said `connection: close`: requests parsed after it are not handled (no answer could reach the client). */
  closing: boolean;
  /** The request body being read on it, if any: how far it has come, to tell a slow upload from a stalling one. */
  reading: BodyProgress | undefined;
  /** The refusal of malformed bytes, held until the requests pipelined before them (the open ones it does not answer) have their answers. */
  refusal: HeldRefusal | undefined;
}

/** A request in progress on a connection, as a refusal of later bytes sees it. */
interface OpenRequest {
  readonly req: IncomingMessage;
  /** The refusal answers it: its handler's answer is not sent. */
  refused: boolean;
}

interface HeldRefusal {
  readonly response: ApiResponse;
  /** The request refused, when node:http parsed one (CONNECT), for the access log. */
  readonly request: IncomingMessage | undefined;
}

/** Whether a connection still has a request to answer before its refusal (one the refusal does not answer). */
function answersDue(open: ReadonlySet<OpenRequest>): boolean {
  for (const request of open) if (!request.refused) return true;
  return false;
}

/** A request body being read, and when its request's head arrived. */
interface BodyProgress {
  readonly started: number;
  readonly body: BodyReading;
}

/**
 * Whether a body (still arriving a second after its head) is stalling: a small one (SMALL_BODY_BYTES)
 * at all; a larger one when, at the rate it has arrived so far, it cannot be complete before the
 * request timeout ends it anyway; a chunked one when it arrives slower than
 * MIN_CHUNKED_BYTES_PER_SECOND. A client dribbling a body (R.U.D.Y.) holds its connection for nothing.
 */
function stalling({ started, body }: BodyProgress, now: number, requestMs: number): boolean {
  const elapsed = now - started;
  const bytes = body.bytes();
  const { declared } = body;
  if (declared === undefined) return bytes < (elapsed * MIN_CHUNKED_BYTES_PER_SECOND) / 1000;
  if (declared <= SMALL_BODY_BYTES) return true;
  return bytes + (bytes / elapsed) * (requestMs - elapsed) < declared;
}

/** How many fields of a (lower-case) name the raw header list holds. */
function countFields(rawHeaders: readonly string[], name: string): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.length === name.length && rawHeaders[i]!.toLowerCase() === name) count++;
  return count;
}

// Singleton fields of which node:http keeps the first and drops the rest: two credentials would be
// answered by whichever came first, two media types read as the first, a choice the client did not make.
const SINGLE_FIELDS = [
  ['authorization', 'Authorization'],
  ['content-type', 'Content-Type'],
] as const;

/**
 * Refuses what llhttp lets through but this server does not serve; undefined to go on.
 * `Transfer-Encoding` is decoded by llhttp only when chunked is the final coding; any other coding
 * before it would reach the API still encoded.
 */
function refuseHead(req: IncomingMessage, maxHeaders: number): ApiResponse | undefined {
  if (req.httpVersionMajor !== 1) {
    // llhttp completes HTTP/0.9 (a bare "GET /") and HTTP/2.0 request lines.
    if (req.httpVersionMajor === 0) return problem('bad-request', 'HTTP/0.9 requests are not served; send HTTP/1.1.');
    return versionNotSupported(req.httpVersionMajor, req.httpVersionMinor);
  }
  if (req.httpVersionMinor === 1 && req.headers.host === undefined) return headerProblem('bad-request', 'An HTTP/1.1 request must have a Host header (RFC 9112 §3.2).', { header: 'Host', code: 'required', message: 'is required in HTTP/1.1' });
  if (req.rawHeaders.length > 2 * maxHeaders) return problem('header-fields-too-large', `At most ${maxHeaders} header fields are accepted.`);
  for (const [name, field] of SINGLE_FIELDS) {
    if (req.headers[name] !== undefined && countFields(req.rawHeaders, name) > 1) return headerProblem('bad-request', `Send one ${field} header; this request has several.`, { header: field, code: 'repeated', message: 'must be sent once' });
  }
  const coding = req.headers['transfer-encoding'];
  if (coding !== undefined) {
    if (req.httpVersionMinor === 0) return headerProblem('bad-request', 'Transfer-Encoding is not defined for HTTP/1.0 (RFC 9112 §6.1).', { header: 'Transfer-Encoding', code: 'http-1.0', message: 'is not defined for HTTP/1.0' });
    if (coding.trim().toLowerCase() !== 'chunked') return headerProblem('not-implemented', `Only the chunked transfer coding is accepted; got ${JSON.stringify(coding)}.`, { header: 'Transfer-Encoding', code: 'transfer-coding', message: 'must be chunked' });
  }
  return undefined;
}

/**
 * Starts the API on node:http and resolves once it listens.
 * @throws {RangeError} for an invalid port, limit or timeout.
 * @example
 * const server = await startNodeServer({ handler, port: 0 });
 * console.log(server.url); // http://127.0.0.1:41234
 * await server.close();
 */
export async function startNodeServer(options: NodeServerOptions): Promise<NodeServer> {
  if (typeof options?.handler !== 'function') throw new TypeError('handler must be an API handler function');
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 8080;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`port must be an integer from 0 to 65535, got ${String(port)}`);
  const t = options.timeouts ?? {};
  const headersMs = positiveInteger('timeouts.headersMs', t.headersMs, 10_000, 'milliseconds');
  const requestMs = positiveInteger('timeouts.requestMs', t.requestMs, 30_000, 'milliseconds');
  const keepAliveMs = positiveInteger('timeouts.keepAliveMs', t.keepAliveMs, 5_000, 'milliseconds');
  const idleMs = positiveInteger('timeouts.idleMs', t.idleMs, 60_000, 'milliseconds');
  const maxBodyBytes = positiveInteger('maxBodyBytes', options.maxBodyBytes, 1024 * 1024, 'bytes');
  const maxBufferedBodyBytes = positiveInteger('maxBufferedBodyBytes', options.maxBufferedBodyBytes, 64 * 1024 * 1024, 'bytes');
  const perProject = positiveInteger('maxBufferedBodyBytesPerProject', options.maxBufferedBodyBytesPerProject, Math.max(Math.floor(maxBufferedBodyBytes / 2), Math.min(maxBodyBytes, maxBufferedBodyBytes)), 'bytes');
  if (perProject > maxBufferedBodyBytes) throw new RangeError(`maxBufferedBodyBytesPerProject must be at most maxBufferedBodyBytes (${maxBufferedBodyBytes}), got ${perProject}`);
  const maxHeaderBytes = positiveInteger('maxHeaderBytes', options.maxHeaderBytes, 16 * 1024, 'bytes');
  const maxHeaders = positiveInteger('maxHeaders', options.maxHeaders, 100, 'header fields');
  const maxConnections = positiveInteger('maxConnections', options.maxConnections, 1024, 'connections');
  const uploadsPerProject = positiveInteger('maxUploadsPerProject', options.maxUploadsPerProject, Math.max(1, Math.floor(maxConnections / 2)), 'connections');
  if (uploadsPerProject > maxConnections) throw new RangeError(`maxUploadsPerProject must be at most maxConnections (${maxConnections}), got ${uploadsPerProject}`);
  const budget = new BodyBudget(maxBufferedBodyBytes, perProject, uploadsPerProject);
  const graceMs = positiveInteger('shutdownGraceMs', options.shutdownGraceMs, 10_000, 'milliseconds');
  const { handler, log, accessLog } = options;
  let inFlight = 0;
  let shuttingDown = false;
  const drainWaiters: (() => void)[] = [];
  // Ends each open streamed response; close() calls them all so shutdown need not wait out the grace period.
  const openStreams = new Set<() => void>();
  const connections = new Map<Socket, ConnectionState>();

  const logError = (msg: string, error: unknown) =>
    log?.({ time: new Date().toISOString(), level: 'error', msg, error: error instanceof Error ? error.stack : String(error) });

  // Built as text rather than JSON.stringify of an object: it runs once per request. Only method
  // and path come from the client, and they are JSON-escaped; the query string is left out
  // (clients may put anything in it) and so are all headers (tokens live there).
  const logAccess = (method: string, target: string, status: number, started: number, bytesIn: number, projectId: string | undefined) =>
    accessLog?.(
      `{"time":"${isoNow()}","level":"info","msg":"request","method":${JSON.stringify(method)},"path":${JSON.stringify(logPath(target))},` +
        `"status":${status},"duration_ms":${Math.round((performance.now() - started) * 100) / 100},"bytes_in":${bytesIn},"project":${projectId === undefined ? 'null' : JSON.stringify(projectId)}}`,
    );

  /** One request from its head to its response's end. */
  class Exchange implements OpenRequest {
    readonly started = performance.now();
    body: BodyReading | undefined;
    refused = false;
    private holds = 1;
    readonly connection: ConnectionState | undefined;
    /** Whether the request declares a body (Content-Length other than 0, or Transfer-Encoding). */
    readonly hasBody: boolean;
    constructor(
      readonly req: IncomingMessage,
      readonly res: ServerResponse,
      private readonly expectsContinue: boolean,
      connection = connections.get(req.socket),
    ) {
      const headers = req.headers;
      const length = headers['content-length'];
      this.hasBody = headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
      inFlight++;
      this.connection = connection;
      this.connection?.open.add(this);
      // In flight until the response is closed AND the handler has settled: a client that leaves
      // early must not let shutdown close the stores under a running handler.
      res.once('close', () => this.release());
    }

    /** The deferred body the API reads once it has authenticated the request. */
    readonly readBody = (maxBytes?: number, owner = ''): Promise<BodyRead> => {
      if (this.body === undefined) {
        // RFC 9110 §10.1.1: the client waits for 100 Continue before it sends the body; it is told
        // so only once the API wants the body.
        if (this.expectsContinue && !this.res.headersSent) this.res.writeContinue();
        this.body = readRequestBody(this.req, maxBytes === undefined ? maxBodyBytes : Math.min(maxBytes, maxBodyBytes), budget, owner);
        if (this.connection !== undefined) this.connection.reading = { started: this.started, body: this.body };
      }
      return this.body.result;
    };

    handlerStarted(): void {
      this.holds++;
    }

    release(): void {
      if (--this.holds > 0) return;
      this.body?.release();
      if (this.connection !== undefined && this.connection.reading?.body === this.body) this.connection.reading = undefined;
      const connection = this.connection;
      if (connection !== undefined) {
        connection.open.delete(this);
        if (connection.open.size === 0) connection.idleSince = performance.now();
        const held = connection.refusal;
        if (held !== undefined && !this.refused && !answersDue(connection.open)) refuse(this.req.socket, held.response, held.request);
      }
      if (--inFlight === 0) for (const waiter of drainWaiters.splice(0)) waiter();
    }

    /** Whether the connection must close after the response: a body left unread, refused or cut off makes the rest of the stream unusable. */
    mustClose(): boolean {
      return shuttingDown || (this.hasBody && this.body?.complete() !== true);
    }

    bytesIn(): number {
      return this.body?.bytes() ?? 0;
    }
  }

  /**
   * Writes a streamed body chunk by chunk as the handler produces it (Server-Sent Events): no
   * buffering, backpressure through 'drain', the stream cancelled when the client disconnects or
   * the server shuts down, and the access-log line written when the stream ends.
   */
  const pipe = (exchange: Exchange, response: ApiResponse, body: ReadableStream<Uint8Array>) => {
    const { req, res } = exchange;
    const reader = body.getReader();
    let ended = false;
    const socket = req.socket;
    const end = () => {
      if (ended) return;
      ended = true;
      openStreams.delete(end);
      socket.off('end', end);
      reader.cancel().catch(() => undefined);
      if (!res.destroyed && !res.writableEnded) res.end();
      // A client that went away may leave its socket half-open (no FIN seen yet): cut it.
      else if (!res.writableFinished) res.destroy();
      logAccess(req.method ?? '', req.url ?? '', response.status, exchange.started, 0, response.projectId);
    };
    res.once('close', end);
    // A client that sends its FIN while reading a stream is done with it (an EventSource closed, a
    // fetch aborted). Half-closed connections stay open for the answers still due (see
    // httpAllowHalfOpen below), but a stream is never due to end by itself.
    socket.once('end', end);
    if (shuttingDown) {
      end();
      return;
    }
    openStreams.add(end);
    // Headers go out now, not with the first chunk: an event stream may stay quiet for a while.
    res.flushHeaders();
    const pump = async () => {
      while (!ended) {
        const { done, value } = await reader.read();
        if (done || ended) break;
        if (value.length === 0) continue;
        if (!res.write(value)) {
          await new Promise<void>((resolve) => {
            const go = () => {
              res.off('drain', go);
              res.off('close', go);
              resolve();
            };
            res.on('drain', go);
            res.on('close', go);
          });
        }
      }
    };
    pump().then(end, (error: unknown) => {
      // A failed stream cannot turn into an error status any more: log it and cut the response.
      logError('response stream failed', error);
      if (!ended) res.destroy();
      end();
    });
  };

  const send = (exchange: Exchange, response: ApiResponse, forceClose = false): void => {
    const { req, res } = exchange;
    const body = response.body;
    if (exchange.refused || res.destroyed || res.headersSent || !req.socket.writable) {
      // The client left while the handler ran, or malformed bytes in its request were refused: nothing to write.
      if (typeof body === 'object') body.cancel().catch(() => undefined);
      return;
    }
    const status = response.status;
    const headers: string[] = [];
    const given = response.headers;
    for (const name in given) if (!TRANSPORT_HEADERS.has(name)) headers.push(name, given[name]!);
    if (forceClose || exchange.mustClose()) {
      headers.push('connection', 'close');
      if (exchange.connection !== undefined) exchange.connection.closing = true;
      // node:http ends a `connection: close` response with socket.destroySoon(): closing while the
      // client still sends its body resets the connection, and the reset can wipe the response
      // from the client's buffer before it is read. Close lingering instead (RFC 9112 §9.6).
      req.socket.destroySoon = () => lingeringClose(req.socket);
    }
    const withoutBody = req.method === 'HEAD' || bodiless(status);
    const streamed = typeof body === 'object';
    if (streamed) {
      // HEAD of a streamed resource: the framing GET would have, without the body (RFC 9110 §9.3.2).
      if (withoutBody) {
        body.cancel().catch(() => undefined);
        if (!bodiless(status) && req.httpVersionMinor === 1) headers.push('transfer-encoding', 'chunked');
      }
    } else if (!bodiless(status)) {
      headers.push('content-length', body === undefined ? '0' : String(Buffer.byteLength(body)));
    }
    try {
      res.writeHead(status, headers);
    } catch (error) {
      // node:http refuses a header name or value the API built from bad data (response splitting): answer 500 instead.
      if (streamed && !withoutBody) body.cancel().catch(() => undefined);
      logError('invalid response header', error);
      send(exchange, problem('internal-error', 'An unexpected error occurred. It has been logged.'), forceClose);
      return;
    }
    if (streamed && !withoutBody) {
      pipe(exchange, response, body);
      return;
    }
    res.end(withoutBody ? undefined : body);
    logAccess(req.method ?? '', req.url ?? '', status, exchange.started, exchange.bytesIn(), response.projectId);
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse, expectsContinue = false) => {
    const connection = connections.get(req.socket);
    // Pipelined after a response that closes the connection: its answer could never be sent.
    if (connection?.closing === true) return;
    const exchange = new Exchange(req, res, expectsContinue, connection);
    const refusal = refuseHead(req, maxHeaders);
    if (refusal !== undefined) {
      send(exchange, refusal, true);
      return;
    }
    const method = req.method ?? 'GET';
    const path = targetPath(req.url ?? '/');
    const remoteAddress = req.socket.remoteAddress;
    // Two literals rather than a spread: one object per request, built without a copy.
    const request: ApiRequest = exchange.hasBody
      ? { method, path, headers: req.headers, remoteAddress, readBody: exchange.readBody }
      : { method, path, headers: req.headers, remoteAddress };
    exchange.handlerStarted();
    handler(request).then(
      (response) => {
        send(exchange, response);
        exchange.release();
      },
      (error: unknown) => {
        // The API handler never rejects; if it ever does, answer a bare 500 and log.
        logError('handler rejected', error);
        send(exchange, problem('internal-error', 'An unexpected error occurred. It has been logged.'));
        exchange.release();
      },
    );
  };

  const server = createServer(
    {
      headersTimeout: headersMs,
      requestTimeout: requestMs,
      // How often node checks the two timeouts above; its 30 s default would let slow clients linger.
      connectionsCheckingInterval: Math.max(10, Math.min(1000, headersMs, requestMs)),
      maxHeaderSize: maxHeaderBytes,
      // Checked by refuseHead, to answer a problem+json like every other refusal.
      requireHostHeader: false,
      keepAlive: true,
      noDelay: true,
    },
    (req, res) => onRequest(req, res),
  );
  server.keepAliveTimeout = keepAliveMs;
  // A client that half-closes once it has sent its requests (nc -N, a proxy passing the FIN on)
  // still gets their answers: node:http otherwise ends the socket at the FIN, and requests
  // pipelined before it would be handled (a batch stored) with their answers lost. With this, node
  // closes after the last answer; a streamed answer ends at the FIN (pipe). (Long-standing, if
  // undocumented: node sets it false itself.)
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // node:http closes connections past server.maxConnections before anyone sees them. The cap is
  // kept below in 'connection', which may make room; the slack covers connections closed there
  // whose 'close' node:http has not yet counted.
  server.maxConnections = maxConnections + CONNECTION_SLACK;
  // One more than allowed, so refuseHead sees that there were too many.
  server.maxHeadersCount = maxHeaders + 1;
  server.setTimeout(idleMs, (socket) => socket.destroy());
  server.on('checkContinue', (req, res) => onRequest(req, res, true));
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    if (connections.get(req.socket)?.closing === true) return;
    const exchange = new Exchange(req, res, false);
    send(exchange, headerProblem('expectation-failed', `Only "Expect: 100-continue" is supported; got ${JSON.stringify(req.headers.expect)}.`, { header: 'Expect', code: 'expectation', message: 'must be 100-continue' }), true);
  });
  // CONNECT asks for a tunnel; this is not a proxy. Whatever follows the request is never parsed.
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    socket.on('error', () => undefined);
    refuseAfterAnswers(socket, problem('not-implemented', 'CONNECT is not served: this server is not a proxy.'), req);
  });
  /** Answers what node:http could not hand on as a request with a problem, then closes the connection. */
  const refuse = (socket: Socket, response: ApiResponse, request?: IncomingMessage) => {
    if (!socket.writable) return;
    const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    // An answer already being written (to the request the bytes broke) cannot be followed by another.
    if (pending?.headersSent === true) {
      socket.destroy();
      return;
    }
    socket.end(rawProblem(response));
    socket.destroySoon();
    const logged = request ?? pending?.req;
    logAccess(logged?.method ?? '', logged?.url ?? '', response.status, performance.now(), 0, undefined);
  };
  /**
   * Refuses bytes that came after a connection's complete requests. node:http hands on pipelined
   * requests as it parses them, so those may still be in the handler (a batch of visits being
   * stored): they are answered first, in order, then the refusal, then the close. A refusal sent
   * ahead would read as their answer, and the client would not know that they were stored. A
   * request whose body the bytes cut gets the refusal alone.
   */
  const refuseAfterAnswers = (socket: Socket, response: ApiResponse, request?: IncomingMessage) => {
    const state = connections.get(socket);
    // No request is parsed after the refused bytes: the open ones are all there will be.
    for (const exchange of state?.open ?? []) if (!exchange.req.complete) exchange.refused = true;
    if (state !== undefined && answersDue(state.open)) {
      state.refusal = { response, request };
      return;
    }
    refuse(socket, response, request);
  };
  // node:http adds where llhttp stopped and the packet it was parsing.
  server.on('clientError', (error: NodeJS.ErrnoException & { bytesParsed?: number; rawPacket?: Buffer }, socket: Socket) => {
    socket.on('error', () => undefined);
    const state = connections.get(socket);
    // llhttp stays failed: the bytes that still come raise the same error again.
    if (state?.refusal !== undefined) return;
    // Malformed requests and timeouts are answered; a reset or a client gone away is not.
    if (!socket.writable || (error.code !== undefined && !error.code.startsWith('HPE_') && error.code !== 'ERR_HTTP_REQUEST_TIMEOUT')) {
      socket.destroy();
      return;
    }
    refuseAfterAnswers(socket, clientErrorProblem(error.code, lineAt(error.rawPacket, error.bytesParsed)));
  });
  // At the cap, the oldest connection without a request in progress for evictAfterMs makes room:
  // otherwise clients that connect and never finish a head (slowloris) would hold every slot
  // until their head timeout and keep everyone else out. Failing that, the oldest whose body has
  // come for evictAfterMs too slowly to finish before the request timeout would cut it anyway (a
  // login body sent a byte every few seconds needs no token). Any other request in progress (an
  // upload going at a useful rate, an event stream) is never closed for another.
  const evictAfterMs = Math.min(EVICT_AFTER_MS, headersMs);
  const evictable = (now: number): Socket | undefined => {
    // Insertion order: the oldest connections first.
    for (const [socket, state] of connections) if (state.open.size === 0 && now - state.idleSince >= evictAfterMs) return socket;
    for (const [socket, { open, reading }] of connections) {
      if (open.size === 1 && reading !== undefined && !reading.body.complete() && now - reading.started >= evictAfterMs && stalling(reading, now, requestMs)) return socket;
    }
    return undefined;
  };
  // The cap being reached is logged once, then what happened at it over the next minute: an
  // operator sees an attack (or a cap set too low) without a line per connection.
  let atCap: { evicted: number; refused: number } | undefined;
  const noteCap = (outcome: 'evicted' | 'refused') => {
    if (atCap === undefined) {
      const counts = (atCap = { evicted: 0, refused: 0 });
      log?.({ time: new Date().toISOString(), level: 'warn', msg: 'connection cap reached', max_connections: maxConnections });
      setTimeout(() => {
        atCap = undefined;
        log?.({ time: new Date().toISOString(), level: 'warn', msg: 'connections at the cap in the last minute', max_connections: maxConnections, ...counts });
      }, CAP_LOG_MS).unref();
    }
    atCap[outcome]++;
  };
  server.on('connection', (socket: Socket) => {
    const now = performance.now();
    if (connections.size >= maxConnections) {
      const victim = evictable(now);
      noteCap(victim === undefined ? 'refused' : 'evicted');
      if (victim === undefined) {
        socket.destroy();
        return;
      }
      connections.delete(victim);
      victim.destroy();
    }
    const state: ConnectionState = { open: new Set(), idleSince: now, closing: false, reading: undefined, refusal: undefined };
    connections.set(socket, state);
    socket.once('close', () => connections.delete(socket));
  });
  // node:http's keep-alive timeout restarts with every byte received; a client sending `\r\n`
  // (which llhttp skips) every few seconds would hold its connection forever. So a connection with
  // no request in progress is closed once it has been without one for keepAliveMs + headersMs.
  const idleLimitMs = keepAliveMs + headersMs;
  const sweeper = setInterval(
    () => {
      const now = performance.now();
      for (const [socket, state] of connections) if (state.open.size === 0 && now - state.idleSince > idleLimitMs) socket.destroy();
    },
    Math.max(10, Math.min(1000, keepAliveMs, headersMs)),
  );
  sweeper.unref();

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    clearInterval(sweeper);
    throw error;
  }
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${address.port}`,
    host: address.address,
    port: address.port,
    server,
    inFlight: () => inFlight,
    bufferedBodyBytes: () => budget.held,
    close() {
      closing ??= (async () => {
        shuttingDown = true;
        // Event streams never finish by themselves: end them now (clients reconnect elsewhere with Last-Event-ID).
        for (const end of [...openStreams]) end();
        const cut = setTimeout(() => server.closeAllConnections(), graceMs);
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Keep-alive sockets become idle as their last response ends: close them as they do.
        const sweep = setInterval(() => server.closeIdleConnections(), 25);
        server.closeIdleConnections();
        const idle = inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => drainWaiters.push(resolve));
        // A handler that never settles must not hold the process forever: give up after the grace period.
        let giveUp: ReturnType<typeof setTimeout> | undefined;
        const deadline = new Promise<void>((resolve) => (giveUp = setTimeout(resolve, graceMs + 1000)));
        await Promise.race([Promise.all([closed, idle]), deadline]);
        clearTimeout(giveUp);
        clearTimeout(cut);
        clearInterval(sweep);
        clearInterval(sweeper);
      })();
      return closing;
    },
  };
}
