// Parsing of published crawler IP lists in the JAFAR / Google format
// (`{ creationTime, prefixes: [{ ipv4Prefix } | { ipv6Prefix }] }`).
import { overlapsIpv4Mapped, parseCidr, prefixBounds, type CidrPrefix, type CidrProblem } from './prefix-set.js';
import { hasValidDayAndHour } from '../../visits/iso-time.js';

/** A validated IP list: its prefixes and the publisher's creation time. */
export interface IpRangeList {
  /** The publisher's `creationTime` string as given (formats vary: with or without `Z`, microseconds). */
  readonly creationTime: string | undefined;
  readonly prefixes: readonly CidrPrefix[];
  /** How many IPv4 / IPv6 prefix entries the document held. */
  readonly count4: number;
  readonly count6: number;
}

const PROBLEM_TEXT: Record<CidrProblem, string> = {
  'not-a-cidr': 'not in address/length form',
  'bad-address': 'the address does not parse',
  'bad-length': 'the prefix length is out of range',
  'host-bits-set': 'host bits are set',
  'wrong-family': 'the address family does not match the key',
};

// No list may make the verifier pass every address (0.0.0.0/0, ::/0, two /1 halves...). A /8 is
// the largest IPv4 block one organisation holds (the legacy class A networks), and a /16 of IPv6
// is more than any network is allocated (the RIRs themselves hold /12s); the widest prefixes of
// the bundled lists are a /16 and a /56.
const SHORTEST_LENGTH = { 4: 8, 6: 16 } as const;
// Many of the widest prefixes together could still cover everything: sixteen of them at most.
const MOST_ADDRESSES = { 4: 16n << 24n, 6: 16n << 112n } as const;

/**
 * `text` with every C0 and C1 control character and U+2028/U+2029 written as `\uXXXX`: text from a
 * download printed to a terminal must not move the cursor, recolour it or start a forged line.
 * @example
 * escapeControlCharacters('ok\u001b[2J'); // 'ok\\u001b[2J'
 */
export function escapeControlCharacters(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `value` as JSON for a message, at most ~100 characters, its control characters escaped (a list may come from a download). */
function quote(value: unknown): string {
  const json = escapeControlCharacters(JSON.stringify(value) ?? String(value));
  return json.length > 100 ? `${json.slice(0, 100)}…` : json;
}

// ISO 8601 date and time as publishers write it: fraction optional (Bing and OpenAI give
// microseconds), zone optional (Google and Apple write none, meaning UTC).
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})?$/;

/**
 * A list's `creationTime` in milliseconds since the epoch, or undefined when it is not an ISO 8601
 * date and time that exists (Date.parse alone reads 2026-02-30 as 2 March).
 * @example
 * parseCreationTime('2026-08-21T14:45:42.000000'); // 1787323542000
 */
export function parseCreationTime(text: string): number | undefined {
  // The day by its month and the hour to 00-23 checked as a visit's created time is; Date.parse checks the rest.
  if (!ISO_DATE_TIME.test(text) || !hasValidDayAndHour(text)) return undefined;
  const at = Date.parse(/(?:Z|[+-]\d\d:\d\d)$/.test(text) ? text : `${text}Z`);
  return Number.isNaN(at) ? undefined : at;
}

/**
 * Validates one JAFAR document. Lenient where the draft says to be (draft-illyes-webbotauth-jafar:
 * unknown fields are ignored, a prefix object with neither or both of `ipv4Prefix`/`ipv6Prefix`
 * is skipped), strict about the prefixes themselves.
 * @throws {TypeError} when the document or its `prefixes` has the wrong type (the message names `name`).
 * @throws {RangeError} when a prefix is not a valid CIDR of its family, is wider than an IPv4 /8 or
 * an IPv6 /16, is an IPv6 prefix reaching into ::ffff:0:0/96, or takes the list past sixteen such
 * widest prefixes (the message names `name` and the prefix).
 * @example
 * parseIpRangeList({ creationTime: '2026-08-21T14:45:42.000000', prefixes: [{ ipv4Prefix: '66.249.64.0/27' }] }, 'google-common-crawlers.json');
 */
export function parseIpRangeList(document: unknown, name: string): IpRangeList {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new TypeError(`IP list ${quote(name)} must be a JSON object, got ${Array.isArray(document) ? 'an array' : quote(document)}`);
  }
  const { creationTime, prefixes } = document as { creationTime?: unknown; prefixes?: unknown };
  if (!Array.isArray(prefixes)) throw new TypeError(`IP list ${quote(name)}: "prefixes" must be an array`);
  const parsed: CidrPrefix[] = [];
  let count4 = 0;
  let count6 = 0;
  const total = { 4: 0n, 6: 0n };
  for (const entry of prefixes) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { ipv4Prefix, ipv6Prefix } = entry as { ipv4Prefix?: unknown; ipv6Prefix?: unknown };
    if ((ipv4Prefix === undefined) === (ipv6Prefix === undefined)) continue;
    const family = ipv4Prefix !== undefined ? 4 : 6;
    const text = ipv4Prefix ?? ipv6Prefix;
    const result = typeof text === 'string' ? parseCidr(text, family) : 'not-a-cidr';
    const where = () => `IP list ${quote(name)}: ipv${family}Prefix ${quote(text)}`;
    if (typeof result === 'string') throw new RangeError(`${where()} is not a valid CIDR (${PROBLEM_TEXT[result]})`);
    // The verifier matches IPv4 addresses against ::ffff:0:0/96 (RFC 4291 §2.5.5.2); an operator
    // publishes its IPv4 addresses as ipv4Prefix, so an IPv6 prefix there is a mistake or a trick.
    if (family === 6 && (result.address.family === 4 || overlapsIpv4Mapped(result))) {
      throw new RangeError(`${where()} reaches into ::ffff:0:0/96, which holds every IPv4 address (publish IPv4 as ipv4Prefix)`);
    }
    if (result.length < SHORTEST_LENGTH[family]) {
      throw new RangeError(`${where()} is wider than /${SHORTEST_LENGTH[family]}, more than any operator's crawlers use`);
    }
    const [start, end] = prefixBounds(result);
    total[family] += end - start + 1n;
    if (total[family] > MOST_ADDRESSES[family]) {
      throw new RangeError(`${where()} takes the list past sixteen /${SHORTEST_LENGTH[family]}s of addresses, more than any operator's crawlers use`);
    }
    parsed.push(result);
    if (family === 4) count4++;
    else count6++;
  }
  return { creationTime: typeof creationTime === 'string' ? creationTime : undefined, prefixes: parsed, count4, count6 };
}
