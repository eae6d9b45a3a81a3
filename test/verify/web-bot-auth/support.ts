// Shared test helpers for the Web Bot Auth verifier: vectors, a fixed clock, an in-memory
// directory fetcher, generated Ed25519 keys and an independent signer (http-message-sig 0.3.0).
import { readFileSync } from 'node:fs';
import crypto from 'node:crypto';
import { component, createSignature, type SignatureComponent } from 'http-message-sig';
import { createCatalog, createEngine, type Catalog, type Engine } from '../../../src/index.js';
import type { DirectoryFetcher, DirectoryResponse } from '../../../src/verify/web-bot-auth/directory-fetcher.js';
import type { Verifier } from '../../../src/verify/types.js';

export { component };

/** Reads a vector file of test/vectors/web-bot-auth. */
export function vectors<T = any>(name: string): T {
  return JSON.parse(readFileSync(new URL(`../../vectors/web-bot-auth/${name}.json`, import.meta.url), 'utf8')) as T;
}

/** A clock fixed at `seconds`, movable by tests. */
export function fixedClock(seconds: number): { now(): number; set(seconds: number): void; advance(seconds: number): void } {
  let ms = seconds * 1000;
  return {
    now: () => ms,
    set: (s) => {
      ms = s * 1000;
    },
    advance: (s) => {
      ms += s * 1000;
    },
  };
}

export type Served = { status?: number; body: string | Uint8Array; headers?: Record<string, string> } | Error;

/** An in-memory DirectoryFetcher with a call log; routes can be replaced between calls. */
export function memoryFetcher(routes: Record<string, Served>): DirectoryFetcher & { calls: string[]; routes: Record<string, Served>; gate?: Promise<void> } {
  const fetcher = Object.assign(
    async (url: string): Promise<DirectoryResponse> => {
      fetcher.calls.push(url);
      if (fetcher.gate !== undefined) await fetcher.gate;
      const served = fetcher.routes[url];
      if (served === undefined) return { status: 404, headers: new Headers(), body: new Uint8Array() };
      if (served instanceof Error) throw served;
      const body = typeof served.body === 'string' ? new TextEncoder().encode(served.body) : served.body;
      return { status: served.status ?? 200, headers: new Headers(served.headers ?? {}), body };
    },
    { calls: [] as string[], routes, gate: undefined as Promise<void> | undefined },
  );
  return fetcher;
}

export interface TestKey {
  readonly publicJwk: { kty: string; crv: string; x: string };
  readonly privateKey: crypto.KeyObject;
  readonly publicKey: crypto.KeyObject;
  readonly thumbprint: string;
}

/** Generates an Ed25519 key pair with its RFC 7638 thumbprint (computed with node:crypto). */
export function generateKey(): TestKey {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string };
  const publicJwk = { kty: jwk.kty, crv: jwk.crv, x: jwk.x };
  const thumbprint = crypto.createHash('sha256').update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x })).digest('base64url');
  return { publicJwk, privateKey, publicKey, thumbprint };
}

/** A key from a private JWK (e.g. the RFC 9421 B.1.4 test key). */
export function keyFromPrivateJwk(jwk: { kty: string; crv: string; d: string; x: string }): TestKey {
  const privateKey = crypto.createPrivateKey({ key: jwk, format: 'jwk' });
  const publicKey = crypto.createPublicKey(privateKey);
  const publicJwk = { kty: jwk.kty, crv: jwk.crv, x: jwk.x };
  const thumbprint = crypto.createHash('sha256').update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x })).digest('base64url');
  return { publicJwk, privateKey, publicKey, thumbprint };
}

/** A JWKS body serving these keys. */
export function jwks(...keys: TestKey[]): string {
  return JSON.stringify({ keys: keys.map((key) => key.publicJwk) });
}

export interface SignOptions {
  key: TestKey;
  url?: string;
  method?: string;
  headers?: Record<string, string>;
  label?: string;
  components?: SignatureComponent[];
  params?: Record<string, string | number | undefined>;
}

/**
 * Signs a request with http-message-sig 0.3.0 (an independent RFC 9421 implementation) and
 * returns the engine item: headers including Host, Signature and Signature-Input.
 */
export async function signRequest(options: SignOptions, now: number): Promise<{ request_headers: Record<string, string>; request_method: string; request_path: string }> {
  const url = new URL(options.url ?? 'https://example.com/path?x=1');
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { Host: url.host, ...(options.headers ?? {}) };
  const hasAgent = Object.keys(headers).some((name) => name.toLowerCase() === 'signature-agent');
  const components = options.components ?? (hasAgent ? ['@authority', component('signature-agent', { key: 'sig1' })] : ['@authority']);
  const parameters = { created: now, expires: now + 300, keyid: options.key.thumbprint, alg: 'ed25519', tag: 'web-bot-auth', ...(options.params ?? {}) };
  for (const name of Object.keys(parameters)) if ((parameters as Record<string, unknown>)[name] === undefined) delete (parameters as Record<string, unknown>)[name];
  const fields = await createSignature(
    { kind: 'request', method, targetUri: url.href, fields: Object.entries(headers).map(([name, value]) => ({ name: name.toLowerCase(), value })) },
    {
      label: options.label ?? 'sig1',
      components,
      parameters,
      signer: { algorithm: 'ed25519', sign: (bytes) => new Uint8Array(crypto.sign(null, bytes, options.key.privateKey)) },
    },
  );
  return {
    request_headers: { ...headers, 'Signature-Input': fields.signatureInput, Signature: fields.signature },
    request_method: method,
    request_path: `${url.pathname}${url.search}`,
  };
}

/** A catalog with one test agent signing from `origin` (and recognised by the UA token TestBot). */
export function testCatalog(origins: string[] = ['https://agent.test']): Catalog {
  return createCatalog({
    version: 1,
    agents: [
      {
        id: 'test-bot',
        name: 'TestBot',
        type: 'AI Agent',
        operator: 'Test',
        url: 'https://agent.test/bot',
        match: { tokens: ['TestBot'] },
        robots_tokens: ['TestBot'],
        signature_agents: origins,
      },
      {
        id: 'other-bot',
        name: 'OtherBot',
        type: 'AI Agent',
        operator: 'Other',
        url: 'https://other.test/bot',
        match: { tokens: ['OtherBot'] },
        robots_tokens: ['OtherBot'],
        signature_agents: ['https://other.test'],
      },
    ],
  });
}

/** An engine with one verifier and a fixed clock. */
export function testEngine(verifier: Verifier, clock: { now(): number }, catalog: Catalog = testCatalog()): Engine {
  return createEngine({ catalog, verifiers: [verifier], clock, cache: false });
}

export const DIRECTORY_PATH = '/.well-known/http-message-signatures-directory';
