// The dashboard says when the server is not ready (GET /readyz answers 503), on every page and at
// every width, and stops saying it once the store takes visits again: in headless Chromium against
// `agentwarden serve`, whose SQLite file another process locks past its busy timeout.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium, layoutProblems, loggedInPage, openView, startDashboardServer, type DashboardServer } from './dashboard-harness.js';

const available = chromiumAvailable();

describe.skipIf(!available)('dashboard store status banner in Chromium', () => {
  let server: DashboardServer;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    server = await startDashboardServer();
    browser = await launchChromium();
    page = await loggedInPage(browser, server.dashboard, server.secret, problems);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const post = (path: string) =>
    fetch(new URL('/visits', server.proc.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ request_path: path, request_method: 'GET', request_headers: { 'user-agent': 'GPTBot/1.2' } }),
    });
  const banner = () => page.getByRole('status').filter({ hasText: 'This server is not ready' });

  it('shows no banner while the server is ready', async () => {
    await page.reload();
    await openView(page, server.dashboard, `#/p/${server.projectId}/timeline`, 'Timeline');
    await page.locator('#store-status[data-status="ready"]').waitFor({ state: 'attached' });
    expect(await banner().count()).toBe(0);
  });

  it('shows the banner on every page while the store cannot write, and drops it once a write goes through', async () => {
    const other = new Database(join(server.dataDir, 'agentwarden.db'));
    other.exec('BEGIN IMMEDIATE');
    try {
      expect((await post('/locked')).status).toBe(503);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    for (const [hash, heading] of [
      [`#/p/${server.projectId}/timeline`, 'Timeline'],
      ['#/', 'Projects'],
    ] as const) {
      await page.reload();
      await openView(page, server.dashboard, hash, heading);
      await banner().waitFor();
      expect(await banner().textContent()).toContain('cannot be reached, failed its last write, or is short of disk space');
      expect(await banner().textContent()).toContain('"not ready" line');
    }
    await page.setViewportSize({ width: 360, height: 800 });
    expect(await layoutProblems(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 900 });

    expect((await post('/unlocked')).status).toBe(202);
    // The server reuses a readiness answer for a second.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await page.reload();
    await openView(page, server.dashboard, '#/', 'Projects');
    await page.locator('#store-status[data-status="ready"]').waitFor({ state: 'attached' });
    expect(await banner().count()).toBe(0);
    // The only errors the page saw are the 503s of the readiness check it was shown for.
    expect(problems.filter((problem) => !/status of 503/.test(problem))).toEqual([]);
    expect(problems.length).toBeGreaterThan(0);
  }, 30_000);
});
