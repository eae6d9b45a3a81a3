// Webhook signatures: HMAC-SHA256 (crypto.subtle) over "<timestamp>.<body>", sent as
// `Agentwarden-Signature: t=<unix seconds>,v1=<hex>`, in the style of Stripe's and GitHub's, with a
// replay tolerance on the timestamp for receivers.
import { constantTimeEqual } from '../api/token.js';

/** The header that carries the signature. */
export const WEBHOOK_SIGNATURE_HEADER = 'agentwarden-signature';
/** The header that names the event type. */
export const WEBHOOK_EVENT_HEADER = 'agentwarden-event';
/** The header that names the delivery: the same on every retry, so receivers can drop repeats. */
export const WEBHOOK_DELIVERY_HEADER = 'agentwarden-delivery';
/** How old a signature a receiver accepts by default (5 minutes, as Stripe's libraries). */
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;

const encoder = new TextEncoder();

function hex(bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
}

async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return hex(await crypto.subtle.sign('HMAC', key, encoder.encode(message)));
}

/**
 * The signature header value for a body sent at `timestampSeconds`: `t=<seconds>,v1=<hex>`, the
 * HMAC-SHA256 under the webhook's secret of the timestamp, a full stop and the exact body bytes.
 * @throws {TypeError} for an empty secret or a timestamp that is not a whole number.
 * @example
 * await signWebhook('whsec_...', 1767225600, '{"type":"webhook.test"}'); // "t=1767225600,v1=5f0c..."
 */
export async function signWebhook(secret: string, timestampSeconds: number, body: string): Promise<string> {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('secret must be a non-empty string');
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) throw new TypeError(`timestampSeconds must be a whole number of seconds, got ${String(timestampSeconds)}`);
  return `t=${timestampSeconds},v1=${await hmacHex(secret, `${timestampSeconds}.${body}`)}`;
}

/** Why a signature was refused. */
export type WebhookSignatureFailure = 'malformed-header' | 'timestamp-out-of-tolerance' | 'signature-mismatch';

/** The outcome of checking a signature. */
export type WebhookSignatureCheck = { readonly ok: true; readonly timestamp: number } | { readonly ok: false; readonly reason: WebhookSignatureFailure };

/**
 * Checks a received webhook (for receivers written with this library): the header must carry a
 * timestamp within `toleranceSeconds` of now and a `v1` signature equal (in constant time) to the
 * HMAC of the timestamp and the raw body. Several `v1` values (during a secret rotation) may be sent;
 * one matching is enough.
 * @example
 * const check = await verifyWebhookSignature(secret, request.headers.get('agentwarden-signature'), rawBody, { now: Date.now() });
 * if (!check.ok) return new Response(check.reason, { status: 400 });
 */
export async function verifyWebhookSignature(
  secret: string,
  header: string | null | undefined,
  body: string,
  options: { readonly now: number; readonly toleranceSeconds?: number },
): Promise<WebhookSignatureCheck> {
  if (typeof header !== 'string') return { ok: false, reason: 'malformed-header' };
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) signatures.push(value);
  }
  if (timestamp === undefined || signatures.length === 0) return { ok: false, reason: 'malformed-header' };
  const tolerance = options.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS;
  if (Math.abs(options.now / 1000 - timestamp) > tolerance) return { ok: false, reason: 'timestamp-out-of-tolerance' };
  const expected = await hmacHex(secret, `${timestamp}.${body}`);
  // Every candidate is compared, so the time taken does not tell which one matched.
  let matched = false;
  for (const signature of signatures) matched = constantTimeEqual(signature, expected) || matched;
  return matched ? { ok: true, timestamp } : { ok: false, reason: 'signature-mismatch' };
}
