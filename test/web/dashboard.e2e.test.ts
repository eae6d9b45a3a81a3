// The dashboard end to end in a real browser: headless Chromium (Debian's, driven by
// playwright-core) against `agentwarden serve` started as a real process on loopback. Logs in,
// creates a project, sends a test visit and sees it on the live timeline within 1 s and in the
// charts, previews robots.txt, rotates the token. Screenshots of every page go to test-artifacts/.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServeProcess } from '../server/helpers.js';
import { ARTIFACTS, chromiumAvailable, launchChromium, startDashboardServer, watchedPage } from './dashboard-harness.js';

const available = chromiumAvailable();

describe.skipIf(!available)('dashboard in Chromium', () => {
  let proc: ServeProcess;
  let browser: Browser;
  let page: Page;
  let dashboard: string;
  let secret: string;
  const problems: string[] = [];
  const cleanups: (() => void | Promise<void>)[] = [];

  beforeAll(async () => {
    // The bundled catalog (it holds the test agent) and its bundled IP lists: nothing leaves loopback.
    const server = await startDashboardServer();
    cleanups.push(() => server.stop());
    ({ proc, dashboard, secret } = server);
    browser = await launchChromium();
    cleanups.push(() => browser.close());
    // Any script error, console error or CSP violation is a failure of the page.
    page = await watchedPage(browser, problems);
    page.on('dialog', (dialog) => void dialog.accept());
  }, 60_000);

  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  const api = (path: string, token: string, body: unknown) =>
    fetch(new URL(path, proc.url), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('redirects / to the dashboard, which serves a strict CSP', async () => {
    const root = await fetch(proc.url, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(new URL(root.headers.get('location')!, proc.url).href).toBe(dashboard);
    const response = await page.goto(proc.url);
    expect(page.url()).toBe(dashboard);
    expect(response!.headers()['content-security-policy']).toContain("script-src 'self'");
  });

  it('logs in with the secret printed on first start, from the keyboard', async () => {
    await page.getByLabel('Admin secret').waitFor();
    await shot('01-login');
    // The field has focus on load: type and press Enter, no mouse.
    await page.keyboard.type('aws_wrong');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('alert').first().textContent()).toContain('secret is wrong');
    await page.getByLabel('Admin secret').fill(secret);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    const cookies = await page.context().cookies();
    expect(cookies.find((c) => c.name === 'aw_session')).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
  });

  let projectToken = '';
  it('lists projects and creates one, revealing its token once on its settings page', async () => {
    await expect.poll(() => page.getByRole('table').textContent()).toContain('default');
    // Keyboard: the first Tab stop is the skip link, which moves focus to the page content.
    await page.reload();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('skip-link');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    await shot('02-projects');
    await page.getByLabel('Project name').fill('shop.example');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('heading', { name: 'shop.example: settings' }).waitFor();
    projectToken = (await page.getByTestId('revealed-token').textContent())!;
    expect(projectToken).toMatch(/^aw_[A-Za-z0-9_-]{43}$/);
    // The snippet that connects a site carries this server's URL and the new token, per framework.
    const snippet = page.getByTestId('connect-snippet');
    const serverUrl = new URL(proc.url).origin;
    expect(await snippet.textContent()).toContain(`\nAGENTWARDEN_URL=${serverUrl} AGENTWARDEN_TOKEN=${projectToken} node server.mjs\n`);
    // The install line names the tarball npm pack writes for this version.
    const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };
    expect(await snippet.textContent()).toContain(`# npm install /path/to/agentwarden-${version}.tgz express@5\n`);
    // The snippet is the example app the tests start, word for word but for the server URL it
    // falls back to (npm start's), which is this server's, so the file reports here even when run
    // without AGENTWARDEN_URL.
    const example = (file: string) => readFileSync(join(import.meta.dirname, '../../examples', file), 'utf8').replaceAll('http://127.0.0.1:8080', serverUrl);
    expect(serverUrl).not.toBe('http://127.0.0.1:8080');
    expect(await snippet.textContent()).toContain(example('express/server.mjs'));
    expect(await snippet.textContent()).toContain(`url: process.env.AGENTWARDEN_URL ?? '${serverUrl}'`);
    expect(await snippet.textContent()).not.toContain('8080');
    await page.getByLabel('Framework').selectOption('worker');
    expect(await snippet.textContent()).toContain(`[vars] AGENTWARDEN_URL = "${serverUrl}"`);
    expect(await snippet.textContent()).toContain(example('worker/worker.js'));
    await page.getByLabel('Framework').selectOption('nextjs');
    expect(await snippet.textContent()).toContain(`\nAGENTWARDEN_URL=${serverUrl}\nAGENTWARDEN_TOKEN=${projectToken}\n`);
    expect(await snippet.textContent()).toContain(example('nextjs/proxy.ts'));
    await page.getByLabel('Framework').selectOption('nextjs-edge');
    expect(await snippet.textContent()).toContain('# save the file below as middleware.ts beside app/, and in .env.local:');
    expect(await snippet.textContent()).toContain(example('nextjs-edge/middleware.ts'));
    await shot('03-settings-new-token');
    // Reloaded, the page shows only the masked prefix.
    await page.reload();
    await page.getByRole('heading', { name: 'shop.example: settings' }).waitFor();
    expect(await page.getByTestId('revealed-token').count()).toBe(0);
    expect(await page.locator('main').textContent()).toContain(`${projectToken.slice(0, 7)}••••`);
    expect(await page.locator('main').textContent()).not.toContain(projectToken);
    expect(await page.getByTestId('connect-snippet').textContent()).toContain(`AGENTWARDEN_TOKEN=<the token starting ${projectToken.slice(0, 7)}`);
  });

  it('generates a live robots.txt preview from the chosen agent types', async () => {
    await page.getByLabel('AI Data Scraper').check();
    await expect.poll(() => page.getByTestId('robots-preview').textContent(), { timeout: 5000 }).toContain('User-agent: GPTBot\nDisallow: /');
    await page.getByLabel('Disallow paths (one per line)').fill('/private/');
    await expect.poll(() => page.getByTestId('robots-preview').textContent(), { timeout: 5000 }).toContain('User-agent: GPTBot\nDisallow: /private/');
    await page.getByRole('button', { name: 'Save robots rules' }).click();
    await expect.poll(() => page.locator('#toast').textContent()).toContain('Robots rules saved');
    await shot('04-settings-robots');
  });

  it("saves the site's hosts as the server keeps them, and shows a refused host's error", async () => {
    const hosts = page.getByLabel('Hosts', { exact: true });
    const seen = problems.length;
    await hosts.fill('shop.example/cart');
    await page.getByRole('button', { name: 'Save site hosts' }).click();
    await expect.poll(() => page.getByRole('region', { name: 'Site hosts' }).getByRole('alert').textContent()).toContain('must be a host or host:port');
    // The browser logs the refusal it was meant to get; nothing else.
    expect(problems.splice(seen)).toEqual([expect.stringContaining('status of 400')]);
    await hosts.fill('Shop.Example, www.shop.example:443, shop.example.');
    await page.getByRole('button', { name: 'Save site hosts' }).click();
    await expect.poll(() => page.locator('#toast').textContent()).toContain('Site hosts saved');
    expect(await hosts.inputValue()).toBe('shop.example, www.shop.example');
    await page.reload();
    await page.getByRole('heading', { name: 'shop.example: settings' }).waitFor();
    expect(await page.getByLabel('Hosts', { exact: true }).inputValue()).toBe('shop.example, www.shop.example');
  });

  it('saves "none" as trusting no client-IP header, as the server keeps it, and shows it so after a reload', async () => {
    await page.getByLabel('Headers, in order').fill('None');
    await page.getByRole('button', { name: 'Save client IP settings' }).click();
    await expect.poll(() => page.locator('#toast').textContent()).toContain('Client IP settings saved');
    const saved = await fetch(new URL('/project-settings', proc.url), { headers: { authorization: `Bearer ${projectToken}` } });
    expect(((await saved.json()) as { client_ip: unknown }).client_ip).toEqual({ headers: [] });
    await page.reload();
    await page.getByRole('heading', { name: 'shop.example: settings' }).waitFor();
    expect(await page.getByLabel('Headers, in order').inputValue()).toBe('none');
    // Emptied again: the server's default.
    await page.getByLabel('Headers, in order').fill('');
    await page.getByRole('button', { name: 'Save client IP settings' }).click();
    await expect.poll(async () => ((await (await fetch(new URL('/project-settings', proc.url), { headers: { authorization: `Bearer ${projectToken}` } })).json()) as { client_ip: unknown }).client_ip).toEqual({});
  });

  it('shows a test visit on the realtime timeline within 1 s', async () => {
    await page.getByRole('link', { name: 'Timeline', exact: true }).click();
    await page.getByText('No visits yet — send a test visit').waitFor();
    await expect.poll(() => page.locator('.live-status').textContent(), { timeout: 5000 }).toContain('Live');
    await shot('05-timeline-empty');
    const sent = await api('/test-visits', projectToken, {});
    expect(sent.status).toBe(202);
    const arrived = Date.now();
    await page.locator('table.timeline tbody tr').first().waitFor({ timeout: 1000 });
    expect(Date.now() - arrived).toBeLessThan(1000);
    const row = await page.locator('table.timeline tbody tr').first().textContent();
    expect(row).toContain('agentwarden test agent');
    expect(row).toContain('Developer Helper');
    // A spoofed agent stands out: "GPTBot" from an address OpenAI does not publish.
    const visit = {
      request_path: '/private/report',
      request_method: 'GET',
      request_headers: { 'user-agent': 'Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)', 'x-forwarded-for': '203.0.113.7' },
      response_status_code: 200,
      // A policy in report-only mode let it through, and says what it would have done.
      is_blocked: false,
      decision: { rule: 'deny-verification-failed', action: 'deny', report_only: true },
    };
    expect((await api('/visits', projectToken, [visit])).status).toBe(202);
    await expect.poll(() => page.locator('table.timeline tbody tr').count(), { timeout: 1000 }).toBe(2);
    const spoofed = page.locator('table.timeline tbody tr').first();
    expect(await spoofed.textContent()).toContain('GPTBot');
    expect(await spoofed.locator('a.badge').textContent()).toBe('Spoofed');
    expect(await spoofed.textContent()).toContain('203.0.113.7');
    // The streamed row draws the decision as the loaded ones do.
    expect(await spoofed.locator('td[data-label="Status"]').textContent()).toBe('200Would block (report only) by the rule Deny spoofed agents');
    await shot('06-timeline');
    // Filters: only the spoofed visit, then all again.
    const rows = () => page.locator('table.timeline tbody tr').count();
    await page.getByLabel('Result').selectOption('verification_failed');
    await expect.poll(rows).toBe(1);
    await page.getByLabel('Result').selectOption('');
    await expect.poll(rows).toBe(2);
    // Pause holds new visits back and counts them; resume shows them.
    await page.getByRole('button', { name: 'Pause' }).click();
    expect((await api('/test-visits', projectToken, {})).status).toBe(202);
    await expect.poll(() => page.locator('.live-status').textContent()).toContain('Paused — 1 new');
    expect(await rows()).toBe(2);
    await page.getByRole('button', { name: 'Resume' }).click();
    expect(await rows()).toBe(3);
  });

  it('counts the visits in the charts', async () => {
    await page.getByRole('link', { name: 'Analytics', exact: true }).click();
    await page.getByRole('heading', { name: 'Visits over time by agent type' }).waitFor();
    await expect.poll(() => page.locator('.big').textContent()).toBe('3 visits');
    await page.locator('.chart canvas').first().waitFor();
    const agents = await page.getByRole('region', { name: 'Top agents' }).textContent();
    expect(agents).toContain('agentwarden test agent');
    expect(agents).toContain('GPTBot');
    const outcomes = page.getByRole('region', { name: 'Verification outcomes' });
    expect(await outcomes.locator('.tile.alarm').textContent()).toBe('1Spoofed');
    expect(await outcomes.textContent()).toContain('Spoofed agents');
    // The spoofed "GPTBot" visit to /private/ is someone else's: it breaks no rule of GPTBot's.
    const violations = await page.getByRole('region', { name: 'robots.txt violations' }).textContent();
    expect(violations).not.toContain('/private/report');
    expect(violations).toContain('No agent');
    // The CSV export links work with the session cookie alone.
    const href = await page.getByRole('link', { name: 'Top agents as CSV' }).getAttribute('href');
    const csv = await page.request.get(href!);
    expect(csv.status()).toBe(200);
    expect(csv.headers()['content-type']).toMatch(/^text\/csv/);
    expect(await csv.text()).toContain('gptbot');
    const visitsCsv = await page.request.get((await page.getByRole('link', { name: 'visits as CSV' }).getAttribute('href'))!);
    expect(visitsCsv.status()).toBe(200);
    expect((await visitsCsv.text()).trim().split('\n')).toHaveLength(4);
    await shot('07-analytics');
  });

  it('rotates the token: the old one gets 401 from the API, the new one works', async () => {
    await page.getByRole('link', { name: 'Settings', exact: true }).click();
    await page.getByRole('button', { name: 'Rotate token' }).click();
    const fresh = (await page.getByTestId('revealed-token').textContent())!;
    expect(fresh).toMatch(/^aw_/);
    expect(fresh).not.toBe(projectToken);
    const identify = (token: string) => api('/agent-identifications', token, { request_headers: { 'user-agent': 'curl/8' } });
    expect((await identify(projectToken)).status).toBe(401);
    expect((await identify(fresh)).status).toBe(200);
    await shot('08-settings-rotated');
  });

  it('works in a narrow window', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('link', { name: 'Timeline', exact: true }).click();
    await page.locator('table.timeline tbody tr').first().waitFor();
    // Nothing wider than the window: no sideways scrolling of the page.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await shot('09-timeline-narrow');
    await page.getByRole('link', { name: 'Analytics', exact: true }).click();
    await page.locator('.chart canvas').first().waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await shot('10-analytics-narrow');
    expect(problems).toEqual([]);
  });
});
