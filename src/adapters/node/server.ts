// The node transport of the API: an HTTP/1.1 server on node:net (one connection's work lives in
// http-connection.ts), timeouts against slow clients, graceful shutdown and JSON-line access logs.
// It replaces node:http, whose per-request objects and streams cost more than the API's own work
// (bench/http: 0.63 of a bare node:http server's rate on node:http, 0.90 on this server).
import { createServer, type AddressInfo, type Server } from 'node:net';
import type { ApiHandler } from '../../index.js';
import { HttpConnection, type AccessEntry, type ConnectionHost } from './http-connection.js';

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
  /** Request heads (request line and header fields) past this are refused with 431 (default 16 KiB, as node:http). */
  readonly maxHeaderBytes?: number;
  /** Requests with more header fields than this are refused with 431 (default 100). */
  readonly maxHeaders?: number;
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
  /** The listening node:net server. */
  readonly server: Server;
  /** Requests received and not yet answered. */
  inFlight(): number;
  /** Stops accepting, ends open response streams, lets in-flight requests finish (up to the grace period), then resolves. */
  close(): Promise<void>;
}

function positiveInteger(name: string, value: number | undefined, fallback: number, unit: 'milliseconds' | 'bytes' | 'header fields'): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer of ${unit}, got ${String(value)}`);
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

/** The path of a request target without its query (clients may put anything in a query). */
function logPath(target: string): string {
  let path = target;
  if (!path.startsWith('/')) {
    try {
      path = new URL(target).pathname;
    } catch {
      // An authority-form or asterisk-form target is logged as it came.
    }
  }
  const query = path.indexOf('?');
  return query === -1 ? path : path.slice(0, query);
}

/**
 * Starts the API on an HTTP/1.1 server and resolves once it listens.
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
  const graceMs = positiveInteger('shutdownGraceMs', options.shutdownGraceMs, 10_000, 'milliseconds');
  const log = options.log;
  const accessLog = options.accessLog;
  const connections = new Set<HttpConnection>();
  const drainWaiters: (() => void)[] = [];
  let inFlight = 0;
  let shuttingDown = false;

  const keepAliveMs = positiveInteger('timeouts.keepAliveMs', t.keepAliveMs, 5_000, 'milliseconds');
  const connectionHost: ConnectionHost = {
    handler: options.handler,
    maxBodyBytes: positiveInteger('maxBodyBytes', options.maxBodyBytes, 1024 * 1024, 'bytes'),
    maxHeaderBytes: positiveInteger('maxHeaderBytes', options.maxHeaderBytes, 16 * 1024, 'bytes'),
    maxHeaders: positiveInteger('maxHeaders', options.maxHeaders, 100, 'header fields'),
    headersMs: positiveInteger('timeouts.headersMs', t.headersMs, 10_000, 'milliseconds'),
    requestMs: positiveInteger('timeouts.requestMs', t.requestMs, 30_000, 'milliseconds'),
    keepAliveMs,
    idleMs: positiveInteger('timeouts.idleMs', t.idleMs, 60_000, 'milliseconds'),
    keepAliveHint: `keep-alive: timeout=${Math.max(1, Math.floor(keepAliveMs / 1000))}\r\n`,
    get shuttingDown() {
      return shuttingDown;
    },
    exchangeStarted: () => {
      inFlight++;
    },
    exchangeEnded: () => {
      if (--inFlight === 0) for (const waiter of drainWaiters.splice(0)) waiter();
    },
    // Ends each open streamed response; close() calls them all so shutdown need not wait out the grace period.
    openStreams: new Set(),
    logError:
      log === undefined
        ? undefined
        : (msg, error) => log({ time: new Date().toISOString(), level: 'error', msg, error: error instanceof Error ? error.stack : String(error) }),
    // Built as text rather than JSON.stringify of an object: it runs once per request. Only method
    // and path come from the client, and they are JSON-escaped; the query string is left out
    // (clients may put anything in it) and so are all headers (tokens live there).
    logAccess:
      accessLog === undefined
        ? undefined
        : (entry: AccessEntry) =>
            accessLog(
              `{"time":"${isoNow()}","level":"info","msg":"request","method":${jsonString(entry.method)},"path":${jsonString(logPath(entry.target))},` +
                `"status":${entry.status},"duration_ms":${Math.round((performance.now() - entry.started) * 100) / 100},"bytes_in":${entry.bytesIn},"project":${entry.projectId === undefined ? 'null' : jsonString(entry.projectId)}}`,
            ),
  };

  const server = createServer({ noDelay: true, keepAlive: true }, (socket) => {
    if (shuttingDown) {
      socket.destroy();
      return;
    }
    const connection = new HttpConnection(socket, connectionHost);
    connections.add(connection);
    socket.once('close', () => connections.delete(connection));
  });
  // One coarse timer checks every connection's deadlines (as node:http's connectionsCheckingInterval
  // does) instead of a timer per socket and request.
  const checkEveryMs = Math.max(10, Math.min(1000, connectionHost.headersMs, connectionHost.requestMs, keepAliveMs));
  const checker = setInterval(() => {
    const now = performance.now();
    for (const connection of connections) connection.checkTimeouts(now);
  }, checkEveryMs);
  checker.unref();

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    clearInterval(checker);
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
    close() {
      closing ??= (async () => {
        shuttingDown = true;
        // Event streams never finish by themselves: end them now (clients reconnect elsewhere with Last-Event-ID).
        for (const end of [...connectionHost.openStreams]) end();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Idle keep-alive connections close now; the others after their response (it says connection: close).
        for (const connection of connections) connection.closeIfIdle();
        const cut = setTimeout(() => {
          for (const connection of connections) connection.socket.destroy();
        }, graceMs);
        const idle = inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => drainWaiters.push(resolve));
        // A handler that never settles must not hold the process forever: give up after the grace period.
        let giveUp: ReturnType<typeof setTimeout> | undefined;
        const deadline = new Promise<void>((resolve) => (giveUp = setTimeout(resolve, graceMs + 1000)));
        await Promise.race([Promise.all([closed, idle]), deadline]);
        clearTimeout(giveUp);
        clearTimeout(cut);
        clearInterval(checker);
      })();
      return closing;
    },
  };
}
