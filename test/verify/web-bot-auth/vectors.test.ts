// Spec vectors: RFC 9421 B.2.6, the Web Bot Auth Ed25519 vectors, the signed directory
// response, RFC 7638 thumbprints. One test per vector, named by its id.
import { describe, expect, it } from 'vitest';
import { createCatalog } from '../../../src/index.js';
import type { HttpMessage } from '../../../src/verify/web-bot-auth/components.js';
import { verifyDirectoryProof } from '../../../src/verify/web-bot-auth/directory-signature.js';
import { nobleEd25519, webCryptoEd25519 } from '../../../src/verify/web-bot-auth/ed25519.js';
import { ed25519KeyFromJwk, jwkThumbprint } from '../../../src/verify/web-bot-auth/jwk.js';
import { createSignatureBase } from '../../../src/verify/web-bot-auth/signature-base.js';
import { isWellFormed, parseSignatureField, parseSignatureInput } from '../../../src/verify/web-bot-auth/signature-input.js';
import { webBotAuthVerifier } from '../../../src/verify/web-bot-auth/web-bot-auth-verifier.js';
import { normalizeHeaders } from '../../../src/identify/headers.js';
import { DIRECTORY_PATH, fixedClock, memoryFetcher, testEngine, vectors } from './support.js';

const decoder = new TextDecoder();

interface RequestVector {
  id: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  label: string;
  base?: string;
}

function messageOf(vector: RequestVector): HttpMessage {
  const headers = normalizeHeaders(vector.headers);
  return { headers, method: vector.method, scheme: 'https', authority: headers.get('host'), target: vector.path };
}

function inputOf(vector: RequestVector) {
  const input = parseSignatureInput(vector.headers['Signature-Input']!)!.find((member) => member.label === vector.label)!;
  if (!isWellFormed(input)) throw new Error('vector input malformed');
  return input;
}

describe('RFC 9421 vectors', () => {
  const file = vectors<{ key: { jwk: object }; vectors: RequestVector[] }>('rfc9421');
  for (const vector of file.vectors) {
    it(vector.id, async () => {
      const base = createSignatureBase(messageOf(vector), inputOf(vector));
      expect(base.ok).toBe(true);
      if (!base.ok) return;
      expect(decoder.decode(base.base)).toBe(vector.base);
      const key = (await ed25519KeyFromJwk(file.key.jwk))!;
      const signature = parseSignatureField(vector.headers.Signature!)!.get(vector.label)!;
      expect(await webCryptoEd25519()(key.raw, base.base, signature)).toBe(true);
      expect(await nobleEd25519()(key.raw, base.base, signature)).toBe(true);
      // It carries no tag: the Web Bot Auth verifier leaves it to other methods.
      const clock = fixedClock(1618884473);
      const engine = testEngine(webBotAuthVerifier({ keys: [{ jwk: file.key.jwk, agent: 'test-bot' }], allowTestKeys: true }), clock);
      const outcome = await engine.verify({ request_headers: { ...vector.headers, 'User-Agent': 'TestBot/1.0' }, request_method: vector.method, request_path: vector.path });
      expect(outcome.verification.checks).toEqual([{ method: 'web-bot-auth', outcome: 'inconclusive', reason: 'tag-missing' }]);
    });
  }
});

describe('Web Bot Auth vectors', () => {
  const file = vectors<{ now: number; key: object; keyid: string; vectors: RequestVector[] }>('web-bot-auth');
  const catalog = createCatalog({
    version: 1,
    agents: [
      { id: 'test-bot', name: 'TestBot', type: 'AI Agent', operator: 'Test', url: 'https://signature-agent.test/', match: { tokens: ['TestBot'] }, robots_tokens: ['TestBot'], signature_agents: ['https://signature-agent.test'] },
    ],
  });
  for (const vector of file.vectors) {
    it(vector.id, async () => {
      if (vector.base !== undefined) {
        const base = createSignatureBase(messageOf(vector), inputOf(vector));
        expect(base.ok && decoder.decode(base.base)).toBe(vector.base);
      }
      const clock = fixedClock(file.now);
      // The directory is served by an in-memory fetcher; vectors without Signature-Agent are
      // found through the agent's own directory (its signature_agents origin).
      const fetcher = memoryFetcher({ [`https://signature-agent.test${DIRECTORY_PATH}`]: { body: JSON.stringify({ keys: [file.key] }) } });
      // Vectors (1) and (2) expire in 2124: their window is allowed explicitly here.
      const verifier = webBotAuthVerifier({ fetchDirectory: fetcher, maxWindowSeconds: 4889289600 - 1735689600, allowTestKeys: true });
      const engine = testEngine(verifier, clock, catalog);
      const item = { request_headers: { ...vector.headers, 'User-Agent': 'TestBot/1.0' }, request_method: vector.method, request_path: vector.path };
      const outcome = await engine.verify(item);
      expect(outcome.verification.checks).toEqual([{ method: 'web-bot-auth', outcome: 'pass', reason: 'signature-valid' }]);
      expect(outcome.result).toBe('verified');
      expect(outcome).toMatchObject({ agent_id: 'test-bot' });
      // The same vector with a pinned key and no fetching.
      const pinned = testEngine(
        webBotAuthVerifier({ keys: [{ jwk: file.key, directory: 'https://signature-agent.test' }, { jwk: file.key }], maxWindowSeconds: 4889289600 - 1735689600, allowTestKeys: true }),
        clock,
        catalog,
      );
      expect((await pinned.verify(item)).result).toBe('verified');
    });
  }

  it("refuses RFC 9421's example key by default, whose private key is published: listed in a directory it is no key (key-unknown), pinned it is a configuration error", async () => {
    const vector = file.vectors.find((v) => v.id === 'wba-v2-no-signature-agent')!;
    const fetcher = memoryFetcher({ [`https://signature-agent.test${DIRECTORY_PATH}`]: { body: JSON.stringify({ keys: [file.key] }) } });
    const engine = testEngine(webBotAuthVerifier({ fetchDirectory: fetcher, maxWindowSeconds: 4889289600 - 1735689600 }), fixedClock(file.now), catalog);
    const outcome = await engine.verify({ request_headers: { ...vector.headers, 'User-Agent': 'TestBot/1.0' }, request_method: vector.method, request_path: vector.path });
    expect(outcome.verification.checks).toEqual([{ method: 'web-bot-auth', outcome: 'fail', reason: 'key-unknown' }]);
    expect(() => webBotAuthVerifier({ keys: [{ jwk: file.key }] })).toThrow(/keys\[0\]\.jwk is RFC 9421's example key/);
  });
});

describe('signed directory vector', () => {
  const vector = vectors<{ id: string; now: number; url: string; body: string; headers: Record<string, string>; base: string }>('signed-directory');
  const requests = vectors<{ vectors: RequestVector[] }>('web-bot-auth').vectors;
  const dictionaryRequest = requests.find((v) => v.id === 'wba-protocol-02-dictionary-signature-agent')!;
  const catalog = createCatalog({
    version: 1,
    agents: [{ id: 'test-bot', name: 'TestBot', type: 'AI Agent', operator: 'Test', url: 'https://signature-agent.test/', match: { tokens: ['TestBot'] }, robots_tokens: ['TestBot'], signature_agents: ['https://signature-agent.test'] }],
  });

  it(vector.id, async () => {
    const body = new TextEncoder().encode(vector.body);
    const key = (await ed25519KeyFromJwk(JSON.parse(vector.body).keys[0]))!;
    const input = parseSignatureInput(vector.headers['Signature-Input']!)![0]!;
    if (!isWellFormed(input)) throw new Error('malformed');
    const url = new URL(vector.url);
    const base = createSignatureBase(
      { headers: normalizeHeaders(vector.headers), scheme: 'https', status: 200, request: { headers: new Map(), scheme: 'https', method: 'GET', authority: url.host, target: url.pathname } },
      input,
    );
    expect(base.ok && decoder.decode(base.base)).toBe(vector.base);
    const proof = await verifyDirectoryProof({
      url: vector.url,
      status: 200,
      headers: new Headers(vector.headers),
      body,
      keys: new Map([[key.thumbprint, key]]),
      nowSeconds: vector.now,
      clockSkewSeconds: 60,
      verifyEd25519: webCryptoEd25519(),
    });
    expect(proof).toEqual({ status: 'valid', signedKeys: new Set([key.thumbprint]) });
  });

  const verifyWith = async (headers: Record<string, string>, body = vector.body, requireSignedDirectory = false) => {
    const clock = fixedClock(vector.now);
    const fetcher = memoryFetcher({ [vector.url]: { body, headers } });
    const verifier = webBotAuthVerifier({ fetchDirectory: fetcher, maxWindowSeconds: 4889289600 - 1735689600, directoryCache: { requireSignedDirectory }, allowTestKeys: true });
    const outcome = await testEngine(verifier, clock, catalog).verify({
      request_headers: dictionaryRequest.headers,
      request_method: dictionaryRequest.method,
      request_path: dictionaryRequest.path,
    });
    return outcome.verification.checks[0];
  };

  it(`${vector.id}: a request signed with the directory's key verifies through the signed directory`, async () => {
    expect(await verifyWith(vector.headers)).toEqual({ method: 'web-bot-auth', outcome: 'pass', reason: 'signature-valid' });
  });

  it(`${vector.id}: a directory with a tampered signature is rejected (key-directory-invalid)`, async () => {
    const tampered = { ...vector.headers, Signature: vector.headers.Signature!.replace('l6P8', 'l6P9') };
    expect(await verifyWith(tampered)).toEqual({ method: 'web-bot-auth', outcome: 'inconclusive', reason: 'key-directory-invalid' });
  });

  it(`${vector.id}: a body that does not match the signed content-digest is rejected`, async () => {
    expect(await verifyWith(vector.headers, vector.body.replace('"use":"sig"', '"use":"enc"'))).toEqual({
      method: 'web-bot-auth',
      outcome: 'inconclusive',
      reason: 'key-directory-invalid',
    });
  });

  it(`${vector.id}: requireSignedDirectory rejects the unsigned directory and accepts the signed one`, async () => {
    const unsigned = { 'Content-Type': vector.headers['Content-Type']! };
    expect((await verifyWith(unsigned, vector.body, true))?.reason).toBe('key-directory-invalid');
    expect((await verifyWith(vector.headers, vector.body, true))?.reason).toBe('signature-valid');
  });
});

describe('thumbprint vectors', () => {
  const file = vectors<{ vectors: Array<{ id: string; jwk: object; thumbprint: string; wrong?: string[] }> }>('thumbprints');
  for (const vector of file.vectors) {
    it(vector.id, async () => {
      const thumbprint = await jwkThumbprint(vector.jwk);
      expect(thumbprint).toBe(vector.thumbprint);
      // The classic bugs (wrong member order, private member included) give these instead.
      for (const wrong of vector.wrong ?? []) expect(thumbprint).not.toBe(wrong);
    });
  }
});
