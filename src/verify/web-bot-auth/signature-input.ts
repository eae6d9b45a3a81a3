// Parsing of the Signature-Input and Signature dictionaries (RFC 9421 §4.1, §4.2) into typed
// records, with the serialized forms the signature base needs computed once here.
import { base64Decode } from './base64.js';
import { parseDictionary, serializeInnerList, serializeItem, Token, type BareItem, type Item, type Parameters } from 'structured-headers';

/**
 * A covered component's parameters (RFC 9421 §2.1: `sf`, `key`, `bs`, `req`, `tr`, `name`) as
 * parsed RFC 8941 bare items. Typed here, not as structured-headers' `Parameters`, whose byte
 * sequences would make a consumer's type check need the DOM library's `BufferSource`.
 */
export type ComponentParameters = ReadonlyMap<string, unknown>;

/** One covered component: its name, its parameters and its serialized identifier (RFC 9421 §2). */
export interface ComponentIdentifier {
  readonly name: string;
  readonly params: ComponentParameters;
  /** The identifier as it appears on its signature base line, e.g. `"signature-agent";key="sig1"`. */
  readonly identifier: string;
}

/** The signature parameters of RFC 9421 §2.3 that this library reads; others stay in `signatureParams`. */
export interface SignatureParams {
  readonly created?: number;
  readonly expires?: number;
  readonly keyid?: string;
  readonly alg?: string;
  readonly nonce?: string;
  readonly tag?: string;
}

/** One member of Signature-Input: a label, its covered components and parameters. */
export interface SignatureInput {
  readonly label: string;
  readonly components: readonly ComponentIdentifier[];
  readonly params: SignatureParams;
  /** The `@signature-params` value: the inner list re-serialized strictly (RFC 9421 §2.3, §3.2 step 7). */
  readonly signatureParams: string;
}

/** A Signature-Input member that could not be understood; its tag is kept when it was readable. */
export interface MalformedSignatureInput {
  readonly label: string;
  readonly malformed: true;
  readonly tag?: string;
}

const SINGLE_SIGNATURE = /^ *([a-z*][a-z0-9_\-.*]*)=:([A-Za-z0-9+/=]*):[ \t]*$/;
const STRING_PARAMS = ['keyid', 'alg', 'nonce', 'tag'] as const;
const INTEGER_PARAMS = ['created', 'expires'] as const;
// RFC 9421 §2.1: field component names are the lower-cased field name; derived ones start with "@".
const COMPONENT_NAME = /^(?:@[a-z-]+|[!#$%&'*+.^_`|~0-9a-z-]+)$/;

function readParams(params: Parameters): SignatureParams | undefined {
  const out: Record<string, string | number> = {};
  for (const name of INTEGER_PARAMS) {
    const value = params.get(name);
    if (value === undefined) continue;
    // RFC 9421 §2.3: created and expires are sf-integers (UNIX seconds), never decimals or dates.
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) return undefined;
    out[name] = value;
  }
  for (const name of STRING_PARAMS) {
    const value = params.get(name);
    if (value === undefined) continue;
    if (typeof value !== 'string') return undefined;
    out[name] = value;
  }
  return out as SignatureParams;
}

function readMember(label: string, member: Item | [Item[], Parameters]): SignatureInput | MalformedSignatureInput {
  const [value, params] = member;
  if (!Array.isArray(value)) return { label, malformed: true };
  const tagValue = params.get('tag');
  const tag = typeof tagValue === 'string' ? tagValue : undefined;
  const malformed: MalformedSignatureInput = tag === undefined ? { label, malformed: true } : { label, malformed: true, tag };
  const read = readParams(params);
  if (read === undefined) return malformed;
  const components: ComponentIdentifier[] = [];
  const seen = new Set<string>();
  for (const item of value) {
    const [name, componentParams] = item;
    if (typeof name !== 'string' || !COMPONENT_NAME.test(name) || name === '@signature-params') return malformed;
    const identifier = serializeItem(item);
    // RFC 9421 §2.5 step 1: a component identifier may appear only once.
    if (seen.has(identifier)) return malformed;
    seen.add(identifier);
    components.push({ name, params: componentParams, identifier });
  }
  return { label, components, params: read, signatureParams: serializeInnerList([value, params]) };
}

// ---- Fast path -------------------------------------------------------------------------------
// structured-headers checks strings one character at a time; Signature-Input is on the hot path
// of every signed request, so the usual shape (a dictionary of inner lists of strings with
// integer / string / token / boolean parameters) is parsed here in one pass that also writes the
// strict serialization. Anything else (decimals, byte sequences, duplicate keys, odd syntax)
// returns undefined and goes to structured-headers, so this path never accepts what it would
// reject; a property test checks both agree.

const LCALPHA = (c: number) => c >= 0x61 && c <= 0x7a;
const DIGIT = (c: number) => c >= 0x30 && c <= 0x39;
const ALPHA = (c: number) => LCALPHA(c) || (c >= 0x41 && c <= 0x5a);
// RFC 8941 §3.1.2 key characters after the first: lcalpha / DIGIT / "_" / "-" / "." / "*".
const KEY_CHAR = (c: number) => LCALPHA(c) || DIGIT(c) || c === 0x5f || c === 0x2d || c === 0x2e || c === 0x2a;
// RFC 9110 tchar plus ":" and "/" (RFC 8941 §3.3.4 token).
const TOKEN_CHAR = (c: number) => ALPHA(c) || DIGIT(c) || "!#$%&'*+-.^_`|~:/".includes(String.fromCharCode(c));

class FastParser {
  pos = 0;
  constructor(readonly text: string) {}

  code(): number {
    return this.text.charCodeAt(this.pos);
  }

  key(): string | undefined {
    const start = this.pos;
    const first = this.code();
    if (!LCALPHA(first) && first !== 0x2a) return undefined;
    this.pos++;
    while (this.pos < this.text.length && KEY_CHAR(this.code())) this.pos++;
    return this.text.slice(start, this.pos);
  }

  // An sf-string: [value, strict serialization]. Without escapes the serialization is the input.
  string(): [string, string] | undefined {
    if (this.code() !== 0x22) return undefined;
    const start = this.pos;
    this.pos++;
    let out = '';
    let from = this.pos;
    let escaped = false;
    while (this.pos < this.text.length) {
      const c = this.code();
      if (c === 0x22) {
        out += this.text.slice(from, this.pos++);
        return [out, escaped ? serializeQuoted(out) : this.text.slice(start, this.pos)];
      }
      if (c === 0x5c) {
        const next = this.text.charCodeAt(this.pos + 1);
        if (next !== 0x22 && next !== 0x5c) return undefined;
        out += this.text.slice(from, this.pos) + String.fromCharCode(next);
        escaped = true;
        this.pos += 2;
        from = this.pos;
        continue;
      }
      // RFC 8941 §3.3.3: printable ASCII only.
      if (c < 0x20 || c > 0x7e) return undefined;
      this.pos++;
    }
    return undefined;
  }

  // Bare items of parameters; [value, serialized] or undefined to fall back.
  bareItem(): [BareItem, string] | undefined {
    const c = this.code();
    if (c === 0x22) return this.string();
    if (DIGIT(c) || c === 0x2d) {
      const start = this.pos;
      if (c === 0x2d) this.pos++;
      const digits = this.pos;
      while (this.pos < this.text.length && DIGIT(this.code())) this.pos++;
      const length = this.pos - digits;
      // Decimals (".") and over-long integers go to the full parser.
      if (length === 0 || length > 15 || this.code() === 0x2e) return undefined;
      const value = Number(this.text.slice(start, this.pos));
      return [value, String(value)];
    }
    if (ALPHA(c) || c === 0x2a) {
      const start = this.pos;
      this.pos++;
      while (this.pos < this.text.length && TOKEN_CHAR(this.code())) this.pos++;
      const value = this.text.slice(start, this.pos);
      return [new Token(value), value];
    }
    if (c === 0x3f) {
      const b = this.text.charCodeAt(this.pos + 1);
      if (b !== 0x30 && b !== 0x31) return undefined;
      this.pos += 2;
      return [b === 0x31, b === 0x31 ? '?1' : '?0'];
    }
    return undefined;
  }

  // RFC 8941 §4.2.3.2; returns the map and its strict serialization.
  parameters(): [Map<string, BareItem>, string] | undefined {
    const params = new Map<string, BareItem>();
    let serialized = '';
    while (this.code() === 0x3b) {
      this.pos++;
      while (this.code() === 0x20) this.pos++;
      const key = this.key();
      if (key === undefined || params.has(key)) return undefined;
      if (this.code() === 0x3d) {
        this.pos++;
        const item = this.bareItem();
        if (item === undefined) return undefined;
        params.set(key, item[0]);
        serialized += item[0] === true ? `;${key}` : `;${key}=${item[1]}`;
      } else {
        params.set(key, true);
        serialized += `;${key}`;
      }
    }
    return [params, serialized];
  }
}

function serializeQuoted(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&')}"`;
}

function fastParse(text: string): Array<SignatureInput | MalformedSignatureInput> | undefined {
  const p = new FastParser(text);
  const out: Array<SignatureInput | MalformedSignatureInput> = [];
  const labels = new Set<string>();
  while (p.code() === 0x20) p.pos++;
  while (p.pos < text.length) {
    const label = p.key();
    if (label === undefined || labels.has(label) || p.code() !== 0x3d) return undefined;
    labels.add(label);
    p.pos++;
    if (p.code() !== 0x28) return undefined;
    p.pos++;
    const components: ComponentIdentifier[] = [];
    const seen = new Set<string>();
    let list = '';
    let duplicate = false;
    let badName = false;
    for (;;) {
      while (p.code() === 0x20) p.pos++;
      if (p.code() === 0x29) {
        p.pos++;
        break;
      }
      const quoted = p.string();
      if (quoted === undefined) return undefined;
      const [name, serializedName] = quoted;
      const params = p.parameters();
      if (params === undefined) return undefined;
      const identifier = serializedName + params[1];
      if (seen.has(identifier)) duplicate = true;
      if (!COMPONENT_NAME.test(name) || name === '@signature-params') badName = true;
      seen.add(identifier);
      components.push({ name, params: params[0], identifier });
      list += list === '' ? identifier : ` ${identifier}`;
      const next = p.code();
      if (next !== 0x20 && next !== 0x29) return undefined;
    }
    const params = p.parameters();
    if (params === undefined) return undefined;
    const read = readParams(params[0]);
    const tagValue = params[0].get('tag');
    if (read === undefined || duplicate || badName) {
      out.push(typeof tagValue === 'string' ? { label, malformed: true, tag: tagValue } : { label, malformed: true });
    } else {
      out.push({ label, components, params: read, signatureParams: `(${list})${params[1]}` });
    }
    // RFC 8941 §4.2.2: OWS "," OWS between members, nothing trailing.
    while (p.code() === 0x20 || p.code() === 0x09) p.pos++;
    if (p.pos >= text.length) break;
    if (p.code() !== 0x2c) return undefined;
    p.pos++;
    while (p.code() === 0x20 || p.code() === 0x09) p.pos++;
    if (p.pos >= text.length) return undefined;
  }
  return out;
}

/**
 * Parses a Signature-Input field value into its members, in field order.
 * Undefined when the field is not a valid structured Dictionary (RFC 8941 §3.2).
 */
export function parseSignatureInput(value: string): Array<SignatureInput | MalformedSignatureInput> | undefined {
  return fastParse(value) ?? parseSignatureInputStrict(value);
}

/** Parses Signature-Input with structured-headers only: the reference the fast path is tested against. */
export function parseSignatureInputStrict(value: string): Array<SignatureInput | MalformedSignatureInput> | undefined {
  let dictionary;
  try {
    dictionary = parseDictionary(value);
  } catch {
    return undefined;
  }
  const out: Array<SignatureInput | MalformedSignatureInput> = [];
  for (const [label, member] of dictionary) {
    try {
      out.push(readMember(label, member));
    } catch {
      // A value structured-headers parses but cannot re-serialize: unusable.
      out.push({ label, malformed: true });
    }
  }
  return out;
}

/**
 * Parses a Signature field value into signature bytes per label (RFC 9421 §4.2); members that
 * are not byte sequences are left out. Undefined when the field is not a valid Dictionary.
 */
export function parseSignatureField(value: string): Map<string, Uint8Array> | undefined {
  // Fast path for the usual single member `label=:base64:` (same checks as structured-headers).
  const single = SINGLE_SIGNATURE.exec(value);
  if (single !== null) {
    const bytes = base64Decode(single[2]!);
    if (bytes !== undefined) return new Map([[single[1]!, bytes]]);
  }
  let dictionary;
  try {
    dictionary = parseDictionary(value);
  } catch {
    return undefined;
  }
  const out = new Map<string, Uint8Array>();
  for (const [label, [bytes]] of dictionary) {
    if (bytes instanceof ArrayBuffer) out.set(label, new Uint8Array(bytes));
  }
  return out;
}

/** Whether a parsed member is usable (not malformed). */
export function isWellFormed(input: SignatureInput | MalformedSignatureInput): input is SignatureInput {
  return !('malformed' in input);
}
