// The projects page end to end in headless Chromium against `agentwarden serve`: visit counts and
// the last visit with test visits left out or counted, renaming, and deleting a project only once
// its name is typed (its token gets 401 after). At 390 and 1280 px without sideways scrolling or
// cut-off controls; any console error or CSP violation fails. Screenshots go to test-artifacts/.
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServeProcess } from '../server/helpers.js';
import { ARTIFACTS, chromiumAvailable, launchChromium, layoutProblems, loggedInPage, startDashboardServer } from './dashboard-harness.js';

const available = chromiumAvailable();
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';

describe.skipIf(!available)('the projects page in Chromium', () => {
  let proc: ServeProcess;
  let browser: Browser;
  let page: Page;
  let dashboard: string;
  let token: string;
  let projectId: string;
  const problems: string[] = [];
  const cleanups: (() => void | Promise<void>)[] = [];
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `projects-${name}.png`), fullPage: true });
  const row = (name: string) => page.locator('table.projects tbody tr', { has: page.getByRole('rowheader', { name: new RegExp(`^${name}`) }) });

  beforeAll(async () => {
    const server = await startDashboardServer();
    cleanups.push(() => server.stop());
    ({ proc, dashboard, token, projectId } = server);
    const visits = [30, 20].map((minutesAgo) => ({
      request_path: '/blog',
      request_method: 'GET',
      request_headers: { 'user-agent': GPTBOT },
      created: new Date(Date.now() - minutesAgo * 60_000).toISOString(),
    }));
    const posted = await fetch(new URL('/visits', proc.url), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(visits) });
    expect(posted.status).toBe(202);
    browser = await launchChromium();
    cleanups.push(() => browser.close());
    page = await loggedInPage(browser, server.dashboard, server.secret, problems);
    // After a keyboard login the focus is on the page it opened, not left on the body.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
  }, 60_000);

  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('shows each project\'s visits and last visit, test visits left out unless counted', async () => {
    // "Send a test visit" from the settings page: one visit by the test agent.
    await page.goto(`${dashboard}#/p/${projectId}/settings`);
    await page.getByRole('button', { name: 'Send a test visit' }).click();
    await page.getByText('Test visit recorded').waitFor();
    await page.goto(`${dashboard}#/`);
    const first = row('default');
    await first.waitFor();
    expect(await first.locator('td[data-label="Visits"]').textContent()).toBe('2+1 test visit not counted');
    expect(await first.locator('td[data-label="Last visit"] time').count()).toBe(1);
    await page.getByLabel('Count test visits').check();
    await expect.poll(() => first.locator('td[data-label="Visits"]').textContent()).toBe('3');
    // The choice is in the URL: a reload shows the same counts.
    expect(page.url()).toContain('test_visits=include');
    await page.reload();
    await expect.poll(() => row('default').locator('td[data-label="Visits"]').textContent()).toBe('3');
    await shot('list-1280');
    // Analytics counts the test visit, and says so, since the list above left it out by default.
    await page.goto(`${dashboard}#/p/${projectId}/analytics`);
    await page.getByText('Including 1 test visit (sent from the settings page), which the projects list leaves out.').waitFor();
  });

  it('renames a project', async () => {
    await page.goto(`${dashboard}#/`);
    await row('default').getByRole('button', { name: 'Rename default' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rename default' });
    await dialog.getByLabel('New name').fill('www.example.com');
    await dialog.getByRole('button', { name: 'Rename' }).click();
    await row('www.example.com').waitFor();
    expect(await page.locator('table.projects tbody tr').count()).toBe(1);
  });

  it('deletes a project only once its name is typed; its token gets 401 after', async () => {
    await page.goto(`${dashboard}#/`);
    await page.getByLabel('Project name').fill('staging.example');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByTestId('revealed-token').waitFor();
    const stagingToken = (await page.getByTestId('revealed-token').textContent())!;
    await page.goto(`${dashboard}#/`);
    await row('staging.example').getByRole('button', { name: 'Delete staging.example' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete staging.example?' });
    const confirm = dialog.getByRole('button', { name: 'Delete project' });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel(/Type the project name/).fill('staging');
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel(/Type the project name/).fill('staging.example');
    await shot('delete-dialog-1280');
    await confirm.click();
    await expect.poll(() => page.locator('table.projects tbody tr').count()).toBe(1);
    const refused = await fetch(new URL('/agent-identifications', proc.url), { method: 'POST', headers: { authorization: `Bearer ${stagingToken}`, 'content-type': 'application/json' }, body: '{"request_headers":{}}' });
    expect(refused.status).toBe(401);
    // Cancel leaves the project alone.
    await row('www.example.com').getByRole('button', { name: /^Delete/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect(await page.locator('table.projects tbody tr').count()).toBe(1);
  });

  it('fits at 390 and 1280 px with long project names, with the dialog open or not, with no console error or CSP violation', async () => {
    // A long domain, and a name with nowhere to break: they wrap rather than push the links off screen.
    for (const name of ['internationalbusinessmachinescorporation.com', `shop-${'x'.repeat(150)}`]) {
      await page.goto(`${dashboard}#/`);
      await page.getByLabel('Project name').fill(name);
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByTestId('revealed-token').waitFor();
    }
    const found: string[] = [];
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      await page.goto(`${dashboard}#/`);
      await row('shop-x').waitFor();
      for (const problem of await layoutProblems(page)) found.push(`projects at ${width} px: ${problem}`);
      await shot(`list-${width}`);
      await row('www.example.com').getByRole('button', { name: /^Delete/ }).click();
      await page.getByRole('dialog').waitFor();
      for (const problem of await layoutProblems(page)) found.push(`delete dialog at ${width} px: ${problem}`);
      await shot(`delete-dialog-${width}`);
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    }
    expect(found).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('says an address that names no page is not found, instead of showing the projects', async () => {
    await page.goto(`${dashboard}#/p/prj_whatever/bogus`);
    await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
    expect(await page.title()).toBe('Page not found · agentwarden');
    await page.goto(`${dashboard}#/`);
    await page.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
  });

  // Last: the refused request's 400 is a console error the test above must not see.
  it('says why a project name is refused, in the words of the field error', async () => {
    await page.goto(`${dashboard}#/`);
    await page.getByLabel('Project name').fill('   ');
    await page.getByRole('button', { name: 'Create project' }).click();
    await expect.poll(() => page.locator('main').textContent()).toContain('name must be a non-empty string');
    expect(await page.locator('main').textContent()).not.toContain('see errors');
  });
});
