// Reading an answer's body from a server the embedding site talks to (an agentwarden server, the
// hosted service), up to a limit: a server that answers without end, by fault or on purpose, must
// not fill the site's memory in the time its request is allowed.
import { readBytesUpTo } from '../bounded-bytes.js';

/**
 * The body of `response` as UTF-8 text, or undefined when it is longer than `maxBytes` (the rest is
 * not read, and the stream is cancelled).
 */
export async function readTextUpTo(response: Response, maxBytes: number): Promise<string | undefined> {
  if (response.body === null) return '';
  const bytes = await readBytesUpTo(response.body, maxBytes);
  return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
}
