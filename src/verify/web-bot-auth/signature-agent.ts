// The Signature-Agent header in both its forms (legacy sf-string, dictionary with `;type=`)
// and the key directory URL a member points to (Web Bot Auth directory / protocol drafts).
import { parseDictionary, parseItem, Token, type BareItem } from 'structured-headers';
import type { ComponentIdentifier } from './signature-input.js';

/** The well-known path of key directories (IANA well-known URI registration). */
export const KEY_DIRECTORY_PATH = '/.well-known/http-message-signatures-directory';

/** One Signature-Agent value: the URI and its `type` (`directory` unless stated). */
export interface SignatureAgentMember {
  readonly uri: string;
  readonly type: string;
}

/**
 * A parsed Signature-Agent header: the legacy form (one sf-string, directory-00..03; also the
 * bare unquoted URL some senders use) or the dictionary form (directory-04+, protocol-00+).
 */
export type SignatureAgentHeader =
  | { readonly form: 'string'; readonly member: SignatureAgentMember }
  | { readonly form: 'dictionary'; readonly members: ReadonlyMap<string, SignatureAgentMember> };

function uriOf(value: BareItem): string | undefined {
  if (typeof value === 'string') return value;
  // Tolerated: an unquoted URL parses as an sf-token.
  if (value instanceof Token) return value.toString();
  return undefined;
}

// Agents send the same Signature-Agent value on every request: parsed values are remembered
// (bounded, oldest dropped first) so the hot path skips structured-field parsing.
const MEMO_MAX = 256;
const parsedMemo = new Map<string, SignatureAgentHeader | undefined>();
const locationMemo = new Map<string, DirectoryLocation>();

function remember<T>(memo: Map<string, T>, key: string, value: T): T {
  if (memo.size >= MEMO_MAX) memo.delete(memo.keys().next().value!);
  memo.set(key, value);
  return value;
}

/** Parses a Signature-Agent field value; undefined when it is neither form. */
export function parseSignatureAgent(value: string): SignatureAgentHeader | undefined {
  if (parsedMemo.has(value)) return parsedMemo.get(value);
  return remember(parsedMemo, value, parseUncached(value));
}

function parseUncached(value: string): SignatureAgentHeader | undefined {
  const text = value.trim();
  if (!text.startsWith('"')) {
    try {
      const members = new Map<string, SignatureAgentMember>();
      for (const [key, [item, params]] of parseDictionary(text)) {
        if (Array.isArray(item)) return undefined;
        const uri = uriOf(item);
        if (uri === undefined) return undefined;
        const type = params.get('type');
        members.set(key, { uri, type: type instanceof Token ? type.toString() : type === undefined ? 'directory' : String(type) });
      }
      if (members.size > 0) return { form: 'dictionary', members };
    } catch {
      // not a dictionary: try the legacy item form below
    }
  }
  try {
    const [item] = parseItem(text);
    const uri = uriOf(item);
    return uri === undefined ? undefined : { form: 'string', member: { uri, type: 'directory' } };
  } catch {
    return undefined;
  }
}

/** Which Signature-Agent value a signature covers, or why none can be used. */
export type CoveredSignatureAgent =
  | { readonly ok: true; readonly member: SignatureAgentMember }
  | { readonly ok: false; readonly reason: 'signature-agent-not-covered' | 'signature-agent-malformed' | 'header-not-sent' };

/**
 * Picks the Signature-Agent member a signature covers: the `;key=` member for the dictionary
 * form (RFC 9421 §2.1.2), the whole field for the legacy form. A dictionary covered whole is
 * accepted when it has one member or a member keyed by the signature label (protocol-02 allows
 * treating a bare string as a dictionary keyed by that label).
 */
export function coveredSignatureAgent(header: SignatureAgentHeader, components: readonly ComponentIdentifier[], label: string): CoveredSignatureAgent {
  const covered = components.find((component) => component.name === 'signature-agent');
  if (covered === undefined) return { ok: false, reason: 'signature-agent-not-covered' };
  const key = covered.params.get('key');
  if (key !== undefined) {
    if (header.form !== 'dictionary') return { ok: false, reason: 'header-not-sent' };
    const member = typeof key === 'string' ? header.members.get(key) : undefined;
    return member === undefined ? { ok: false, reason: 'header-not-sent' } : { ok: true, member };
  }
  if (header.form === 'string') return { ok: true, member: header.member };
  if (header.members.size === 1) return { ok: true, member: header.members.values().next().value! };
  const member = header.members.get(label);
  return member === undefined ? { ok: false, reason: 'signature-agent-malformed' } : { ok: true, member };
}

/** Where a Signature-Agent member's keys are, or why it cannot be used. */
export type DirectoryLocation =
  | { readonly ok: true; readonly url: string; readonly origin: string }
  | { readonly ok: false; readonly reason: 'signature-agent-malformed' | 'signature-agent-unsupported' };

/**
 * The key directory URL of a member: for `type=directory` an origin becomes
 * `<origin>/.well-known/http-message-signatures-directory` (a value that already is that URL is
 * accepted as is); `type=jwks_uri` is used as given. Query and fragment are dropped (protocol-02
 * "Identifiers and Trust Model"). `cimd` and unknown types are not supported.
 */
export function directoryLocation(member: SignatureAgentMember): DirectoryLocation {
  const key = `${member.type} ${member.uri}`;
  return locationMemo.get(key) ?? remember(locationMemo, key, locate(member));
}

function locate(member: SignatureAgentMember): DirectoryLocation {
  let url: URL;
  try {
    url = new URL(member.uri);
  } catch {
    return { ok: false, reason: 'signature-agent-malformed' };
  }
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'signature-agent-malformed' };
  if (member.type === 'jwks_uri') return { ok: true, url: `${url.origin}${url.pathname}`, origin: url.origin };
  if (member.type !== 'directory') return { ok: false, reason: 'signature-agent-unsupported' };
  if (url.pathname !== '/' && url.pathname !== '' && url.pathname !== KEY_DIRECTORY_PATH) return { ok: false, reason: 'signature-agent-unsupported' };
  return { ok: true, url: `${url.origin}${KEY_DIRECTORY_PATH}`, origin: url.origin };
}
