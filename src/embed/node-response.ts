// Recording a visit from Node's own request and response objects, as node:http, Express, Connect,
// Fastify (its raw reply) and @hono/node-server hand them over. Typed by the few members read, so
// the core stays platform-neutral; the Express, Fastify and Hono adapters share it.
import type { Agentwarden, RecordedResponse, RequestCheck } from './agentwarden.js';

/** What is read of Node's `IncomingMessage`. */
export interface NodeRequestLike {
  readonly socket?: { readonly destroyed?: boolean } | null;
  once(event: 'close', listener: () => void): unknown;
}

/** What is read of Node's `ServerResponse`. */
export interface NodeResponseLike {
  readonly statusCode: number;
  readonly headersSent: boolean;
  readonly destroyed?: boolean;
  /** Null while the response waits behind an earlier one on its connection (HTTP/1.1 pipelining), and after it finished. */
  readonly socket?: unknown;
  /** Whether the response was handed to the connection in full ('finish'). */
  readonly writableFinished?: boolean;
  getHeaders(): Readonly<Record<string, string | number | readonly string[] | undefined>>;
  on(event: 'close', listener: () => void): unknown;
  /** The response head as written (Node's, long-standing though underscored). */
  readonly _header?: unknown;
}

/**
 * Hands the visit of a checked request to the core's sink once its response is done: on the
 * response's 'close', which follows 'finish' on every response and comes alone when the client
 * went away. Also when that happened before this call (the client left while a verifier waited
 * on DNS or a key directory), and when a pipelined request queued behind another loses its
 * connection (Node then emits 'close' on its request only). A response whose head was never sent
 * is recorded without a status: Node's `statusCode` would say 200 for it (nor is a queued one's,
 * which the application may have written but which never left the server).
 * @example
 * const check = await core.check(request);
 * recordNodeResponse(core, check, req, res);
 */
export function recordNodeResponse(
  core: Agentwarden,
  check: RequestCheck,
  req: NodeRequestLike,
  res: NodeResponseLike,
  headersOf: () => RecordedResponse['headers'] = () => sentHeaders(res),
): void {
  // A status of 0 is no status: the visit keeps its duration (until the client left) and no status.
  const record = () => core.record(check, res.headersSent ? { status: res.statusCode, headers: headersOf() } : { status: 0 });
  if (res.destroyed === true) return record();
  // 'on', not 'once': a response closes once, and record ignores a repeat.
  res.on('close', record);
  if (res.socket === null) {
    req.once('close', () => {
      // The connection closed under a response still waiting its turn: nothing of it was sent,
      // even when the application had answered (its head is only buffered), and Node emits no
      // 'close' for it. A request whose body was read closes too, with its connection open, and a
      // response that got its turn is recorded on its own 'close'.
      if (req.socket?.destroyed === true && res.socket === null && res.writableFinished !== true) core.record(check, { status: 0 });
    });
  }
}

/**
 * The response headers sent. Node keeps those set with setHeader for getHeaders(); those given to
 * writeHead as an object (@hono/node-server, Fastify, an application writing its head itself) it
 * writes without keeping them, and then they are read back from the head written, without the
 * fields Node added itself.
 */
export function sentHeaders(res: Pick<NodeResponseLike, 'getHeaders' | '_header'>): RecordedResponse['headers'] {
  const kept = res.getHeaders();
  const head = res._header;
  if (typeof head !== 'string' || hasKeys(kept)) return kept;
  return parseHead(head);
}

function hasKeys(record: object): boolean {
  for (const _name in record) return true;
  return false;
}

/** Whether a character code is whitespace String#trim removes that a header value may hold (tab, space, obs-text's no-break space). */
const isBlank = (code: number) => code === 32 || code === 9 || code === 160;

/**
 * The fields node:http writes into a head itself, under these exact names, when the application
 * set none of them. An application's own spelling of them (lower-cased by @hono/node-server, as a
 * Fetch Headers keeps them) is kept; Node's own is left out, as getHeaders() leaves it out for
 * Express and Fastify: a visit records the headers the site sent.
 */
const NODE_OWN_FIELDS = new Set(['Date', 'Connection', 'Keep-Alive', 'Transfer-Encoding']);

/**
 * The "name: value" lines of a response head after its status line (names lower-cased, values
 * trimmed, repeated names as arrays, node:http's own fields left out), read in place: this runs
 * once per response.
 */
function parseHead(head: string): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  let start = head.indexOf('\r\n') + 2;
  if (start === 1) return headers;
  for (;;) {
    let end = head.indexOf('\r\n', start);
    if (end === -1) end = head.length;
    const colon = head.indexOf(':', start);
    if (colon > start && colon < end) {
      let from = colon + 1;
      let to = end;
      while (from < to && isBlank(head.charCodeAt(from))) from++;
      while (to > from && isBlank(head.charCodeAt(to - 1))) to--;
      const raw = head.slice(start, colon);
      if (!NODE_OWN_FIELDS.has(raw)) {
        const name = raw.toLowerCase();
        const value = head.slice(from, to);
        const previous = headers[name];
        headers[name] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
      }
    }
    if (end === head.length) return headers;
    start = end + 2;
  }
}

// RFC 9112 §3.2.2's absolute-form: a scheme and an authority before the path.
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/**
 * A request target as a path with its query: the absolute-form (`GET http://host/a?b`, which a
 * server must accept and frameworks route by its path) as its origin-form (`/a?b`); any other
 * target as it is.
 * @example
 * originFormPath('http://example.com/robots.txt'); // '/robots.txt'
 * originFormPath('/page?x=1'); // '/page?x=1'
 */
export function originFormPath(target: string): string {
  if (target.charCodeAt(0) === 47) return target;
  const authority = ABSOLUTE_FORM.exec(target);
  if (authority === null) return target;
  const rest = target.slice(authority[0].length);
  return rest.charCodeAt(0) === 47 ? rest : `/${rest}`;
}
