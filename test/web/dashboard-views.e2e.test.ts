// The dashboard's views a site owner reads, end to end in headless Chromium (Debian's, driven by
// playwright-core) against `agentwarden serve` as a real process: from a red "Spoofed" badge to
// the checks that decided it, from a top agent to its page, the catalog, a type page, the view
// kept in the URL, live refresh, and every page at 390 and 1280 px without sideways scrolling or
// cut-off controls. Any console error or CSP violation fails the run. Screenshots of every page
// at both widths go to test-artifacts/ (git-ignored) for review by eye.
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServeProcess } from '../server/helpers.js';
import { ARTIFACTS, chromiumAvailable, launchChromium, layoutProblems, loggedInPage, openView, projectApi, startDashboardServer, watchedPage } from './dashboard-harness.js';

const available = chromiumAvailable();

const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const CLAUDEBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';
const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
// An address OpenAI publishes for GPTBot (data/ip-ranges/openai-gptbot.json), and one it does not.
const OPENAI_IP = '132.196.86.5';
const FOREIGN_IP = '203.0.113.7';

describe.skipIf(!available)('dashboard views in Chromium', () => {
  let proc: ServeProcess;
  let browser: Browser;
  let page: Page;
  let dashboard: string;
  let token: string;
  let projectId: string;
  let secret: string;
  const problems: string[] = [];
  const cleanups: (() => void | Promise<void>)[] = [];

  const api = (method: string, path: string, body?: unknown) => projectApi({ proc, token })(method, path, body);
  const visit = (ua: string, path: string, over: Record<string, unknown> = {}, headers: Record<string, string> = {}) => ({
    request_path: path,
    request_method: 'GET',
    request_headers: { 'user-agent': ua, ...headers },
    response_status_code: 200,
    response_duration_in_milliseconds: 12.5,
    ...over,
  });
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `views-${name}.png`), fullPage: true });
  const open = (hash: string, heading: string | RegExp) => openView(page, dashboard, hash, heading);

  beforeAll(async () => {
    const server = await startDashboardServer();
    cleanups.push(() => server.stop());
    ({ proc, dashboard, token, projectId, secret } = server);

    // A morning of traffic: GPTBot genuine and spoofed, ClaudeBot hitting a missing page, people from ChatGPT and Perplexity.
    const now = Date.now();
    const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
    await api('PUT', '/project-settings', { robots: { agent_types: ['AI Data Scraper'], disallow: ['/private/'] } });
    await api('POST', '/visits', [
      // The same spoofer earlier, when the site's policy only reported what it would block.
      visit(GPTBOT, '/private/report', { is_blocked: false, decision: { rule: 'deny-verification-failed', action: 'deny', report_only: true }, created: at(90) }, { 'x-forwarded-for': FOREIGN_IP }),
      visit(GPTBOT, '/private/report', { response_status_code: 404, is_blocked: true, decision: { rule: 'deny-verification-failed', action: 'deny', report_only: false }, created: at(80) }, { 'x-forwarded-for': FOREIGN_IP, accept: 'text/html', authorization: 'Bearer secret-of-the-site' }),
      // The genuine GPTBot's last visit let in by an allow rule.
      ...[200, 150, 100, 50, 20].map((m) => visit(GPTBOT, m === 20 ? '/robots.txt' : '/blog/first-post', m === 20 ? { is_blocked: false, decision: { rule: 'allow-verified', action: 'allow', report_only: false }, created: at(m) } : { created: at(m) }, { 'x-forwarded-for': OPENAI_IP })),
      visit(CLAUDEBOT, '/docs', { created: at(70) }),
      visit(CLAUDEBOT, '/old-page', { response_status_code: 404, created: at(60) }),
      visit(BROWSER, '/pricing?utm_source=chatgpt.com', { created: at(40) }, { referer: 'https://chatgpt.com/' }),
      visit(BROWSER, '/pricing', { created: at(30) }, { referer: 'https://chatgpt.com/' }),
      visit(BROWSER, '/docs', { created: at(10) }, { referer: 'https://www.perplexity.ai/' }),
    ]);

    browser = await launchChromium();
    cleanups.push(() => browser.close());
    // Any script error, console error or CSP violation is a failure of the page.
    page = await loggedInPage(browser, dashboard, secret, problems);
  }, 60_000);

  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('goes from a red "Spoofed" badge on the timeline to the checks that decided it', async () => {
    await open(`#/p/${projectId}/timeline`, /realtime timeline/);
    const spoofedRow = page.locator('table.timeline tbody tr', { hasText: '/private/report' }).first();
    const badge = spoofedRow.locator('a.badge.result-verification_failed');
    expect(await badge.textContent()).toBe('Spoofed');
    // Red: the badge is filled with the "bad" colour.
    expect(await badge.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(179, 38, 30)');
    // The site's decision is on the row, in words: blocked, or only reported, and by which rule.
    const decisions = page.locator('table.timeline tbody tr', { hasText: '/private/report' }).locator('td[data-label="Status"]');
    expect(await decisions.allTextContents()).toEqual(['404Blocked by the rule Deny spoofed agents', '200Would block (report only) by the rule Deny spoofed agents']);
    expect(await page.locator('table.timeline tbody tr', { hasText: '/robots.txt' }).locator('td[data-label="Status"]').textContent()).toBe('200Allowed by the rule Allow verified agents');
    expect(await page.locator('table.timeline tbody tr', { hasText: '/blog/first-post' }).first().locator('.decision').count()).toBe(0);
    await badge.click();
    await page.getByRole('heading', { level: 1, name: /Visit GET \/private\/report/ }).waitFor();
    const verification = page.getByRole('region', { name: 'Verification' });
    await verification.waitFor();
    const text = await verification.textContent();
    expect(text).toContain('Decided by Published IP ranges');
    expect(text).toContain('Failed');
    expect(text).toContain('outside every range the operator publishes');
    expect(text).toContain('ip-not-in-range');
    const summary = await page.getByRole('region', { name: 'Summary' }).textContent();
    expect(summary).toContain(FOREIGN_IP);
    expect(summary).toContain('x-forwarded-for');
    expect(summary).toContain('404');
    expect(summary).toContain('12.5 ms');
    // The site's own middleware denied it: its decision is part of the visit.
    const policy = await page.getByRole('region', { name: 'Access policy' }).textContent();
    expect(policy).toContain('Deny spoofed agents');
    expect(policy).toContain('Yes: the site refused the request');
    // The headers as stored: the secret one was never kept.
    const headers = await page.getByRole('region', { name: 'Request headers' }).textContent();
    expect(headers).toContain('text/html');
    expect(headers).not.toContain('secret-of-the-site');
    await shot('visit-spoofed-1280');
    // A genuine GPTBot visit says what passed.
    await page.goBack();
    await page.locator('table.timeline tbody tr', { hasText: '/blog/first-post' }).first().locator('a.badge').click();
    await expect.poll(() => page.getByRole('region', { name: 'Verification' }).textContent()).toContain('inside the ranges the operator publishes');
  });

  it('goes from a top agent on the analytics page to its page', async () => {
    await open(`#/p/${projectId}/analytics`, /analytics/);
    const topAgents = page.getByRole('region', { name: 'Top agents' });
    await topAgents.getByRole('link', { name: 'GPTBot' }).click();
    await page.getByRole('heading', { level: 1, name: /GPTBot/ }).waitFor();
    await page.waitForFunction(() => document.querySelector('.panels')?.childElementCount !== 0);
    expect(page.url()).toContain(`#/p/${projectId}/agents/gptbot`);
    const about = await page.getByRole('region', { name: 'About' }).textContent();
    expect(about).toContain('OpenAI');
    expect(about).toContain('Published IP ranges');
    await expect.poll(() => page.getByRole('region', { name: 'On this site' }).textContent()).toContain('7 visits');
    expect(await page.getByRole('region', { name: 'Status codes' }).textContent()).toContain('/private/report');
    const robots = await page.getByRole('region', { name: 'robots.txt compliance' }).textContent();
    expect(robots).toContain('It fetched /robots.txt once');
    expect(robots).toContain('disallow its type, AI Data Scraper');
    expect(robots).toContain('Disallow: /private/');
    expect(robots).toContain('It is documented to obey robots.txt.');
    expect(await page.locator('.tile.alarm').textContent()).toBe('2Spoofed');
    await shot('agent-1280');
    // The spoofed tile lists exactly those visits.
    await page.locator('a.tile.alarm').click();
    await expect.poll(() => page.locator('table.timeline tbody tr').count()).toBe(2);
    expect(page.url()).toContain('result=verification_failed');
  });

  it('shows the new analytics panels with display names, plurals and honest empty states', async () => {
    await open(`#/p/${projectId}/analytics`, /analytics/);
    expect(await page.locator('.big').first().textContent()).toBe('12 visits');
    const referrals = await page.getByRole('region', { name: 'AI referrals', exact: true }).textContent();
    expect(referrals).toContain('ChatGPT');
    expect(referrals).not.toContain('chatgpt');
    expect(await page.getByRole('region', { name: 'Landing pages of AI referrals' }).textContent()).toContain('/pricing');
    const pages = await page.getByRole('region', { name: 'Top pages (all agents)' }).textContent();
    expect(pages).toContain('/blog/first-post');
    const statuses = await page.getByRole('region', { name: 'Status codes by agent' }).textContent();
    expect(statuses).toContain('404');
    expect(statuses).toContain('ClaudeBot');
    const operators = page.getByRole('region', { name: 'Crawls per referral, by AI operator' });
    const openai = await operators.locator('tr', { hasText: 'OpenAI' }).textContent();
    // 5 of GPTBot's 7 visits were OpenAI's (2 were spoofed) against 2 people sent by ChatGPT.
    expect(openai).toContain('2.5 : 1');
    expect(await page.getByRole('region', { name: 'Verification outcomes' }).textContent()).toContain('2 of 7 checked visits came from agents that are not who they claim to be');
    // GPTBot's only visits to /private/ were spoofed: someone else's, no violation of GPTBot's.
    expect(await page.getByRole('region', { name: 'robots.txt violations' }).textContent()).toContain('No agent');
    await shot('analytics-1280');

    // A project where nothing could be checked says so, instead of "every agent was genuine".
    const created = await page.evaluate(async () => {
      const session = await (await fetch('../admin/session')).json();
      const response = await fetch('../admin/projects', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrf_token }, body: JSON.stringify({ name: 'quiet.example' }) });
      return (await response.json()) as { id: string; token: string };
    });
    const post = await fetch(new URL('/visits', proc.url), { method: 'POST', headers: { authorization: `Bearer ${created.token}`, 'content-type': 'application/json' }, body: JSON.stringify([visit(CLAUDEBOT, '/')]) });
    expect(post.status).toBe(202);
    await open(`#/p/${created.id}/analytics`, /analytics/);
    const outcomes = await page.getByRole('region', { name: 'Verification outcomes' }).textContent();
    expect(outcomes).toContain('Nothing could be checked');
    expect(outcomes).not.toContain('genuine');
    expect(await page.locator('.big').first().textContent()).toBe('1 visit');
    await shot('analytics-nothing-checked-1280');
  });

  it('browses the catalog by name, token and operator, filtered by type', async () => {
    await open(`#/p/${projectId}/agents`, /agents/);
    await page.getByRole('searchbox').fill('gptbot');
    await expect.poll(() => page.locator('table.catalog tbody tr').first().textContent()).toContain('GPTBot');
    expect(page.url()).toContain('q=gptbot');
    await page.getByRole('searchbox').fill('anthropic');
    await expect.poll(() => page.locator('table.catalog tbody tr', { hasText: 'ClaudeBot' }).count()).toBe(1);
    await page.getByLabel('Type', { exact: true }).selectOption('AI Search Crawler');
    await expect.poll(() => page.locator('table.catalog tbody tr', { hasText: 'ClaudeBot' }).count()).toBe(0);
    await page.getByLabel('Type', { exact: true }).selectOption('');
    await page.getByRole('searchbox').fill('');
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'in the catalog' }).textContent()).toMatch(/^[\d,]+ agents in the catalog\.$/);
    await shot('catalog-1280');
    // Inside a project: only the agents seen on the site, with their visits; the choice is in the URL.
    await page.getByLabel('Show').selectOption('seen');
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'seen' }).textContent()).toBe('2 agents seen on this site in the last 30 days.');
    expect(page.url()).toContain('show=seen');
    const seenRows = page.locator('table.catalog tbody tr');
    expect(await seenRows.allTextContents()).toEqual([expect.stringContaining('GPTBot'), expect.stringContaining('ClaudeBot')]);
    expect(await seenRows.first().locator('td').last().textContent()).toBe('7');
    expect(await page.getByLabel('Can be verified by').isVisible()).toBe(false);
    await page.getByRole('searchbox').fill('claude');
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'seen' }).textContent()).toBe('1 agent matches among those seen on this site in the last 30 days.');
    await page.getByRole('searchbox').fill('');
    await page.getByLabel('Show').selectOption('');
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'in the catalog' }).textContent()).toMatch(/^[\d,]+ agents in the catalog\.$/);
    // Reloaded with the link, the same view.
    await page.goto(`${dashboard}#/agents?q=googlebot&type=Search%20Engine%20Crawler`);
    await page.getByRole('heading', { name: 'Agent catalog' }).waitFor();
    await expect.poll(() => page.locator('table.catalog tbody tr').first().textContent()).toContain('Googlebot');
    expect(await page.getByRole('searchbox').inputValue()).toBe('googlebot');
    await page.locator('table.catalog tbody tr').first().getByRole('link', { name: 'Googlebot', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Googlebot' }).waitFor();
    expect(await page.getByRole('region', { name: 'About this agent' }).textContent()).toContain('Reverse DNS');
    await shot('catalog-agent-1280');
    // A fetcher acting for a user, which its operator says robots.txt may not stop.
    await page.goto(`${dashboard}#/agents/chatgpt-user`);
    await page.getByRole('heading', { level: 1, name: 'ChatGPT-User' }).waitFor();
    expect(await page.getByRole('region', { name: 'About this agent' }).textContent()).toContain('Obeys robots.txtNo, as documented');
  });

  it('shows an agent type page reached from the chart legend', async () => {
    await open(`#/p/${projectId}/analytics`, /analytics/);
    await page.locator('.series-links').getByRole('link', { name: /AI Data Scraper/ }).click();
    await page.getByRole('heading', { level: 1, name: /AI Data Scraper/ }).waitFor();
    await expect.poll(() => page.getByRole('region', { name: 'Top agents' }).textContent()).toContain('GPTBot');
    expect(await page.locator('main').textContent()).toContain('Your saved robots rules disallow every AI Data Scraper');
    await shot('type-1280');
  });

  it('keeps the range, the filters and the time zone in the URL, and switches to UTC', async () => {
    await open(`#/p/${projectId}/analytics?range=7d&tz=utc`, /analytics/);
    expect(await page.getByLabel('Date range').inputValue()).toBe('7d');
    expect(await page.locator('.zone-line').textContent()).toContain('Times in UTC');
    await page.getByLabel('Date range').selectOption('30d');
    expect(page.url()).toContain('range=30d');
    await page.getByLabel('Show UTC').uncheck();
    expect(page.url()).not.toContain('tz=utc');
    // Custom dates that make no range are said to be so, not silently replaced.
    await open(`#/p/${projectId}/analytics?range=custom&from=2026-11-25&to=2026-11-21`, /analytics/);
    expect(await page.getByRole('alert').filter({ hasText: 'Choose a From date' }).count()).toBe(1);
    expect(await page.getByLabel('From').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('From').fill('2026-11-20');
    await page.getByLabel('From').dispatchEvent('change');
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'Choose a From date' }).count()).toBe(0);
    expect(await page.locator('.zone-line').textContent()).toContain('Europe/Berlin');
    // A browser whose own zone is UTC has no switch to UTC to offer.
    const inUtc = await loggedInPage(browser, dashboard, secret, problems, { timezoneId: 'UTC' });
    await openView(inUtc, dashboard, `#/p/${projectId}/analytics`, /analytics/);
    expect(await inUtc.locator('.zone-line').textContent()).toMatch(/^Times in UTC\. Updated/);
    expect(await inUtc.getByLabel('Show UTC').count()).toBe(0);
    await inUtc.close();
    // Timeline filters: a link shows the same filtered view.
    await open(`#/p/${projectId}/timeline?result=verification_failed`, /realtime timeline/);
    await expect.poll(() => page.locator('table.timeline tbody tr').count()).toBe(2);
    expect(await page.getByLabel('Result').inputValue()).toBe('verification_failed');
    await page.getByLabel('Result').selectOption('');
    expect(page.url()).not.toContain('result=');
    // UTC on a visit page: the same instant, written in UTC.
    const id = (await api('GET', '/visits?limit=1')).visits[0].id as string;
    await open(`#/p/${projectId}/visits/${id}?tz=utc`, /Visit/);
    expect(await page.getByRole('region', { name: 'Summary' }).textContent()).toContain('(UTC)');
  });

  it('redraws the analytics live when a visit arrives', async () => {
    await open(`#/p/${projectId}/analytics`, /analytics/);
    const before = await page.locator('.big').first().textContent();
    expect(before).toBe('12 visits');
    // A keyboard user on a link keeps their place when the page redraws.
    await page.getByRole('region', { name: 'Top agents' }).getByRole('link', { name: 'ClaudeBot' }).focus();
    await api('POST', '/visits', [visit(CLAUDEBOT, '/live')]);
    await expect.poll(() => page.locator('.big').first().textContent(), { timeout: 10_000 }).toBe('13 visits');
    expect(await page.evaluate(() => [document.activeElement?.textContent, document.activeElement?.closest('section')?.getAttribute('aria-labelledby')])).toEqual(['ClaudeBot', 'agents-title']);
    await page.getByLabel('Live').uncheck();
    expect(page.url()).toContain('live=off');
  });

  it('fits every page at 390 and 1280 px: no sideways scrolling, no cut-off control', async () => {
    const id = (await api('GET', '/visits?agent=gptbot&result=verification_failed&limit=1')).visits[0].id as string;
    const pages: [string, string, RegExp][] = [
      ['projects', '#/', /Projects/],
      ['settings', `#/p/${projectId}/settings`, /settings/],
      ['timeline', `#/p/${projectId}/timeline`, /realtime timeline/],
      ['analytics', `#/p/${projectId}/analytics`, /analytics/],
      ['agent', `#/p/${projectId}/agents/gptbot`, /GPTBot/],
      ['type', `#/p/${projectId}/types/AI%20Data%20Scraper`, /AI Data Scraper/],
      ['visit', `#/p/${projectId}/visits/${id}`, /Visit/],
      ['catalog', `#/p/${projectId}/agents`, /agents/],
      ['catalog-global', '#/agents', /Agent catalog/],
      ['catalog-agent', '#/agents/chatgpt-user', /ChatGPT-User/],
    ];
    const found: string[] = [];
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      for (const [name, hash, heading] of pages) {
        await open(hash, heading);
        // Charts size themselves to their box after the first frame.
        await page.waitForTimeout(50);
        for (const problem of await layoutProblems(page)) found.push(`${name} at ${width} px: ${problem}`);
        await shot(`${name}-${width}`);
      }
    }
    // The login page, in a browser without a session.
    const anonymous = await watchedPage(browser, problems);
    for (const width of [390, 1280]) {
      await anonymous.setViewportSize({ width, height: 844 });
      await anonymous.goto(dashboard);
      await anonymous.getByLabel('Admin secret').waitFor();
      for (const problem of await layoutProblems(anonymous)) found.push(`login at ${width} px: ${problem}`);
      await anonymous.screenshot({ path: join(ARTIFACTS, `views-login-${width}.png`), fullPage: true });
    }
    await anonymous.close();
    expect(found).toEqual([]);
  });

  it('had no console error and no CSP violation on any page', () => {
    expect(problems).toEqual([]);
  });
});
