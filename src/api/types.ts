// The plain request and response the API handler speaks, so any transport (the Node adapter, Workers,
// Deno, Bun, a test) can drive it without the core knowing which one it is.

/** Request header values as transports deliver them: a string, repeated values, or absent. */
export type ApiHeaderValue = string | readonly string[] | undefined;

/** One HTTP request, reduced to what the API reads. */
export interface ApiRequest {
  /** The request method, e.g. `POST` (compared case-sensitively, RFC 9110 §9.1). */
  readonly method: string;
  /** The request target's path, optionally with a query string (`/visits?x=1`). */
  readonly path: string;
  /** Request headers; names in any case, values string or string[]. */
  readonly headers: Readonly<Record<string, ApiHeaderValue>>;
  /** The raw request body; absent or empty when there is none. */
  readonly body?: Uint8Array;
  /**
   * A body the transport has not read yet (instead of `body`). The API calls it once, after the
   * request is routed and authenticated, so an unauthenticated or misrouted request costs no
   * buffering; it resolves to the bytes, or to the answer that refuses them (too large, busy).
   * `maxBytes` lowers the transport's body limit for this request (a route that takes small bodies);
   * `owner` (a project id, or a name for the admin or anonymous clients) is whose share of the
   * transport's buffered-body cap the body counts against.
   */
  readonly readBody?: (maxBytes?: number, owner?: string) => Promise<BodyRead>;
  /** The peer address of the connection, when the transport knows it (login rate limits key on it). */
  readonly remoteAddress?: string;
}

/** What reading a deferred request body gave: the bytes, or the response that refuses them. */
export type BodyRead = { readonly ok: true; readonly body: Uint8Array | undefined } | { readonly ok: false; readonly response: ApiResponse };

/** One HTTP response produced by the API. */
export interface ApiResponse {
  readonly status: number;
  /** Response headers, lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The body as text (UTF-8 on the wire), or a stream of bytes sent as they come (Server-Sent
   * Events): transports write each chunk at once and cancel the stream when the client goes away
   * or the server shuts down. Absent for 304 and HEAD-like answers.
   */
  readonly body?: string | ReadableStream<Uint8Array>;
  /** The project the request was authenticated as, for access logs; never sent to the client. */
  readonly projectId?: string;
}
