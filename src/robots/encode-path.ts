// Checks and percent-encodes one robots.txt path pattern (RFC 9309 §2.2.2, §2.2.3) so it is safe to
// write into the file and means the same to every parser.
import { hasLoneSurrogate } from '../json-string.js';

/** Longest path pattern accepted, in bytes after encoding: lines stay far below Google's 16,664-byte cap. */
export const MAX_PATH_BYTES = 2048;

/** Outcome of encoding a path: the encoded pattern, or why it cannot be written. */
export type EncodedPath =
  | { readonly ok: true; readonly value: string }
  | { readonly ok: false; readonly code: 'invalid-type' | 'invalid-path' | 'control-character' | 'invalid-unicode' | 'too-long'; readonly message: string };

// C0 controls (CR and LF among them), DEL, C1 controls, and the Unicode line/paragraph separators
// some line splitters honour: any of them could end the line and inject a record of the caller's.
export const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
// Kept as written: RFC 3986 unreserved, sub-delims (among them the robots wildcards "*" and "$"),
// ":", "@", "/" and "?" — the set encodeURI leaves alone, minus "#", which starts a comment.
const KEEP = /[A-Za-z0-9\-._~!$&'()*+,;=:@/?]/;
const HEX = /^[0-9A-Fa-f]{2}$/;
const encoder = new TextEncoder();

function percent(octet: number): string {
  return `%${octet.toString(16).toUpperCase().padStart(2, '0')}`;
}

function matchesEveryPath(pattern: string): boolean {
  const anchored = pattern.endsWith('$');
  const body = (anchored ? pattern.slice(0, -1) : pattern).replace(/\*/g, '.*');
  const regex = new RegExp(`^${body}${anchored ? '$' : ''}`);
  return ['/', '/a', '/a/b'].every((path) => regex.test(path));
}

/**
 * Validates a path pattern and percent-encodes it: non-ASCII as UTF-8 %XX, "#" as %23, a "%" not
 * starting a valid %XX as %25, existing %XX kept (hex upper-cased, as Google's and robots-parser's
 * normalisation does), "*" and "$" kept as the wildcards they are (RFC 9309 §2.2.3).
 * @example
 * encodeRobotsPath('/café#top'); // { ok: true, value: '/caf%C3%A9%23top' }
 * encodeRobotsPath('/a\nDisallow: /'); // { ok: false, code: 'control-character', ... }
 */
export function encodeRobotsPath(path: unknown): EncodedPath {
  if (typeof path !== 'string') return { ok: false, code: 'invalid-type', message: `expected a string path, got ${path === null ? 'null' : typeof path}` };
  if (path.length > MAX_PATH_BYTES) return { ok: false, code: 'too-long', message: `a path may be at most ${MAX_PATH_BYTES} bytes, got ${path.length} characters` };
  if (CONTROL.test(path)) return { ok: false, code: 'control-character', message: 'a path must not contain control characters, CR, LF or line separators' };
  if (hasLoneSurrogate(path)) return { ok: false, code: 'invalid-unicode', message: 'a path must be well-formed Unicode (it holds an unpaired surrogate)' };
  // RFC 9309 §2.2: path-pattern = "/" *UTF8-char-noctl; "*" is accepted first too (RFC §5.1 uses "*.gif$").
  if (!path.startsWith('/') && !path.startsWith('*')) return { ok: false, code: 'invalid-path', message: `a path must start with "/" or "*"` };
  // "*", "/*", "*/" or "/*$" match every path, as "/" does; parsers without wildcards (Python's
  // urllib.robotparser) read them as nothing. A pattern of only "/", "*" (and a final "$") that
  // matches "/", "/a" and "/a/b" matches every path, as every path starts with "/".
  if (/^[/*]*\*[/*]*\$?$/.test(path) && matchesEveryPath(path)) return { ok: true, value: '/' };
  let out = '';
  for (let i = 0; i < path.length; i++) {
    const char = path[i]!;
    if (char === '%') {
      const hex = path.slice(i + 1, i + 3);
      if (HEX.test(hex)) {
        out += `%${hex.toUpperCase()}`;
        i += 2;
      } else {
        out += '%25';
      }
    } else if (KEEP.test(char)) {
      out += char;
    } else {
      // A surrogate pair is one code point: encode both halves together as UTF-8.
      const codePoint = path.codePointAt(i)!;
      const text = String.fromCodePoint(codePoint);
      for (const octet of encoder.encode(text)) out += percent(octet);
      i += text.length - 1;
    }
  }
  if (out.length > MAX_PATH_BYTES) return { ok: false, code: 'too-long', message: `a path may be at most ${MAX_PATH_BYTES} bytes once percent-encoded, got ${out.length}` };
  return { ok: true, value: out };
}
