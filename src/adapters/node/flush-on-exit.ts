// Flushing visit sinks when a Node process ends: on beforeExit (the event loop ran dry) and on
// SIGTERM/SIGINT, so batched visits are delivered rather than lost with the process.

/** Anything with a close that delivers what it holds: a sink, or the middleware's core. */
export interface Closable {
  close(): Promise<void>;
}

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * Closes `target` (flushing its visits) once, when the process is about to end: on `beforeExit`,
 * or on SIGTERM / SIGINT. After a signal, when no other listener of that signal is left (the
 * application has no shutdown handler of its own), the signal is raised again so the process ends
 * as it would have; otherwise the application's handler decides when to exit. Returns a function
 * that removes the listeners.
 * @throws {TypeError} when `target` has no close method.
 * @example
 * const sink = createNodeHttpSink({ url, token });
 * flushOnExit(sink);
 */
export function flushOnExit(target: Closable): () => void {
  if (typeof target?.close !== 'function') throw new TypeError('flushOnExit takes a sink or an agentwarden core (an object with close)');
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= target.close().catch(() => undefined));
  const onBeforeExit = () => void close();
  const onSignal = (signal: NodeJS.Signals) => {
    void close().then(() => {
      remove();
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  };
  const remove = () => {
    process.off('beforeExit', onBeforeExit);
    for (const signal of SIGNALS) process.off(signal, onSignal);
  };
  process.once('beforeExit', onBeforeExit);
  for (const signal of SIGNALS) process.once(signal, onSignal);
  return remove;
}
