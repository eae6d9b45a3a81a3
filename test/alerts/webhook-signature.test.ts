// Webhook signatures: what signWebhook writes is what an independent HMAC (node:crypto) computes,
// and verifyWebhookSignature accepts exactly the genuine, fresh ones.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhookSignature } from '../../src/index.js';

const SECRET = 'whsec_test-secret';
const BODY = '{"id":"evt_1","type":"webhook.test","data":{"message":"ünïcode ✓"}}';
const T = 1_767_225_600;

describe('signWebhook', () => {
  it('writes t=<seconds>,v1=<hex HMAC-SHA256 of "t.body">, as createHmac computes it', async () => {
    const header = await signWebhook(SECRET, T, BODY);
    expect(header).toBe(`t=${T},v1=${createHmac('sha256', SECRET).update(`${T}.${BODY}`).digest('hex')}`);
  });

  it('refuses an empty secret and a fractional timestamp', async () => {
    await expect(signWebhook('', T, BODY)).rejects.toThrow(TypeError);
    await expect(signWebhook(SECRET, 1.5, BODY)).rejects.toThrow(/timestampSeconds/);
  });
});

describe('verifyWebhookSignature', () => {
  const now = T * 1000;
  it('accepts a genuine signature within the tolerance, also among several v1 values', async () => {
    const header = await signWebhook(SECRET, T, BODY);
    expect(await verifyWebhookSignature(SECRET, header, BODY, { now: now + 299_000 })).toEqual({ ok: true, timestamp: T });
    const other = createHmac('sha256', 'old-secret').update(`${T}.${BODY}`).digest('hex');
    expect((await verifyWebhookSignature(SECRET, `t=${T},v1=${other},${header.split(',')[1]}`, BODY, { now })).ok).toBe(true);
  });

  it('refuses a changed body, a wrong secret, an old or future timestamp and a malformed header, each with its reason', async () => {
    const header = await signWebhook(SECRET, T, BODY);
    expect(await verifyWebhookSignature(SECRET, header, `${BODY} `, { now })).toEqual({ ok: false, reason: 'signature-mismatch' });
    expect(await verifyWebhookSignature('whsec_other', header, BODY, { now })).toEqual({ ok: false, reason: 'signature-mismatch' });
    // A replay 6 minutes later, and a clock far ahead.
    expect(await verifyWebhookSignature(SECRET, header, BODY, { now: now + 360_000 })).toEqual({ ok: false, reason: 'timestamp-out-of-tolerance' });
    expect(await verifyWebhookSignature(SECRET, header, BODY, { now: now - 360_000 })).toEqual({ ok: false, reason: 'timestamp-out-of-tolerance' });
    expect(await verifyWebhookSignature(SECRET, header, BODY, { now: now + 360_000, toleranceSeconds: 600 })).toMatchObject({ ok: true });
    for (const bad of [undefined, '', 'v1=abc', `t=${T}`, `t=x,v1=${'0'.repeat(64)}`, `t=${T},v1=XYZ`]) {
      expect(await verifyWebhookSignature(SECRET, bad, BODY, { now }), String(bad)).toEqual({ ok: false, reason: 'malformed-header' });
    }
  });
});
