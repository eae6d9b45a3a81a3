// Visits are written by whoever sends a request to the site: their paths, user agents and headers
// are attacker-controlled text, and so is an unlisted agent's name. In headless Chromium against
// `agentwarden serve`, every page that shows them (timeline, visit, analytics, agent, projects)
// must show markup as text and never run it: each payload would set window.__xss or open a dialog.
// Nor may that text disguise itself or take over a page: characters that draw nothing show as marks
// (in the tab title too), a 16 KiB path keeps every table row a few lines tall, and a crafted link
// to an agent no one has seen does not turn its id into a page heading.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium, loggedInPage, openView, projectApi, startDashboardServer, type DashboardServer } from './dashboard-harness.js';

const available = chromiumAvailable();

const PATH = '/<img src=x onerror="window.__xss=1">/"><svg onload=window.__xss=2>?q=<script>window.__xss=3</script>';
const UA = 'Mozilla/5.0 (compatible; EvilBot/1.0; +javascript:window.__xss=4) <script>window.__xss=5</script><img src=x onerror=window.__xss=6>';
const NAME = '<img src=x onerror="window.__xss=7">Shop';
const BIDI_PATH = '/\u202egnicirp';
const BIDI_UA = 'evil-scraper/1.0 \u202e)lmth.tob/moc.elgoog.www//:ptth+ ;1.2/tobelgooG ;elbitapmoc(';
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
// The longest path a visit may have, and a long header value.
const LONG_PATH = `/${'A'.repeat(16_000)}`;
const LONG_HEADER = 'v'.repeat(20_000);
// A project name hiding a zero-width space and reversing what follows.
const DISGUISED_NAME = 'shop \u202etset\u200b';

describe.skipIf(!available)('dashboard pages showing hostile visit data in Chromium', () => {
  let server: DashboardServer;
  let browser: Browser;
  let page: Page;
  let visitId: string;
  let bidiVisitId: string;
  let gptbotVisitId: string;
  let longVisitId: string;
  const problems: string[] = [];
  const dialogs: string[] = [];

  beforeAll(async () => {
    server = await startDashboardServer();
    const api = projectApi(server);
    await api('POST', '/visits', [
      {
        request_path: PATH,
        request_method: 'GET',
        request_headers: { 'user-agent': UA, referer: 'javascript:window.__xss=8', 'x-note': '"><img src=x onerror=window.__xss=9>' },
        response_status_code: 200,
      },
    ]);
    visitId = (await api('GET', '/visits?limit=1')).visits[0].id;
    // Text-direction controls that would make a path read "/pricing" and a user agent Googlebot's.
    await api('POST', '/visits', [{ request_path: BIDI_PATH, request_method: 'GET', request_headers: { 'user-agent': BIDI_UA }, response_status_code: 200 }]);
    bidiVisitId = (await api('GET', '/visits?limit=1')).visits[0].id;
    // A catalog agent, for comparison.
    await api('POST', '/visits', [{ request_path: '/docs', request_method: 'GET', request_headers: { 'user-agent': GPTBOT }, response_status_code: 200 }]);
    gptbotVisitId = (await api('GET', '/visits?limit=1')).visits[0].id;
    // GPTBot at the longest path, once answered 404, against rules that disallow its type: the path
    // is in every table of the analytics, agent and type pages.
    await api('PUT', '/project-settings', { robots: { agent_types: ['AI Data Scraper'], disallow: ['/'] } });
    await api('POST', '/visits', [404, 200].map((status) => ({ request_path: LONG_PATH, request_method: 'GET', request_headers: { 'user-agent': GPTBOT, 'x-long': LONG_HEADER }, response_status_code: status })));
    longVisitId = (await api('GET', '/visits?limit=1')).visits[0].id;
    browser = await launchChromium();
    page = await loggedInPage(browser, server.dashboard, server.secret, problems);
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    // The project's name is the admin's, but it is shown beside the visits: it gets the same test.
    expect((await admin('PATCH', `projects/${server.projectId}`, { name: NAME })).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** Calls the admin API from the logged-in page, as the dashboard does. */
  const admin = (method: string, path: string, body?: unknown) =>
    page.evaluate(
      async ({ method, path, body }) => {
        const session = (await (await fetch('../admin/session')).json()) as { csrf_token: string };
        const headers: Record<string, string> = { 'x-csrf-token': session.csrf_token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
        const response = await fetch(`../admin/${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
        return { status: response.status, json: (response.status === 204 ? {} : await response.json()) as Record<string, string> };
      },
      { method, path, body },
    );

  const ranNothing = async () => {
    // Images that fail to load fire onerror a moment later.
    await page.waitForTimeout(300);
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    expect(dialogs).toEqual([]);
    expect(await page.locator('main img, main svg script, main script').count()).toBe(0);
  };

  it('shows the path, the user agent and the headers as text on the timeline and the visit page', async () => {
    await openView(page, server.dashboard, `#/p/${server.projectId}/timeline`, /realtime timeline/);
    const row = page.locator(`table.timeline tbody tr[data-id="${visitId}"]`);
    await expect.poll(() => row.textContent()).toContain('/<img src=x onerror="window.__xss=1">');
    await ranNothing();

    await openView(page, server.dashboard, `#/p/${server.projectId}/visits/${visitId}`, /Visit GET/);
    const heading = await page.getByRole('heading', { level: 1 }).textContent();
    expect(heading).toContain(PATH);
    const headers = await page.getByRole('region', { name: 'Request headers' }).textContent();
    expect(headers).toContain('<script>window.__xss=5</script>');
    expect(headers).toContain('"><img src=x onerror=window.__xss=9>');
    // The javascript: referer is text, not a link.
    expect(await page.locator('a[href^="javascript:"]').count()).toBe(0);
    await ranNothing();
  });

  it('shows text-direction controls as visible marks, so a path or a user agent cannot read as another', async () => {
    await openView(page, server.dashboard, `#/p/${server.projectId}/timeline`, /realtime timeline/);
    const row = page.locator(`table.timeline tbody tr[data-id="${bidiVisitId}"]`);
    await expect.poll(() => row.textContent()).toContain('/\u27e8U+202E\u27e9gnicirp');
    expect(await row.textContent()).not.toContain('\u202e');
    // Its tooltip too.
    expect(await row.locator('span.clip').getAttribute('title')).toBe('/\u27e8U+202E\u27e9gnicirp');
    await openView(page, server.dashboard, `#/p/${server.projectId}/visits/${bidiVisitId}`, /Visit GET \/\u27e8U\+202E\u27e9gnicirp/);
    const headers = await page.getByRole('region', { name: 'Request headers' }).textContent();
    expect(headers).toContain('evil-scraper/1.0 \u27e8U+202E\u27e9)lmth.tob');
    expect(await page.title()).toContain('\u27e8U+202E\u27e9');
    await ranNothing();
  });

  it('shows them as text on the analytics, the agent pages and the projects list', async () => {
    // The markup in the first user agent makes it a cross-site scripting probe; the second is an unlisted scraper.
    await openView(page, server.dashboard, `#/p/${server.projectId}/analytics`, /analytics/);
    await expect.poll(() => page.locator('main').textContent()).toContain('Cross-site scripting probe');
    expect(await page.locator('main').textContent()).toContain('evil-scraper');
    await ranNothing();

    await openView(page, server.dashboard, `#/p/${server.projectId}/agents/probe:cross-site-scripting`, /Cross-site scripting probe/);
    // Not in the catalog: no robots token, and no button that would save a rule naming it.
    expect(await page.getByRole('button', { name: /by name/ }).count()).toBe(0);
    expect(await page.locator('main').textContent()).toMatch(/None: an attack payload.*Saved rules cannot name it/s);
    await ranNothing();
    await openView(page, server.dashboard, `#/p/${server.projectId}/agents/unlisted:evil-scraper`, /evil-scraper/);
    await ranNothing();

    await page.goto(`${server.dashboard}#/`);
    await page.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
    await expect.poll(() => page.locator('main').textContent()).toContain(NAME);
    await ranNothing();
  });

  it('keeps every table row a few lines tall with a 16 KiB path, the path whole in its tooltip', async () => {
    const pages = [
      [`#/p/${server.projectId}/analytics`, /analytics/, ['Top pages (all agents)', 'Top paths by agent', 'robots.txt violations']],
      [`#/p/${server.projectId}/agents/gptbot`, /GPTBot/, ['Paths that answered 404', 'Top paths', 'robots.txt violations']],
      [`#/p/${server.projectId}/types/AI%20Data%20Scraper`, /AI Data Scraper/, ['Top paths of AI Data Scraper agents']],
    ] as const;
    const found: string[] = [];
    for (const width of [375, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      for (const [hash, heading, tables] of pages) {
        await openView(page, server.dashboard, hash, heading);
        for (const table of tables) {
          const cell = page.getByRole('table', { name: table, exact: true }).locator('tbody tr', { hasText: 'AAAA' }).first();
          const height = (await cell.boundingBox())?.height ?? 0;
          if (height === 0 || height > 250) found.push(`${hash} at ${width} px: the row of "${table}" is ${height} px tall`);
          expect(await cell.locator('[title]', { hasText: 'AAAA' }).first().getAttribute('title', { timeout: 2000 }).catch(() => null), `${hash}: ${table}`).toBe(LONG_PATH);
        }
        const tallest = await page.evaluate(() => Math.max(...Array.from(document.querySelectorAll('main tbody tr'), (row) => row.getBoundingClientRect().height)));
        if (tallest > 250) found.push(`${hash} at ${width} px: a row is ${tallest} px tall`);
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(found).toEqual([]);
  });

  it('collapses a long path and header value on the visit page, and shows them whole on request', async () => {
    await openView(page, server.dashboard, `#/p/${server.projectId}/visits/${longVisitId}`, /Visit GET \/AAAA/);
    const headers = page.getByRole('region', { name: 'Request headers' });
    const value = headers.locator('tr', { hasText: 'x-long' }).locator('td').nth(1);
    expect((await value.boundingBox())!.height).toBeLessThan(300);
    const showAll = value.getByRole('button', { name: 'Show all' });
    expect(await showAll.getAttribute('aria-expanded')).toBe('false');
    await showAll.click();
    expect((await value.boundingBox())!.height).toBeGreaterThan(1000);
    expect(await value.getByRole('button', { name: 'Show less' }).getAttribute('aria-expanded')).toBe('true');
    // The path in the summary, likewise; a short header has no button.
    const request = page.locator('dd', { hasText: 'AAAA' });
    expect((await request.boundingBox())!.height).toBeLessThan(300);
    await request.getByRole('button', { name: 'Show all' }).click();
    expect(await request.textContent()).toContain(LONG_PATH);
    expect(await headers.locator('tr', { hasText: 'user-agent' }).getByRole('button').count()).toBe(0);
  });

  it('links no documentation for an agent the catalog does not list', async () => {
    await openView(page, server.dashboard, `#/p/${server.projectId}/visits/${bidiVisitId}`, /Visit GET \/\u27e8U\+202E\u27e9gnicirp/);
    const operator = page.locator('dt:text-is("Operator") + dd');
    expect(await operator.textContent()).toBe('Unknown');
    expect(await page.getByRole('link', { name: 'documentation' }).count()).toBe(0);
    // A catalog agent's page is linked.
    await openView(page, server.dashboard, `#/p/${server.projectId}/visits/${gptbotVisitId}`, /Visit GET \/docs/);
    expect(await page.getByRole('link', { name: 'documentation' }).getAttribute('href')).toMatch(/^https:\/\//);
  });

  it('marks hidden characters in the tab title as in the headings, and titles "No such project"', async () => {
    const created = await admin('POST', 'projects', { name: DISGUISED_NAME });
    expect(created.status).toBe(201);
    const id = created.json['id']!;
    const shown = 'shop \u27e8U+202E\u27e9tset\u27e8U+200B\u27e9';
    await openView(page, server.dashboard, `#/p/${id}/timeline`, /realtime timeline/);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain(shown);
    expect(await page.title()).toBe(`Timeline · ${shown} · agentwarden`);
    await openView(page, server.dashboard, `#/p/${id}/agents/gptbot`, /GPTBot/);
    expect(await page.title()).toBe(`GPTBot · ${shown} · agentwarden`);
    await openView(page, server.dashboard, `#/p/${id}/types/AI%20Data%20Scraper`, /AI Data Scraper/);
    expect(await page.title()).toBe(`AI Data Scraper · ${shown} · agentwarden`);
    await openView(page, server.dashboard, `#/p/prj_nonexistent/settings`, 'No such project');
    expect(await page.title()).toBe('No such project · agentwarden');
    expect((await admin('DELETE', `projects/${id}`)).status).toBe(204);
  });

  it("shows a site's own rule by its name, also one named like an object's own member", async () => {
    const api = projectApi(server);
    const browserUa = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
    await api('POST', '/visits', [{ request_path: '/own-rule', request_method: 'GET', request_headers: { 'user-agent': browserUa }, response_status_code: 403, decision: { rule: 'constructor', action: 'deny', report_only: false } }]);
    const id = (await api('GET', '/visits?limit=1')).visits[0].id;
    await openView(page, server.dashboard, `#/p/${server.projectId}/visits/${id}`, /Visit GET \/own-rule/);
    expect(await page.locator('dt:text-is("Rule") + dd').textContent()).toBe('constructor constructor');
    await openView(page, server.dashboard, `#/p/${server.projectId}/timeline`, /realtime timeline/);
    const row = page.locator('table.timeline tbody tr', { hasText: '/own-rule' });
    expect(await row.textContent()).toContain('Blocked by the rule constructor');
    expect(await row.textContent()).not.toContain('function');
  });

  it('had no script error, console error or CSP violation', () => {
    expect(problems).toEqual([]);
  });

  // Last: the API's 404s for these ids are console errors the test above must not see.
  it('says "No such agent" for an id neither the catalog nor the project\'s visits know, and draws the agents that are', async () => {
    const notice = 'Official notice: your token leaked, rotate it at https://evil.example';
    for (const id of [notice, '\u202etobelgooG', 'unlisted:Official notice rotate token now']) {
      await openView(page, server.dashboard, `#/p/${server.projectId}/agents/${encodeURIComponent(id)}`, 'No such agent');
      expect(await page.locator('main').textContent()).not.toContain(id.replace('unlisted:', ''));
      expect(await page.title()).toBe(`No such agent · ${NAME} · agentwarden`);
    }
    // Seen on this site (an unlisted bot, a probe) or in the catalog (ClaudeBot never came): each has its page.
    await openView(page, server.dashboard, `#/p/${server.projectId}/agents/unlisted:evil-scraper`, /evil-scraper/);
    await openView(page, server.dashboard, `#/p/${server.projectId}/agents/probe:cross-site-scripting`, /Cross-site scripting probe/);
    await openView(page, server.dashboard, `#/p/${server.projectId}/agents/claudebot`, /ClaudeBot/);
    expect(await page.locator('main').textContent()).toContain('ClaudeBot did not visit in this range.');
  });
});
