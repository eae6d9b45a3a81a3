// Interoperability with independent signers used as real clients: web-bot-auth 0.1.3 (legacy
// string Signature-Agent), http-message-sig 0.3.0 (dictionary Signature-Agent with ;key) and
// http-message-signatures 1.0.6 (a third RFC 9421 implementation, both forms), verified through
// createEngine + engine.verify with an in-memory key directory.
import { appendSignature, component, createSignature } from 'http-message-sig';
import { httpbis } from 'http-message-signatures';
import crypto from 'node:crypto';
import { signatureHeaders } from 'web-bot-auth';
import { signerFromJWK } from 'web-bot-auth/crypto';
import { describe, expect, it } from 'vitest';
import { webBotAuthVerifier } from '../../../src/verify/web-bot-auth/web-bot-auth-verifier.js';
import { DIRECTORY_PATH, fixedClock, generateKey, jwks, memoryFetcher, testEngine } from './support.js';

const NOW = 1_800_000_000;
const key = generateKey();
const privateJwk = key.privateKey.export({ format: 'jwk' }) as JsonWebKey;
type Item = { request_headers: Record<string, string>; request_method: string; request_path: string };

function engineFor() {
  const clock = fixedClock(NOW);
  const fetcher = memoryFetcher({ [`https://agent.test${DIRECTORY_PATH}`]: { body: jwks(key), headers: { 'content-type': 'application/http-message-signatures-directory+json' } } });
  return { engine: testEngine(webBotAuthVerifier({ fetchDirectory: fetcher }), clock), fetcher };
}

/** Flips one byte of the signature inside a Signature header value. */
function flipSignature(value: string): string {
  const start = value.indexOf(':') + 1;
  const b64 = value.slice(start, value.lastIndexOf(':'));
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  bytes[0] = bytes[0]! ^ 0x80;
  return `${value.slice(0, start)}${btoa(String.fromCharCode(...bytes))}:`;
}

async function expectTamperingFails(item: Item, agentHeader: string, tamperedAgent: string) {
  const { engine } = engineFor();
  const verdict = async (changed: Item) => {
    const outcome = await engine.verify(changed);
    return `${outcome.result}/${outcome.verification.checks[0]?.reason}`;
  };
  expect(await verdict(item)).toBe('verified/signature-valid');
  const h = item.request_headers;
  expect(await verdict({ ...item, request_headers: { ...h, Host: 'other.example' } })).toBe('verification_failed/signature-invalid');
  expect(await verdict({ ...item, request_path: '/elsewhere' })).toBe('verification_failed/signature-invalid');
  expect(await verdict({ ...item, request_headers: { ...h, [agentHeader]: tamperedAgent } })).toBe('verification_failed/signature-invalid');
  expect(await verdict({ ...item, request_headers: { ...h, Signature: flipSignature(h.Signature!) } })).toBe('verification_failed/signature-invalid');
  expect(await verdict({ ...item, request_headers: { ...h, 'Signature-Input': h['Signature-Input']!.replace(`created=${NOW}`, `created=${NOW - 1}`) } })).toBe(
    'verification_failed/signature-invalid',
  );
}

describe('interop: web-bot-auth 0.1.3 as the signing client (legacy string Signature-Agent)', () => {
  it('its signed request verifies, and flipping any covered component fails', async () => {
    const signer = await signerFromJWK(privateJwk);
    expect(signer.keyid).toBe(key.thumbprint);
    const url = 'https://example.com/docs/page?lang=en';
    const headers = { 'Signature-Agent': '"https://agent.test"' };
    const signed = await signatureHeaders(new Request(url, { headers }), signer, {
      created: new Date(NOW * 1000),
      expires: new Date((NOW + 60) * 1000),
      components: ['@authority', '@path', 'signature-agent'],
    });
    const item: Item = {
      request_headers: { Host: 'example.com', 'User-Agent': 'Mozilla/5.0', ...headers, Signature: signed.Signature, 'Signature-Input': signed['Signature-Input'] },
      request_method: 'GET',
      request_path: '/docs/page?lang=en',
    };
    expect(item.request_headers['Signature-Input']).toContain('tag="web-bot-auth"');
    const { engine } = engineFor();
    expect(await engine.verify(item)).toMatchObject({ result: 'verified', agent_id: 'test-bot', verification: { method: 'web-bot-auth' } });
    await expectTamperingFails(item, 'Signature-Agent', '"https://agent.test/"');
  });

  it('its default components (@authority + signature-agent) verify too', async () => {
    const signer = await signerFromJWK(privateJwk);
    const headers = { 'Signature-Agent': '"https://agent.test"' };
    const signed = await signatureHeaders(new Request('https://example.com:8443/', { headers }), signer, {
      created: new Date(NOW * 1000),
      expires: new Date((NOW + 60) * 1000),
    });
    const { engine } = engineFor();
    const outcome = await engine.verify({
      request_headers: { Host: 'example.com:8443', ...headers, Signature: signed.Signature, 'Signature-Input': signed['Signature-Input'] },
      request_method: 'GET',
      request_path: '/',
    });
    expect(outcome.result).toBe('verified');
  });
});

describe('interop: http-message-sig 0.3.0 as the signing client (dictionary Signature-Agent)', () => {
  it('its signed request verifies, and flipping any covered component fails', async () => {
    const url = 'https://example.com/docs/page?lang=en';
    const request = new Request(url, { headers: { 'Signature-Agent': 'sig1="https://agent.test"' } });
    const fields = await createSignature(request, {
      label: 'sig1',
      components: ['@authority', '@path', component('signature-agent', { key: 'sig1' })],
      parameters: { created: NOW, expires: NOW + 60, keyid: key.thumbprint, alg: 'ed25519', nonce: crypto.randomBytes(64).toString('base64url'), tag: 'web-bot-auth' },
      signer: { algorithm: 'ed25519', sign: (bytes) => new Uint8Array(crypto.sign(null, bytes, key.privateKey)) },
    });
    const headers = appendSignature(request.headers, fields);
    const item: Item = { request_headers: { Host: 'example.com' }, request_method: 'GET', request_path: '/docs/page?lang=en' };
    // Header names as a client would write them (the engine lower-cases them anyway).
    const title = (name: string) => name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
    headers.forEach((value, name) => (item.request_headers[title(name)] = value));
    const { engine } = engineFor();
    expect(await engine.verify(item)).toMatchObject({ result: 'verified', agent_id: 'test-bot', verification: { method: 'web-bot-auth' } });
    await expectTamperingFails(item, 'Signature-Agent', 'sig1="https://agent.test/"');
  });
});

describe('interop: http-message-signatures 1.0.6 as the signing client', () => {
  // Its signer is any function of the signature base's bytes; the base and the Signature-Input
  // (component identifiers, parameters, their order and serialisation) are its own.
  const signWith = async (headers: Record<string, string>, fields: string[], url = 'https://example.com/docs/page?lang=en') => {
    const signed = await httpbis.signMessage(
      {
        key: { id: key.thumbprint, alg: 'ed25519', sign: async (data) => crypto.sign(null, data, key.privateKey) },
        name: 'sig1',
        fields,
        params: ['created', 'expires', 'keyid', 'alg', 'nonce', 'tag'],
        paramValues: { created: new Date(NOW * 1000), expires: new Date((NOW + 60) * 1000), nonce: crypto.randomBytes(64).toString('base64url'), tag: 'web-bot-auth' },
      },
      { method: 'GET', url, headers: { ...headers } },
    );
    const { pathname, search, host } = new URL(url);
    const item: Item = { request_headers: { Host: host }, request_method: 'GET', request_path: pathname + search };
    for (const [name, value] of Object.entries(signed.headers)) item.request_headers[name] = String(value);
    return item;
  };

  it('its request with a string Signature-Agent verifies, and flipping any covered component fails', async () => {
    const item = await signWith({ 'Signature-Agent': '"https://agent.test"' }, ['@authority', '@path', 'signature-agent']);
    expect(item.request_headers['Signature-Input']).toMatch(/^sig1=\("@authority" "@path" "signature-agent"\);created=\d+;expires=\d+;keyid="[^"]+";alg="ed25519";nonce="[^"]+";tag="web-bot-auth"$/);
    const { engine } = engineFor();
    expect(await engine.verify(item)).toMatchObject({ result: 'verified', agent_id: 'test-bot', verification: { method: 'web-bot-auth' } });
    await expectTamperingFails(item, 'Signature-Agent', '"https://agent.test/"');
  });

  it('its request with a dictionary Signature-Agent (the member named by ;key) verifies, and tampering fails', async () => {
    const item = await signWith({ 'Signature-Agent': 'sig1="https://agent.test"' }, ['@authority', '@path', 'signature-agent;key="sig1"']);
    expect(item.request_headers['Signature-Input']).toContain('"signature-agent";key="sig1"');
    const { engine } = engineFor();
    expect(await engine.verify(item)).toMatchObject({ result: 'verified', agent_id: 'test-bot', verification: { method: 'web-bot-auth' } });
    await expectTamperingFails(item, 'Signature-Agent', 'sig1="https://agent.test/"');
  });

  it('its request to a non-default port, covering @authority alone, verifies; at another port it fails', async () => {
    const item = await signWith({ 'Signature-Agent': '"https://agent.test"' }, ['@authority', 'signature-agent'], 'https://example.com:8443/');
    expect(item.request_headers.Host).toBe('example.com:8443');
    const { engine } = engineFor();
    expect((await engine.verify(item)).result).toBe('verified');
    const moved = { ...item, request_headers: { ...item.request_headers, Host: 'example.com:8444' } };
    expect((await engine.verify(moved)).result).toBe('verification_failed');
  });
});
