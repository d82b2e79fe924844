// The console (/console) end to end in Debian's headless Chromium: sign-in, a run started from its
// generated form watched live to its end, pause and resume, an approval decided from the inbox, runs
// search, what a user without runs:control sees, and axe-core on every page. Screenshots go to docs/console/.
import { expect } from 'chai';
import type { BrowserContext } from 'playwright-core';
import type { Service } from '../../src/main.js';
import { launchChromium, chromiumMissing, offLoopback } from '../api/helpers.js';
import { bootstrapAdmin, client, eventually, type Admin } from '../support/http.js';
import { waitForStatus } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { createUser, USER_PASSWORD, type SignedInUser } from '../support/users.js';
import { CONSOLE_PROJECT, PHONE, expectAccessible, screenshot, signIn, storedToken, desktopPage } from './browser.js';

const OPERATOR_SCOPES = ['runs:read', 'runs:control', 'approvals:decide'];

describe('the console in Chromium', function () {
  this.timeout(90_000);
  const missing = chromiumMissing();
  let service: Service;
  let admin: Admin;
  let operator: SignedInUser;
  let viewer: SignedInUser;
  let browser: { browser: BrowserContext; close(): Promise<void> } | undefined;

  before(async () => {
    service = await startTestService({ projectDir: CONSOLE_PROJECT });
    admin = await bootstrapAdmin(service.url);
    operator = await createUser(service.url, admin.token, 'operator@example.com', { operator: OPERATOR_SCOPES });
    viewer = await createUser(service.url, admin.token, 'viewer@example.com', { viewer: ['runs:read'] });
    if (!missing) browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await service?.close();
  });

  const freshPage = () => desktopPage(browser);
  const startRun = async (token: string, workflow: string, input: object): Promise<string> => {
    const started = await client(service.url, token).post(`/api/workflows/${workflow}/runs?wait=false`, input);
    expect(started.status, JSON.stringify(started.body)).to.equal(202);
    return started.body.id as string;
  };

  it('signs in with a password from the keyboard, refuses a wrong one on the page, and offers the configured provider', async () => {
    const { page, requested, failures } = await freshPage();
    try {
      await page.goto(`${service.url}/console/`, { waitUntil: 'load' });
      const provider = page.getByRole('link', { name: 'console_idp' });
      await provider.waitFor({ state: 'visible', timeout: 20_000 });
      expect(await provider.getAttribute('href')).to.equal('/auth/oauth/console_idp/start');
      await expectAccessible(page, 'sign-in page');
      await screenshot(page, 'signin');
      await page.getByLabel('Email or phone number').focus();
      await page.keyboard.type(operator.email);
      await page.keyboard.press('Tab');
      await page.keyboard.type('not the password');
      await page.keyboard.press('Enter');
      await page.getByRole('alert').waitFor({ state: 'visible', timeout: 20_000 });
      await page.getByLabel('Password').fill(USER_PASSWORD);
      await page.keyboard.press('Enter');
      await page.getByRole('button', { name: 'Sign out' }).waitFor({ state: 'visible', timeout: 20_000 });
      expect(await storedToken(page)).to.be.a('string');
      const nav = await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allInnerTexts();
      expect(nav).to.deep.equal(['Workflows', 'Runs', 'Approvals', 'More']);
      await page.getByRole('link', { name: 'More' }).click();
      await page.getByRole('heading', { name: 'More', exact: true }).waitFor({ timeout: 20_000 });
      await expectAccessible(page, 'more page');
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor({ timeout: 20_000 });
      expect(await storedToken(page)).to.equal(null);
      expect(offLoopback(requested, service.url), 'requests that left the service').to.deep.equal([]);
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('takes the token an OAuth callback puts in the address (SVC_OAUTH_UI_REDIRECT_URL) and removes it from the address at once', async () => {
    const { page, failures } = await freshPage();
    try {
      await page.goto(`${service.url}/console/?token=${encodeURIComponent(operator.token)}`, { waitUntil: 'load' });
      await page.getByRole('button', { name: 'Sign out' }).waitFor({ state: 'visible', timeout: 20_000 });
      expect(page.url()).not.to.include('token=');
      expect(await storedToken(page)).to.equal(operator.token);
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('runs trip from the form generated from its input schema and watches its timeline reach the end live', async () => {
    const { page, failures } = await freshPage();
    try {
      await signIn(page, service.url, operator.email, USER_PASSWORD);
      await page.getByRole('link', { name: 'Workflows' }).click();
      await page.getByRole('button', { name: 'Run trip' }).waitFor({ timeout: 20_000 });
      await expectAccessible(page, 'workflows page');
      await page.getByRole('button', { name: 'Run trip' }).click();
      const form = page.locator('form#run-trip');
      expect(await form.getByLabel('traveller').getAttribute('required')).to.equal('');
      expect(await form.getByLabel('nights').getAttribute('type')).to.equal('number');
      await form.getByLabel('traveller').fill('Ada');
      await form.getByLabel('nights').fill('5');
      await form.getByLabel('notes').fill('window seat');
      await expectAccessible(page, 'workflows page with the run form');
      await screenshot(page, 'workflows');
      await page.getByRole('button', { name: 'Start trip' }).click();
      await page.waitForURL(/\/console\/runs\/[0-9a-f-]{36}$/, { timeout: 20_000 });
      const runId = page.url().split('/').pop()!;
      // The Wait step runs for three seconds: the page shows the run live, a step still running.
      await page.locator('.timeline [role="status"]', { hasText: /^live$/ }).waitFor({ timeout: 20_000 });
      await page.locator('.timeline .step[data-step="think"][data-state="running"]').waitFor({ timeout: 20_000 });
      await page.waitForTimeout(1500); // only for the picture: the bar has grown a little
      await screenshot(page, 'run-live');
      await page.locator('.timeline [role="status"]', { hasText: /^ended after/ }).waitFor({ timeout: 30_000 });
      await page.locator('.timeline .step[data-step="long_stay"][data-state="done"]').waitFor({ timeout: 20_000 });
      expect(await page.locator('.timeline .step').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-step')))).to.deep.equal([
        'think',
        'size',
        'long_stay',
      ]);
      expect(await page.locator('.timeline .marks li[data-type="decision"]').innerText()).to.include('size: decision true');
      await page.locator('dl.summary .badge', { hasText: /^completed$/ }).waitFor({ timeout: 20_000 });
      await page.locator('.timeline .step[data-step="size"] summary').click();
      expect(await page.getByLabel('Context after size').innerText()).to.include('"traveller": "Ada"');
      const run = await client(service.url, operator.token).get(`/api/runs/${runId}`);
      expect(run.body.status).to.equal('completed');
      expect(run.body.output).to.deep.equal({ traveller: 'Ada', nights: 5 });
      await expectAccessible(page, 'run page');
      await screenshot(page, 'run');
      await page.setViewportSize(PHONE);
      await expectAccessible(page, 'run page at phone width');
      await screenshot(page, 'run-phone');
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('pauses, resumes and aborts a slow run from its page', async () => {
    const runId = await startRun(operator.token, 'slow', { label: 'nap' });
    await waitForStatus(service.url, operator.token, runId, ['waiting_timer'], 20_000);
    const { page, failures } = await freshPage();
    try {
      await signIn(page, service.url, operator.email, USER_PASSWORD, `/console/runs/${runId}`);
      await page.locator('dl.summary .badge', { hasText: 'waiting_timer' }).waitFor({ timeout: 20_000 });
      await page.getByRole('button', { name: 'Pause' }).click();
      await page.locator('dl.summary .badge', { hasText: /^paused$/ }).waitFor({ timeout: 20_000 });
      await waitForStatus(service.url, operator.token, runId, ['paused'], 20_000);
      await page.locator('.timeline .marks li[data-type="paused"]').waitFor({ timeout: 20_000 });
      await page.locator('.timeline .step[data-step="nap"][data-state="paused"]').waitFor({ timeout: 20_000 });
      await screenshot(page, 'run-paused');
      await page.getByRole('button', { name: 'Resume' }).click();
      await page.locator('dl.summary .badge', { hasText: 'waiting_timer' }).waitFor({ timeout: 20_000 });
      await waitForStatus(service.url, operator.token, runId, ['waiting_timer'], 20_000);
      await page.getByRole('button', { name: 'Abort' }).click();
      await page.locator('dl.summary .badge', { hasText: 'aborted' }).waitFor({ timeout: 20_000 });
      expect(await page.getByRole('button', { name: 'Pause' }).count(), 'no control on an ended run').to.equal(0);
      await waitForStatus(service.url, operator.token, runId, ['aborted'], 20_000);
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('decides an approval from the inbox with the values of its form', async () => {
    const runId = await startRun(operator.token, 'expense', { item: 'train ticket', amount: 42.5 });
    await waitForStatus(service.url, operator.token, runId, ['waiting_human'], 20_000);
    const { page, failures } = await freshPage();
    try {
      await signIn(page, service.url, operator.email, USER_PASSWORD);
      await page.getByRole('link', { name: 'Approvals' }).click();
      const card = page.getByRole('article', { name: 'Approve an expense' });
      await card.waitFor({ timeout: 20_000 });
      expect(await card.getByLabel('Context of Approve an expense').innerText()).to.include('train ticket');
      await card.getByLabel('approved_amount').fill('40');
      await card.getByLabel('note').fill('receipt checked');
      await expectAccessible(page, 'approvals page');
      await screenshot(page, 'approvals');
      await card.getByRole('button', { name: 'Approve' }).click();
      await page.getByRole('status').filter({ hasText: 'Approve an expense: approved.' }).waitFor({ timeout: 20_000 });
      await page.getByText('Nothing waits for your decision.').waitFor({ timeout: 20_000 });
      const run = await waitForStatus(service.url, operator.token, runId, ['completed'], 20_000);
      expect(run.output).to.deep.equal({ item: 'train ticket', paid: 40 });
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('searches runs by status, a page at a time, at desktop and phone widths', async () => {
    // Two completed runs at least (one page each at limit=1), and one waiting.
    const completed = await Promise.all([
      startRun(operator.token, 'trip', { traveller: 'Bo', nights: 1 }),
      startRun(operator.token, 'trip', { traveller: 'Cy', nights: 2 }),
    ]);
    const waiting = await startRun(operator.token, 'slow', { label: 'search me' });
    for (const id of completed) await waitForStatus(service.url, operator.token, id, ['completed'], 30_000);
    await waitForStatus(service.url, operator.token, waiting, ['waiting_timer'], 20_000);
    const { page, failures } = await freshPage();
    try {
      await signIn(page, service.url, operator.email, USER_PASSWORD, '/console/runs?limit=1');
      await page.getByLabel('Status').selectOption('completed');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.waitForURL(/status=completed/, { timeout: 20_000 });
      const statuses = () => page.locator('table.runs tbody .badge').allInnerTexts();
      /** Waits for the table to show exactly one completed run (the answer to the search, not the table before it). */
      const oneCompletedRun = async (what: string) => {
        const shown = await eventually(async () => JSON.stringify(await statuses()) === '["completed"]', 20_000, 100);
        expect(shown.ok, `${what}: ${JSON.stringify(await statuses())}`).to.equal(true);
        return page.locator('table.runs tbody tr').getAttribute('data-run-id');
      };
      const firstPage = await oneCompletedRun('the first page');
      await page.getByRole('button', { name: 'Next page' }).click();
      await page.waitForURL(/cursor=/, { timeout: 20_000 });
      await page.locator(`table.runs tbody tr:not([data-run-id="${firstPage}"])`).waitFor({ timeout: 20_000 });
      expect(await oneCompletedRun('the second page')).not.to.equal(firstPage);
      await page.goto(`${service.url}/console/runs?status=waiting_timer`, { waitUntil: 'load' });
      await page.locator(`table.runs tbody tr[data-run-id="${waiting}"]`).waitFor({ timeout: 20_000 });
      expect(new Set(await statuses())).to.deep.equal(new Set(['waiting_timer']));
      await page.goto(`${service.url}/console/runs`, { waitUntil: 'load' });
      await page.locator(`table.runs tbody tr[data-run-id="${waiting}"]`).waitFor({ timeout: 20_000 });
      await expectAccessible(page, 'runs page');
      await screenshot(page, 'runs');
      await page.setViewportSize(PHONE);
      await expectAccessible(page, 'runs page at phone width');
      await screenshot(page, 'runs-phone');
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
      await client(service.url, operator.token).post(`/api/runs/${waiting}/abort`, {});
    }
  });

  it('shows a user without runs:control no control buttons, and the API refuses them anyway', async () => {
    const runId = await startRun(viewer.token, 'slow', { label: 'watch only' });
    await waitForStatus(service.url, viewer.token, runId, ['waiting_timer'], 20_000);
    const { page, failures } = await freshPage();
    try {
      await signIn(page, service.url, viewer.email, USER_PASSWORD, `/console/runs/${runId}`);
      await page.locator('dl.summary .badge', { hasText: 'waiting_timer' }).waitFor({ timeout: 20_000 });
      await page.locator('.timeline .step[data-step="nap"]').waitFor({ timeout: 20_000 });
      expect(await page.getByRole('group', { name: 'Run controls' }).count()).to.equal(0);
      for (const name of ['Pause', 'Resume', 'Abort']) expect(await page.getByRole('button', { name }).count(), name).to.equal(0);
      const nav = await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allInnerTexts();
      expect(nav).to.deep.equal(['Workflows', 'Runs', 'More']);
      await expectAccessible(page, 'run page without controls');
      for (const action of ['pause', 'resume', 'abort']) {
        const refused = await client(service.url, viewer.token).post(`/api/runs/${runId}/${action}`, {});
        expect(refused.status, action).to.equal(403);
      }
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
      await client(service.url, admin.token).post(`/api/runs/${runId}/abort`, {});
    }
  });
});
