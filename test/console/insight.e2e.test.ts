// The console under /insight (dev mode) end to end in Debian's headless Chromium: with
// SVC_DEV_AUTO_LOGIN=1 it signs in by itself with the dev key of its meta tag (the synthetic dev
// identity), shows the runs and the API docs tab (Swagger UI framed under the page's CSP); without
// auto-login its sign-in page asks for the dev key. axe-core on each page.
import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import type { Service } from '../../src/main.js';
import { DEV_ENV, DEV_KEY, chromiumMissing, launchChromium, offLoopback } from '../api/helpers.js';
import { startRun, waitForStatus } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { CONSOLE_PROJECT, expectAccessible, screenshot, desktopPage } from './browser.js';

/** What a page keeps in sessionStorage under `key` (the test's tsconfig has no DOM types). */
const stored = (page: Page, key: string): Promise<string | null> =>
  page.evaluate((name) => (globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }).sessionStorage.getItem(name), key);

describe('the console under /insight in Chromium', function () {
  this.timeout(90_000);
  const missing = chromiumMissing();
  let auto: Service;
  let asking: Service;
  let browser: { browser: BrowserContext; close(): Promise<void> } | undefined;

  before(async () => {
    [auto, asking] = await Promise.all([
      startTestService({ projectDir: CONSOLE_PROJECT, env: { ...DEV_ENV, SVC_DEV_AUTO_LOGIN: '1' } }),
      startTestService({ projectDir: CONSOLE_PROJECT, env: DEV_ENV }),
    ]);
    if (!missing) browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await Promise.all([auto?.close(), asking?.close()]);
  });

  const freshPage = () => desktopPage(browser);

  it('signs in by itself with SVC_DEV_AUTO_LOGIN=1 as the dev identity, lists the runs and opens a run under /insight', async () => {
    const runId = await startRun(auto.url, DEV_KEY, 'trip', { traveller: 'Dev', nights: 1 });
    await waitForStatus(auto.url, DEV_KEY, runId, ['completed'], 20_000);
    const { page, requested, failures } = await freshPage();
    try {
      await page.goto(`${auto.url}/insight`, { waitUntil: 'load' });
      await page.getByRole('heading', { name: 'Runs' }).waitFor({ timeout: 20_000 });
      expect(page.url()).to.equal(`${auto.url}/insight/runs`);
      expect(await page.locator('header .who').innerText()).to.equal('dev');
      expect(await page.locator('header .brand').innerText()).to.equal('svc insight');
      const nav = await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allInnerTexts();
      expect(nav).to.deep.equal(['Workflows', 'Runs', 'Approvals', 'Schedules', 'Audit log', 'IAM', 'Artifacts', 'Models', 'API docs', 'More']);
      // The key is /insight's session only: /console in the same tab stays signed out.
      expect(await stored(page, 'svc-insight-key')).to.equal(DEV_KEY);
      expect(await stored(page, 'svc-console-token')).to.equal(null);
      await page.locator(`a[title="${runId}"]`).click();
      await page.waitForURL(`${auto.url}/insight/runs/${runId}`, { timeout: 20_000 });
      await page.locator('dl.summary .badge', { hasText: /^completed$/ }).waitFor({ timeout: 20_000 });
      await page.locator('.timeline .step[data-step="long_stay"], .timeline .step[data-step="short_stay"]').first().waitFor({ timeout: 20_000 });
      await expectAccessible(page, '/insight run page');
      expect(offLoopback(requested, auto.url), 'requests that left the service').to.deep.equal([]);
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('opens /insight/api-docs on the API docs tab: Swagger UI in a frame, under both pages’ CSPs', async () => {
    const { page, requested, failures } = await freshPage();
    try {
      await page.goto(`${auto.url}/insight/runs`, { waitUntil: 'load' });
      await page.getByRole('link', { name: 'API docs' }).click();
      await page.waitForURL(`${auto.url}/insight/api-docs`, { timeout: 20_000 });
      const docs = page.frameLocator('iframe[src="/docs"]');
      await docs.locator('.opblock-summary-path[data-path="/api/workflows/trip/runs"]').first().waitFor({ state: 'visible', timeout: 20_000 });
      expect(await page.getByRole('link', { name: 'API docs' }).getAttribute('aria-current')).to.equal('page');
      await expectAccessible(page, '/insight API docs page');
      await screenshot(page, 'insight-api-docs');
      // Opened directly (a bookmark), the address lands on the same tab.
      await page.goto(`${auto.url}/insight/api-docs`, { waitUntil: 'load' });
      await page.frameLocator('iframe[src="/docs"]').locator('.opblock').first().waitFor({ state: 'visible', timeout: 20_000 });
      expect(requested).to.include(`${auto.url}/openapi.json`);
      expect(offLoopback(requested, auto.url), 'requests that left the service').to.deep.equal([]);
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('asks for the dev key without auto-login, refuses a wrong one on the page, and signs in and out with the right one', async () => {
    const { page, requested, failures } = await freshPage();
    try {
      await page.goto(`${asking.url}/insight/workflows`, { waitUntil: 'load' });
      const keyField = page.getByLabel('Dev key', { exact: true });
      await keyField.waitFor({ state: 'visible', timeout: 20_000 });
      expect(await page.getByLabel('Password').count(), 'no password form under /insight').to.equal(0);
      await expectAccessible(page, '/insight sign-in page');
      await keyField.fill('ABCD-EFGH-IJKL-MNOQ');
      await page.keyboard.press('Enter');
      await page.getByRole('alert').waitFor({ state: 'visible', timeout: 20_000 });
      expect(await stored(page, 'svc-insight-key')).to.equal(null);
      await keyField.fill(DEV_KEY);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor({ state: 'visible', timeout: 20_000 });
      await page.getByRole('button', { name: 'Run trip' }).waitFor({ timeout: 20_000 });
      expect(page.url()).to.equal(`${asking.url}/insight/workflows`);
      expect(await page.locator('header .who').innerText()).to.equal('dev');
      // A reload keeps the tab's session.
      await page.reload({ waitUntil: 'load' });
      await page.getByRole('button', { name: 'Run trip' }).waitFor({ timeout: 20_000 });
      await page.getByRole('button', { name: 'Sign out' }).click();
      await keyField.waitFor({ state: 'visible', timeout: 20_000 });
      expect(await stored(page, 'svc-insight-key')).to.equal(null);
      // The dev key is not a token: signing out forgets it and asks the service nothing.
      expect(requested.filter((url) => url.endsWith('/auth/logout'))).to.deep.equal([]);
      expect(offLoopback(requested, asking.url), 'requests that left the service').to.deep.equal([]);
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });
});
