// The RFC 9421 §2.5 signature base: one line per covered component, in the order listed, then
// the "@signature-params" line, as the exact bytes that were signed.
import { componentValue, type ComponentNotSent, type HttpMessage } from './components.js';
import type { SignatureInput } from './signature-input.js';

/** A signature base as bytes, or why it cannot be built. */
export type SignatureBaseResult =
  | { readonly ok: true; readonly base: Uint8Array }
  | { readonly ok: false; readonly reason: ComponentNotSent | 'component-invalid' };

const encoder = new TextEncoder();
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Builds the signature base of a message for one Signature-Input member (RFC 9421 §2.5).
 * @example
 * const result = createSignatureBase(message, input);
 * if (result.ok) await verifyEd25519(publicKey, result.base, signature);
 */
export function createSignatureBase(message: HttpMessage, input: SignatureInput): SignatureBaseResult {
  let text = '';
  for (const component of input.components) {
    const value = componentValue(message, component.name, component.params);
    if (!value.ok) return value;
    // RFC 9421 §2.5 step 2: `identifier: value` then LF.
    text += `${component.identifier}: ${value.value}\n`;
  }
  text += `"@signature-params": ${input.signatureParams}`;
  // RFC 9421 §2.5 step 5: a base with non-ASCII characters is an error.
  if (NON_ASCII.test(text)) return { ok: false, reason: 'component-invalid' };
  return { ok: true, base: encoder.encode(text) };
}
