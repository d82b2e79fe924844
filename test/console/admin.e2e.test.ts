// The console's administration pages end to end in Debian's headless Chromium: schedules (pause,
// resume, run now), the audit log (filters, cursor pages, live tail, verify), IAM (users, roles, the
// scopes palette), artifacts (versions, content) and model records; each page only in the
// navigation of those whose scopes allow it, and axe-core on every page. Screenshots go to docs/console/.
import path from 'node:path';
import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import type { Service } from '../../src/main.js';
import { launchChromium, chromiumMissing } from '../api/helpers.js';
import { bootstrapAdmin, client, eventually, type Admin } from '../support/http.js';
import { waitForStatus } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { createUser, USER_PASSWORD, type SignedInUser } from '../support/users.js';
import { CONSOLE_PROJECT, PHONE, expectAccessible, screenshot, signIn, desktopPage } from './browser.js';

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

  const freshPage = () => desktopPage(browser);
  const asAdmin = () => client(service.url, admin.token);
  const navLinks = (page: Page) => page.getByRole('navigation', { name: 'Main' }).getByRole('link').allInnerTexts();

  it('pauses, resumes and runs a schedule now from the Schedules page', async () => {
    // The ticker's first pass declares the schedules: the page shows what the list answers when it loads.
    const declared = await eventually(async () => ((await asAdmin().get('/admin/schedules')).body as unknown[]).length > 0, 20_000, 100);
    expect(declared.ok, 'the schedule is declared').to.equal(true);
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
  it('lists users with their roles, the roles with their scopes, and the scopes palette', async () => {
    const { page, failures } = await freshPage();
    try {
      await signIn(page, service.url, admin.email, admin.password, '/console/iam');
      await page.locator(`tr[data-user="${auditor.email}"]`, { hasText: 'auditor' }).waitFor({ timeout: 20_000 });
      const role = page.locator('table.roles tr[data-role="auditor"]');
      expect(await role.locator('ul.scopes li').allInnerTexts()).to.deep.equal(['audit:read', 'book:read']);
      await page.locator('table.palette tr[data-scope="book:read"]', { hasText: 'book list' }).waitFor({ timeout: 20_000 });
      await page.locator('table.palette tr[data-scope="iam:admin"]', { hasText: 'system' }).waitFor({ timeout: 20_000 });
      await expectAccessible(page, 'IAM page');
      await screenshot(page, 'iam');
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('shows every artifact with its versions and the content of the version chosen', async () => {
    for (const content of ['Summarise in one line.', 'Summarise in two lines.']) {
      const uploaded = await asAdmin().post('/api/artifacts', { name: 'summary_prompt', type: 'prompt', content, description: 'Summarises a ticket.' });
      expect(uploaded.status, JSON.stringify(uploaded.body)).to.equal(201);
    }
    const versions = ((await asAdmin().get('/api/artifacts/summary_prompt')).body as { version: string }).version;
    const { page, failures } = await freshPage();
    try {
      await signIn(page, service.url, admin.email, admin.password, '/console/artifacts');
      await page.getByRole('link', { name: 'summary_prompt', exact: true }).click();
      const content = page.getByLabel(/^Content of summary_prompt version /);
      await content.waitFor({ timeout: 20_000 });
      expect(await content.innerText()).to.equal('Summarise in two lines.');
      expect(await page.locator('article[data-version]').getAttribute('data-version')).to.equal(versions);
      const links = page.locator('tr[data-artifact="summary_prompt"] td a');
      expect(await links.count()).to.equal(2);
      await links.first().click();
      await page.getByText('Summarise in one line.').waitFor({ timeout: 20_000 });
      await page.getByRole('link', { name: 'greeting_prompt', exact: true }).click();
      await page.getByText('Say hello to {{ name }} in one sentence.').waitFor({ timeout: 20_000 });
      await expectAccessible(page, 'artifacts page');
      await screenshot(page, 'artifacts');
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it("browses model records and each record's JSON for a user holding the model's read scope", async () => {
    for (const [title, pages] of [
      ['Dune', 412],
      ['Emma', 474],
    ] as const) {
      expect((await asAdmin().post('/models/book/', { title, pages })).status).to.equal(201);
    }
    const { page, failures } = await freshPage();
    try {
      await signIn(page, service.url, auditor.email, USER_PASSWORD, '/console/models');
      await page.locator('table.records tbody tr', { hasText: 'Dune' }).waitFor({ timeout: 20_000 });
      expect(await page.locator('table.records tbody tr').count()).to.equal(2);
      expect(await page.getByRole('combobox').inputValue()).to.equal('book');
      const emma = page.locator('table.records tbody tr', { hasText: 'Emma' });
      await emma.locator('summary').click();
      expect(await emma.getByLabel(/^Record .* of book$/).innerText()).to.include('"pages": 474');
      await expectAccessible(page, 'models page');
      await screenshot(page, 'models');
      await page.setViewportSize(PHONE);
      await expectAccessible(page, 'models page at phone width');
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('shows the administration pages only to the scopes that allow them, and the API refuses the rest anyway', async () => {
    const viewer = await createUser(service.url, admin.token, 'viewer@example.com', { viewer: ['runs:read'] });
    const { page, failures } = await freshPage();
    try {
      await signIn(page, service.url, viewer.email, USER_PASSWORD);
      expect(await navLinks(page)).to.deep.equal(['Workflows', 'Runs', 'More']);
      for (const route of ['/admin/schedules', '/admin/events', '/admin/audit/verify', '/auth/admin/users', '/admin/scopes', '/api/artifacts']) {
        expect((await client(service.url, viewer.token).get(route)).status, route).to.equal(403);
      }
      await page.goto(`${service.url}/console/audit`, { waitUntil: 'load' });
      await page.getByRole('alert').first().waitFor({ timeout: 20_000 });
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });
});
