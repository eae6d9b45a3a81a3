// Per-token rate limiting: a token bucket per key with an injected clock (DESIGN.md §7, 429 + Retry-After).

/** Token-bucket settings: `ratePerSecond` refill and `burst` capacity. */
export interface RateLimitOptions {
  readonly ratePerSecond: number;
  readonly burst: number;
  /** Milliseconds; injected so tests can move time. */
  readonly clock?: { now(): number };
  /** Most keys tracked at once; the least recently refilled are forgotten first (default 10,000). */
  readonly maxKeys?: number;
}

/** Whether a request may proceed, and if not, after how many whole seconds it may. */
export type RateLimitDecision = { readonly ok: true } | { readonly ok: false; readonly retryAfterSeconds: number };

// One shared answer for the common case: take() runs on every token request.
const ALLOWED: RateLimitDecision = Object.freeze({ ok: true });

/** A rate limiter: `take(key)` spends one request of that key's bucket. */
export interface RateLimiter {
  take(key: string): RateLimitDecision;
}

/**
 * Creates a token-bucket limiter.
 * @throws {RangeError} when `ratePerSecond`, `burst` or `maxKeys` is not a positive number.
 * @example
 * const limiter = createRateLimiter({ ratePerSecond: 100, burst: 200 });
 * limiter.take(tokenHash); // { ok: true }
 */
export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  const { ratePerSecond, burst } = options;
  if (!(typeof ratePerSecond === 'number' && ratePerSecond > 0 && Number.isFinite(ratePerSecond))) {
    throw new RangeError(`rateLimit.ratePerSecond must be a positive number, got ${String(ratePerSecond)}`);
  }
  if (!(typeof burst === 'number' && burst >= 1 && Number.isFinite(burst))) throw new RangeError(`rateLimit.burst must be a number >= 1, got ${String(burst)}`);
  const maxKeys = options.maxKeys ?? 10_000;
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) throw new RangeError(`rateLimit.maxKeys must be a positive integer, got ${String(maxKeys)}`);
  const clock = options.clock ?? { now: () => Date.now() };
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    take(key) {
      const now = clock.now();
      let bucket = buckets.get(key);
      if (bucket === undefined) {
        if (buckets.size >= maxKeys) buckets.delete(buckets.keys().next().value as string);
        bucket = { tokens: burst, at: now };
        buckets.set(key, bucket);
      } else {
        bucket.tokens = Math.min(burst, bucket.tokens + (Math.max(0, now - bucket.at) / 1000) * ratePerSecond);
        bucket.at = now;
      }
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return ALLOWED;
      }
      // RFC 9110 §10.2.3: Retry-After in whole seconds, at least 1.
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / ratePerSecond)) };
    },
  };
}
