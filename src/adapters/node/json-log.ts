// Structured logs: one JSON line per entry, written in batches (at most one write per 50 ms or
// 64 KiB instead of one per request: under load a write per request costs more than the request).

/** A JSON-line log writer. */
export interface JsonLog {
  /** Queues one entry; it is written within `intervalMs`. */
  write(entry: Record<string, unknown>): void;
  /** Queues one line that is already serialised JSON (no trailing newline). */
  writeLine(line: string): void;
  /** Writes everything queued now (call before exit). */
  flush(): void;
}

/**
 * Creates a batching JSON-line writer over a stream.
 * @example
 * const log = createJsonLog(process.stdout);
 * log.write({ level: 'info', msg: 'started' });
 */
export function createJsonLog(stream: NodeJS.WritableStream, options: { intervalMs?: number } = {}): JsonLog {
  if (typeof stream?.write !== 'function') throw new TypeError('stream must be a writable stream');
  const intervalMs = options.intervalMs ?? 50;
  if (!Number.isSafeInteger(intervalMs) || intervalMs < 0) throw new RangeError(`intervalMs must be an integer >= 0, got ${String(intervalMs)}`);
  let pending = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending === '') return;
    const text = pending;
    pending = '';
    stream.write(text);
  };
  const writeLine = (line: string) => {
    pending += `${line}\n`;
    // Bounded: a burst never holds more than ~64 KiB before writing.
    if (pending.length > 65_536) flush();
    else if (!scheduled) {
      scheduled = true;
      // Unref'd: a pending flush never keeps the process alive; shutdown calls flush() itself.
      setTimeout(flush, intervalMs).unref();
    }
  };
  return {
    write: (entry) => writeLine(JSON.stringify(entry)),
    writeLine,
    flush,
  };
}
