// Parses an HTTP/1.x request head (RFC 9112 §2–§6): request line, header fields and how the body
// is framed. Strict on purpose: anything two parsers could read differently (request smuggling)
// is refused rather than guessed at.

/** How the request body is delimited (RFC 9112 §6.3). */
export type BodyFraming = { readonly kind: 'none' } | { readonly kind: 'length'; readonly length: number } | { readonly kind: 'chunked' };

/** A parsed request head. Header names are lower case; a repeated header becomes an array. */
export interface RequestHead {
  readonly method: string;
  readonly target: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  readonly minorVersion: 0 | 1;
  readonly headers: Record<string, string | string[]>;
  readonly framing: BodyFraming;
  /** Whether the connection may carry another request after this one. */
  readonly keepAlive: boolean;
  /** The client waits for `100 Continue` before sending the body (RFC 9110 §10.1.1). */
  readonly expectsContinue: boolean;
}

/** Why a head was refused; `status` is the HTTP status to answer with. */
export type HeadRefusal =
  | { readonly status: 400; readonly reason: 'malformed-request-line' | 'malformed-header' | 'missing-host' | 'ambiguous-framing' | 'invalid-content-length'; readonly detail: string }
  | { readonly status: 413; readonly reason: 'body-too-large'; readonly detail: string }
  | { readonly status: 417; readonly reason: 'unsupported-expectation'; readonly detail: string }
  | { readonly status: 431; readonly reason: 'too-many-headers'; readonly detail: string }
  | { readonly status: 501; readonly reason: 'unsupported-transfer-coding'; readonly detail: string }
  | { readonly status: 505; readonly reason: 'unsupported-version'; readonly detail: string };

export type HeadResult = { readonly ok: true; readonly head: RequestHead } | ({ readonly ok: false } & HeadRefusal);

// RFC 9110 §5.6.2 token characters (method and field names).
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Bytes a head may hold besides CRLF line ends are HTAB, visible ASCII, SP and obs-text (RFC 9110
// §5.5). Everything else (NUL, a CR or LF outside a CRLF pair, other controls, DEL) is refused,
// never stripped: two parsers that strip differently see different requests.
const FORBIDDEN = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n)|(?<!\r)\n/;
// An origin-form, absolute-form, authority-form or asterisk-form target: visible ASCII only.
const TARGET = /^[\x21-\x7e]+$/;
const DIGITS = /^[0-9]+$/;

function refuse<R extends HeadRefusal>(refusal: R): { ok: false } & R {
  return { ok: false, ...refusal };
}

/** The comma-separated list elements of a header (RFC 9110 §5.6.1), lower case, empty ones dropped. */
function listElements(value: string | string[]): string[] {
  const joined = typeof value === 'string' ? value : value.join(',');
  const out: string[] = [];
  for (const part of joined.split(',')) {
    const element = part.trim().toLowerCase();
    if (element !== '') out.push(element);
  }
  return out;
}

function trimOws(text: string, start: number, end: number): string {
  while (start < end && (text.charCodeAt(start) === 32 || text.charCodeAt(start) === 9)) start++;
  while (end > start && (text.charCodeAt(end - 1) === 32 || text.charCodeAt(end - 1) === 9)) end--;
  return text.slice(start, end);
}

/**
 * Parses a request head: `text` is the latin1 decoding of its bytes, without the final empty line
 * (everything before the first CRLFCRLF). `maxBodyBytes` refuses a declared length past the limit
 * before any body byte is read.
 * @example
 * parseRequestHead('GET / HTTP/1.1\r\nHost: x', { maxHeaders: 100, maxBodyBytes: 1024 });
 * // { ok: true, head: { method: 'GET', target: '/', minorVersion: 1, headers: { host: 'x' }, ... } }
 */
export function parseRequestHead(text: string, limits: { readonly maxHeaders: number; readonly maxBodyBytes: number }): HeadResult {
  if (FORBIDDEN.test(text)) return refuse({ status: 400, reason: 'malformed-header', detail: 'The request head holds a control character or a bare CR or LF.' });
  let lineEnd = text.indexOf('\r\n');
  if (lineEnd === -1) lineEnd = text.length;
  const requestLine = text.slice(0, lineEnd);
  const firstSpace = requestLine.indexOf(' ');
  const secondSpace = requestLine.indexOf(' ', firstSpace + 1);
  if (firstSpace <= 0 || secondSpace === -1 || requestLine.indexOf(' ', secondSpace + 1) !== -1) {
    return refuse({ status: 400, reason: 'malformed-request-line', detail: 'The request line must be "METHOD target HTTP/1.1".' });
  }
  const method = requestLine.slice(0, firstSpace);
  const target = requestLine.slice(firstSpace + 1, secondSpace);
  const version = requestLine.slice(secondSpace + 1);
  if (!TOKEN.test(method) || !TARGET.test(target)) return refuse({ status: 400, reason: 'malformed-request-line', detail: 'The request method or target holds characters that are not allowed.' });
  let minorVersion: 0 | 1;
  if (version === 'HTTP/1.1') minorVersion = 1;
  else if (version === 'HTTP/1.0') minorVersion = 0;
  else if (/^HTTP\/[0-9]\.[0-9]$/.test(version)) return refuse({ status: 505, reason: 'unsupported-version', detail: `${version} is not supported; use HTTP/1.1.` });
  else return refuse({ status: 400, reason: 'malformed-request-line', detail: 'The request line must end with the protocol version, e.g. HTTP/1.1.' });

  // A null-prototype record: a header named __proto__ or constructor is just a header.
  const headers: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  let count = 0;
  let start = lineEnd + 2;
  while (start < text.length) {
    let end = text.indexOf('\r\n', start);
    if (end === -1) end = text.length;
    if (++count > limits.maxHeaders) return refuse({ status: 431, reason: 'too-many-headers', detail: `At most ${limits.maxHeaders} header fields are accepted.` });
    const colon = text.indexOf(':', start);
    // RFC 9112 §5.1: no whitespace between name and colon; §5.2: obsolete line folding refused.
    if (colon === -1 || colon >= end || colon === start) return refuse({ status: 400, reason: 'malformed-header', detail: 'A header line has no field name and colon.' });
    const name = text.slice(start, colon);
    if (!TOKEN.test(name)) return refuse({ status: 400, reason: 'malformed-header', detail: 'A header field name holds characters that are not allowed.' });
    const value = trimOws(text, colon + 1, end);
    const key = name.toLowerCase();
    const previous = headers[key];
    if (previous === undefined) headers[key] = value;
    else if (typeof previous === 'string') headers[key] = [previous, value];
    else previous.push(value);
    start = end + 2;
  }

  // RFC 9112 §3.2: an HTTP/1.1 request without exactly one Host is answered 400.
  const host = headers['host'];
  if (minorVersion === 1 && typeof host !== 'string') return refuse({ status: 400, reason: 'missing-host', detail: 'An HTTP/1.1 request needs exactly one Host header.' });

  let framing: BodyFraming = { kind: 'none' };
  const transferEncoding = headers['transfer-encoding'];
  const contentLength = headers['content-length'];
  if (transferEncoding !== undefined) {
    // RFC 9112 §6.1/§6.3: Transfer-Encoding with Content-Length, or in HTTP/1.0, is how requests
    // are smuggled past a proxy that reads the framing differently: refused outright.
    if (contentLength !== undefined || minorVersion === 0) return refuse({ status: 400, reason: 'ambiguous-framing', detail: 'Transfer-Encoding may not be combined with Content-Length or used in HTTP/1.0.' });
    const codings = listElements(transferEncoding);
    if (codings.length !== 1 || codings[0] !== 'chunked') {
      if (codings.length === 0 || codings[codings.length - 1] !== 'chunked' || codings.filter((coding) => coding === 'chunked').length > 1) {
        return refuse({ status: 400, reason: 'ambiguous-framing', detail: 'Transfer-Encoding must end with chunked, applied once.' });
      }
      return refuse({ status: 501, reason: 'unsupported-transfer-coding', detail: 'Only the chunked transfer coding is supported.' });
    }
    framing = { kind: 'chunked' };
  } else if (contentLength !== undefined) {
    // RFC 9110 §8.6: a list of identical lengths may be read as one; anything else is refused.
    const lengths = listElements(contentLength);
    if (lengths.length === 0 || lengths.some((length) => length !== lengths[0] || !DIGITS.test(length))) {
      return refuse({ status: 400, reason: 'invalid-content-length', detail: 'Content-Length must be one decimal number.' });
    }
    const length = lengths[0]!.length > 15 ? Number.MAX_SAFE_INTEGER : Number(lengths[0]);
    if (length > limits.maxBodyBytes) return refuse({ status: 413, reason: 'body-too-large', detail: `The body has ${lengths[0]!} bytes; at most ${limits.maxBodyBytes} are accepted.` });
    if (length > 0) framing = { kind: 'length', length };
  }

  const connection = headers['connection'];
  const options = connection === undefined ? [] : listElements(connection);
  // RFC 9112 §9.3: HTTP/1.1 persists unless "close"; HTTP/1.0 only with "keep-alive".
  const keepAlive = minorVersion === 1 ? !options.includes('close') : options.includes('keep-alive');

  let expectsContinue = false;
  const expect = headers['expect'];
  // RFC 9110 §10.1.1: an HTTP/1.0 client cannot expect 100-continue; the field is ignored there.
  if (expect !== undefined && minorVersion === 1) {
    const expectations = listElements(expect);
    if (expectations.length !== 1 || expectations[0] !== '100-continue') return refuse({ status: 417, reason: 'unsupported-expectation', detail: 'The only expectation supported is 100-continue.' });
    expectsContinue = framing.kind !== 'none';
  }
  return { ok: true, head: { method, target, minorVersion, headers, framing, keepAlive, expectsContinue } };
}
