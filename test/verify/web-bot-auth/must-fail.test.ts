// Must-fail and edge cases of the Web Bot Auth verifier through the engine, each asserting its
// exact outcome and reason code. Requests are signed by http-message-sig 0.3.0 with a fixed clock.
import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { normalizeHeaders } from '../../../src/identify/headers.js';
import { DirectoryFetchError } from '../../../src/verify/web-bot-auth/directory-fetcher.js';
import { createNonceStore } from '../../../src/verify/web-bot-auth/replay-guard.js';
import { webBotAuthVerifier, type WebBotAuthVerifierOptions } from '../../../src/verify/web-bot-auth/web-bot-auth-verifier.js';
import { component, DIRECTORY_PATH, fixedClock, generateKey, jwks, memoryFetcher, signRequest, testEngine, type SignOptions } from './support.js';

const NOW = 1_800_000_000;
const keyA = generateKey();
const keyB = generateKey();
const keyC = generateKey();
const AGENT = 'sig1="https://agent.test"';

function setup(options: Partial<WebBotAuthVerifierOptions> = {}) {
  const clock = fixedClock(NOW);
  const fetcher = memoryFetcher({
    [`https://agent.test${DIRECTORY_PATH}`]: { body: jwks(keyA), headers: { 'cache-control': 'max-age=3600' } },
    [`https://other.test${DIRECTORY_PATH}`]: { body: jwks(keyB) },
  });
  const engine = testEngine(webBotAuthVerifier({ fetchDirectory: fetcher, ...options }), clock);
  const sign = (opts: Partial<SignOptions> = {}) => signRequest({ key: keyA, headers: { 'Signature-Agent': AGENT }, ...opts }, NOW);
  const check = async (item: Awaited<ReturnType<typeof sign>>) => {
    const outcome = await engine.verify(item);
    return { result: outcome.result, ...outcome.verification.checks[0]! };
  };
  return { clock, fetcher, engine, sign, check };
}

const failed = (reason: string) => ({ result: 'verification_failed', method: 'web-bot-auth', outcome: 'fail', reason });
const unverifiable = (reason: string) => ({ result: 'not_verifiable', method: 'web-bot-auth', outcome: 'inconclusive', reason });
const VERIFIED = { result: 'verified', method: 'web-bot-auth', outcome: 'pass', reason: 'signature-valid' };

describe('web-bot-auth verifier: must-fail cases', () => {
  let t: ReturnType<typeof setup>;
  beforeEach(() => {
    t = setup();
  });

  it('baseline: a dictionary-form request signed with the directory key verifies', async () => {
    expect(await t.check(await t.sign())).toEqual(VERIFIED);
  });

  it('wrong tag: no web-bot-auth signature is inconclusive (tag-missing)', async () => {
    expect(await t.check(await t.sign({ params: { tag: 'something-else' } }))).toEqual(unverifiable('tag-missing'));
  });

  it('expired beyond the skew: signature-expired', async () => {
    expect(await t.check(await t.sign({ params: { created: NOW - 600, expires: NOW - 61 } }))).toEqual(failed('signature-expired'));
    // Within the 60 s skew it still passes.
    expect(await t.check(await t.sign({ params: { created: NOW - 600, expires: NOW - 59 } }))).toEqual(VERIFIED);
  });

  it('created in the future beyond the skew: signature-not-yet-valid', async () => {
    expect(await t.check(await t.sign({ params: { created: NOW + 61, expires: NOW + 300 } }))).toEqual(failed('signature-not-yet-valid'));
    expect(await t.check(await t.sign({ params: { created: NOW + 59, expires: NOW + 300 } }))).toEqual(VERIFIED);
  });

  it('window longer than 24 h: window-too-long, unjudged (the drafts only recommend 24 h)', async () => {
    expect(await t.check(await t.sign({ params: { expires: NOW + 86_401 } }))).toEqual(unverifiable('window-too-long'));
    expect(await t.check(await t.sign({ params: { expires: NOW + 86_400 } }))).toEqual(VERIFIED);
  });

  it('a signature covering more than 32 components is not checked (too-many-components): each costs the verifier time', async () => {
    // 31 members of one Dictionary field besides @authority and signature-agent: 33 components.
    const members = Array.from({ length: 31 }, (_, i) => `m${i}=${i}`).join(', ');
    const covering = (count: number) => ['@authority', component('signature-agent', { key: 'sig1' }), ...Array.from({ length: count }, (_, i) => component('h', { key: `m${i}` }))];
    expect(await t.check(await t.sign({ headers: { 'Signature-Agent': AGENT, h: members }, components: covering(31) }))).toEqual(unverifiable('too-many-components'));
    // 32 are checked, and verify.
    expect(await t.check(await t.sign({ headers: { 'Signature-Agent': AGENT, h: members }, components: covering(30) }))).toEqual(VERIFIED);
  });

  it("with siteAuthorities, a signature made for another site and replayed here with that site's Host fails authority-not-ours", async () => {
    const site = setup({ siteAuthorities: ['Example.com.', 'www.example.com:443'] });
    // signRequest signs for https://example.com/... by default: the site's own host.
    expect(await site.check(await site.sign())).toEqual(VERIFIED);
    expect(await site.check(await site.sign({ url: 'https://www.example.com/page' }))).toEqual(VERIFIED);
    expect(await site.check(await site.sign({ url: 'https://example.com./page' }))).toEqual(VERIFIED);
    // Genuinely signed, for another site, and sent here as it was signed.
    expect(await site.check(await site.sign({ url: 'https://attacker.example/page' }))).toEqual(failed('authority-not-ours'));
    // Without the option any host is judged, so the replay verifies.
    expect(await t.check(await t.sign({ url: 'https://attacker.example/page' }))).toEqual(VERIFIED);
    // A stranger's signature is still no evidence (the next verifier decides), and no Host at all leaves it unchecked.
    expect(await site.check(await site.sign({ url: 'https://attacker.example/page', headers: { 'Signature-Agent': 'sig1="https://stranger.test"', 'User-Agent': 'TestBot/1.0' } }))).toEqual(unverifiable('signature-agent-mismatch'));
    const hostless = await site.sign();
    delete hostless.request_headers['Host'];
    expect(await site.check(hostless)).toEqual(unverifiable('authority-not-sent'));
    for (const bad of ['example.com/path', '.', 'site.example..', '.example.com']) expect(() => setup({ siteAuthorities: [bad] })).toThrow('siteAuthorities[0] must be a host or host:port');
    expect(() => setup({ siteAuthorities: [] })).toThrow(TypeError);
  });

  it("a request's own siteAuthorities (a project's hosts) replace the verifier's", async () => {
    const verdict = async (engine: ReturnType<typeof setup>['engine'], item: Awaited<ReturnType<typeof t.sign>>, siteAuthorities: readonly string[]) => {
      const outcome = await engine.verifyNormalized(normalizeHeaders(item.request_headers), { method: item.request_method, path: item.request_path, siteAuthorities });
      return { result: outcome.result, ...outcome.verification.checks[0]! };
    };
    const site = setup({ siteAuthorities: ['example.com'] });
    const shop = ['Shop.Example:443', 'shop.example.'];
    // The project's list decides: its host verifies, the verifier's own host is now someone else's.
    expect(await verdict(site.engine, await site.sign({ url: 'https://shop.example/cart' }), shop)).toEqual(VERIFIED);
    expect(await verdict(site.engine, await site.sign(), shop)).toEqual(failed('authority-not-ours'));
    // An empty list leaves the verifier's own.
    expect(await verdict(site.engine, await site.sign({ url: 'https://shop.example/cart' }), [])).toEqual(failed('authority-not-ours'));
    expect(await verdict(site.engine, await site.sign(), [])).toEqual(VERIFIED);
    // A verifier without a list of its own takes the request's.
    expect(await verdict(t.engine, await t.sign({ url: 'https://attacker.example/page' }), ['example.com'])).toEqual(failed('authority-not-ours'));
    expect(await verdict(t.engine, await t.sign({ url: 'https://attacker.example/page' }), [])).toEqual(VERIFIED);
  });

  it('sig1=() covers nothing: authority-not-covered', async () => {
    expect(await t.check(await t.sign({ headers: { 'User-Agent': 'TestBot/1.0' }, components: [] }))).toEqual(failed('authority-not-covered'));
  });

  it('no @authority or @target-uri covered: authority-not-covered', async () => {
    expect(await t.check(await t.sign({ components: ['@path', component('signature-agent', { key: 'sig1' })] }))).toEqual(failed('authority-not-covered'));
    // @target-uri is an accepted alternative.
    expect(await t.check(await t.sign({ components: ['@target-uri', component('signature-agent', { key: 'sig1' })] }))).toEqual(VERIFIED);
  });

  it('signature-agent present but not covered: signature-agent-not-covered', async () => {
    expect(await t.check(await t.sign({ components: ['@authority'] }))).toEqual(failed('signature-agent-not-covered'));
  });

  it('wrong ;key (covered member absent from the dictionary): header-not-sent, unjudged', async () => {
    const item = await t.sign({ headers: { 'Signature-Agent': 'sig2="https://agent.test"' }, components: ['@authority', component('signature-agent', { key: 'sig2' })] });
    item.request_headers['Signature-Agent'] = AGENT;
    expect(await t.check(item)).toEqual(unverifiable('header-not-sent'));
  });

  it('unknown keyid: key-unknown', async () => {
    expect(await t.check(await t.sign({ key: keyC }))).toEqual(failed('key-unknown'));
  });

  it('key from another directory (valid in other.test, presented with agent.test): key-unknown', async () => {
    expect(await t.check(await t.sign({ key: keyB }))).toEqual(failed('key-unknown'));
    // The same key is accepted for the agent of its own directory.
    const own = await t.sign({ key: keyB, headers: { 'Signature-Agent': 'sig1="https://other.test"' } });
    expect(await t.engine.verify(own)).toMatchObject({ result: 'verified', agent_id: 'other-bot' });
  });

  it('tampered covered header (Host / @authority): signature-invalid', async () => {
    const item = await t.sign();
    item.request_headers.Host = 'evil.example';
    expect(await t.check(item)).toEqual(failed('signature-invalid'));
  });

  it('tampered covered Signature-Agent value: signature-invalid', async () => {
    const item = await t.sign();
    item.request_headers['Signature-Agent'] = 'sig1="https://agent.test/"';
    expect(await t.check(item)).toEqual(failed('signature-invalid'));
  });

  it('tampered signature bytes: signature-invalid', async () => {
    const item = await t.sign();
    const sig = item.request_headers.Signature!;
    const b64 = sig.slice(sig.indexOf(':') + 1, -1);
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    bytes[10] = bytes[10]! ^ 1;
    item.request_headers.Signature = `sig1=:${btoa(String.fromCharCode(...bytes))}:`;
    expect(await t.check(item)).toEqual(failed('signature-invalid'));
  });

  it('malformed Signature-Input: signature-input-malformed', async () => {
    const item = await t.sign();
    item.request_headers['Signature-Input'] = 'sig1=("@authority";tag="web-bot-auth"';
    expect(await t.check(item)).toEqual(failed('signature-input-malformed'));
  });

  it('a tagged member whose components are not strings: signature-input-malformed', async () => {
    const item = await t.sign();
    item.request_headers['Signature-Input'] = item.request_headers['Signature-Input']!.replace('"@authority"', '@authority');
    expect(await t.check(item)).toEqual(failed('signature-input-malformed'));
  });

  it('malformed Signature and a label present in one field only: signature-malformed', async () => {
    const item = await t.sign();
    expect(await t.check({ ...item, request_headers: { ...item.request_headers, Signature: 'sig1=:not base64' } })).toEqual(failed('signature-malformed'));
    expect(await t.check({ ...item, request_headers: { ...item.request_headers, Signature: item.request_headers.Signature!.replace('sig1=', 'sig9=') } })).toEqual(
      failed('signature-malformed'),
    );
  });

  it('missing created / expires / keyid', async () => {
    expect(await t.check(await t.sign({ params: { created: undefined } }))).toEqual(failed('created-missing'));
    expect(await t.check(await t.sign({ params: { expires: undefined } }))).toEqual(failed('expires-missing'));
    expect(await t.check(await t.sign({ params: { keyid: undefined } }))).toEqual(failed('keyid-missing'));
  });

  it('an alg other than ed25519 is inconclusive (algorithm-unsupported)', async () => {
    // http-message-sig refuses to sign a mismatched alg, so the parameter is rewritten after signing.
    const item = await t.sign();
    item.request_headers['Signature-Input'] = item.request_headers['Signature-Input']!.replace('alg="ed25519"', 'alg="rsa-pss-sha512"');
    expect(await t.check(item)).toEqual(unverifiable('algorithm-unsupported'));
  });

  it('a covered field absent from the request: header-not-sent, unjudged', async () => {
    const item = await t.sign({ headers: { 'Signature-Agent': AGENT, 'X-Extra': '1' }, components: ['@authority', component('signature-agent', { key: 'sig1' }), 'x-extra'] });
    expect(await t.check(item)).toEqual(VERIFIED);
    delete item.request_headers['X-Extra'];
    expect(await t.check(item)).toEqual(unverifiable('header-not-sent'));
  });

  it('covered @method and @path are bound to the request', async () => {
    const item = await t.sign({ components: ['@method', '@authority', '@path', '@query', component('signature-agent', { key: 'sig1' })] });
    expect(await t.check(item)).toEqual(VERIFIED);
    expect(await t.check({ ...item, request_path: '/other?x=1' })).toEqual(failed('signature-invalid'));
    expect(await t.check({ ...item, request_method: 'POST' })).toEqual(failed('signature-invalid'));
    // Not sent is not evidence: the signature cannot be checked without them.
    expect(await t.check({ ...item, request_path: undefined as unknown as string })).toEqual(unverifiable('path-not-sent'));
    expect(await t.check({ ...item, request_method: undefined as unknown as string })).toEqual(unverifiable('method-not-sent'));
  });

  it('a correctly signed request without its Host header: authority-not-sent, unjudged', async () => {
    const item = await t.sign();
    expect(await t.check(item)).toEqual(VERIFIED);
    const host = Object.keys(item.request_headers).find((name) => name.toLowerCase() === 'host')!;
    const { [host]: _host, ...rest } = item.request_headers;
    expect(await t.check({ ...item, request_headers: rest })).toEqual(unverifiable('authority-not-sent'));
    // @target-uri needs both: the authority, then the path.
    const uri = await t.sign({ components: ['@target-uri', component('signature-agent', { key: 'sig1' })] });
    expect(await t.check({ ...uri, request_path: undefined as unknown as string })).toEqual(unverifiable('path-not-sent'));
    // A Host that was sent but differs is evidence: the signature was checked and does not hold.
    expect(await t.check({ ...item, request_headers: { ...rest, Host: 'elsewhere.test' } })).toEqual(failed('signature-invalid'));
  });

  it('a malformed Signature-Agent: signature-agent-malformed', async () => {
    const item = await t.sign();
    item.request_headers['Signature-Agent'] = 'sig1=("a"';
    item.request_headers['User-Agent'] = 'TestBot/1.0';
    expect(await t.check(item)).toEqual(failed('signature-agent-malformed'));
  });

  it('a Signature-Agent of type cimd is inconclusive (signature-agent-unsupported)', async () => {
    const header = 'sig1="https://agent.test/card";type=cimd';
    expect(await t.check(await t.sign({ headers: { 'Signature-Agent': header } }))).toEqual(unverifiable('signature-agent-unsupported'));
  });

  it('a signer that is not the candidate agent is inconclusive and its directory is never fetched', async () => {
    const item = await t.sign({ headers: { 'Signature-Agent': 'sig1="https://stranger.test"', 'User-Agent': 'TestBot/1.0' } });
    expect(await t.check(item)).toEqual(unverifiable('signature-agent-mismatch'));
    expect(t.fetcher.calls).toEqual([]);
  });

  it('a jwks_uri Signature-Agent is fetched only at the origin\'s well-known directory: any other path is refused unfetched (key-directory-refused), so requests can neither flood the cache nor squat it', async () => {
    const jwks = (path: string) => ({ headers: { 'Signature-Agent': `sig1="https://agent.test${path}";type=jwks_uri`, 'User-Agent': 'TestBot/1.0' } });
    for (const n of [1, 2, 3, 4, 5]) expect(await t.check(await t.sign(jwks(`/keys/${n}.json`)))).toEqual(unverifiable('key-directory-refused'));
    expect(t.fetcher.calls).toEqual([]);
    expect(await t.check(await t.sign(jwks(DIRECTORY_PATH)))).toEqual(VERIFIED);
    expect(t.fetcher.calls).toEqual([`https://agent.test${DIRECTORY_PATH}`]);
  });

  it("a stranger's signature is no evidence however it is flawed: expired, from the future, or not covering its Signature-Agent", async () => {
    const stranger = { 'Signature-Agent': 'sig1="https://stranger.test"', 'User-Agent': 'TestBot/1.0' };
    expect(await t.check(await t.sign({ headers: stranger, params: { created: NOW - 600, expires: NOW - 300 } }))).toEqual(unverifiable('signature-agent-mismatch'));
    expect(await t.check(await t.sign({ headers: stranger, params: { created: NOW + 90, expires: NOW + 300 } }))).toEqual(unverifiable('signature-agent-mismatch'));
    expect(await t.check(await t.sign({ headers: stranger, components: ['@authority'] }))).toEqual(unverifiable('signature-agent-mismatch'));
    // The agent's own signer, so flawed, still fails.
    expect(await t.check(await t.sign({ params: { created: NOW - 600, expires: NOW - 300 } }))).toEqual(failed('signature-expired'));
    expect(await t.check(await t.sign({ components: ['@authority'] }))).toEqual(failed('signature-agent-not-covered'));
  });

  it('no Signature-Agent: keys come from the agent’s own directory', async () => {
    const item = await t.sign({ headers: { 'User-Agent': 'TestBot/1.0' } });
    expect(await t.check(item)).toEqual(VERIFIED);
    expect(await t.check(await t.sign({ key: keyC, headers: { 'User-Agent': 'TestBot/1.0' } }))).toEqual(failed('key-unknown'));
  });

  it('no Signature-Agent and no key source for the agent: signature-agent-missing', async () => {
    const u = setup({ fetchDirectory: undefined });
    expect(await u.check(await u.sign({ headers: { 'User-Agent': 'TestBot/1.0' } }))).toEqual(unverifiable('signature-agent-missing'));
  });

  it('several signatures: any valid one passes; a mix without a valid one reports the first failure', async () => {
    const good = await t.sign({ label: 'sig1' });
    const bad = await t.sign({ key: keyC, label: 'sig2', components: ['@authority', component('signature-agent', { key: 'sig1' })] });
    const both = (first: typeof good, second: typeof good) => ({
      ...first,
      request_headers: {
        ...first.request_headers,
        'Signature-Input': `${first.request_headers['Signature-Input']}, ${second.request_headers['Signature-Input']}`,
        Signature: `${first.request_headers.Signature}, ${second.request_headers.Signature}`,
      },
    });
    expect(await t.check(both(bad, good))).toEqual(VERIFIED);
    expect(await t.check(both(good, bad))).toEqual(VERIFIED);
    const other = await t.sign({ label: 'sig3', params: { tag: 'not-ours' } });
    expect(await t.check(both(other, good))).toEqual(VERIFIED);
    const expired = await t.sign({ label: 'sig1', params: { created: NOW - 900, expires: NOW - 600 } });
    expect(await t.check(both(expired, bad))).toEqual(failed('signature-expired'));
  });

  it('nonce replay: the same nonce within its window fails nonce-replayed', async () => {
    const u = setup({ nonceStore: createNonceStore({ max: 10 }) });
    const item = await u.sign({ params: { nonce: 'abc' } });
    expect(await u.check(item)).toEqual(VERIFIED);
    expect(await u.check(item)).toEqual(failed('nonce-replayed'));
    expect(await u.check(await u.sign({ params: { nonce: 'def' } }))).toEqual(VERIFIED);
  });

  it('without requireNonce a nonce-less signature verifies again and again within its window', async () => {
    const u = setup({ nonceStore: createNonceStore({ max: 10 }) });
    const item = await u.sign({ params: { created: NOW, expires: NOW + 86_400 } });
    expect(item.request_headers['Signature-Input']).not.toContain('nonce=');
    for (let i = 0; i < 3; i++) expect(await u.check(item)).toEqual(VERIFIED);
  });

  it('requireNonce: a valid signature without a nonce is nonce-missing (unjudged), one with a nonce verifies once', async () => {
    const u = setup({ nonceStore: createNonceStore({ max: 10 }), requireNonce: true });
    expect(await u.check(await u.sign())).toEqual(unverifiable('nonce-missing'));
    const item = await u.sign({ params: { nonce: 'n-1' } });
    expect(await u.check(item)).toEqual(VERIFIED);
    expect(await u.check(item)).toEqual(failed('nonce-replayed'));
    // A forged nonce-less signature is still a forgery: the check comes after the signature's.
    const forged = await u.sign({ key: keyC });
    expect(await u.check(forged)).toEqual(failed('key-unknown'));
    expect(() => webBotAuthVerifier({ requireNonce: true })).toThrow(RangeError);
    expect(() => webBotAuthVerifier({ requireNonce: true, nonceStore: createNonceStore() })).not.toThrow();
    expect(() => webBotAuthVerifier({ requireNonce: 'yes' as never, nonceStore: createNonceStore() })).toThrow(TypeError);
  });

  it('a request judged after the fact is judged at the time it arrived (receivedAt)', async () => {
    const item = await t.sign({ params: { created: NOW, expires: NOW + 60 } });
    t.clock.set(NOW + 3600);
    const headers = new Map(Object.entries(item.request_headers).map(([name, value]) => [name.toLowerCase(), value]));
    const late = await t.engine.verifyNormalized(headers, { method: item.request_method, path: item.request_path });
    expect(late.verification.checks[0]).toMatchObject({ outcome: 'fail', reason: 'signature-expired' });
    const atArrival = await t.engine.verifyNormalized(headers, { method: item.request_method, path: item.request_path, receivedAt: (NOW + 30) * 1000 });
    expect(atArrival.result).toBe('verified');
  });

  it('directory trouble is inconclusive: unavailable vs refused', async () => {
    t.fetcher.routes[`https://agent.test${DIRECTORY_PATH}`] = new DirectoryFetchError('timeout', 'timed out');
    expect(await t.check(await t.sign())).toEqual(unverifiable('key-directory-unavailable'));
    const u = setup();
    u.fetcher.routes[`https://agent.test${DIRECTORY_PATH}`] = new DirectoryFetchError('refused-address', 'private address');
    expect(await u.check(await u.sign())).toEqual(unverifiable('key-directory-refused'));
    const v = setup();
    v.fetcher.routes[`https://agent.test${DIRECTORY_PATH}`] = { body: '{"keys":{}}' };
    expect(await v.check(await v.sign())).toEqual(unverifiable('key-directory-invalid'));
  });

  it('the legacy string form and the unquoted form of Signature-Agent', async () => {
    const legacy = await t.sign({ headers: { 'Signature-Agent': '"https://agent.test"' }, components: ['@authority', 'signature-agent'] });
    expect(await t.check(legacy)).toEqual(VERIFIED);
    const bare = await t.sign({ headers: { 'Signature-Agent': 'https://agent.test' }, components: ['@authority', 'signature-agent'] });
    expect(await t.check(bare)).toEqual(VERIFIED);
    // A full directory URL is accepted as the directory itself.
    const full = await t.sign({ headers: { 'Signature-Agent': `sig1="https://agent.test${DIRECTORY_PATH}"` } });
    expect(await t.check(full)).toEqual(VERIFIED);
  });

  it('pinned keys: used without fetching, and authoritative for their directory', async () => {
    const u = setup({ fetchDirectory: undefined, keys: [{ jwk: keyA.publicJwk, directory: 'https://agent.test' }] });
    expect(await u.check(await u.sign())).toEqual(VERIFIED);
    expect(await u.check(await u.sign({ key: keyC }))).toEqual(failed('key-unknown'));
    expect(u.fetcher.calls).toEqual([]);
    // A pinned key bound to another agent proves nothing for this one.
    const w = setup({ fetchDirectory: undefined, keys: [{ jwk: keyA.publicJwk, agent: 'other-bot' }] });
    expect(await w.check(await w.sign({ headers: { 'User-Agent': 'TestBot/1.0' } }))).toEqual(unverifiable('signature-agent-missing'));
  });

  it('@authority comes from :authority when present, and its default port depends on the scheme option', async () => {
    const item = await t.sign();
    const { Host: host, ...rest } = item.request_headers;
    expect(await t.check({ ...item, request_headers: { ...rest, ':authority': host! } })).toEqual(VERIFIED);
    expect(await t.check({ ...item, request_headers: { ...item.request_headers, Host: 'EXAMPLE.com:443' } })).toEqual(VERIFIED);
    expect(await t.check({ ...item, request_headers: { ...item.request_headers, Host: 'example.com:80' } })).toEqual(failed('signature-invalid'));
    const u = setup({ scheme: 'http' });
    const plain = await u.sign({ url: 'http://example.com/page' });
    expect(await u.check({ ...plain, request_headers: { ...plain.request_headers, Host: 'example.com:80' } })).toEqual(VERIFIED);
  });

  it('never throws on hostile headers: every answer has a web-bot-auth reason (property)', async () => {
    const piece = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom('sig1=', '("@authority"', ');tag="web-bot-auth"', ';created=1800000000', ';expires=1800000100', ';keyid="x"', ':AAAA:', '"https://agent.test"', 'sig1="https://agent.test"', '"signature-agent";key="sig1"', ', '),
    );
    const value = fc.array(piece, { maxLength: 6 }).map((parts) => parts.join(''));
    await fc.assert(
      fc.asyncProperty(value, value, value, value, async (input, signature, agent, host) => {
        const outcome = await t.engine.verify({
          request_headers: { 'User-Agent': 'TestBot/1.0', 'Signature-Input': input, Signature: signature, 'Signature-Agent': agent, Host: host },
          request_method: 'GET',
          request_path: '/',
        });
        for (const check of outcome.verification.checks) expect(check.reason).not.toBe('verifier-error');
      }),
      { numRuns: 300 },
    );
  });
});
