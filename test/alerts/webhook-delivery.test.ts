// Webhook delivery with retries against a real receiver on loopback (node:http), through the node
// adapter's SSRF-safe sender: signed bodies that createHmac verifies, the same delivery id on every
// attempt, exponential backoff with jitter and Retry-After, and refusals that are never retried.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSafeWebhookSender } from '../../src/adapters/node/index.js';
import { createWebhookDispatcher, DEFAULT_WEBHOOK_RETRY, isRetriableStatus, retryDelayMs, type WebhookDelivery, type WebhookEvent, type WebhookTarget } from '../../src/index.js';
import { independentlyVerified, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const SECRET = 'whsec_delivery-test';
const EVENT: WebhookEvent = { id: 'evt_1', type: 'agent.first_visit', created: '2026-11-25T10:00:00.000Z', project: { id: 'prj_1', name: 'example.com' }, data: { agent: { id: 'gptbot' } } };

let receiver: WebhookReceiver;
beforeEach(async () => {
  receiver = await startWebhookReceiver();
});
afterEach(async () => {
  await receiver.close();
});

/** Timers run by hand: `due` lists each scheduled delay, `fire()` runs the oldest. */
function manualTimers() {
  const queue: { run: () => void; ms: number }[] = [];
  return {
    delays: () => queue.map((t) => t.ms),
    timers: { set: (run: () => void, ms: number) => queue.push({ run, ms }), clear: () => undefined },
    fire: () => queue.shift()!.run(),
    pending: () => queue.length,
  };
}

function setup(retry: Partial<typeof DEFAULT_WEBHOOK_RETRY> = {}) {
  const log: WebhookDelivery[] = [];
  const manual = manualTimers();
  let now = Date.now();
  const target: WebhookTarget = { id: 'whk_1', projectId: 'prj_1', url: receiver.url, secret: SECRET };
  const dispatcher = createWebhookDispatcher({
    transport: createSafeWebhookSender({ allowLoopback: true }),
    log: { save: (delivery) => void log.push(delivery) },
    target: () => target,
    clock: { now: () => now },
    timers: manual.timers,
    random: () => 0.5,
    retry,
  });
  const settled = async (count: number) => {
    await expect.poll(() => log.length, { timeout: 5000 }).toBe(count);
    return log[count - 1]!;
  };
  return { log, manual, dispatcher, target, advance: (ms: number) => (now += ms), settled };
}

describe('retryDelayMs', () => {
  it('grows by the factor from the base delay, within the jitter band', () => {
    const middle = [1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(DEFAULT_WEBHOOK_RETRY, n, () => 0.5));
    expect(middle).toEqual([10_000, 40_000, 160_000, 640_000, 2_560_000, 10_240_000]);
    expect(retryDelayMs(DEFAULT_WEBHOOK_RETRY, 1, () => 0)).toBe(8_000);
    expect(retryDelayMs(DEFAULT_WEBHOOK_RETRY, 1, () => 0.999999)).toBe(12_000);
  });
  it('retries network trouble, 408, 425, 429 and 5xx only', () => {
    expect([200, 301, 400, 401, 404, 408, 410, 425, 429, 500, 503].filter(isRetriableStatus)).toEqual([408, 425, 429, 500, 503]);
  });
});

describe('createWebhookDispatcher', () => {
  it('delivers a signed event, retrying after 500 and 503 with backoff, with one delivery id throughout', async () => {
    const { dispatcher, manual, log, advance, settled } = setup();
    receiver.script(500, 503);
    const first = await dispatcher.deliver({ id: 'whk_1', projectId: 'prj_1', url: receiver.url, secret: SECRET }, EVENT);
    expect(first).toMatchObject({ state: 'pending', attempts: 1, last_status: 500, last_error: 'answered 500' });
    expect(manual.delays()).toEqual([10_000]);
    advance(10_000);
    manual.fire();
    expect(await settled(2)).toMatchObject({ state: 'pending', attempts: 2, last_status: 503 });
    expect(manual.delays()).toEqual([40_000]);
    advance(40_000);
    manual.fire();
    expect(await settled(3)).toMatchObject({ state: 'delivered', attempts: 3, last_status: 200, last_error: null, next_attempt: null });
    expect(manual.pending()).toBe(0);

    expect(receiver.received).toHaveLength(3);
    for (const request of receiver.received) {
      expect(request.method).toBe('POST');
      expect(request.path).toBe('/hooks/agentwarden');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['agentwarden-event']).toBe('agent.first_visit');
      expect(request.headers['agentwarden-delivery']).toBe(first.id);
      expect(JSON.parse(request.body)).toEqual(EVENT);
      expect(independentlyVerified(SECRET, request.headers['agentwarden-signature'], request.body), 'signature').toBe(true);
      expect(independentlyVerified('whsec_wrong', request.headers['agentwarden-signature'], request.body)).toBe(false);
    }
    // Each attempt is signed at its own time, so a receiver's replay window holds for late retries.
    const stamps = receiver.received.map((r) => /t=(\d+)/.exec(String(r.headers['agentwarden-signature']))![1]);
    expect(new Set(stamps).size).toBe(3);
    expect(log.map((d) => d.id)).toEqual([first.id, first.id, first.id]);
  });

  it('waits as long as Retry-After asks when that is longer than the backoff', async () => {
    const { dispatcher, manual } = setup();
    receiver.script({ status: 429, retryAfter: '120' });
    const first = await dispatcher.deliver({ id: 'whk_1', projectId: 'prj_1', url: receiver.url, secret: SECRET }, EVENT);
    expect(first.state).toBe('pending');
    expect(manual.delays()).toEqual([120_000]);
  });

  it('gives up at once on a refusal (410) and after the last attempt on errors', async () => {
    const { dispatcher, manual } = setup({ maxAttempts: 2 });
    receiver.script(410);
    const gone = await dispatcher.deliver({ id: 'whk_1', projectId: 'prj_1', url: receiver.url, secret: SECRET }, EVENT);
    expect(gone).toMatchObject({ state: 'failed', attempts: 1, last_status: 410, next_attempt: null });
    expect(manual.pending()).toBe(0);
    receiver.script(500, 500);
    const failing = await dispatcher.deliver({ id: 'whk_1', projectId: 'prj_1', url: receiver.url, secret: SECRET }, EVENT);
    expect(failing.state).toBe('pending');
    manual.fire();
    await expect.poll(() => receiver.received.length).toBe(3);
  });

  it('never sends to a private or metadata address, and does not retry that', async () => {
    const { dispatcher, manual } = setup();
    for (const url of ['http://10.0.0.1/hook', 'https://169.254.169.254/latest', 'https://[fd00::1]/hook', 'ftp://127.0.0.1/x']) {
      const delivery = await dispatcher.deliver({ id: 'whk_1', projectId: 'prj_1', url, secret: SECRET }, EVENT);
      expect(delivery.state, url).toBe('failed');
      expect(delivery.last_error, url).toMatch(/^refused-(address|url): /);
    }
    expect(manual.pending()).toBe(0);
    expect(receiver.received).toHaveLength(0);
  });

  it('retries a receiver that is not listening (network trouble)', async () => {
    const { dispatcher, manual } = setup();
    await receiver.close();
    const delivery = await dispatcher.deliver({ id: 'whk_1', projectId: 'prj_1', url: receiver.url, secret: SECRET }, EVENT);
    expect(delivery).toMatchObject({ state: 'pending', last_status: null });
    expect(delivery.last_error).toMatch(/^network: /);
    expect(manual.pending()).toBe(1);
    receiver = await startWebhookReceiver();
  });
});
