// "Get a webhook when a new agent appears", end to end: in headless Chromium against `agentwarden
// serve` (webhooks to loopback allowed), a site owner adds a webhook in the project's settings,
// copies the secret shown once, sends a test event, and a new agent's first visit reaches a real
// receiver on loopback, signed so that node:crypto verifies it; the delivery log shows both. At
// 390 and 1280 px without sideways scrolling or cut-off controls, with no console error or CSP
// violation. Screenshots go to test-artifacts/.
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServeProcess } from '../server/helpers.js';
import { independentlyVerified, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { ARTIFACTS, chromiumAvailable, launchChromium, layoutProblems, loggedInPage, startDashboardServer } from './dashboard-harness.js';

const available = chromiumAvailable();
const CLAUDEBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';

describe.skipIf(!available)('alerts in Chromium', () => {
  let proc: ServeProcess;
  let browser: Browser;
  let page: Page;
  let dashboard: string;
  let token: string;
  let projectId: string;
  let receiver: WebhookReceiver;
  let secret: string;
  const problems: string[] = [];
  const cleanups: (() => void | Promise<void>)[] = [];
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `alerts-${name}.png`), fullPage: true });
  const alerts = () => page.getByRole('region', { name: 'Alerts' });

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    cleanups.push(() => receiver.close());
    const server = await startDashboardServer(['--webhooks-allow-loopback']);
    cleanups.push(() => server.stop());
    ({ proc, dashboard, token, projectId } = server);
    browser = await launchChromium();
    cleanups.push(() => browser.close());
    page = await loggedInPage(browser, server.dashboard, server.secret, problems);
  }, 60_000);

  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('adds a webhook in settings: the secret is shown once; a refused URL names the problem', async () => {
    await page.goto(`${dashboard}#/p/${projectId}/settings`);
    await alerts().getByText('No webhooks yet.').waitFor();
    // A private address is refused with the reason.
    await alerts().getByLabel('Receiver URL').fill('https://10.1.2.3/hook');
    await alerts().getByRole('button', { name: 'Add webhook' }).click();
    await expect.poll(() => alerts().getByRole('alert').first().textContent()).toContain('private address');
    // The browser logs the refused request (400) itself; that one is expected, nothing else is.
    expect(problems).toEqual([expect.stringContaining('status of 400')]);
    problems.length = 0;

    await alerts().getByLabel('Receiver URL').fill(receiver.url);
    // Only new agents for this one.
    await alerts().getByLabel('Spoofed visits rise').uncheck();
    await alerts().getByLabel('robots.txt is ignored').uncheck();
    await alerts().getByRole('button', { name: 'Add webhook' }).click();
    const shown = alerts().getByTestId('webhook-secret');
    await shown.waitFor();
    secret = (await shown.textContent())!;
    expect(secret).toMatch(/^whsec_/);
    expect(await alerts().locator('li.webhook').textContent()).toContain('A new agent visits');
    await shot('secret-1280');
    // Shown once: after a reload only the webhook is there, never its secret.
    await page.reload();
    await alerts().locator('li.webhook').waitFor();
    expect(await alerts().getByTestId('webhook-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
  });

  it('sends a test event that the receiver can verify', async () => {
    await alerts().getByRole('button', { name: 'Send test' }).click();
    await page.getByText('Test event delivered (200).').waitFor();
    const [test] = await receiver.waitFor(1);
    expect(test!.headers['agentwarden-event']).toBe('webhook.test');
    expect(independentlyVerified(secret, test!.headers['agentwarden-signature'], test!.body)).toBe(true);
  });

  it('gets a webhook when a new agent appears, and the delivery log shows it', async () => {
    const posted = await fetch(new URL('/visits', proc.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ request_path: '/docs', request_method: 'GET', request_headers: { 'user-agent': CLAUDEBOT } }]),
    });
    expect(posted.status).toBe(202);
    const received = await receiver.waitFor(2);
    const alert = received[1]!;
    expect(alert.headers['agentwarden-event']).toBe('agent.first_visit');
    expect(independentlyVerified(secret, alert.headers['agentwarden-signature'], alert.body)).toBe(true);
    expect(JSON.parse(alert.body)).toMatchObject({ type: 'agent.first_visit', project: { id: projectId }, data: { agent: { id: 'claudebot', name: 'ClaudeBot' }, visit: { request_path: '/docs' } } });

    await page.reload();
    await expect.poll(() => alerts().locator('li.webhook .latest').textContent()).toContain('Delivered A new agent visits');
    await alerts().getByRole('button', { name: 'Delivery log' }).click();
    const rows = alerts().locator('table.deliveries tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.first().textContent()).toContain('agent.first_visit');
    expect(await rows.nth(1).textContent()).toContain('webhook.test');
    await alerts().getByText('Alert rules and signatures').click();
    await shot('log-1280');
  });

  it('fits at 390 and 1280 px, with no console error or CSP violation', async () => {
    const found: string[] = [];
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      await page.goto(`${dashboard}#/p/${projectId}/settings`);
      // A fresh page: the log and the rules start closed.
      await page.reload();
      await alerts().locator('li.webhook').waitFor();
      await alerts().getByRole('button', { name: 'Delivery log' }).click();
      await alerts().locator('table.deliveries').waitFor();
      await alerts().getByText('Alert rules and signatures').click();
      for (const problem of await layoutProblems(page)) found.push(`settings with alerts at ${width} px: ${problem}`);
      await alerts().screenshot({ path: join(ARTIFACTS, `alerts-section-${width}.png`) });
    }
    expect(found).toEqual([]);
    expect(problems).toEqual([]);
  });
});
