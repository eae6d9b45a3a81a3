// What the dashboard's browser tests share: headless Chromium (Debian's, through playwright-core)
// or a loud failure in CI when it is missing, `agentwarden serve` on a fresh data directory with
// what it printed on first start, and a page that records every script error, console error and
// CSP violation.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { CLI, ROOT, spawnServe, tempDir, type ServeProcess } from '../server/helpers.js';

export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
/** Where screenshots go (git-ignored). */
export const ARTIFACTS = join(ROOT, 'test-artifacts');

/** Whether Chromium is here. @throws when CI=true and it is missing: a broken environment, not a reason to skip. */
export function chromiumAvailable(): boolean {
  const available = existsSync(CHROMIUM);
  if (!available && process.env['CI'] === 'true') throw new Error(`Chromium is missing at ${CHROMIUM}: install the Debian "chromium" package (CI=true)`);
  return available;
}

/** A dashboard server and what it printed on first start. */
export interface DashboardServer {
  readonly proc: ServeProcess;
  readonly dashboard: string;
  readonly secret: string;
  /** The first project's token and id. */
  readonly token: string;
  readonly projectId: string;
  stop(): Promise<void>;
}

/**
 * Starts `agentwarden serve` (the built dist/) on a fresh data directory with the bundled catalog
 * and IP lists, verifying by IP ranges only, so nothing leaves loopback.
 * @throws when dist/ has not been built.
 */
export async function startDashboardServer(extraArgs: readonly string[] = []): Promise<DashboardServer> {
  if (!existsSync(CLI) || !existsSync(join(ROOT, 'dist', 'web', 'app.js'))) throw new Error('dist/ is missing or stale: run "npx tsup" (npm test builds it first)');
  mkdirSync(ARTIFACTS, { recursive: true });
  const { dir, cleanup } = tempDir();
  const proc = await spawnServe(['--data-dir', dir, '--verifiers', 'ip-ranges', '--log', 'off', ...extraArgs]);
  const out = proc.stdout();
  return {
    proc,
    dashboard: /^agentwarden dashboard: (http:\/\/\S+)$/m.exec(out)![1]!,
    secret: /admin login secret, shown only now: (aws_[A-Za-z0-9_-]+)/.exec(out)![1]!,
    token: proc.firstToken!,
    projectId: /created project "[^"]*" \((prj_[A-Za-z0-9_-]+)\)/.exec(out)![1]!,
    async stop() {
      if (proc.child.exitCode === null) {
        proc.child.kill('SIGTERM');
        await proc.exited;
      }
      cleanup();
    },
  };
}

/** Calls the server's API with the first project's token; any answer but 2xx fails the test. */
export function projectApi(server: Pick<DashboardServer, 'proc' | 'token'>): (method: string, path: string, body?: unknown) => Promise<any> {
  return async (method, path, body) => {
    const response = await fetch(new URL(path, server.proc.url), { method, headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    expect(response.status, `${method} ${path}`).toBeLessThan(300);
    return response.json();
  };
}

/** Opens a dashboard view and waits for its heading and for its panels to be drawn. */
export async function openView(page: Page, dashboard: string, hash: string, heading: string | RegExp): Promise<void> {
  const address = `${dashboard}${hash}`;
  // The view on screen stays until the new one's data arrives: two views with one heading (two
  // made-up agent ids) would let the wait end on the old one, so its headings are marked first.
  // Opening the address already shown draws nothing new, so nothing is marked then.
  if (page.url() !== address) await page.evaluate(() => document.querySelectorAll('h1').forEach((h1) => h1.setAttribute('data-previous-view', '')));
  await page.goto(address);
  await page.locator('h1:not([data-previous-view])').and(page.getByRole('heading', { level: 1, name: heading })).waitFor();
  // Panels are drawn once their data arrives.
  await page.waitForFunction(() => document.querySelector('[aria-busy="true"]') === null);
}

/** A new page whose script errors, console errors (but the expected 401s) and CSP violations are pushed to `problems`. */
export async function watchedPage(browser: Browser, problems: string[], options: Parameters<Browser['newPage']>[0] = {}): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'Europe/Berlin', ...options });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`));
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 401/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  return page;
}

/** A watched page (see `watchedPage`) logged in to the dashboard with the admin secret, on the projects list. */
export async function loggedInPage(browser: Browser, dashboard: string, secret: string, problems: string[], options: Parameters<Browser['newPage']>[0] = {}): Promise<Page> {
  const page = await watchedPage(browser, problems, options);
  await page.goto(dashboard);
  await page.getByLabel('Admin secret').fill(secret);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  return page;
}

/** Launches Debian's Chromium headless. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

/**
 * The layout check of any page at any width: it does not scroll sideways, and nothing that can be clicked or
 * typed into lies outside the window or is cut off by a box that clips or scrolls.
 */
export function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    const width = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > width) problems.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} px in a ${width} px window`);
    const name = (el: Element) => `${el.tagName.toLowerCase()} "${(el.textContent ?? '').trim().slice(0, 40) || el.getAttribute('aria-label') || ''}"`;
    for (const el of Array.from(document.querySelectorAll('a, button, input, select, textarea'))) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (el.id === 'skip-link' || el.closest('.visually-hidden') !== null || (el as HTMLElement).hidden) continue;
      if (r.left < -1 || r.right > width + 1) problems.push(`${name(el)} reaches past the window (${Math.round(r.left)}..${Math.round(r.right)})`);
      // The nearest box that clips or scrolls sideways must show the whole control.
      for (let box = el.parentElement; box !== null && box !== document.body; box = box.parentElement) {
        if (getComputedStyle(box).overflowX === 'visible') continue;
        const b = box.getBoundingClientRect();
        if (r.right > b.right + 1 || r.left < b.left - 1) problems.push(`${name(el)} is cut off by ${box.tagName.toLowerCase()}.${box.className}`);
        break;
      }
    }
    return problems;
  });
}
