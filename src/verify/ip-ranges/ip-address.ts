// IP address text parsing into integers (IPv4 as one uint32, IPv6 as four uint32 words) and the
// canonical text form used to compare addresses; IPv4-mapped IPv6 is folded into IPv4.

/** A parsed address: IPv4 as one unsigned 32-bit value, IPv6 as four big-endian 32-bit words. */
export type IpAddress =
  | { readonly family: 4; readonly value: number }
  | { readonly family: 6; readonly words: readonly [number, number, number, number] };

const DIGIT_0 = 48;
const DIGIT_9 = 57;

/** The IPv4 address in `text[start, end)` as a uint32, or -1. Strict dotted quad: no leading zeros, which some stacks read as octal. */
function parseIpv4Range(text: string, start: number, end: number): number {
  let value = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= DIGIT_0 && c <= DIGIT_9) {
      if (digits > 0 && part === 0) return -1;
      part = part * 10 + (c - DIGIT_0);
      if (part > 255) return -1;
      digits++;
    } else if (c === 46) {
      if (digits === 0 || ++dots > 3) return -1;
      value = value * 256 + part;
      part = 0;
      digits = 0;
    } else {
      return -1;
    }
  }
  if (digits === 0 || dots !== 3) return -1;
  return value * 256 + part;
}

function hexValue(c: number): number {
  if (c >= DIGIT_0 && c <= DIGIT_9) return c - DIGIT_0;
  const lower = c | 0x20;
  if (lower >= 97 && lower <= 102) return lower - 87;
  return -1;
}

/**
 * Parses the IPv6 address in `text` into eight 16-bit groups (RFC 4291 §2.2: hex groups, one `::`,
 * an optional trailing dotted IPv4). Returns false when the text is not an IPv6 address.
 */
function parseIpv6Groups(text: string, groups: Uint16Array): boolean {
  const length = text.length;
  if (length < 2 || length > 45) return false;
  let count = 0;
  let gap = -1;
  let i = 0;
  if (text.charCodeAt(0) === 58) {
    if (text.charCodeAt(1) !== 58) return false;
    gap = 0;
    i = 2;
    if (i === length) {
      groups.fill(0);
      return true;
    }
  }
  while (i < length) {
    if (count === 8) return false;
    // A dotted IPv4 may end the address, taking two groups (RFC 4291 §2.2 form 3).
    let j = i;
    let value = 0;
    let hexDigits = 0;
    let h = 0;
    while (j < length && (h = hexValue(text.charCodeAt(j))) >= 0) {
      value = value * 16 + h;
      hexDigits++;
      j++;
    }
    if (j < length && text.charCodeAt(j) === 46) {
      if (count > 6) return false;
      const v4 = parseIpv4Range(text, i, length);
      if (v4 < 0) return false;
      groups[count++] = v4 >>> 16;
      groups[count++] = v4 & 0xffff;
      i = length;
      break;
    }
    if (hexDigits === 0 || hexDigits > 4) return false;
    groups[count++] = value;
    i = j;
    if (i === length) break;
    if (text.charCodeAt(i) !== 58) return false;
    i++;
    if (i < length && text.charCodeAt(i) === 58) {
      if (gap >= 0) return false;
      gap = count;
      i++;
    } else if (i === length) {
      return false;
    }
  }
  if (gap < 0) return count === 8;
  if (count > 7) return false;
  // Shift the groups after `::` to the end and zero the gap.
  const tail = count - gap;
  for (let k = 0; k < tail; k++) groups[7 - k] = groups[count - 1 - k]!;
  for (let k = gap; k < 8 - tail; k++) groups[k] = 0;
  return true;
}

const scratch = new Uint16Array(8);

/**
 * Parses a bare IPv4 or IPv6 address (no brackets, port or zone id). IPv4-mapped IPv6
 * (`::ffff:66.249.66.1`) becomes the IPv4 address, so one check covers dual-stack sockets.
 * Returns undefined for anything else.
 */
export function parseIpAddress(text: string): IpAddress | undefined {
  if (typeof text !== 'string') return undefined;
  const v4 = parseIpv4Range(text, 0, text.length);
  if (v4 >= 0) return { family: 4, value: v4 };
  if (!parseIpv6Groups(text, scratch)) return undefined;
  const g = scratch;
  const w0 = ((g[0]! << 16) | g[1]!) >>> 0;
  const w1 = ((g[2]! << 16) | g[3]!) >>> 0;
  const w2 = ((g[4]! << 16) | g[5]!) >>> 0;
  const w3 = ((g[6]! << 16) | g[7]!) >>> 0;
  // RFC 4291 §2.5.5.2: ::ffff:0:0/96 holds IPv4 addresses.
  if (w0 === 0 && w1 === 0 && w2 === 0xffff) return { family: 4, value: w3 };
  return { family: 6, words: [w0, w1, w2, w3] };
}

/** Formats a parsed address as text: dotted quad, or RFC 5952 IPv6 (lower case, longest zero run compressed). */
export function formatIpAddress(address: IpAddress): string {
  if (address.family === 4) {
    const v = address.value;
    return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
  }
  const groups: number[] = [];
  for (const word of address.words) groups.push(word >>> 16, word & 0xffff);
  // RFC 5952 §4.2.3: compress the longest run of two or more zero groups, the first on a tie.
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  if (bestStart < 0) return hexGroups(groups, 0, 8);
  return `${hexGroups(groups, 0, bestStart)}::${hexGroups(groups, bestStart + bestLength, 8)}`;
}

/** Groups `from` to `to` (exclusive) in lower-case hex, joined by ':'. */
function hexGroups(groups: readonly number[], from: number, to: number): string {
  let text = '';
  for (let i = from; i < to; i++) text += i === from ? groups[i]!.toString(16) : `:${groups[i]!.toString(16)}`;
  return text;
}

/** The canonical text of a bare IP address (see `formatIpAddress`), or undefined when it is not one. */
export function normalizeIpAddress(text: string): string | undefined {
  const address = parseIpAddress(text);
  return address === undefined ? undefined : formatIpAddress(address);
}
