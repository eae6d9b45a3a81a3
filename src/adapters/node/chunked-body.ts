// Decodes a chunked request body (RFC 9112 §7.1) as its bytes arrive, in any split: chunk data is
// handed out as it comes, extensions and trailer fields are read and dropped, and the decoded size
// is bounded before the bytes are buffered.

/** What one `push` did: bytes consumed (the rest belong to the next request), or why it failed. */
export type ChunkedProgress =
  | { readonly ok: true; readonly consumed: number; readonly done: boolean }
  | { readonly ok: false; readonly status: 400 | 413; readonly detail: string };

/** Which part of the chunked framing the next byte belongs to. */
type Part = 'size-line' | 'data' | 'data-end' | 'trailer';

// RFC 9112 §7.1.1: chunk-size *( BWS ";" BWS token [ BWS "=" BWS ( token / quoted-string ) ] ).
// Extensions are checked against the grammar, then ignored: a size followed by a space and no
// ";", or a ";" with no name, is refused, as llhttp refuses it (parsers must agree on framing).
const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+";
const QUOTED_STRING = '"(?:[\\t \\x21\\x23-\\x5b\\x5d-\\x7e\\x80-\\xff]|\\\\[\\t \\x21-\\x7e\\x80-\\xff])*"';
const CHUNK_EXT = `[\\t ]*;[\\t ]*${TOKEN}(?:[\\t ]*=[\\t ]*(?:${TOKEN}|${QUOTED_STRING}))?`;
const SIZE_LINE = new RegExp(`^([0-9A-Fa-f]{1,16})(?:${CHUNK_EXT})*$`);
const TRAILER_LINE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[\t\x20-\x7e\x80-\xff]*$/;
// Longer size or trailer lines are refused: nothing legitimate needs them.
const MAX_LINE_BYTES = 4096;
const MAX_TRAILER_BYTES = 16 * 1024;

/**
 * An incremental decoder of one chunked body.
 * @example
 * const decoder = new ChunkedBodyDecoder(1024);
 * decoder.push(Buffer.from('3\r\nabc\r\n0\r\n\r\n'), (data) => chunks.push(data)); // { ok: true, consumed: 13, done: true }
 */
export class ChunkedBodyDecoder {
  private part: Part = 'size-line';
  private line = '';
  private remaining = 0;
  private dataEndSeen = 0;
  private decoded = 0;
  private trailerBytes = 0;

  /** `maxBodyBytes` bounds the decoded size; past it `push` answers 413. */
  constructor(private readonly maxBodyBytes: number) {}

  /** Decodes what `bytes` holds of the body, passing chunk data to `onData` (views into `bytes`). */
  push(bytes: Uint8Array, onData: (data: Uint8Array) => void): ChunkedProgress {
    let at = 0;
    while (at < bytes.length) {
      if (this.part === 'data') {
        const take = Math.min(this.remaining, bytes.length - at);
        onData(bytes.subarray(at, at + take));
        this.remaining -= take;
        at += take;
        if (this.remaining === 0) this.part = 'data-end';
      } else if (this.part === 'data-end') {
        // The CRLF after chunk data, possibly split between pushes.
        if (bytes[at] !== (this.dataEndSeen === 0 ? 13 : 10)) return { ok: false, status: 400, detail: 'Chunk data must be followed by CRLF.' };
        at++;
        if (++this.dataEndSeen === 2) {
          this.dataEndSeen = 0;
          this.part = 'size-line';
        }
      } else {
        const lf = bytes.indexOf(10, at);
        const end = lf === -1 ? bytes.length : lf + 1;
        this.line += Buffer.from(bytes.buffer, bytes.byteOffset + at, end - at).toString('latin1');
        at = end;
        if (this.line.length > MAX_LINE_BYTES) return { ok: false, status: 400, detail: 'A chunk-size or trailer line is too long.' };
        if (lf === -1) break;
        if (this.line.length < 2 || this.line.charCodeAt(this.line.length - 2) !== 13) return { ok: false, status: 400, detail: 'Chunked body lines must end with CRLF.' };
        const content = this.line.slice(0, -2);
        this.line = '';
        if (this.part === 'size-line') {
          const match = SIZE_LINE.exec(content);
          if (match === null) return { ok: false, status: 400, detail: 'A chunk-size line must be a hexadecimal size, optionally with well-formed extensions.' };
          const size = parseInt(match[1]!, 16);
          if (size === 0) {
            this.part = 'trailer';
            continue;
          }
          this.decoded += size;
          if (this.decoded > this.maxBodyBytes) return { ok: false, status: 413, detail: `The body is larger than ${this.maxBodyBytes} bytes.` };
          this.remaining = size;
          this.part = 'data';
        } else {
          if (content === '') return { ok: true, consumed: at, done: true };
          this.trailerBytes += content.length + 2;
          if (this.trailerBytes > MAX_TRAILER_BYTES || !TRAILER_LINE.test(content)) return { ok: false, status: 400, detail: 'The chunked trailer section is malformed or too large.' };
        }
      }
    }
    return { ok: true, consumed: at, done: false };
  }
}
