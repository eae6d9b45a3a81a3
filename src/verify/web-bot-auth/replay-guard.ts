// Optional replay guard: remembers signature nonces until their signature expires (RFC 9421
// §7.2.2), so a captured signed request cannot be replayed within its validity window.

/** Records nonces; `claim` is an atomic check-and-record. */
export interface NonceStore {
  /**
   * Records `key` until `expiresAtMs` and returns true, or returns false when it is already
   * recorded and not yet expired (a replay).
   */
  claim(key: string, expiresAtMs: number, nowMs: number): boolean;
  /** The number of nonces held. */
  readonly size: number;
}

/** Options of `createNonceStore`. */
export interface NonceStoreOptions {
  /** Most nonces held. Default 100,000. Size it to (signed requests per second) × (validity window). */
  readonly max?: number;
}

// How many of the oldest entries one insertion may inspect when the store is full.
const SWEEP = 64;

/**
 * Creates an in-memory nonce store. When full, expired nonces go first, then the oldest: a
 * nonce forgotten that way could be replayed, so size `max` to the traffic.
 * @throws {RangeError} when `max` is not a positive integer.
 * @example
 * const verifier = webBotAuthVerifier({ fetchDirectory, nonceStore: createNonceStore({ max: 50_000 }) });
 */
export function createNonceStore(options: NonceStoreOptions = {}): NonceStore {
  const max = options.max ?? 100_000;
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`max must be a positive integer, got ${String(max)}`);
  const seen = new Map<string, number>();
  return {
    get size() {
      return seen.size;
    },
    claim(key, expiresAtMs, nowMs) {
      const until = seen.get(key);
      if (until !== undefined && until > nowMs) return false;
      seen.delete(key);
      if (seen.size >= max) {
        // Insertion order roughly follows expiry order: sweep a bounded prefix, then evict.
        let inspected = 0;
        for (const [old, oldUntil] of seen) {
          if (inspected++ >= SWEEP) break;
          if (oldUntil <= nowMs) seen.delete(old);
        }
        if (seen.size >= max) seen.delete(seen.keys().next().value!);
      }
      seen.set(key, expiresAtMs);
      return true;
    },
  };
}
