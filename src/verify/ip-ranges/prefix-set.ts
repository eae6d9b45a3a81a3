// CIDR prefixes compiled into sorted, merged integer intervals: IPv4 as uint32 pairs, IPv6 as
// 4×uint32 pairs; a lookup is one binary search with no allocation.
import { parseIpAddress, type IpAddress } from './ip-address.js';

/** A CIDR prefix as parsed: the network address and the prefix length in bits (IPv4-mapped folded to IPv4). */
export interface CidrPrefix {
  readonly address: IpAddress;
  readonly length: number;
}

/** Why a CIDR string was rejected. */
export type CidrProblem = 'not-a-cidr' | 'bad-address' | 'bad-length' | 'host-bits-set' | 'wrong-family';

/**
 * Parses `address/length`. Host bits must be zero (JAFAR files publish network prefixes; a set host
 * bit is more likely a typo than an intent). `family` restricts the address family when given.
 */
export function parseCidr(text: string, family?: 4 | 6): CidrPrefix | CidrProblem {
  if (typeof text !== 'string') return 'not-a-cidr';
  const slash = text.indexOf('/');
  if (slash < 0 || slash !== text.lastIndexOf('/')) return 'not-a-cidr';
  const addressText = text.slice(0, slash);
  const lengthText = text.slice(slash + 1);
  if (!/^(0|[1-9][0-9]{0,2})$/.test(lengthText)) return 'bad-length';
  let length = Number(lengthText);
  const isV6Text = addressText.includes(':');
  if (family !== undefined && (family === 6) !== isV6Text) return 'wrong-family';
  let address = parseIpAddress(addressText);
  if (address === undefined) return 'bad-address';
  if (length > (isV6Text ? 128 : 32)) return 'bad-length';
  if (isV6Text && address.family === 4) {
    // ::ffff:a.b.c.d/n with n >= 96 is an IPv4 prefix; a shorter one stays IPv6 (and
    // compilePrefixSet lets its mapped part match IPv4 addresses).
    if (length >= 96) length -= 96;
    else address = { family: 6, words: [0, 0, 0xffff, address.value] };
  }
  const bits = toBigInt(address);
  const width = address.family === 4 ? 32 : 128;
  const hostMask = (1n << BigInt(width - length)) - 1n;
  if ((bits & hostMask) !== 0n) return 'host-bits-set';
  return { address, length };
}

function toBigInt(address: IpAddress): bigint {
  if (address.family === 4) return BigInt(address.value);
  const [a, b, c, d] = address.words;
  return (BigInt(a) << 96n) | (BigInt(b) << 64n) | (BigInt(c) << 32n) | BigInt(d);
}

/** A compiled set of prefixes. */
export interface PrefixSet {
  /** Number of merged IPv4 / IPv6 intervals (after joining overlapping and adjacent prefixes). */
  readonly intervals4: number;
  readonly intervals6: number;
  /** Whether the address lies in any prefix of the set. */
  has(address: IpAddress): boolean;
}

type Interval = [bigint, bigint];

function merge(intervals: Interval[]): Interval[] {
  intervals.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const merged: Interval[] = [];
  for (const [start, end] of intervals) {
    const last = merged[merged.length - 1];
    if (last !== undefined && start <= last[1] + 1n) {
      if (end > last[1]) last[1] = end;
    } else {
      merged.push([start, end]);
    }
  }
  return merged;
}

const MASK32 = 0xffffffffn;
const MAPPED_START = 0xffffn << 32n;
const MAPPED_END = MAPPED_START | MASK32;

/** The first and last address of a prefix as integers (32-bit for IPv4, 128-bit for IPv6). */
export function prefixBounds(prefix: CidrPrefix): [bigint, bigint] {
  const width = prefix.address.family === 4 ? 32 : 128;
  const start = toBigInt(prefix.address);
  return [start, start | ((1n << BigInt(width - prefix.length)) - 1n)];
}

/**
 * Whether an IPv6 prefix reaches into ::ffff:0:0/96, whose part compilePrefixSet matches against
 * IPv4 addresses (an IPv4 prefix, folded or not, answers false).
 */
export function overlapsIpv4Mapped(prefix: CidrPrefix): boolean {
  if (prefix.address.family === 4) return false;
  const [start, end] = prefixBounds(prefix);
  return start <= MAPPED_END && end >= MAPPED_START;
}

/**
 * Compiles prefixes once (at creation) into merged intervals. Overlaps are allowed, as JAFAR
 * permits them; for membership the union is all that matters.
 */
export function compilePrefixSet(prefixes: Iterable<CidrPrefix>): PrefixSet {
  const v4: Interval[] = [];
  const v6: Interval[] = [];
  for (const prefix of prefixes) (prefix.address.family === 4 ? v4 : v6).push(prefixBounds(prefix));
  // IPv4 addresses are looked up as IPv4 even when written ::ffff:a.b.c.d, so the part of an IPv6
  // prefix covering ::ffff:0:0/96 (RFC 4291 §2.5.5.2) must match them too (e.g. ::/0).
  for (const [start, end] of v6) {
    const from = start > MAPPED_START ? start : MAPPED_START;
    const to = end < MAPPED_END ? end : MAPPED_END;
    if (from <= to) v4.push([from - MAPPED_START, to - MAPPED_START]);
  }
  const merged4 = merge(v4);
  const merged6 = merge(v6);
  // IPv4: parallel arrays of starts and ends; Float64Array holds every uint32 exactly.
  const starts4 = new Float64Array(merged4.map(([s]) => Number(s)));
  const ends4 = new Float64Array(merged4.map(([, e]) => Number(e)));
  // IPv6: four uint32 words per bound, most significant first.
  const starts6 = new Uint32Array(merged6.length * 4);
  const ends6 = new Uint32Array(merged6.length * 4);
  merged6.forEach(([s, e], i) => {
    for (let w = 0; w < 4; w++) {
      const shift = BigInt(96 - 32 * w);
      starts6[i * 4 + w] = Number((s >> shift) & MASK32);
      ends6[i * 4 + w] = Number((e >> shift) & MASK32);
    }
  });
  const count4 = merged4.length;
  const count6 = merged6.length;

  function has4(value: number): boolean {
    // The last interval whose start <= value, then compare with its end.
    let lo = 0;
    let hi = count4 - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (starts4[mid]! <= value) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found >= 0 && value <= ends4[found]!;
  }

  // -1, 0, 1 as the address compares with the bound at index i of `bounds`.
  function compare6(bounds: Uint32Array, i: number, w0: number, w1: number, w2: number, w3: number): number {
    const base = i * 4;
    let b = bounds[base]!;
    if (w0 !== b) return w0 < b ? -1 : 1;
    b = bounds[base + 1]!;
    if (w1 !== b) return w1 < b ? -1 : 1;
    b = bounds[base + 2]!;
    if (w2 !== b) return w2 < b ? -1 : 1;
    b = bounds[base + 3]!;
    if (w3 !== b) return w3 < b ? -1 : 1;
    return 0;
  }

  function has6(words: readonly [number, number, number, number]): boolean {
    const [w0, w1, w2, w3] = words;
    let lo = 0;
    let hi = count6 - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (compare6(starts6, mid, w0, w1, w2, w3) >= 0) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found >= 0 && compare6(ends6, found, w0, w1, w2, w3) <= 0;
  }

  return {
    intervals4: count4,
    intervals6: count6,
    has: (address) => (address.family === 4 ? has4(address.value) : has6(address.words)),
  };
}
