// Signed key directory responses ("possession proof", directory-04/05 §"Binding keys to the
// directory authority", protocol-02 App. "Validating the domain binding"): each signature is
// made by a key of the directory itself over `"@authority";req` (and `content-digest`, checked
// against the body when covered).
import { parseDictionary } from 'structured-headers';
import type { HttpMessage } from './components.js';
import type { Ed25519Verify } from './ed25519.js';
import type { Ed25519PublicKey } from './jwk.js';
import { createSignatureBase } from './signature-base.js';
import { isWellFormed, parseSignatureField, parseSignatureInput } from './signature-input.js';

/** The tag of directory signatures (directory-04 §"Binding keys to the directory authority"). */
export const DIRECTORY_SIGNATURE_TAG = 'http-message-signatures-directory';

/**
 * What the signatures on a directory response say: none with the directory tag (`unsigned`),
 * all valid (with the thumbprints they prove), or at least one present and invalid.
 */
export type DirectoryProof = { readonly status: 'unsigned' } | { readonly status: 'valid'; readonly signedKeys: ReadonlySet<string> } | { readonly status: 'invalid' };

const DIGESTS: Readonly<Record<string, string>> = { 'sha-256': 'SHA-256', 'sha-512': 'SHA-512' };

async function contentDigestMatches(field: string, body: Uint8Array): Promise<boolean> {
  let dictionary;
  try {
    dictionary = parseDictionary(field);
  } catch {
    return false;
  }
  let checked = 0;
  for (const [algorithm, [value]] of dictionary) {
    const name = DIGESTS[algorithm];
    if (name === undefined) continue;
    if (!(value instanceof ArrayBuffer)) return false;
    const digest = new Uint8Array(await crypto.subtle.digest(name, body as Uint8Array<ArrayBuffer>));
    const expected = new Uint8Array(value);
    if (expected.length !== digest.length || expected.some((byte, i) => byte !== digest[i])) return false;
    checked++;
  }
  // RFC 9530: at least one digest this verifier can compute must be present.
  return checked > 0;
}

/** Inputs of `verifyDirectoryProof`. */
export interface DirectoryProofInput {
  /** The URL the directory was fetched from (its host is the `"@authority";req` value). */
  readonly url: string;
  readonly status: number;
  readonly headers: Headers;
  readonly body: Uint8Array;
  /** The directory's Ed25519 keys by thumbprint. */
  readonly keys: ReadonlyMap<string, Ed25519PublicKey>;
  readonly nowSeconds: number;
  readonly clockSkewSeconds: number;
  readonly verifyEd25519: Ed25519Verify;
}

/**
 * Verifies the directory-tagged signatures of a key directory response. Each must use a key of
 * this directory (keyid = thumbprint), cover `"@authority";req`, have a `created` not in the
 * future and not be expired, and match `content-digest` when it covers it.
 */
export async function verifyDirectoryProof(input: DirectoryProofInput): Promise<DirectoryProof> {
  const signatureInput = input.headers.get('signature-input');
  const signatureField = input.headers.get('signature');
  if (signatureInput === null || signatureField === null) return { status: 'unsigned' };
  const members = parseSignatureInput(signatureInput);
  const signatures = parseSignatureField(signatureField);
  if (members === undefined || signatures === undefined) return { status: 'invalid' };
  const tagged = members.filter((member) => (isWellFormed(member) ? member.params.tag : member.tag) === DIRECTORY_SIGNATURE_TAG);
  if (tagged.length === 0) return { status: 'unsigned' };
  const url = new URL(input.url);
  const headers = new Map<string, string>();
  input.headers.forEach((value, name) => headers.set(name, value));
  const message: HttpMessage = {
    headers,
    scheme: url.protocol.slice(0, -1),
    status: input.status,
    request: { headers: new Map([['host', url.host]]), method: 'GET', scheme: url.protocol.slice(0, -1), authority: url.host, target: `${url.pathname}${url.search}` },
  };
  const signedKeys = new Set<string>();
  for (const member of tagged) {
    if (!isWellFormed(member)) return { status: 'invalid' };
    const { created, expires, keyid, alg } = member.params;
    const key = keyid === undefined ? undefined : input.keys.get(keyid);
    const signature = signatures.get(member.label);
    if (key === undefined || signature === undefined || (alg !== undefined && alg !== 'ed25519')) return { status: 'invalid' };
    // protocol-02: a proof created in the future is rejected; an expired one is no proof.
    if (created === undefined || created > input.nowSeconds + input.clockSkewSeconds) return { status: 'invalid' };
    if (expires !== undefined && expires + input.clockSkewSeconds < input.nowSeconds) return { status: 'invalid' };
    // directory-04 §"Binding keys...": `@authority` with the `req` flag MUST be covered.
    if (!member.components.some((c) => c.name === '@authority' && c.params.get('req') === true && c.params.size === 1)) return { status: 'invalid' };
    if (member.components.some((c) => c.name === 'content-digest')) {
      const digest = headers.get('content-digest');
      if (digest === undefined || !(await contentDigestMatches(digest, input.body))) return { status: 'invalid' };
    }
    const base = createSignatureBase(message, member);
    if (!base.ok || !(await input.verifyEd25519(key.raw, base.base, signature))) return { status: 'invalid' };
    signedKeys.add(key.thumbprint);
  }
  return { status: 'valid', signedKeys };
}
