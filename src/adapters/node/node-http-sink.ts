// The HTTP sink on Node, posting through node:http and node:https instead of the global fetch
// (undici). In a loaded app, fetch cost about 4 µs of CPU a request more, spread over the batches:
// bench/middleware.mjs measured Fastify at 0.55 of the bare app against 0.48, Hono 0.47 against
// 0.41. The sink needs one kind of request (a POST with a byte body, an answer read up to a
// bound), so this is the fetch it calls, not a general one.
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { createHttpSink, type HttpSink, type HttpSinkOptions } from '../../index.js';

// Connections are kept between batches, and dropped after 4 s idle: before a server's own idle
// limit (node:http's default keepAliveTimeout is 5 s) could close one as a batch is written on it.
const AGENT_OPTIONS = { keepAlive: true, timeout: 4_000 };
const httpAgent = new HttpAgent(AGENT_OPTIONS);
const httpsAgent = new HttpsAgent(AGENT_OPTIONS);

// Answers that have no body (RFC 9110 §6.4.1), which the Response constructor refuses one for.
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError');
}

/** The answer as a Fetch Response; its body streams, so a reader that stops early stops the download. */
function toResponse(answer: IncomingMessage): Response {
  const status = answer.statusCode ?? 0;
  const headers = new Headers();
  for (let i = 0; i < answer.rawHeaders.length; i += 2) headers.append(answer.rawHeaders[i]!, answer.rawHeaders[i + 1]!);
  if (NULL_BODY_STATUSES.has(status)) {
    answer.resume();
    return new Response(null, { status, statusText: answer.statusMessage ?? '', headers });
  }
  return new Response(Readable.toWeb(answer) as ReadableStream<Uint8Array>, { status, statusText: answer.statusMessage ?? '', headers });
}

/**
 * A fetch for the HTTP sink's requests, over node:http and node:https with kept-alive
 * connections: a string or byte body, headers as a plain object, an AbortSignal; redirects are
 * never followed (the sink asks for `redirect: 'manual'`). Other bodies are refused.
 * @throws {TypeError} (as a rejected promise) for a body that is not a string or bytes, or a URL that is not http(s).
 */
export const nodeHttpFetch: typeof fetch = (input, init = {}) =>
  new Promise<Response>((resolve, reject) => {
    const url = new URL(input instanceof Request ? input.url : input);
    const body = init.body;
    if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array)) {
      return reject(new TypeError('nodeHttpFetch sends a string or Uint8Array body only'));
    }
    const request = url.protocol === 'https:' ? httpsRequest : url.protocol === 'http:' ? httpRequest : undefined;
    if (request === undefined) return reject(new TypeError(`nodeHttpFetch fetches http(s) URLs only, got ${url.protocol}`));
    const signal = init.signal ?? undefined;
    if (signal?.aborted) return reject(abortError(signal));
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    if (body !== undefined && body !== null) headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
    const options: RequestOptions = { method: init.method ?? 'GET', headers, agent: url.protocol === 'https:' ? httpsAgent : httpAgent };
    let sent: ClientRequest;
    // An abort ends the request, and the answer's body with it, whenever it comes.
    const onAbort = () => sent.destroy(abortError(signal!));
    sent = request(url, options, (answer) => {
      answer.once('close', () => signal?.removeEventListener('abort', onAbort));
      try {
        resolve(toResponse(answer));
      } catch (error) {
        // A status the Fetch API cannot represent (600 and up): no answer the sink can read.
        answer.destroy();
        reject(error);
      }
    });
    sent.once('error', (error) => {
      signal?.removeEventListener('abort', onAbort);
      reject(error);
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    sent.end(body ?? undefined);
  });

/**
 * `createHttpSink` posting through node:http and node:https (`nodeHttpFetch`): the same options,
 * queue and retries, with less CPU per request in a Node server. A `fetch` option still wins.
 * @throws {TypeError | RangeError} for a bad option (the message names it).
 * @example
 * import { createNodeHttpSink } from 'agentwarden/node';
 * const sink = createNodeHttpSink({ url: 'http://127.0.0.1:8080', token: process.env.AGENTWARDEN_TOKEN! });
 */
export function createNodeHttpSink(options: HttpSinkOptions): HttpSink {
  return createHttpSink({ ...options, fetch: options?.fetch ?? nodeHttpFetch });
}
