// Key directories fetched through an injected DirectoryFetcher and cached per Cache-Control:
// bounded size, negative caching of failures (at most 5 minutes), stale good keys kept through
// failed refreshes, concurrent fetches of one URL coalesced (protocol-02 "Deployment Guidance").
import { verifyDirectoryProof } from './directory-signature.js';
import type { DirectoryFetcher, DirectoryResponse } from './directory-fetcher.js';
import type { Ed25519Verify } from './ed25519.js';
import { ed25519KeyFromJwk, isPublishedTestKey, keyUsableAt, type Ed25519PublicKey } from './jwk.js';

/** Why a directory gave no keys: our fetch rules refused it, it could not be fetched, or its content was rejected. */
export type DirectoryFailure = 'refused' | 'unavailable' | 'invalid';

/** The answer to "which key has this keyid in this directory". */
export type KeyLookup =
  | { readonly status: 'found'; readonly key: Ed25519PublicKey }
  /** The directory was fetched and is fresh, and does not list this keyid (or the key is outside its nbf/exp). */
  | { readonly status: 'unknown' }
  | { readonly status: DirectoryFailure };

/** Cache limits and lifetimes. All durations are in seconds. */
export interface KeyDirectoryCacheOptions {
  /** Directories kept (least recently used evicted first). Default 1,000. */
  readonly maxDirectories?: number;
  /** A directory listing more keys than this is rejected (SSRF / memory cap). Default 64. */
  readonly maxKeys?: number;
  /** A directory body larger than this is rejected, whatever the fetcher allowed. Default 65,536 bytes. */
  readonly maxBytes?: number;
  /** Lower bound of the Cache-Control lifetime. Default 60. */
  readonly minTtlSeconds?: number;
  /** Upper bound of the Cache-Control lifetime. Default 86,400 (24 h). */
  readonly maxTtlSeconds?: number;
  /** Lifetime when the response has no usable max-age. Default 3,600. */
  readonly defaultTtlSeconds?: number;
  /** How long a failure is remembered before the next fetch; at most 300 (protocol-02). Default 300. */
  readonly negativeTtlSeconds?: number;
  /** How long past their lifetime good keys are still served while refreshes fail. Default 86,400. */
  readonly maxStaleSeconds?: number;
  /** A keyid missing from a cached directory triggers a refetch at most this often (key rotation). Default 60. */
  readonly refetchOnMissSeconds?: number;
  /** Fetch deadline passed to the fetcher as an AbortSignal. Default 5. */
  readonly fetchTimeoutSeconds?: number;
  /** Reject directories whose responses carry no directory signature. Default false. */
  readonly requireSignedDirectory?: boolean;
  /** Keep a published example key (RFC 9421's) a directory lists, which anyone can sign with; for test suites only. Default false. */
  readonly allowTestKeys?: boolean;
}

/** A cache of key directories. */
export interface KeyDirectoryCache {
  /** Finds a key by (directory URL, keyid), fetching the directory when needed. Never throws. */
  lookup(url: string, keyid: string, nowMs: number): Promise<KeyLookup>;
  /** The number of directories held. */
  readonly size: number;
}

interface Entry {
  keys: ReadonlyMap<string, Ed25519PublicKey> | undefined;
  fetchedAt: number;
  goodUntil: number;
  staleUntil: number;
  failure: DirectoryFailure | undefined;
  failureUntil: number;
  inflight: Promise<void> | undefined;
}

type Loaded = { readonly ok: true; readonly keys: ReadonlyMap<string, Ed25519PublicKey>; readonly ttlSeconds: number } | { readonly ok: false; readonly failure: DirectoryFailure };

const REFUSED_CODES = new Set(['refused-url', 'refused-address', 'redirect']);
const decoder = new TextDecoder('utf-8', { fatal: true });

function positiveInteger(value: number | undefined, fallback: number, name: string, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
    throw new RangeError(`${name} must be an integer between 0 and ${max}, got ${String(value)}`);
  }
  return value;
}

/** The max-age of a Cache-Control value (RFC 9111 §5.2.2.1), 0 for no-store / no-cache, undefined when absent. */
export function cacheControlMaxAge(value: string | null): number | undefined {
  if (value === null) return undefined;
  let maxAge: number | undefined;
  for (const part of value.toLowerCase().split(',')) {
    const [name, arg] = part.trim().split('=', 2) as [string, string | undefined];
    if (name === 'no-store' || name === 'no-cache') return 0;
    if (name === 'max-age' && arg !== undefined && /^\d+$/.test(arg.replace(/"/g, ''))) maxAge = Number(arg.replace(/"/g, ''));
  }
  return maxAge;
}

/**
 * Creates a key directory cache over a fetcher.
 * @throws {RangeError} when a limit is not a non-negative integer or negativeTtlSeconds exceeds 300.
 * @example
 * const cache = createKeyDirectoryCache(fetcher, webCryptoEd25519(), { maxDirectories: 100 });
 * await cache.lookup('https://chatgpt.com/.well-known/http-message-signatures-directory', keyid, Date.now());
 */
export function createKeyDirectoryCache(
  fetchDirectory: DirectoryFetcher,
  verifyEd25519: Ed25519Verify,
  options: KeyDirectoryCacheOptions = {},
  clockSkewSeconds = 60,
): KeyDirectoryCache {
  if (typeof fetchDirectory !== 'function') throw new TypeError(`fetchDirectory must be a function, got ${typeof fetchDirectory}`);
  const at = 'directoryCache.';
  const maxDirectories = positiveInteger(options.maxDirectories, 1000, `${at}maxDirectories`);
  const maxKeys = positiveInteger(options.maxKeys, 64, `${at}maxKeys`);
  const maxBytes = positiveInteger(options.maxBytes, 65_536, `${at}maxBytes`);
  const minTtl = positiveInteger(options.minTtlSeconds, 60, `${at}minTtlSeconds`);
  const maxTtl = positiveInteger(options.maxTtlSeconds, 86_400, `${at}maxTtlSeconds`);
  if (maxTtl < minTtl) throw new RangeError(`${at}maxTtlSeconds must be at least minTtlSeconds (${minTtl}), got ${maxTtl}`);
  const defaultTtl = positiveInteger(options.defaultTtlSeconds, 3600, `${at}defaultTtlSeconds`);
  // protocol-02 Deployment Guidance: negative caching for no more than 5 minutes.
  const negativeTtl = positiveInteger(options.negativeTtlSeconds, 300, `${at}negativeTtlSeconds`, 300);
  const maxStale = positiveInteger(options.maxStaleSeconds, 86_400, `${at}maxStaleSeconds`);
  const refetchOnMiss = positiveInteger(options.refetchOnMissSeconds, 60, `${at}refetchOnMissSeconds`);
  const timeoutSeconds = positiveInteger(options.fetchTimeoutSeconds, 5, `${at}fetchTimeoutSeconds`);
  if (maxDirectories < 1 || maxKeys < 1 || timeoutSeconds < 1) throw new RangeError(`${at}maxDirectories, maxKeys and fetchTimeoutSeconds must be at least 1`);
  const requireSigned = options.requireSignedDirectory === true;
  const allowTestKeys = options.allowTestKeys === true;

  const entries = new Map<string, Entry>();

  const load = async (url: string, nowMs: number): Promise<Loaded> => {
    let response: DirectoryResponse;
    try {
      response = await fetchDirectory(url, { signal: AbortSignal.timeout(timeoutSeconds * 1000) });
    } catch (error) {
      // Duck-typed: the adapter may be bundled with its own copy of DirectoryFetchError.
      const code = (error as { code?: unknown } | null)?.code;
      return { ok: false, failure: typeof code === 'string' && REFUSED_CODES.has(code) ? 'refused' : 'unavailable' };
    }
    // protocol-02 §"Key Distribution and Discovery": only 200 OK counts.
    if (response.status !== 200) return { ok: false, failure: 'unavailable' };
    if (response.body.byteLength > maxBytes) return { ok: false, failure: 'unavailable' };
    let document: unknown;
    try {
      document = JSON.parse(decoder.decode(response.body));
    } catch {
      return { ok: false, failure: 'invalid' };
    }
    // RFC 7517 §5: a JWK Set; `keys` must be an array (old drafts printed an object: malformed).
    const list = (document as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(list) || list.length > maxKeys) return { ok: false, failure: 'invalid' };
    const keys = new Map<string, Ed25519PublicKey>();
    for (const jwk of list) {
      // Non-Ed25519 keys are skipped, and so are published example keys; `kid` is never trusted, the thumbprint is computed.
      if (!allowTestKeys && isPublishedTestKey(jwk)) continue;
      const key = await ed25519KeyFromJwk(jwk);
      if (key !== undefined) keys.set(key.thumbprint, key);
    }
    const proof = await verifyDirectoryProof({
      url,
      status: response.status,
      headers: response.headers,
      body: response.body,
      keys,
      nowSeconds: Math.floor(nowMs / 1000),
      clockSkewSeconds,
      verifyEd25519,
    });
    if (proof.status === 'invalid' || (proof.status === 'unsigned' && requireSigned)) return { ok: false, failure: 'invalid' };
    if (proof.status === 'valid') {
      // directory-04: clients SHOULD ignore keys without a corresponding valid signature.
      for (const thumbprint of keys.keys()) if (!proof.signedKeys.has(thumbprint)) keys.delete(thumbprint);
    }
    const maxAge = cacheControlMaxAge(response.headers.get('cache-control')) ?? defaultTtl;
    return { ok: true, keys, ttlSeconds: Math.min(maxTtl, Math.max(minTtl, maxAge)) };
  };

  const entryFor = (url: string): Entry => {
    let entry = entries.get(url);
    if (entry !== undefined) {
      // Least recently used order: re-insert on use.
      entries.delete(url);
      entries.set(url, entry);
      return entry;
    }
    if (entries.size >= maxDirectories) {
      const oldest = entries.keys().next().value;
      if (oldest !== undefined) entries.delete(oldest);
    }
    entry = { keys: undefined, fetchedAt: 0, goodUntil: 0, staleUntil: 0, failure: undefined, failureUntil: 0, inflight: undefined };
    entries.set(url, entry);
    return entry;
  };

  // One fetch per URL at a time: concurrent callers share it.
  const refresh = (url: string, entry: Entry, nowMs: number): Promise<void> => {
    entry.inflight ??= load(url, nowMs)
      .then((loaded) => {
        if (loaded.ok) {
          entry.keys = loaded.keys;
          entry.fetchedAt = nowMs;
          entry.goodUntil = nowMs + loaded.ttlSeconds * 1000;
          entry.staleUntil = entry.goodUntil + maxStale * 1000;
          entry.failure = undefined;
          entry.failureUntil = 0;
        } else {
          // A failed fetch is not evidence: good keys stay (protocol-02 Deployment Guidance).
          entry.failure = loaded.failure;
          entry.failureUntil = nowMs + negativeTtl * 1000;
        }
      })
      .finally(() => {
        entry.inflight = undefined;
      });
    return entry.inflight;
  };

  const find = (entry: Entry, keyid: string, nowMs: number): Ed25519PublicKey | undefined => {
    const key = entry.keys?.get(keyid);
    return key !== undefined && keyUsableAt(key, Math.floor(nowMs / 1000)) ? key : undefined;
  };

  return {
    get size() {
      return entries.size;
    },
    async lookup(url, keyid, nowMs) {
      const entry = entryFor(url);
      const negative = () => entry.failure !== undefined && nowMs < entry.failureUntil;
      let refreshed = false;
      if (entry.inflight !== undefined) {
        await entry.inflight;
        refreshed = true;
      } else if (nowMs >= entry.goodUntil && !negative()) {
        await refresh(url, entry, nowMs);
        refreshed = true;
      }
      if (nowMs < entry.goodUntil) {
        const key = find(entry, keyid, nowMs);
        if (key !== undefined) return { status: 'found', key };
        // Maybe a key published since the last fetch (rotation): refetch, rate-limited.
        if (!refreshed && !negative() && nowMs - entry.fetchedAt >= refetchOnMiss * 1000) {
          await refresh(url, entry, nowMs);
          const again = find(entry, keyid, nowMs);
          if (again !== undefined) return { status: 'found', key: again };
        }
        // The last attempt to re-read the directory failed: a missing keyid proves nothing yet.
        if (negative()) return { status: entry.failure! };
        return { status: 'unknown' };
      }
      // Expired keys are served while refreshes fail, up to maxStaleSeconds; a keyid missing
      // from them is not evidence, since the directory could not be re-read.
      if (nowMs < entry.staleUntil) {
        const key = find(entry, keyid, nowMs);
        if (key !== undefined) return { status: 'found', key };
      }
      return { status: entry.failure ?? 'unavailable' };
    },
  };
}
