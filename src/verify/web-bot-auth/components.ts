// Component values of RFC 9421 §2.1 (HTTP fields with sf / key / bs) and §2.2 (derived
// components) for one HTTP message, as they appear on signature base lines.
import { parseDictionary, parseItem, parseList, serializeDictionary, serializeInnerList, serializeItem, serializeList, type Parameters } from 'structured-headers';
import type { ComponentParameters } from './signature-input.js';
import { base64Encode } from './base64.js';

/** What the signature base reads of one HTTP message. Header names are lower-case. */
export interface HttpMessage {
  readonly headers: ReadonlyMap<string, string>;
  /** The request method, as sent (case-sensitive, RFC 9421 §2.2.1). */
  readonly method?: string;
  /** The lower-case scheme of the target URI (`https` unless configured otherwise). */
  readonly scheme: string;
  /** The raw authority (Host or `:authority`); normalised here per RFC 9421 §2.2.3. */
  readonly authority?: string;
  /** The request target in origin form: path plus query, as sent. */
  readonly target?: string;
  /** The response status, for a response. */
  readonly status?: number;
  /** For a response: the request it answers, read by components with the `req` flag (RFC 9421 §2.4). */
  readonly request?: HttpMessage;
}

/**
 * Which input a covered component needs that the message does not carry: the Host or
 * `:authority`, the request target, the method, a header field (or its dictionary member), or a
 * query parameter. Missing input is never evidence against a signature: it cannot be checked.
 */
export type ComponentNotSent = 'authority-not-sent' | 'path-not-sent' | 'method-not-sent' | 'header-not-sent' | 'query-param-not-sent';

/** A component value, or why it has none: an input the message lacks, or an identifier that cannot be used. */
export type ComponentValue = { readonly ok: true; readonly value: string } | { readonly ok: false; readonly reason: ComponentNotSent | 'component-invalid' };

const notSent = (reason: ComponentNotSent): ComponentValue => Object.freeze({ ok: false, reason });
const NO_AUTHORITY = notSent('authority-not-sent');
const NO_PATH = notSent('path-not-sent');
const NO_METHOD = notSent('method-not-sent');
const NO_HEADER = notSent('header-not-sent');
const NO_QUERY_PARAM = notSent('query-param-not-sent');
const INVALID: ComponentValue = Object.freeze({ ok: false, reason: 'component-invalid' });
const DEFAULT_PORT: Readonly<Record<string, string>> = { http: '80', https: '443' };
const SIMPLE_HOST = /^[a-z0-9.-]+$/;
const FIELD_PARAMS = new Set(['sf', 'key', 'bs', 'req', 'tr']);

// Structured fields whose type is known (RFC 9421 §2.1.1 needs the type to re-serialize strictly).
const KNOWN_SF_TYPES: Readonly<Record<string, 'dictionary' | 'list' | 'item'>> = {
  'signature-input': 'dictionary',
  signature: 'dictionary',
  'accept-signature': 'dictionary',
  'content-digest': 'dictionary',
  'repr-digest': 'dictionary',
  'want-content-digest': 'dictionary',
  'want-repr-digest': 'dictionary',
  'cache-status': 'list',
  priority: 'dictionary',
  'cdn-cache-control': 'dictionary',
  'proxy-status': 'list',
};

const ok = (value: string): ComponentValue => ({ ok: true, value });

/**
 * Normalises an authority per RFC 9421 §2.2.3 (RFC 9110 §4.2.3): host lower-cased, the default
 * port of the scheme omitted. Undefined when it is not a bare host[:port].
 */
export function normalizeAuthority(raw: string, scheme: string): string | undefined {
  // A host is case-insensitive (RFC 9110 §4.2.3): lower-cased first.
  const text = raw.trim().toLowerCase();
  // Fast path for the common case (a plain host name), no URL parsing.
  if (SIMPLE_HOST.test(text)) return text;
  if (text === '' || /[\s/?#@\\]/.test(text)) return undefined;
  // A plain host with a port is read as written too: the URL parser would read an IPv4-like name
  // ("0xc0.0.2.1:8443") as an address ("192.0.2.1"), which it does not for the same name alone.
  const colon = text.lastIndexOf(':');
  if (colon > 0 && SIMPLE_HOST.test(text.slice(0, colon)) && /^\d{0,5}$/.test(text.slice(colon + 1))) {
    const digits = text.slice(colon + 1);
    const port = digits === '' ? '' : String(Number(digits));
    if (Number(port) > 65_535) return undefined;
    return port === '' || port === DEFAULT_PORT[scheme] ? text.slice(0, colon) : `${text.slice(0, colon)}:${port}`;
  }
  let url: URL;
  try {
    url = new URL(`${scheme}://${text}`);
  } catch {
    return undefined;
  }
  // URL drops the default port only for special schemes; do it by the scheme's own default.
  const port = url.port === DEFAULT_PORT[scheme] ? '' : url.port;
  return port === '' ? url.hostname : `${url.hostname}:${port}`;
}

/**
 * A site's own host as the Web Bot Auth check compares it with a request's: normalised
 * (normalizeAuthority) with the root's trailing dot dropped (`site.example.` is `site.example`).
 * Undefined when `raw` is no host[:port], or names an empty label.
 */
export function siteAuthority(raw: string, scheme: string): string | undefined {
  const normalized = normalizeAuthority(raw, scheme)?.replace(/\.(?=(:\d+)?$)/, '');
  if (normalized === undefined || normalized === '' || /^\.|\.\.|\.(:|$)/.test(normalized)) return undefined;
  return normalized;
}

// WHATWG application/x-www-form-urlencoded percent-encode set: encodeURIComponent leaves
// !'()~ alone, which that set encodes (RFC 9421 §2.2.8 "percent-encode after encoding").
function formEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function splitTarget(target: string): { path: string; query: string | undefined } {
  const q = target.indexOf('?');
  return q === -1 ? { path: target, query: undefined } : { path: target.slice(0, q), query: target.slice(q + 1) };
}

function authorityOf(message: HttpMessage): string | undefined {
  return message.authority === undefined ? undefined : normalizeAuthority(message.authority, message.scheme);
}

function derivedValue(message: HttpMessage, name: string, params: ComponentParameters): ComponentValue {
  if (name !== '@query-param' && params.size > 0) return INVALID;
  switch (name) {
    case '@method': // RFC 9421 §2.2.1: case-sensitive, as sent
      return message.method === undefined || message.method === '' ? NO_METHOD : ok(message.method);
    case '@authority': {
      // RFC 9421 §2.2.3
      const authority = authorityOf(message);
      return authority === undefined ? NO_AUTHORITY : ok(authority);
    }
    case '@scheme': // RFC 9421 §2.2.4
      return ok(message.scheme);
    case '@target-uri': {
      // RFC 9421 §2.2.2: the full absolute target URI
      const authority = authorityOf(message);
      if (authority === undefined) return NO_AUTHORITY;
      if (message.target === undefined) return NO_PATH;
      return ok(`${message.scheme}://${authority}${message.target}`);
    }
    case '@request-target': // RFC 9421 §2.2.5: origin form as on the request line
      return message.target === undefined ? NO_PATH : ok(message.target);
    case '@path': {
      // RFC 9421 §2.2.6: no query, empty path is "/"
      if (message.target === undefined) return NO_PATH;
      const { path } = splitTarget(message.target);
      return ok(path === '' ? '/' : path);
    }
    case '@query': {
      // RFC 9421 §2.2.7: with the leading "?"; an absent query is "?"
      if (message.target === undefined) return NO_PATH;
      const { query } = splitTarget(message.target);
      return ok(`?${query ?? ''}`);
    }
    case '@query-param': {
      // RFC 9421 §2.2.8: name and value re-encoded; a missing or repeated name is an error.
      const wanted = params.get('name');
      if (typeof wanted !== 'string' || params.size !== 1) return INVALID;
      if (message.target === undefined) return NO_PATH;
      const { query } = splitTarget(message.target);
      let found: string | undefined;
      for (const [key, value] of new URLSearchParams(query ?? '')) {
        if (formEncode(key) !== wanted) continue;
        if (found !== undefined) return INVALID;
        found = formEncode(value);
      }
      return found === undefined ? NO_QUERY_PARAM : ok(found);
    }
    case '@status': // RFC 9421 §2.2.9: responses only
      return message.status === undefined ? INVALID : ok(String(message.status));
    default:
      // RFC 9421 §2.5 step 3: an unknown derived component is an error.
      return INVALID;
  }
}

function strictSerialize(name: string, value: string): string | undefined {
  const type = KNOWN_SF_TYPES[name];
  try {
    if (type === 'dictionary') return serializeDictionary(parseDictionary(value));
    if (type === 'list') return serializeList(parseList(value));
    if (type === 'item') return serializeItem(parseItem(value));
  } catch {
    return undefined;
  }
  // A field of unknown type: the first structured type that parses. For values several types
  // accept (`a, b`), their strict serializations coincide.
  for (const parse of [() => serializeDictionary(parseDictionary(value)), () => serializeList(parseList(value)), () => serializeItem(parseItem(value))]) {
    try {
      return parse();
    } catch {
      // try the next type
    }
  }
  return undefined;
}

// A request's Dictionary fields, parsed once however many `key` components (of however many
// signatures) name their members: a field of 574 members covered one by one was parsed 574 times.
const parsedDictionaries = new WeakMap<ReadonlyMap<string, string>, Map<string, ReturnType<typeof parseDictionary> | undefined>>();

function dictionaryField(message: HttpMessage, name: string, value: string): ReturnType<typeof parseDictionary> | undefined {
  let parsed = parsedDictionaries.get(message.headers);
  if (parsed === undefined) parsedDictionaries.set(message.headers, (parsed = new Map()));
  if (parsed.has(name)) return parsed.get(name);
  let dictionary: ReturnType<typeof parseDictionary> | undefined;
  try {
    dictionary = parseDictionary(value);
  } catch {
    dictionary = undefined;
  }
  parsed.set(name, dictionary);
  return dictionary;
}

function fieldValue(message: HttpMessage, name: string, params: ComponentParameters): ComponentValue {
  for (const param of params.keys()) if (!FIELD_PARAMS.has(param)) return INVALID;
  // RFC 9421 §2.1: `tr` (trailers) are not available here.
  if (params.has('tr')) return INVALID;
  if (params.has('bs') && (params.has('sf') || params.has('key'))) return INVALID;
  const raw = message.headers.get(name);
  if (raw === undefined) return NO_HEADER;
  // RFC 9421 §2.1: leading and trailing whitespace removed.
  const value = raw.trim();
  const key = params.get('key');
  if (key !== undefined) {
    // RFC 9421 §2.1.2: one Dictionary member, serialized without its key.
    if (typeof key !== 'string') return INVALID;
    const dictionary = dictionaryField(message, name, value);
    if (dictionary === undefined) return INVALID;
    const member = dictionary.get(key);
    if (member === undefined) return NO_HEADER;
    try {
      return ok(Array.isArray(member[0]) ? serializeInnerList(member as [never[], Parameters]) : serializeItem(member as [never, Parameters]));
    } catch {
      return INVALID;
    }
  }
  if (params.has('sf')) {
    // RFC 9421 §2.1.1
    const serialized = strictSerialize(name, value);
    return serialized === undefined ? INVALID : ok(serialized);
  }
  if (params.has('bs')) {
    // RFC 9421 §2.1.3. The engine hands over field lines already combined, so the combined
    // value is wrapped as one line: exact for a field sent once.
    const bytes = new Uint8Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const code = value.charCodeAt(i);
      if (code > 0xff) return INVALID;
      bytes[i] = code;
    }
    return ok(`:${base64Encode(bytes)}:`);
  }
  return ok(value);
}

/**
 * The value of one covered component of a message (RFC 9421 §2.1, §2.2), following `req` to
 * the related request (§2.4).
 */
export function componentValue(message: HttpMessage, name: string, params: ComponentParameters): ComponentValue {
  let target = message;
  let rest = params;
  if (params.has('req')) {
    // RFC 9421 §2.4: `req` is only meaningful when signing a response.
    if (message.request === undefined || params.get('req') !== true) return INVALID;
    target = message.request;
    const others = new Map(params);
    others.delete('req');
    rest = others;
  }
  return name.startsWith('@') ? derivedValue(target, name, rest) : fieldValue(target, name, rest);
}
