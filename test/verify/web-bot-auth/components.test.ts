// Unit tests of the RFC 9421 pieces: derived components, field parameters, Signature-Agent forms,
// Ed25519 providers, the nonce store and option validation.
import fc from 'fast-check';
import { serializeInnerList } from 'structured-headers';
import { describe, expect, it } from 'vitest';
import { componentValue, normalizeAuthority, type HttpMessage } from '../../../src/verify/web-bot-auth/components.js';
import { defaultEd25519, nobleEd25519, webCryptoEd25519 } from '../../../src/verify/web-bot-auth/ed25519.js';
import { createNonceStore } from '../../../src/verify/web-bot-auth/replay-guard.js';
import { coveredSignatureAgent, directoryLocation, parseSignatureAgent } from '../../../src/verify/web-bot-auth/signature-agent.js';
import { isWellFormed, parseSignatureInput, parseSignatureInputStrict } from '../../../src/verify/web-bot-auth/signature-input.js';
import { webBotAuthVerifier } from '../../../src/verify/web-bot-auth/web-bot-auth-verifier.js';
import { nodeEd25519 } from '../../../src/adapters/node/ed25519.js';
import { generateKey } from './support.js';
import crypto from 'node:crypto';

const message = (target: string, headers: Record<string, string> = {}, authority = 'www.example.com'): HttpMessage => ({
  headers: new Map(Object.entries(headers)),
  method: 'POST',
  scheme: 'https',
  authority,
  target,
});
const value = (m: HttpMessage, name: string, params: Array<[string, string | boolean]> = []) => componentValue(m, name, new Map(params));

describe('derived components (RFC 9421 §2.2)', () => {
  const m = message('/path?param=value&foo=bar&baz=batman');
  it('@method, @authority, @scheme, @target-uri, @request-target, @path, @query', () => {
    expect(value(m, '@method')).toEqual({ ok: true, value: 'POST' });
    expect(value(m, '@authority')).toEqual({ ok: true, value: 'www.example.com' });
    expect(value(m, '@scheme')).toEqual({ ok: true, value: 'https' });
    expect(value(m, '@target-uri')).toEqual({ ok: true, value: 'https://www.example.com/path?param=value&foo=bar&baz=batman' });
    expect(value(m, '@request-target')).toEqual({ ok: true, value: '/path?param=value&foo=bar&baz=batman' });
    expect(value(m, '@path')).toEqual({ ok: true, value: '/path' });
    expect(value(m, '@query')).toEqual({ ok: true, value: '?param=value&foo=bar&baz=batman' });
  });

  it('@query is "?" when absent and @path "/" when empty (§2.2.6, §2.2.7)', () => {
    expect(value(message('/path'), '@query')).toEqual({ ok: true, value: '?' });
    expect(value(message('?a=1'), '@path')).toEqual({ ok: true, value: '/' });
  });

  it('@authority: host lower-cased, default port of the scheme omitted (§2.2.3)', () => {
    expect(normalizeAuthority('WWW.Example.COM:443', 'https')).toBe('www.example.com');
    expect(normalizeAuthority('www.example.com:80', 'https')).toBe('www.example.com:80');
    expect(normalizeAuthority('www.example.com:80', 'http')).toBe('www.example.com');
    expect(normalizeAuthority('www.example.com:443', 'http')).toBe('www.example.com:443');
    // Case never changes how a host reads: an IPv4-like name in capitals is the same text lower-cased
    // (an outside check found "0XC0.0.2.1" read as 192.0.2.1 while "0xc0.0.2.1" stayed as written).
    expect(normalizeAuthority('0XC0.0.2.1', 'https')).toBe(normalizeAuthority('0xc0.0.2.1', 'https'));
    expect(normalizeAuthority('0XC0.0.2.1:443', 'https')).toBe('0xc0.0.2.1');
    expect(normalizeAuthority('[::1]:8443', 'https')).toBe('[::1]:8443');
    expect(normalizeAuthority('user@host', 'https')).toBeUndefined();
    expect(normalizeAuthority('host/path', 'https')).toBeUndefined();
    expect(value({ ...message('/'), authority: undefined }, '@authority')).toEqual({ ok: false, reason: 'authority-not-sent' });
  });

  it('@query-param re-encodes names and values (§2.2.8 examples)', () => {
    const q = message('/path?var=this%20is%20a%20big%0Amultiline%20value&bar=with+plus+whitespace&fa%C3%A7ade%22%3A%20=something&qux=');
    expect(value(q, '@query-param', [['name', 'var']])).toEqual({ ok: true, value: 'this%20is%20a%20big%0Amultiline%20value' });
    expect(value(q, '@query-param', [['name', 'bar']])).toEqual({ ok: true, value: 'with%20plus%20whitespace' });
    expect(value(q, '@query-param', [['name', 'fa%C3%A7ade%22%3A%20']])).toEqual({ ok: true, value: 'something' });
    expect(value(q, '@query-param', [['name', 'qux']])).toEqual({ ok: true, value: '' });
    expect(value(q, '@query-param', [['name', 'missing']])).toEqual({ ok: false, reason: 'query-param-not-sent' });
    expect(value(message('/?a=1&a=2'), '@query-param', [['name', 'a']])).toEqual({ ok: false, reason: 'component-invalid' });
  });

  it('unknown derived components, @status on a request and req without a related request are invalid', () => {
    expect(value(m, '@unknown')).toEqual({ ok: false, reason: 'component-invalid' });
    expect(value(m, '@status')).toEqual({ ok: false, reason: 'component-invalid' });
    expect(value(m, '@authority', [['req', true]])).toEqual({ ok: false, reason: 'component-invalid' });
  });
});

describe('HTTP field components (RFC 9421 §2.1)', () => {
  // RFC 9421 §2.1.2 example.
  const m = message('/', { 'example-dict': ' a=1,    b=2;x=1;y=2,   c=(a   b   c), d', 'example-header': '  value, with, lots ', empty: '' });
  it('plain values are trimmed; empty fields give an empty value', () => {
    expect(value(m, 'example-header')).toEqual({ ok: true, value: 'value, with, lots' });
    expect(value(m, 'empty')).toEqual({ ok: true, value: '' });
    expect(value(m, 'absent')).toEqual({ ok: false, reason: 'header-not-sent' });
  });
  it(';key selects one dictionary member, serialized without its key', () => {
    expect(value(m, 'example-dict', [['key', 'a']])).toEqual({ ok: true, value: '1' });
    expect(value(m, 'example-dict', [['key', 'd']])).toEqual({ ok: true, value: '?1' });
    expect(value(m, 'example-dict', [['key', 'b']])).toEqual({ ok: true, value: '2;x=1;y=2' });
    expect(value(m, 'example-dict', [['key', 'c']])).toEqual({ ok: true, value: '(a b c)' });
    expect(value(m, 'example-dict', [['key', 'z']])).toEqual({ ok: false, reason: 'header-not-sent' });
  });
  it(';sf re-serializes strictly; ;bs wraps bytes; bad combinations are invalid', () => {
    expect(value(m, 'example-dict', [['sf', true]])).toEqual({ ok: true, value: 'a=1, b=2;x=1;y=2, c=(a b c), d' });
    expect(value(m, 'example-header', [['bs', true]])).toEqual({ ok: true, value: ':dmFsdWUsIHdpdGgsIGxvdHM=:' });
    expect(value(m, 'example-dict', [['bs', true], ['sf', true]])).toEqual({ ok: false, reason: 'component-invalid' });
    expect(value(m, 'example-dict', [['unknown', true]])).toEqual({ ok: false, reason: 'component-invalid' });
  });
});

describe('Signature-Input parsing', () => {
  it('re-serializes the inner list for @signature-params and rejects duplicates and @signature-params', () => {
    const [input] = parseSignatureInput('sig1=( "@authority"   "signature-agent";key="sig1" );created=1;keyid="k";tag="web-bot-auth"')!;
    expect(input && isWellFormed(input) && input.signatureParams).toBe('("@authority" "signature-agent";key="sig1");created=1;keyid="k";tag="web-bot-auth"');
    expect(parseSignatureInput('sig1=("@authority" "@authority");tag="web-bot-auth"')![0]).toEqual({ label: 'sig1', malformed: true, tag: 'web-bot-auth' });
    expect(parseSignatureInput('sig1=("@signature-params")')![0]).toEqual({ label: 'sig1', malformed: true });
    expect(parseSignatureInput('sig1=("@authority");created=1.5')![0]).toEqual({ label: 'sig1', malformed: true });
    expect(parseSignatureInput('sig1=("Host")')![0]).toEqual({ label: 'sig1', malformed: true });
    expect(parseSignatureInput('sig1=(')).toBeUndefined();
  });

  it('round-trips any inner list of component names (property)', () => {
    const name = fc.constantFrom('@authority', '@method', '@path', 'signature-agent', 'content-type', 'x-a');
    fc.assert(
      fc.property(fc.uniqueArray(name, { maxLength: 6 }), fc.integer({ min: 0, max: 2 ** 40 }), (names, created) => {
        const text = serializeInnerList([names.map((n) => [n, new Map()]), new Map<string, string | number>([['created', created], ['tag', 'web-bot-auth']])]);
        const [input] = parseSignatureInput(`sig1=${text}`)!;
        expect(input && isWellFormed(input) && input.signatureParams).toBe(text);
      }),
      { numRuns: 200 },
    );
  });
});

describe('Signature-Input fast path', () => {
  it('agrees with structured-headers on generated and arbitrary input (property)', () => {
    const pick = <T>(values: T[]) => fc.constantFrom(...values);
    const item = fc.tuple(
      pick(['"@authority"', '"signature-agent"', '"a\\"b"', 'tok', '1', '"@path"', '"Host"', '"@signature-params"', '"caf\u00e9"']),
      fc.array(pick([';key="sig1"', ';bs', ';req', ';x=?0', ';d=1.5', ';k=tok']), { maxLength: 2 }),
    );
    const params = fc.array(
      pick([';created=1618884473', ';expires=-5', ';keyid="k\\\\y"', ';alg=ed25519', ';tag="web-bot-auth"', ';x=?0', ';y=?1', ';d=1.5', ';b=:AAA=:', ';created=1234567890123456', ';z', '; w=1', ';created=1;created=2', ';t=@1', ';n=007']),
      { maxLength: 4 },
    );
    const member = fc.tuple(pick(['sig1', 'a', '*x', 'Sig', '1a', 'sig1']), pick(['=(', '= (', '=', '']), fc.array(item, { maxLength: 4 }), pick([' ', '  ', '']), pick([')', ' )', '']), params);
    const field = fc.tuple(pick(['', ' ', '\t']), fc.array(member, { maxLength: 3 }), pick([', ', ',', ' ,\t', ', ,']), pick(['', ' ', ',']));
    const render = ([lead, members, sep, trail]: [string, Array<[string, string, Array<[string, string[]]>, string, string, string[]]>, string, string]) =>
      lead + members.map(([label, open, items, gap, close, ps]) => `${label}${open}${items.map(([n, p]) => n + p.join('')).join(gap === '' ? ' ' : gap)}${close}${ps.join('')}`).join(sep) + trail;
    fc.assert(
      fc.property(field, (f) => {
        const text = render(f as never);
        expect(parseSignatureInput(text)).toEqual(parseSignatureInputStrict(text));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (text) => {
        expect(parseSignatureInput(text)).toEqual(parseSignatureInputStrict(text));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('Signature-Agent (both forms)', () => {
  it('parses the dictionary, legacy string and bare URL forms', () => {
    expect(parseSignatureAgent('sig1="https://a.test";type=jwks_uri, sig2="https://b.test"')).toEqual({
      form: 'dictionary',
      members: new Map([
        ['sig1', { uri: 'https://a.test', type: 'jwks_uri' }],
        ['sig2', { uri: 'https://b.test', type: 'directory' }],
      ]),
    });
    expect(parseSignatureAgent('"https://a.test"')).toEqual({ form: 'string', member: { uri: 'https://a.test', type: 'directory' } });
    expect(parseSignatureAgent('https://a.test')).toEqual({ form: 'string', member: { uri: 'https://a.test', type: 'directory' } });
    expect(parseSignatureAgent('sig1=("x")')).toBeUndefined();
    expect(parseSignatureAgent('sig1=1')).toBeUndefined();
  });

  it('picks the covered member; a dictionary covered whole needs one member or one keyed by the label', () => {
    const [input] = parseSignatureInput('sig1=("@authority" "signature-agent")')!;
    if (!input || !isWellFormed(input)) throw new Error('malformed');
    const two = parseSignatureAgent('a="https://a.test", b="https://b.test"')!;
    expect(coveredSignatureAgent(two, input.components, 'sig1')).toEqual({ ok: false, reason: 'signature-agent-malformed' });
    expect(coveredSignatureAgent(two, input.components, 'b')).toEqual({ ok: true, member: { uri: 'https://b.test', type: 'directory' } });
    expect(coveredSignatureAgent(parseSignatureAgent('"https://a.test"')!, [], 'sig1')).toEqual({ ok: false, reason: 'signature-agent-not-covered' });
  });

  it('maps members to directory URLs', () => {
    const wk = '/.well-known/http-message-signatures-directory';
    expect(directoryLocation({ uri: 'https://Agent.test', type: 'directory' })).toEqual({ ok: true, url: `https://agent.test${wk}`, origin: 'https://agent.test' });
    expect(directoryLocation({ uri: `https://agent.test${wk}?x#y`, type: 'directory' })).toEqual({ ok: true, url: `https://agent.test${wk}`, origin: 'https://agent.test' });
    expect(directoryLocation({ uri: 'https://agent.test/keys.json?v=1', type: 'jwks_uri' })).toEqual({ ok: true, url: 'https://agent.test/keys.json', origin: 'https://agent.test' });
    expect(directoryLocation({ uri: 'https://agent.test/other', type: 'directory' })).toEqual({ ok: false, reason: 'signature-agent-unsupported' });
    expect(directoryLocation({ uri: 'https://agent.test/card', type: 'cimd' })).toEqual({ ok: false, reason: 'signature-agent-unsupported' });
    expect(directoryLocation({ uri: 'not a url', type: 'directory' })).toEqual({ ok: false, reason: 'signature-agent-malformed' });
    expect(directoryLocation({ uri: 'https://u:p@agent.test', type: 'directory' })).toEqual({ ok: false, reason: 'signature-agent-malformed' });
  });
});

describe('Ed25519 providers', () => {
  it('WebCrypto, noble, node:crypto and the default agree on valid, tampered and malformed input', async () => {
    const key = generateKey();
    const raw = new Uint8Array(Buffer.from(key.publicJwk.x, 'base64url'));
    const message = new TextEncoder().encode('"@authority": example.com');
    const signature = new Uint8Array(crypto.sign(null, message, key.privateKey));
    const tampered = signature.slice();
    tampered[5] = tampered[5]! ^ 1;
    for (const verify of [webCryptoEd25519(), nobleEd25519(), defaultEd25519(), nodeEd25519()]) {
      expect(await verify(raw, message, signature)).toBe(true);
      expect(await verify(raw, message, tampered)).toBe(false);
      expect(await verify(raw, new TextEncoder().encode('other'), signature)).toBe(false);
      expect(await verify(new Uint8Array(32).fill(0xff), message, signature)).toBe(false);
    }
  });
});

describe('nonce store', () => {
  it('rejects a nonce until it expires and stays bounded', () => {
    const store = createNonceStore({ max: 3 });
    expect(store.claim('a', 2000, 1000)).toBe(true);
    expect(store.claim('a', 2000, 1500)).toBe(false);
    expect(store.claim('a', 3000, 2000)).toBe(true);
    for (const n of ['b', 'c', 'd', 'e']) store.claim(n, 10_000, 2000);
    expect(store.size).toBe(3);
    expect(() => createNonceStore({ max: 0 })).toThrow(RangeError);
  });
});

describe('webBotAuthVerifier options', () => {
  it('validates options at creation, naming the option', () => {
    expect(() => webBotAuthVerifier({ clockSkewSeconds: -1 })).toThrow(/clockSkewSeconds/);
    expect(() => webBotAuthVerifier({ maxWindowSeconds: 0 })).toThrow(RangeError);
    expect(() => webBotAuthVerifier({ maxSignatures: 1.5 })).toThrow(/maxSignatures/);
    expect(() => webBotAuthVerifier({ scheme: 'ftp' as 'https' })).toThrow(/scheme/);
    expect(() => webBotAuthVerifier({ fetchDirectory: 'x' as never })).toThrow(TypeError);
    expect(() => webBotAuthVerifier({ keys: [{ jwk: { kty: 'RSA' } }] })).toThrow(/keys\[0\]\.jwk/);
    expect(() => webBotAuthVerifier({ keys: [{ jwk: generateKey().publicJwk, directory: 'nope' }] })).toThrow(/keys\[0\]\.directory/);
    expect(() => webBotAuthVerifier({ fetchDirectory: async () => ({ status: 200, headers: new Headers(), body: new Uint8Array() }), directoryCache: { maxKeys: -1 } })).toThrow(
      /directoryCache\.maxKeys/,
    );
    expect(() => webBotAuthVerifier({ nonceStore: {} as never })).toThrow(/nonceStore/);
  });

  it('applies only when both Signature-Input and Signature are present', () => {
    const verifier = webBotAuthVerifier();
    const agent = {} as never;
    expect(verifier.appliesTo(agent, { headers: new Map([['signature-input', 'x'], ['signature', 'y']]) })).toBe(true);
    expect(verifier.appliesTo(agent, { headers: new Map([['signature-input', 'x']]) })).toBe(false);
    expect(verifier.appliesTo(agent, { headers: new Map([['signature', 'y']]) })).toBe(false);
  });
});
