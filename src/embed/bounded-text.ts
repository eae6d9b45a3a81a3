// Reading an answer's body from a server the embedding site talks to (an agentwarden server, the
// hosted service), up to a limit: a server that answers without end, by fault or on purpose, must
// not fill the site's memory in the time its request is allowed.

/**
 * The body of `response` as UTF-8 text, or undefined when it is longer than `maxBytes` (the rest is
 * not read, and the stream is cancelled).
 */
export async function readTextUpTo(response: Response, maxBytes: number): Promise<string | undefined> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      void reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}
