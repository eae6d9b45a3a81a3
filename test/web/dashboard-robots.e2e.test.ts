// Robots rules per agent in the dashboard, end to end in headless Chromium against `agentwarden
// serve`: block all AI Data Scrapers but one on the settings page with its live preview, an
// unknown agent named at its row, the rules saved and read back, the violations and the agent page
// following them; and the notice a project gets when most visits carry no client address. Both
// pages at 390 and 1280 px without sideways scrolling or cut-off controls; any console error or CSP
// violation fails the run. Screenshots go to test-artifacts/robots-*.png.
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServeProcess } from '../server/helpers.js';
import { GOOGLEBOT_UA as GOOGLEBOT, GPTBOT_UA as GPTBOT } from '../helpers/agents.js';
import { ARTIFACTS, chromiumAvailable, launchChromium, layoutProblems, loggedInPage, openView, projectApi, startDashboardServer } from './dashboard-harness.js';

const available = chromiumAvailable();

const CCBOT = 'CCBot/2.0 (https://commoncrawl.org/faq/)';

describe.skipIf(!available)('robots rules per agent and the client-address notice in Chromium', () => {
  let proc: ServeProcess;
  let browser: Browser;
  let page: Page;
  let dashboard: string;
  let token: string;
  let projectId: string;
  const problems: string[] = [];
  const cleanups: (() => void | Promise<void>)[] = [];

  const api = (method: string, path: string, body?: unknown) => projectApi({ proc, token })(method, path, body);
  const visit = (ua: string, path: string, over: Record<string, unknown> = {}) => ({ request_path: path, request_method: 'GET', request_headers: { 'user-agent': ua }, response_status_code: 200, ...over });
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `robots-${name}.png`), fullPage: true });
  const open = (hash: string, heading: RegExp) => openView(page, dashboard, hash, heading);
  const preview = () => page.getByTestId('robots-preview').textContent();
  const row = (i: number) => page.locator('li.agent-rule').nth(i);

  beforeAll(async () => {
    const server = await startDashboardServer();
    cleanups.push(() => server.stop());
    ({ proc, dashboard, token, projectId } = server);
    // No proxy header and no client_ip: none of these visits carries a client address.
    await api('POST', '/visits', [visit(GPTBOT, '/private/report'), visit(GPTBOT, '/blog'), visit(CCBOT, '/private/data'), visit(GOOGLEBOT, '/search?q=1')]);
    browser = await launchChromium();
    cleanups.push(() => browser.close());
    page = await loggedInPage(browser, dashboard, server.secret, problems);
  }, 60_000);

  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('blocks all AI Data Scrapers but one, with the preview following every change', async () => {
    await open(`#/p/${projectId}/settings`, /settings/);
    await page.getByLabel('AI Data Scraper', { exact: true }).check();
    await expect.poll(preview, { timeout: 5000 }).toContain('User-agent: CCBot\nDisallow: /\n');
    // Scrapers documented not to obey robots.txt are named under the preview, with what does keep them out.
    const ignores = page.getByRole('note', { name: 'Agents robots.txt may not stop' });
    await expect.poll(() => ignores.textContent(), { timeout: 5000 }).toContain('Bytespider');
    expect(await ignores.textContent()).toContain('denyAgents');
    expect(await ignores.textContent()).not.toContain('GPTBot');
    await page.getByRole('button', { name: 'Add an agent' }).click();
    // The new row's agent field has focus: type a robots token, as the operator documents it.
    await page.keyboard.type('CCBot');
    await row(0).getByLabel('Rule').selectOption('allow');
    await expect.poll(preview, { timeout: 5000 }).toContain('User-agent: CCBot\nAllow: /\n');
    expect(await preview()).toContain('User-agent: GPTBot\nDisallow: /\n');
    await row(0).getByLabel('Agent').blur();
    await expect.poll(() => row(0).locator('.agent-about').textContent()).toContain('AI Data Scraper');

    // An agent the catalog does not know is named at its own row, and nothing is previewed from it.
    const before = problems.length;
    await page.getByRole('button', { name: 'Add an agent' }).click();
    await page.keyboard.type('NoSuchBot');
    await expect.poll(() => row(1).locator('.agent-problem').textContent(), { timeout: 5000 }).toContain('"NoSuchBot" is neither an agent id nor a robots token');
    expect(await row(1).getByLabel('Agent').getAttribute('aria-invalid')).toBe('true');
    // The preview's 400 for that input is the one expected console line (Chromium logs every 4xx).
    expect(problems.splice(before)).toEqual(['console: Failed to load resource: the server responded with a status of 400 (Bad Request)']);
    await shot('settings-unknown-agent-1280');
    // Replaced by Googlebot, disallowed by name on its own path.
    await row(1).getByLabel('Agent').fill('Googlebot');
    await row(1).getByLabel('Disallowed paths').fill('/search');
    await expect.poll(preview, { timeout: 5000 }).toContain('User-agent: Googlebot\nDisallow: /search\n');
    expect(await row(1).locator('.agent-problem').textContent()).toBe('');
    await page.getByRole('button', { name: 'Save robots rules' }).click();
    await expect.poll(() => page.locator('.toast').last().textContent()).toContain('Robots rules saved');
    expect((await api('GET', '/project-settings')).robots).toEqual({
      agent_types: ['AI Data Scraper'],
      disallow: ['/'],
      disallow_agents: [{ agent: 'googlebot', disallow: ['/search'] }],
      allow_agents: ['ccbot'],
    });
    await shot('settings-1280');

    // Read back: the rows hold the saved agents (by id) and the preview the same file.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: /settings/ }).waitFor();
    await expect.poll(() => page.locator('li.agent-rule').count()).toBe(2);
    expect(await row(0).getByLabel('Agent').inputValue()).toBe('googlebot');
    expect(await row(0).getByLabel('Disallowed paths').inputValue()).toBe('/search');
    expect(await row(1).getByLabel('Agent').inputValue()).toBe('ccbot');
    expect(await row(1).getByLabel('Rule').inputValue()).toBe('allow');
    await expect.poll(preview, { timeout: 5000 }).toContain('User-agent: CCBot\nAllow: /\n');
  });

  it('counts violations by the same per-agent rules; the agent page says which rule applies and changes it in one click', async () => {
    await open(`#/p/${projectId}/analytics`, /analytics/);
    const violations = page.getByRole('region', { name: 'robots.txt violations' });
    await expect.poll(() => violations.textContent()).toContain('GPTBot');
    const text = await violations.textContent();
    // CCBot's /private/data is allowed by name; Googlebot's /search?q=1 breaks its own rule.
    expect(text).not.toContain('CCBot');
    expect(text).toContain('/search?q=1');
    expect(text).toContain('Disallow: /search');
    await open(`#/p/${projectId}/agents/ccbot`, /CCBot/);
    await expect.poll(() => page.getByRole('region', { name: 'robots.txt compliance' }).textContent()).toContain('Your saved rules allow it by name (Allow: /)');
    expect(await page.getByRole('region', { name: 'robots.txt compliance' }).textContent()).toContain('No violations');
    expect(await page.getByRole('button', { name: 'Stop allowing CCBot by name' }).count()).toBe(1);

    // From a scraper's own page, one click makes it the next exception; and one more takes it back.
    await open(`#/p/${projectId}/agents/gptbot`, /GPTBot/);
    const compliance = page.getByRole('region', { name: 'robots.txt compliance' });
    await expect.poll(() => compliance.textContent()).toContain('Your saved rules disallow its type, AI Data Scraper (Disallow: /)');
    await page.getByRole('button', { name: 'Allow GPTBot by name' }).click();
    await expect.poll(() => compliance.textContent()).toContain('Your saved rules allow it by name (Allow: /)');
    expect((await api('GET', '/project-settings')).robots.allow_agents).toEqual(['ccbot', 'gptbot']);
    await shot('agent-allowed-1280');
    await page.getByRole('button', { name: 'Stop allowing GPTBot by name' }).click();
    await expect.poll(() => compliance.textContent()).toContain('disallow its type');
    expect((await api('GET', '/project-settings')).robots.allow_agents).toEqual(['ccbot']);
  });

  it('says on the analytics and the timeline when most visits carry no client address, and how to fix it', async () => {
    await open(`#/p/${projectId}/analytics`, /analytics/);
    const notice = page.getByRole('note', { name: 'Client addresses missing' });
    expect(await notice.textContent()).toContain('None of the latest 4 visits carried a client address');
    expect(await notice.textContent()).toContain('client_ip');
    expect(await notice.getByRole('link', { name: 'the settings' }).getAttribute('href')).toBe(`#/p/${projectId}/settings`);
    await shot('analytics-notice-1280');
    // The timeline, where the "Not verifiable" badges are, says it too.
    await open(`#/p/${projectId}/timeline`, /realtime timeline/);
    expect(await page.getByRole('note', { name: 'Client addresses missing' }).textContent()).toContain('None of the latest 4 visits carried a client address');
    await open(`#/p/${projectId}/analytics`, /analytics/);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await notice.waitFor();
    expect(await layoutProblems(page)).toEqual([]);
    await shot('analytics-notice-390');
    await notice.screenshot({ path: join(ARTIFACTS, 'robots-notice-390.png') });
    await page.setViewportSize({ width: 1280, height: 900 });
    // Once most visits carry one (here from a proxy header the default rule reads), the notice goes.
    await api('POST', '/visits', [1, 2, 3, 4, 5].map((n) => ({ ...visit(GPTBOT, `/page-${n}`), request_headers: { 'user-agent': GPTBOT, 'x-forwarded-for': '203.0.113.9' } })));
    await page.reload();
    await page.getByRole('heading', { level: 1, name: /analytics/ }).waitFor();
    await page.waitForFunction(() => document.querySelector('[aria-busy="true"]') === null);
    expect(await page.getByRole('note', { name: 'Client addresses missing' }).count()).toBe(0);
    // Test visits from the settings page never carry an address, and are not the site's traffic:
    // these two would make 6 of 11 without one, but the notice counts 4 of 9.
    await api('POST', '/test-visits', {});
    await api('POST', '/test-visits', {});
    expect((await api('GET', '/visits?limit=200')).visits.filter((v: { client_ip: string | null }) => v.client_ip === null)).toHaveLength(6);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: /analytics/ }).waitFor();
    await page.waitForFunction(() => document.querySelector('[aria-busy="true"]') === null);
    expect(await page.getByRole('note', { name: 'Client addresses missing' }).count()).toBe(0);
  });

  it('fits both pages at 390 and 1280 px: no sideways scrolling, no cut-off control', async () => {
    const found: string[] = [];
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      await open(`#/p/${projectId}/settings`, /settings/);
      await expect.poll(() => page.locator('li.agent-rule').count()).toBe(2);
      await expect.poll(preview, { timeout: 5000 }).toContain('Allow: /');
      for (const problem of await layoutProblems(page)) found.push(`settings at ${width} px: ${problem}`);
      await shot(`settings-${width}`);
      // The rules editor alone, readable at full size.
      await page.locator('section[aria-labelledby="robots-title"]').screenshot({ path: join(ARTIFACTS, `robots-editor-${width}.png`) });
      await open(`#/p/${projectId}/analytics?range=1h`, /analytics/);
      await page.waitForTimeout(50);
      for (const problem of await layoutProblems(page)) found.push(`analytics at ${width} px: ${problem}`);
      await shot(`analytics-${width}`);
    }
    expect(found).toEqual([]);
  });

  it('had no console error and no CSP violation on any page', () => {
    expect(problems).toEqual([]);
  });
});
