// Parsing of published crawler IP lists in the JAFAR / Google format
// (`{ creationTime, prefixes: [{ ipv4Prefix } | { ipv6Prefix }] }`).
import { parseCidr, type CidrPrefix, type CidrProblem } from './prefix-set.js';

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

/**
 * Validates one JAFAR document. Lenient where the draft says to be (draft-illyes-webbotauth-jafar:
 * unknown fields are ignored, a prefix object with neither or both of `ipv4Prefix`/`ipv6Prefix`
 * is skipped), strict about the prefixes themselves.
 * @throws {TypeError} when the document or its `prefixes` has the wrong type (the message names `name`).
 * @throws {RangeError} when a prefix is not a valid CIDR of its family (the message names `name` and the prefix).
 * @example
 * parseIpRangeList({ creationTime: '2026-08-21T14:45:42.000000', prefixes: [{ ipv4Prefix: '66.249.64.0/27' }] }, 'google-common-crawlers.json');
 */
export function parseIpRangeList(document: unknown, name: string): IpRangeList {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new TypeError(`IP list ${JSON.stringify(name)} must be a JSON object, got ${Array.isArray(document) ? 'an array' : String(document)}`);
  }
  const { creationTime, prefixes } = document as { creationTime?: unknown; prefixes?: unknown };
  if (!Array.isArray(prefixes)) throw new TypeError(`IP list ${JSON.stringify(name)}: "prefixes" must be an array`);
  const parsed: CidrPrefix[] = [];
  let count4 = 0;
  let count6 = 0;
  for (const entry of prefixes) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { ipv4Prefix, ipv6Prefix } = entry as { ipv4Prefix?: unknown; ipv6Prefix?: unknown };
    if ((ipv4Prefix === undefined) === (ipv6Prefix === undefined)) continue;
    const family = ipv4Prefix !== undefined ? 4 : 6;
    const text = ipv4Prefix ?? ipv6Prefix;
    const result = typeof text === 'string' ? parseCidr(text, family) : 'not-a-cidr';
    if (typeof result === 'string') {
      throw new RangeError(
        `IP list ${JSON.stringify(name)}: ipv${family}Prefix ${JSON.stringify(text)} is not a valid CIDR (${PROBLEM_TEXT[result]})`,
      );
    }
    parsed.push(result);
    if (family === 4) count4++;
    else count6++;
  }
  return { creationTime: typeof creationTime === 'string' ? creationTime : undefined, prefixes: parsed, count4, count6 };
}
