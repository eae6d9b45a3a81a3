// The plain request and response the API handler speaks, so any transport (node:http, Workers,
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
  /** The peer address of the connection, when the transport knows it (login rate limits key on it). */
  readonly remoteAddress?: string;
}

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
