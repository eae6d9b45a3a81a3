// The node:http transport of the API: node requests to plain ApiRequests and back, body limits
// while reading, timeouts against slow clients, keep-alive, graceful shutdown and JSON-line logs.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { problem, type ApiHandler, type ApiResponse } from '../../index.js';

/** Timeouts in milliseconds against slow or idle clients. */
export interface ServerTimeouts {
  /** Whole request headers must arrive within this (slowloris; default 10,000). */
  readonly headersMs?: number;
  /** The whole request, body included, must arrive within this (default 30,000). */
  readonly requestMs?: number;
  /** An idle keep-alive connection is closed after this (default 5,000). */
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
  /** Bodies past this are refused with 413 while reading, before they are buffered (default 1 MiB). */
  readonly maxBodyBytes?: number;
  readonly timeouts?: ServerTimeouts;
  /** Receives one entry per unexpected event (a rejected handler); omit for none. */
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
  readonly server: Server;
  /** Requests received and not yet answered. */
  inFlight(): number;
  /** Stops accepting, ends open response streams, lets in-flight requests finish (up to the grace period), then resolves. */
  close(): Promise<void>;
}

function positiveMs(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer of milliseconds, got ${String(value)}`);
  return value;
}

// Characters JSON.stringify escapes in a string (RFC 8259 §7), the JS line separators and
// surrogates (a lone one is escaped by well-formed JSON.stringify).
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u2028\u2029\ud800-\udfff]/;

/** A JSON string literal; skips JSON.stringify for the common plain case. */
function jsonString(value: string): string {
  return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
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

/** The path of a request target; absolute-form targets (RFC 9112 §3.2.2) are reduced to path and query. */
function targetPath(url: string | undefined): string {
  if (url === undefined || url === '') return '/';
  if (url.startsWith('/')) return url;
  try {
    const parsed = new URL(url);
    return parsed.pathname + parsed.search;
  } catch {
    return url;
  }
}

/**
 * Starts the API on node:http and resolves once it listens.
 * @throws {RangeError} for an invalid port, body limit or timeout.
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
  const maxBodyBytes = positiveMs('maxBodyBytes', options.maxBodyBytes, 1024 * 1024);
  const t = options.timeouts ?? {};
  const headersMs = positiveMs('timeouts.headersMs', t.headersMs, 10_000);
  const requestMs = positiveMs('timeouts.requestMs', t.requestMs, 30_000);
  const keepAliveMs = positiveMs('timeouts.keepAliveMs', t.keepAliveMs, 5_000);
  const idleMs = positiveMs('timeouts.idleMs', t.idleMs, 60_000);
  const graceMs = positiveMs('shutdownGraceMs', options.shutdownGraceMs, 10_000);
  const log = options.log;
  const accessLog = options.accessLog;
  const handler = options.handler;
  let inFlight = 0;
  let shuttingDown = false;
  const drainWaiters: (() => void)[] = [];
  // Ends each open streamed response; close() calls them all so shutdown need not wait out the grace period.
  const openStreams = new Set<() => void>();

  const logAccess = (req: IncomingMessage, response: ApiResponse, started: number, bytesIn: number) => {
    if (accessLog !== undefined) {
      const path = targetPath(req.url);
      const query = path.indexOf('?');
      // Built as text rather than JSON.stringify of an object: it runs once per request.
      // Only method and path come from the client, and they are JSON-escaped; the query string
      // is left out (clients may put anything in it) and so are all headers (tokens live there).
      accessLog(
        `{"time":"${isoNow()}","level":"info","msg":"request","method":${jsonString(req.method ?? '')},"path":${jsonString(query === -1 ? path : path.slice(0, query))},` +
          `"status":${response.status},"duration_ms":${Math.round((performance.now() - started) * 100) / 100},"bytes_in":${bytesIn},"project":${response.projectId === undefined ? 'null' : jsonString(response.projectId)}}`,
      );
    }
  };

  /**
   * Writes a streamed body chunk by chunk as the handler produces it (Server-Sent Events): no
   * buffering, backpressure through 'drain', the stream cancelled when the client disconnects or
   * the server shuts down, and the access-log line written when the stream ends.
   */
  const pipe = (req: IncomingMessage, res: ServerResponse, response: ApiResponse, body: ReadableStream<Uint8Array>, started: number, bytesIn: number) => {
    const reader = body.getReader();
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      openStreams.delete(end);
      reader.cancel().catch(() => undefined);
      if (!res.destroyed && !res.writableEnded) res.end();
      // A client that went away may leave its socket half-open (no FIN seen yet): cut it.
      else if (!res.writableFinished) res.destroy();
      logAccess(req, response, started, bytesIn);
    };
    res.once('close', end);
    if (shuttingDown || req.method === 'HEAD') {
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
      log?.({ time: new Date().toISOString(), level: 'error', msg: 'response stream failed', error: error instanceof Error ? error.stack : String(error) });
      if (!ended) res.destroy();
      end();
    });
  };

  const send = (req: IncomingMessage, res: ServerResponse, response: ApiResponse, started: number, bytesIn: number, closeAfter: boolean) => {
    // While shutting down, or after refusing an unread body, the connection must not be reused.
    res.writeHead(response.status, shuttingDown || closeAfter ? { ...response.headers, connection: 'close' } : response.headers);
    const body = response.body;
    if (typeof body === 'object') {
      if (response.status !== 304) return pipe(req, res, response, body, started, bytesIn);
      body.cancel().catch(() => undefined);
      res.end();
    } else {
      res.end(response.status === 304 || req.method === 'HEAD' ? undefined : body);
    }
    logAccess(req, response, started, bytesIn);
  };

  const finish = () => {
    inFlight--;
    if (inFlight === 0) for (const waiter of drainWaiters.splice(0)) waiter();
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    // A request is in flight until its response is closed AND its handler has settled: a client
    // that disconnects early must not let shutdown close the stores under a running handler.
    inFlight++;
    let holds = 1;
    const release = () => {
      if (--holds === 0) finish();
    };
    res.once('close', release);
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > maxBodyBytes) {
      // Refuse before reading (RFC 9110 §15.5.14); the unread body makes the connection unusable.
      send(req, res, problem('payload-too-large', `The body has ${declared} bytes; at most ${maxBodyBytes} are accepted.`), started, 0, true);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > maxBodyBytes) {
        refused = true;
        chunks.length = 0;
        send(req, res, problem('payload-too-large', `The body is larger than ${maxBodyBytes} bytes.`), started, size, true);
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', () => {
      // A client that aborts mid-body gets no answer; nothing was handed to the API.
      if (!res.headersSent) res.destroy();
    });
    req.on('end', () => {
      if (refused) return;
      const body = chunks.length === 0 ? undefined : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      holds++;
      handler({ method: req.method ?? 'GET', path: targetPath(req.url), headers: req.headers, body, remoteAddress: req.socket.remoteAddress }).then(
        (response) => {
          if (!res.destroyed) send(req, res, response, started, size, false);
        },
        (error: unknown) => {
          // The API handler never rejects; if it ever does, answer a bare 500 and log.
          log?.({ time: new Date().toISOString(), level: 'error', msg: 'handler rejected', error: error instanceof Error ? error.stack : String(error) });
          if (!res.destroyed) send(req, res, problem('internal-error', 'An unexpected error occurred. It has been logged.'), started, size, false);
        },
      ).finally(release);
    });
  };

  const server = createServer(
    {
      headersTimeout: headersMs,
      requestTimeout: requestMs,
      // How often node checks the two timeouts above; its 30 s default would let slow clients linger.
      connectionsCheckingInterval: Math.min(1000, headersMs),
      keepAlive: true,
    },
    onRequest,
  );
  server.keepAliveTimeout = keepAliveMs;
  server.setTimeout(idleMs, (socket) => socket.destroy());
  server.on('clientError', (_error, socket) => {
    // Malformed requests and timeouts: answer 400/408 when the socket still can, never crash.
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${address.port}`,
    host: address.address,
    port: address.port,
    server,
    inFlight: () => inFlight,
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
      })();
      return closing;
    },
  };
}
