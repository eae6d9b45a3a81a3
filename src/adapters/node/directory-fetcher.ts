// The node adapter's SSRF-safe outbound requests: the key-directory fetcher (https only, public
// addresses checked at connect time, no redirects, caps) and, under the same address rules, the
// webhook sender (POST; any port; http only to loopback when loopback is allowed).
import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Socket } from 'node:net';
import { DirectoryFetchError } from '../../index.js';
import type { DirectoryFetcher, DirectoryResponse } from '../../index.js';
import { classifyAddress } from './address-policy.js';

/** Resolves a host name to its addresses; injectable so tests never use public DNS. */
export type DirectoryLookup = (hostname: string) => string | readonly string[] | Promise<string | readonly string[]>;

/** Options of createSafeDirectoryFetcher; every one has a safe default. */
export interface SafeDirectoryFetcherOptions {
  /** Deadline for the whole fetch, from the call to the last body byte (ms). Default 3000. */
  readonly timeoutMs?: number;
  /** Deadline for DNS + TCP + TLS handshake (ms), at most timeoutMs. Default 2000 (or timeoutMs if smaller). */
  readonly connectTimeoutMs?: number;
  /** Largest accepted body in bytes; the connection is cut as soon as it is exceeded. Default 65536. */
  readonly maxBytes?: number;
  /** Ports a directory URL may name. Default [443] only: a Signature-Agent must not aim us at other services. */
  readonly ports?: readonly number[];
  /** User-Agent sent with every directory request. */
  readonly userAgent?: string;
  /** Host-name resolver, called once per fetch at connect time. Default: the system resolver (dns.lookup). */
  readonly lookup?: DirectoryLookup;
  /** FOR TESTS ONLY: also allow loopback addresses (127/8, ::1, localhost). Never set in production. */
  readonly allowLoopback?: boolean;
  /** Trusted CA certificates (PEM), replacing the system roots: for tests and private PKI. */
  readonly ca?: string | Uint8Array | readonly (string | Uint8Array)[];
}

/** The Accept header of directory requests: the registered media type first (directory draft-01+), JSON as fallback. */
export const DIRECTORY_ACCEPT = 'application/http-message-signatures-directory+json, application/json;q=0.9';

const DEFAULT_USER_AGENT = 'agentwarden (Web Bot Auth key-directory fetcher)';
// setTimeout fires at once for delays above 2^31 - 1 ms, which would turn a typo into no timeout.
const MAX_DELAY_MS = 2 ** 31 - 1;

interface Policy {
  /** GET a directory (only 2xx bodies are read) or POST a webhook (only the status is read). */
  readonly mode: 'directory' | 'webhook';
  readonly timeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly maxBytes: number;
  /** undefined: any port. */
  readonly ports: ReadonlySet<number> | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly lookup: DirectoryLookup;
  readonly allowLoopback: boolean;
  readonly ca: string | Buffer | (string | Buffer)[] | undefined;
}

interface Target {
  readonly https: boolean;
  readonly host: string;
  readonly port: number;
  readonly path: string;
}

function positiveInteger(name: string, value: unknown, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw new TypeError(`"${name}" expected a number, got ${typeof value}`);
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new RangeError(`"${name}" expected an integer from 1 to ${max}, got ${value}`);
  }
  return value;
}

function toCa(value: unknown): string | Buffer | (string | Buffer)[] | undefined {
  if (value === undefined) return undefined;
  const one = (item: unknown): string | Buffer => {
    if (typeof item === 'string') return item;
    if (item instanceof Uint8Array) return Buffer.from(item);
    throw new TypeError(`"ca" expected PEM strings or Uint8Arrays, got ${typeof item}`);
  };
  return Array.isArray(value) ? value.map(one) : one(value);
}

function compilePolicy(options: SafeDirectoryFetcherOptions, mode: Policy['mode'] = 'directory'): Policy {
  if (typeof options !== 'object' || options === null) throw new TypeError(`options expected an object, got ${String(options)}`);
  const timeoutMs = positiveInteger('timeoutMs', options.timeoutMs, 3000, MAX_DELAY_MS);
  const connectTimeoutMs = positiveInteger('connectTimeoutMs', options.connectTimeoutMs, Math.min(2000, timeoutMs), MAX_DELAY_MS);
  if (connectTimeoutMs > timeoutMs) {
    throw new RangeError(`"connectTimeoutMs" expected at most timeoutMs (${timeoutMs}), got ${connectTimeoutMs}`);
  }
  const maxBytes = positiveInteger('maxBytes', options.maxBytes, 65_536, 2 ** 30);
  const ports = options.ports ?? [443];
  if (!Array.isArray(ports)) throw new TypeError(`"ports" expected an array of port numbers, got ${typeof ports}`);
  if (ports.length === 0) throw new RangeError('"ports" expected at least one port, got []');
  for (const port of ports) {
    if (!Number.isInteger(port) || port < 1 || port > 65_535) {
      throw new RangeError(`"ports" expected integers from 1 to 65535, got ${String(port)}`);
    }
  }
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
  if (typeof userAgent !== 'string') throw new TypeError(`"userAgent" expected a string, got ${typeof userAgent}`);
  // RFC 9110 §5.5: field values are visible ASCII, spaces and tabs; no CR/LF header injection.
  if (!/^[\x20-\x7e]+$/.test(userAgent)) throw new RangeError(`"userAgent" expected printable ASCII, got ${JSON.stringify(userAgent)}`);
  const lookup = options.lookup ?? systemLookup;
  if (typeof lookup !== 'function') throw new TypeError(`"lookup" expected a function, got ${typeof lookup}`);
  const allowLoopback = options.allowLoopback ?? false;
  if (typeof allowLoopback !== 'boolean') throw new TypeError(`"allowLoopback" expected a boolean, got ${typeof allowLoopback}`);
  return {
    mode,
    timeoutMs,
    connectTimeoutMs,
    maxBytes,
    // A webhook is the site owner's own receiver, on whatever port it listens; the address rules hold all the same.
    ports: mode === 'webhook' && options.ports === undefined ? undefined : new Set(ports),
    // No Cookie, no Authorization: the request carries nothing of ours. Identity encoding so the
    // size cap counts the bytes we keep (no decompression bombs).
    headers: mode === 'webhook' ? { 'user-agent': userAgent } : { accept: DIRECTORY_ACCEPT, 'accept-encoding': 'identity', 'user-agent': userAgent },
    lookup,
    allowLoopback,
    ca: toCa(options.ca),
  };
}

async function systemLookup(hostname: string): Promise<readonly string[]> {
  const answers = await dnsLookup(hostname, { all: true });
  return answers.map((a) => a.address);
}

function isAllowedAddress(address: string, policy: Policy, https = true): boolean {
  const kind = classifyAddress(address);
  if (!https) return kind === 'loopback' && policy.allowLoopback;
  return kind === 'public' || (kind === 'loopback' && policy.allowLoopback);
}

// RFC 1035 §2.3.1 / RFC 1123 §2.1 letter-digit-hyphen labels; the URL parser has already
// lowercased the name and turned IDNs into xn-- labels.
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function checkUrl(url: string, policy: Policy): Target {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DirectoryFetchError('refused-url', 'not a valid URL');
  }
  // Plain http only for a webhook to a loopback receiver (development and tests): the address
  // check below then admits loopback only, since nothing else may be reached without TLS.
  const plainLoopback = parsed.protocol === 'http:' && policy.mode === 'webhook' && policy.allowLoopback;
  if (parsed.protocol !== 'https:' && !plainLoopback) throw new DirectoryFetchError('refused-url', `scheme ${parsed.protocol} is not https:`);
  // Userinfo would be sent as credentials or hide the real host from a reader of the URL.
  if (parsed.username !== '' || parsed.password !== '') throw new DirectoryFetchError('refused-url', 'URL carries credentials');
  const port = parsed.port === '' ? (plainLoopback ? 80 : 443) : Number(parsed.port);
  if (policy.ports !== undefined && !policy.ports.has(port)) throw new DirectoryFetchError('refused-url', `port ${port} is not allowed`);
  const path = `${parsed.pathname}${parsed.search}`;
  let host = parsed.hostname;
  // The WHATWG parser has already turned 127.1, 2130706433, 0x7f000001 and 0177.0.0.1 into
  // 127.0.0.1 and compressed IPv6, so literals are checked in their canonical form.
  if (host.startsWith('[')) host = host.slice(1, -1);
  const https = !plainLoopback;
  if (isIP(host) !== 0) {
    // Node connects to IP literals without calling lookup: this is the only check they get.
    if (!isAllowedAddress(host, policy) || (!https && classifyAddress(host) !== 'loopback')) {
      throw new DirectoryFetchError('refused-address', `${host} is a ${classifyAddress(host)} address${https ? '' : ' (plain http reaches loopback only)'}`);
    }
    return { https, host, port, path };
  }
  if (!https && host !== 'localhost') throw new DirectoryFetchError('refused-url', 'plain http reaches loopback only (localhost, 127.0.0.0/8, ::1)');
  // A trailing dot names the same host but slips past string comparisons and certificate names.
  if (host.endsWith('.')) throw new DirectoryFetchError('refused-url', 'host name ends with a dot');
  const labels = host.split('.');
  if (host.length > 253 || !labels.every((label) => LABEL.test(label))) {
    throw new DirectoryFetchError('refused-url', `host name ${JSON.stringify(host)} is not a DNS name`);
  }
  // RFC 6761 §6.3: localhost names are loopback whatever DNS says.
  if ((host === 'localhost' || host.endsWith('.localhost')) && !policy.allowLoopback) {
    throw new DirectoryFetchError('refused-address', `${host} is a loopback name`);
  }
  // A single label is completed by the resolver's search domains: an intranet name.
  if (labels.length < 2 && host !== 'localhost') throw new DirectoryFetchError('refused-url', `host name ${host} has a single label`);
  return { https, host, port, path };
}

type NodeLookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

// Resolves and checks a name; never rejects, so a misbehaving injected lookup cannot hang the socket.
async function checkedAddresses(hostname: string, policy: Policy, https: boolean): Promise<DirectoryFetchError | LookupAddress[]> {
  let answer: unknown;
  try {
    answer = await policy.lookup(hostname);
  } catch (error) {
    return new DirectoryFetchError('network', `lookup of ${hostname} failed: ${errorCode(error)}`);
  }
  const addresses: unknown[] = typeof answer === 'string' ? [answer] : Array.isArray(answer) ? answer : [];
  if (addresses.length === 0) return new DirectoryFetchError('network', `${hostname} has no addresses`);
  const entries: LookupAddress[] = [];
  for (const address of addresses) {
    const family = typeof address === 'string' ? isIP(address) : 0;
    if (family === 0) return new DirectoryFetchError('network', `lookup of ${hostname} returned a non-address`);
    const text = address as string;
    // One refused address refuses the name: a host that mixes public and internal answers is
    // a rebinding attempt, not a directory.
    if (!isAllowedAddress(text, policy, https)) {
      return new DirectoryFetchError('refused-address', `${hostname} resolves to ${text}, a ${classifyAddress(text)} address`);
    }
    entries.push({ address: text, family });
  }
  return entries;
}

// The lookup handed to the socket: the addresses it returns are the ones connected to, so
// checking them here (not in an earlier, separate resolution) defeats DNS rebinding.
function guardedLookup(policy: Policy, https: boolean): (hostname: string, options: LookupOptions, callback: NodeLookupCallback) => void {
  return (hostname, options, callback) => {
    void checkedAddresses(hostname, policy, https).then((result) => {
      // Deliver outside the promise chain: a throwing callback must not look like a lookup failure.
      process.nextTick(() => {
        if (!Array.isArray(result)) return callback(result, '');
        const first = result[0] as LookupAddress;
        return options.all === true ? callback(null, result) : callback(null, first.address, first.family);
      });
    });
  };
}

function errorCode(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') return error.code;
  return error instanceof Error ? error.message : String(error);
}

function toHeaders(raw: readonly string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  return headers;
}

/** What one request sends beyond the policy's own headers: a webhook's POST body and headers. */
interface Outgoing {
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Uint8Array;
}

function fetchOnce(target: Target, signal: AbortSignal | undefined, policy: Policy, outgoing: Outgoing = {}): Promise<DirectoryResponse> {
  return new Promise<DirectoryResponse>((resolve, reject) => {
    let settled = false;
    const timers: ReturnType<typeof setTimeout>[] = [];
    const onAbort = (): void => fail(new DirectoryFetchError('timeout', 'aborted by the caller'));
    const cleanup = (): void => {
      for (const timer of timers) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const fail = (error: DirectoryFetchError): void => {
      if (settled) return;
      settled = true;
      cleanup();
      // Destroying the request also destroys the socket: no further bytes are read.
      request.destroy();
      reject(error);
    };
    const succeed = (response: DirectoryResponse): void => {
      if (settled) return;
      settled = true;
      cleanup();
      resolve(response);
    };

    const request = (target.https ? httpsRequest : httpRequest)({
      host: target.host,
      port: target.port,
      path: target.path,
      method: policy.mode === 'webhook' ? 'POST' : 'GET',
      headers: { ...outgoing.headers, ...policy.headers },
      // A fresh connection per fetch: no pooled socket chosen by an earlier resolution.
      agent: false,
      lookup: guardedLookup(policy, target.https),
      rejectUnauthorized: true,
      ...(policy.ca === undefined ? {} : { ca: policy.ca }),
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    timers.push(
      setTimeout(() => fail(new DirectoryFetchError('timeout', `no complete answer within ${policy.timeoutMs} ms`)), policy.timeoutMs),
    );
    const connectTimer = setTimeout(
      () => fail(new DirectoryFetchError('timeout', `not connected within ${policy.connectTimeoutMs} ms`)),
      policy.connectTimeoutMs,
    );
    timers.push(connectTimer);

    request.on('socket', (socket: Socket) => {
      // Second line of defence: the peer actually connected to must pass the same check.
      socket.once('connect', () => {
        const remote = socket.remoteAddress;
        if (remote === undefined || !isAllowedAddress(remote, policy, target.https)) {
          fail(new DirectoryFetchError('refused-address', `connected to ${String(remote)}, a ${classifyAddress(remote ?? '')} address`));
        } else if (!target.https) clearTimeout(connectTimer);
      });
      socket.once('secureConnect', () => clearTimeout(connectTimer));
    });
    request.on('error', (error: Error) => {
      fail(error instanceof DirectoryFetchError ? error : new DirectoryFetchError('network', `request failed: ${errorCode(error)}`));
    });
    request.on('response', (response: IncomingMessage) => onResponse(response));
    request.end(outgoing.body);

    function onResponse(response: IncomingMessage): void {
      const status = response.statusCode ?? 0;
      if (policy.mode === 'webhook') {
        // A receiver's answer is its status; its body is not read (nothing to cap, nothing to parse).
        const headers = toHeaders(response.rawHeaders);
        response.destroy();
        request.destroy();
        if (status >= 300 && status < 400) return fail(new DirectoryFetchError('redirect', `answered ${status}, redirects are not followed`));
        return succeed({ status, headers, body: new Uint8Array(0) });
      }
      // Directory drafts: "MUST NOT automatically follow HTTP redirects". 304 is not a redirect
      // (and we send no conditional request), so it is a plain unexpected status.
      if (status >= 300 && status < 400 && status !== 304) {
        return fail(new DirectoryFetchError('redirect', `answered ${status}, redirects are not followed`));
      }
      if (status < 200 || status > 299) return fail(new DirectoryFetchError('http-status', `answered ${status}`));
      const declared = response.headers['content-length'];
      if (declared !== undefined && Number(declared) > policy.maxBytes) {
        return fail(new DirectoryFetchError('too-large', `Content-Length ${declared} exceeds ${policy.maxBytes} bytes`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > policy.maxBytes) return fail(new DirectoryFetchError('too-large', `body exceeds ${policy.maxBytes} bytes`));
        chunks.push(chunk);
      });
      response.on('error', (error: Error) => fail(new DirectoryFetchError('network', `body failed: ${errorCode(error)}`)));
      response.on('close', () => {
        if (!response.complete) fail(new DirectoryFetchError('network', 'connection closed before the body ended'));
      });
      response.on('end', () => {
        let headers: Headers;
        try {
          headers = toHeaders(response.rawHeaders);
        } catch {
          return fail(new DirectoryFetchError('network', 'malformed response header'));
        }
        // A fresh array, not a view of Buffer's shared pool.
        const body = new Uint8Array(size);
        let offset = 0;
        for (const chunk of chunks) {
          body.set(chunk, offset);
          offset += chunk.length;
        }
        return succeed({ status, headers, body });
      });
    }
  });
}

/**
 * Creates a DirectoryFetcher for Web Bot Auth key directories named by untrusted
 * `Signature-Agent` headers: https only, no credentials, allowed ports only, public unicast
 * addresses only (checked on the address actually connected to), no redirects, a body size cap
 * and connect/total deadlines. Every failure is a DirectoryFetchError with a closed code.
 *
 * @throws {TypeError | RangeError} when an option has the wrong type or value (the message names it).
 * @example
 * const fetchDirectory = createSafeDirectoryFetcher({ timeoutMs: 3000, maxBytes: 65_536 });
 * const { status, headers, body } = await fetchDirectory('https://bot.example/.well-known/http-message-signatures-directory', {});
 */
export function createSafeDirectoryFetcher(options: SafeDirectoryFetcherOptions = {}): DirectoryFetcher {
  const policy = compilePolicy(options);
  return async (url, init) => {
    if (typeof url !== 'string') throw new DirectoryFetchError('refused-url', 'URL is not a string');
    const signal = init?.signal;
    if (signal?.aborted === true) throw new DirectoryFetchError('timeout', 'aborted by the caller');
    return fetchOnce(checkUrl(url, policy), signal, policy);
  };
}

/** Sends one webhook: POST of a body with headers; resolves to the receiver's status. */
export type WebhookSender = (
  url: string,
  request: { readonly headers: Readonly<Record<string, string>>; readonly body: Uint8Array; readonly signal?: AbortSignal },
) => Promise<{ readonly status: number; readonly retryAfterSeconds?: number }>;

/** Options of createSafeWebhookSender: the fetcher's, but any port is allowed unless `ports` says otherwise. */
export type SafeWebhookSenderOptions = SafeDirectoryFetcherOptions;

/**
 * Creates the webhook sender under the key-directory fetcher's SSRF rules: https to public
 * addresses only (checked on the address connected to, so DNS rebinding cannot reach inside),
 * no credentials in the URL, no redirects followed, connect and total deadlines. With
 * `allowLoopback` (development, tests) loopback receivers are admitted too, over plain http as
 * well; private, link-local, metadata and other special addresses never are. Failures throw
 * DirectoryFetchError with a closed code; any status is an answer, not a failure.
 * @throws {TypeError | RangeError} when an option has the wrong type or value.
 * @example
 * const send = createSafeWebhookSender({ timeoutMs: 10_000 });
 * const { status } = await send('https://hooks.example.com/agentwarden', { headers, body });
 */
export function createSafeWebhookSender(options: SafeWebhookSenderOptions = {}): WebhookSender {
  const policy = compilePolicy(options, 'webhook');
  return async (url, request) => {
    if (request.signal?.aborted === true) throw new DirectoryFetchError('timeout', 'aborted by the caller');
    const { status, headers } = await fetchOnce(checkUrl(url, policy), request.signal, policy, { headers: request.headers, body: request.body });
    // RFC 9110 §10.2.3: delay-seconds (an HTTP-date is rare from receivers and left out).
    const retryAfter = headers.get('retry-after');
    return retryAfter !== null && /^\d{1,9}$/.test(retryAfter.trim()) ? { status, retryAfterSeconds: Number(retryAfter.trim()) } : { status };
  };
}

/**
 * Checks a webhook URL against the sender's rules without sending anything: a problem to show
 * the user, or undefined when the URL may be used (host names are checked again at each connect).
 * @example
 * webhookUrlProblem('http://10.0.0.5/hook', { allowLoopback: false }); // 'scheme http: is not https:'
 */
export function webhookUrlProblem(url: string, options: { readonly allowLoopback?: boolean } = {}): string | undefined {
  try {
    checkUrl(url, compilePolicy({ allowLoopback: options.allowLoopback ?? false }, 'webhook'));
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
