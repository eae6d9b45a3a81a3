// The dashboard says when the server is not ready (GET /readyz answers 503), on every page and at
// every width, and says nothing while it is ready: in headless Chromium against two `agentwarden
// serve` processes, one as it starts by default and one that asks for more free disk than any
// disk has (--min-free-disk-bytes), so its store reports itself unavailable.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium, layoutProblems, loggedInPage, openView, startDashboardServer, type DashboardServer } from './dashboard-harness.js';

const available = chromiumAvailable();

describe.skipIf(!available)('dashboard store status banner in Chromium', () => {
  let ready: DashboardServer;
  let cramped: DashboardServer;
  let browser: Browser;

  beforeAll(async () => {
    [ready, cramped] = await Promise.all([startDashboardServer(), startDashboardServer(['--min-free-disk-bytes', String(Number.MAX_SAFE_INTEGER)])]);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await ready?.stop();
    await cramped?.stop();
  });

  it('shows no banner while the server is ready', async () => {
    const problems: string[] = [];
    const page = await loggedInPage(browser, ready.dashboard, ready.secret, problems);
    await openView(page, ready.dashboard, `#/p/${ready.projectId}/timeline`, 'Timeline');
    await page.locator('#store-status[data-status="ready"]').waitFor({ state: 'attached' });
    expect(await page.getByRole('status').filter({ hasText: 'not ready' }).count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it('shows the banner on every page, at any width, while the store reports itself unavailable', async () => {
    const problems: string[] = [];
    const page = await loggedInPage(browser, cramped.dashboard, cramped.secret, problems);
    const banner = page.getByRole('status').filter({ hasText: 'This server is not ready' });
    for (const [hash, heading] of [
      ['#/', 'Projects'],
      [`#/p/${cramped.projectId}/timeline`, 'Timeline'],
      [`#/p/${cramped.projectId}/settings`, 'Settings'],
    ] as const) {
      await openView(page, cramped.dashboard, hash, heading);
      await banner.waitFor();
      expect(await banner.textContent()).toContain('cannot be reached, failed its last write, or is short of disk space');
      expect(await banner.textContent()).toContain('"not ready" line');
    }
    await page.setViewportSize({ width: 360, height: 800 });
    expect(await layoutProblems(page)).toEqual([]);
    // The only errors the page saw are the 503s of the readiness check it shows.
    expect(problems.filter((problem) => !/status of 503/.test(problem))).toEqual([]);
    expect(problems.length).toBeGreaterThan(0);
  });
});
