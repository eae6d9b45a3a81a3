// Key directory cache behaviour with a fake fetcher and a fake clock: Cache-Control lifetimes,
// negative caching, stale keys through failed refreshes, coalescing, caps.
import { describe, expect, it } from 'vitest';
import { DirectoryFetchError } from '../../../src/verify/web-bot-auth/directory-fetcher.js';
import { webCryptoEd25519 } from '../../../src/verify/web-bot-auth/ed25519.js';
import { cacheControlMaxAge, createKeyDirectoryCache, type KeyDirectoryCacheOptions } from '../../../src/verify/web-bot-auth/key-directory.js';
import { webBotAuthVerifier } from '../../../src/verify/web-bot-auth/web-bot-auth-verifier.js';
import { DIRECTORY_PATH, fixedClock, generateKey, jwks, memoryFetcher, signRequest, testEngine } from './support.js';

const URL_A = `https://agent.test${DIRECTORY_PATH}`;
const T0 = 1_800_000_000;
const keyA = generateKey();
const keyB = generateKey();

function setup(served: Parameters<typeof memoryFetcher>[0][string], options: KeyDirectoryCacheOptions = {}) {
  const fetcher = memoryFetcher({ [URL_A]: served });
  const cache = createKeyDirectoryCache(fetcher, webCryptoEd25519(), options);
  const at = (seconds: number, keyid = keyA.thumbprint, url = URL_A) => cache.lookup(url, keyid, (T0 + seconds) * 1000);
  return { fetcher, cache, at };
}

describe('key directory cache', () => {
  it('respects Cache-Control max-age', async () => {
    const { fetcher, at } = setup({ body: jwks(keyA), headers: { 'cache-control': 'public, max-age=600' } });
    expect((await at(0)).status).toBe('found');
    expect((await at(599)).status).toBe('found');
    expect(fetcher.calls.length).toBe(1);
    expect((await at(600)).status).toBe('found');
    expect(fetcher.calls.length).toBe(2);
  });

  it('bounds the lifetime between minTtlSeconds and maxTtlSeconds; no-store counts as the minimum', async () => {
    const short = setup({ body: jwks(keyA), headers: { 'cache-control': 'max-age=1' } }, { minTtlSeconds: 60 });
    await short.at(0);
    await short.at(59);
    expect(short.fetcher.calls.length).toBe(1);
    await short.at(60);
    expect(short.fetcher.calls.length).toBe(2);
    const long = setup({ body: jwks(keyA), headers: { 'cache-control': 'max-age=999999999' } }, { maxTtlSeconds: 3600 });
    await long.at(0);
    await long.at(3600);
    expect(long.fetcher.calls.length).toBe(2);
    expect(cacheControlMaxAge('no-store, max-age=600')).toBe(0);
    expect(cacheControlMaxAge(null)).toBeUndefined();
    expect(cacheControlMaxAge('s-maxage=5, max-age="120"')).toBe(120);
  });

  it('caches failures for at most 5 minutes', async () => {
    const { fetcher, at } = setup(new DirectoryFetchError('network', 'connection reset'));
    expect(await at(0)).toEqual({ status: 'unavailable' });
    expect(await at(299)).toEqual({ status: 'unavailable' });
    expect(fetcher.calls.length).toBe(1);
    fetcher.routes[URL_A] = { body: jwks(keyA) };
    expect((await at(300)).status).toBe('found');
    expect(fetcher.calls.length).toBe(2);
    expect(() => createKeyDirectoryCache(fetcher, webCryptoEd25519(), { negativeTtlSeconds: 301 })).toThrow(RangeError);
    expect(() => createKeyDirectoryCache(fetcher, webCryptoEd25519(), { negativeTtlSeconds: 301 })).toThrow(/negativeTtlSeconds/);
  });

  it('keeps serving good keys when a refresh fails, up to maxStaleSeconds', async () => {
    const { fetcher, at } = setup({ body: jwks(keyA), headers: { 'cache-control': 'max-age=60' } }, { maxStaleSeconds: 1000 });
    expect((await at(0)).status).toBe('found');
    fetcher.routes[URL_A] = new DirectoryFetchError('timeout', 'slow');
    expect((await at(61)).status).toBe('found');
    expect(fetcher.calls.length).toBe(2);
    // The failure is negatively cached: no refetch, stale key still served.
    expect((await at(200)).status).toBe('found');
    expect(fetcher.calls.length).toBe(2);
    // A keyid missing from stale keys is not evidence: the directory could not be re-read.
    expect(await at(200, keyB.thumbprint)).toEqual({ status: 'unavailable' });
    // An HTTP error on refresh does not evict either.
    fetcher.routes[URL_A] = { status: 503, body: 'busy' };
    expect((await at(400)).status).toBe('found');
    expect(fetcher.calls.length).toBe(3);
    // Past maxStaleSeconds the keys are no longer served.
    expect(await at(60 + 1000)).toEqual({ status: 'unavailable' });
  });

  it('a successful fetch that omits a key evicts it', async () => {
    const { fetcher, at } = setup({ body: jwks(keyA, keyB), headers: { 'cache-control': 'max-age=60' } });
    expect((await at(0, keyB.thumbprint)).status).toBe('found');
    fetcher.routes[URL_A] = { body: jwks(keyA), headers: { 'cache-control': 'max-age=60' } };
    expect(await at(60, keyB.thumbprint)).toEqual({ status: 'unknown' });
  });

  it('refetches on an unknown keyid at most every refetchOnMissSeconds (key rotation)', async () => {
    const { fetcher, at } = setup({ body: jwks(keyA), headers: { 'cache-control': 'max-age=3600' } }, { refetchOnMissSeconds: 60 });
    expect(await at(0, keyB.thumbprint)).toEqual({ status: 'unknown' });
    fetcher.routes[URL_A] = { body: jwks(keyA, keyB), headers: { 'cache-control': 'max-age=3600' } };
    expect(await at(30, keyB.thumbprint)).toEqual({ status: 'unknown' });
    expect(fetcher.calls.length).toBe(1);
    expect((await at(60, keyB.thumbprint)).status).toBe('found');
    expect(fetcher.calls.length).toBe(2);
  });

  it('an unknown keyid whose refetch fails stays inconclusive while the failure is cached', async () => {
    const { fetcher, at } = setup({ body: jwks(keyA), headers: { 'cache-control': 'max-age=3600' } }, { refetchOnMissSeconds: 60 });
    expect((await at(0)).status).toBe('found');
    fetcher.routes[URL_A] = new DirectoryFetchError('network', 'down');
    expect(await at(60, keyB.thumbprint)).toEqual({ status: 'unavailable' });
    expect(await at(100, keyB.thumbprint)).toEqual({ status: 'unavailable' });
    expect((await at(100)).status).toBe('found');
    expect(fetcher.calls.length).toBe(2);
  });

  it('coalesces concurrent lookups of one directory into one fetch', async () => {
    const { fetcher, at } = setup({ body: jwks(keyA) });
    let open!: () => void;
    fetcher.gate = new Promise<void>((resolve) => (open = resolve));
    const pending = Array.from({ length: 20 }, () => at(0));
    open();
    const results = await Promise.all(pending);
    expect(results.every((r) => r.status === 'found')).toBe(true);
    expect(fetcher.calls.length).toBe(1);
  });

  it('coalesces N concurrent verifications into one directory fetch', async () => {
    const clock = fixedClock(T0);
    const fetcher = memoryFetcher({ [URL_A]: { body: jwks(keyA) } });
    let open!: () => void;
    fetcher.gate = new Promise<void>((resolve) => (open = resolve));
    const engine = testEngine(webBotAuthVerifier({ fetchDirectory: fetcher }), clock);
    const item = await signRequest({ key: keyA, headers: { 'Signature-Agent': 'sig1="https://agent.test"' } }, T0);
    const pending = Array.from({ length: 10 }, () => engine.verify(item));
    await new Promise((resolve) => setTimeout(resolve, 10));
    open();
    const outcomes = await Promise.all(pending);
    expect(outcomes.map((o) => o.result)).toEqual(Array(10).fill('verified'));
    expect(fetcher.calls).toEqual([URL_A]);
  });

  it('rejects a directory over the key-count cap or the size cap', async () => {
    const many = setup({ body: jwks(keyA, keyB, generateKey()) }, { maxKeys: 2 });
    expect(await many.at(0)).toEqual({ status: 'invalid' });
    const big = setup({ body: jwks(keyA) }, { maxBytes: 50 });
    expect(await big.at(0)).toEqual({ status: 'unavailable' });
    const fits = setup({ body: jwks(keyA, keyB) }, { maxKeys: 2, maxBytes: 4096 });
    expect((await fits.at(0)).status).toBe('found');
  });

  it('holds at most maxDirectories, evicting the least recently used', async () => {
    const fetcher = memoryFetcher({});
    const urls = ['a', 'b', 'c'].map((host) => `https://${host}.test${DIRECTORY_PATH}`);
    for (const url of urls) fetcher.routes[url] = { body: jwks(keyA) };
    const cache = createKeyDirectoryCache(fetcher, webCryptoEd25519(), { maxDirectories: 2 });
    for (const url of urls) await cache.lookup(url, keyA.thumbprint, T0 * 1000);
    expect(cache.size).toBe(2);
    await cache.lookup(urls[0]!, keyA.thumbprint, T0 * 1000);
    expect(fetcher.calls.filter((u) => u === urls[0]).length).toBe(2);
    await cache.lookup(urls[2]!, keyA.thumbprint, T0 * 1000);
    expect(fetcher.calls.filter((u) => u === urls[2]).length).toBe(1);
  });

  it('maps fetch failures: refused-* and redirect are refused, the rest unavailable', async () => {
    for (const code of ['refused-url', 'refused-address', 'redirect'] as const) {
      expect(await setup(new DirectoryFetchError(code, code)).at(0)).toEqual({ status: 'refused' });
    }
    for (const code of ['http-status', 'too-large', 'timeout', 'network'] as const) {
      expect(await setup(new DirectoryFetchError(code, code)).at(0)).toEqual({ status: 'unavailable' });
    }
    expect(await setup(new Error('boom')).at(0)).toEqual({ status: 'unavailable' });
    expect(await setup({ status: 301, body: '' }).at(0)).toEqual({ status: 'unavailable' });
  });

  it('rejects content that is not a JWK Set; skips non-Ed25519 keys; ignores kid; honours nbf/exp', async () => {
    expect(await setup({ body: 'not json' }).at(0)).toEqual({ status: 'invalid' });
    expect(await setup({ body: '{"keys":{"a":1}}' }).at(0)).toEqual({ status: 'invalid' });
    const mixed = JSON.stringify({ keys: [{ kty: 'RSA', n: 'AQAB', e: 'AQAB' }, { ...keyA.publicJwk, kid: 'not-the-thumbprint' }] });
    expect((await setup({ body: mixed }).at(0)).status).toBe('found');
    const timed = JSON.stringify({ keys: [{ ...keyA.publicJwk, nbf: T0 + 100, exp: T0 + 200 }] });
    const t = setup({ body: timed, headers: { 'cache-control': 'max-age=86400' } });
    expect(await t.at(0)).toEqual({ status: 'unknown' });
    expect((await t.at(150)).status).toBe('found');
    expect(await t.at(200)).toEqual({ status: 'unknown' });
  });
});
