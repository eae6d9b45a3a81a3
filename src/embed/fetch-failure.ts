// Why a request failed, for messages a person reads: the HTTP sink's errors and refresh-ip-ranges'.

/**
 * Why a fetch failed, with its causes: undici's own message is "fetch failed" whatever happened,
 * the reason (ECONNREFUSED, ENOTFOUND, a TLS error, "redirect count exceeded") is in `cause`.
 */
export function describeFetchFailure(error: unknown): string {
  const parts: string[] = [];
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    // Connecting to a name with several addresses fails with an AggregateError whose message is empty.
    let text = (current.message || (current instanceof AggregateError ? current.errors.map((e: unknown) => (e instanceof Error ? e.message : String(e))).join(', ') : '')).trim();
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && !text.includes(code)) text = text === '' ? code : `${text} (${code})`;
    if (text !== '' && !parts.includes(text)) parts.push(text);
  }
  return parts.length > 0 ? parts.join(': ') : String(error);
}
