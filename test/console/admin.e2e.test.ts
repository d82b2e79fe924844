// The console's administration pages end to end in Debian's headless Chromium: schedules (pause,
// resume, run now), the audit log (filters, cursor pages, live tail, verify), IAM (users, roles, the
// scopes palette), artifacts (versions, content) and model records; each page only in the
// navigation of those whose scopes allow it, and axe-core on every page. Screenshots go to docs/console/.
import path from 'node:path';
import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import type { Service } from '../../src/main.js';
import { launchChromium, launchedBrowser, chromiumMissing, recordingPage } from '../api/helpers.js';
import { bootstrapAdmin, client, eventually, type Admin } from '../support/http.js';
import { waitForStatus } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { createUser, USER_PASSWORD, type SignedInUser } from '../support/users.js';
import { CONSOLE_PROJECT, DESKTOP, expectAccessible, screenshot, signIn } from './browser.js';

/** A yearly schedule (nightly_report/yearly), a model (book) and a project artifact (greeting_prompt). */
const ADMIN_PROJECT = path.join(path.dirname(CONSOLE_PROJECT), 'admin-project');
const ADMIN_NAV = ['Workflows', 'Runs', 'Approvals', 'Schedules', 'Audit log', 'IAM', 'Artifacts', 'Models', 'More'];

describe('the console administration pages in Chromium', function () {
  this.timeout(90_000);
  const missing = chromiumMissing();
  let service: Service;
  let admin: Admin;
  let auditor: SignedInUser;
  let browser: { browser: BrowserContext; close(): Promise<void> } | undefined;

  before(async () => {
    service = await startTestService({ projectDir: ADMIN_PROJECT });
    admin = await bootstrapAdmin(service.url);
    auditor = await createUser(service.url, admin.token, 'auditor@example.com', { auditor: ['audit:read', 'book:read'] });
    if (!missing) browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await service?.close();
  });

  /** A fresh page (signed out) at desktop size; CSP violations and page errors are recorded. */
  async function freshPage(): Promise<{ page: Page; failures: string[] }> {
    const recording = await recordingPage(launchedBrowser(browser));
    await recording.page.setViewportSize(DESKTOP);
    return recording;
  }
  const asAdmin = () => client(service.url, admin.token);
  const navLinks = (page: Page) => page.getByRole('navigation', { name: 'Main' }).getByRole('link').allInnerTexts();

  it('pauses, resumes and runs a schedule now from the Schedules page', async () => {
    const { page, failures } = await freshPage();
    try {
      await signIn(page, service.url, admin.email, admin.password, '/console/schedules');
      expect(await navLinks(page)).to.deep.equal(ADMIN_NAV);
      const row = page.locator('tr[data-schedule="nightly_report/yearly"]');
      await row.locator('.badge', { hasText: /^active$/ }).waitFor({ timeout: 20_000 });
      await expectAccessible(page, 'schedules page');
      await page.getByRole('button', { name: 'Pause nightly_report yearly' }).click();
      await row.locator('.badge', { hasText: /^paused$/ }).waitFor({ timeout: 20_000 });
      await page.getByRole('status').filter({ hasText: 'nightly_report yearly: paused.' }).waitFor({ timeout: 20_000 });
      const listed = async () => ((await asAdmin().get('/admin/schedules')).body as { id: string; paused: boolean }[]).find((s) => s.id === 'yearly');
      expect((await listed())?.paused).to.equal(true);
      await screenshot(page, 'schedules');
      await page.getByRole('button', { name: 'Resume nightly_report yearly' }).click();
      await row.locator('.badge', { hasText: /^active$/ }).waitFor({ timeout: 20_000 });
      expect((await listed())?.paused).to.equal(false);
      await page.getByRole('button', { name: 'Run now: nightly_report yearly' }).click();
      await page.waitForURL(/\/console\/runs\/[0-9a-f-]{36}$/, { timeout: 20_000 });
      const runId = page.url().split('/').pop()!;
      const run = await waitForStatus(service.url, admin.token, runId, ['completed'], 20_000);
      expect(run.output).to.deep.equal({ greeting: 'happy new year' });
      await page.locator('dl.summary .badge', { hasText: /^completed$/ }).waitFor({ timeout: 20_000 });
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('filters the audit log, pages it by cursor, tails it live and verifies its hash chains', async () => {
    for (const name of ['editors', 'readers', 'writers']) expect((await asAdmin().post('/auth/admin/roles', { name, scopes: [] })).status).to.equal(201);
    const { page, failures } = await freshPage();
    try {
      await signIn(page, service.url, auditor.email, USER_PASSWORD, '/console/audit?limit=2');
      expect(await navLinks(page)).to.deep.equal(['Workflows', 'Audit log', 'Models', 'More']);
      await page.getByLabel('Event type').fill('RoleCreated');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/type=RoleCreated/, { timeout: 20_000 });
      const shownTypes = () => page.locator('table.events tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-type')));
      const firstRows = async () => page.locator('table.events tbody tr td:first-child').allInnerTexts();
      const settled = await eventually(async () => (await firstRows()).length === 2, 20_000, 100);
      expect(settled.ok, 'two events on the first page').to.equal(true);
      expect(new Set(await shownTypes())).to.deep.equal(new Set(['RoleCreated']));
      const first = await firstRows();
      await page.getByRole('button', { name: 'Next page' }).click();
      await page.waitForURL(/after=/, { timeout: 20_000 });
      const moved = await eventually(async () => (await firstRows()).length > 0 && !(await firstRows()).some((n) => first.includes(n)), 20_000, 100);
      expect(moved.ok, `the second page differs from the first: ${JSON.stringify(await firstRows())}`).to.equal(true);
      await page.goto(`${service.url}/console/audit?limit=10`, { waitUntil: 'load' });
      await page.getByLabel('Live tail').check();
      await page.locator('section[aria-labelledby="tail-title"] tbody tr').first().waitFor({ timeout: 20_000 });
      expect((await asAdmin().post('/auth/admin/roles', { name: 'tailed', scopes: [] })).status).to.equal(201);
      await page.locator('section[aria-labelledby="tail-title"] tbody tr[data-type="RoleCreated"]', { hasText: 'tailed' }).waitFor({ timeout: 20_000 });
      await page.getByRole('button', { name: 'Verify the hash chains' }).click();
      await page.locator('[data-verified="true"]', { hasText: /^Intact: \d+ events and \d+ checkpoints checked\.$/ }).waitFor({ timeout: 30_000 });
      await expectAccessible(page, 'audit page with the live tail');
      await screenshot(page, 'audit');
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });
});
