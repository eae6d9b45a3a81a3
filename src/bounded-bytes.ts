// Reading a byte stream whose length someone else decides (a server's answer, a decompressed
// upload) up to a limit: one that runs on without end, by fault or on purpose, costs no more than it.

/**
 * The bytes of `stream` in one array, or undefined when there are more than `maxBytes` (the rest is
 * not read, and the stream is cancelled). A stream that fails rejects, as its reader does.
 */
export async function readBytesUpTo(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array | undefined> {
  const reader = stream.getReader();
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
  return bytes;
}
