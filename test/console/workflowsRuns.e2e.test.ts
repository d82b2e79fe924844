// The console's workflow page (the step graph drawn by @xyflow/react, versions toggled and forked) and
// a run page's extras (steer, fork from a step, export, the hash chain's state) in Debian's headless
// Chromium, with axe-core on each page. The project is a copy of the fixture: a fork writes a file.
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import type { Service } from '../../src/main.js';
import { chromiumMissing, launchChromium, launchedBrowser, recordingPage } from '../api/helpers.js';
import { bootstrapAdmin, client, eventually, type Admin } from '../support/http.js';
import { waitForStatus } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { createUser, USER_PASSWORD, type SignedInUser } from '../support/users.js';
import { CONSOLE_PROJECT, DESKTOP, PHONE, expectAccessible, screenshot, signIn } from './browser.js';

describe('the console: a workflow step graph and versions, a run steered, forked, exported and verified', function () {
  this.timeout(120_000);
  const missing = chromiumMissing();
  const projectDir = mkdtempSync(path.join(tmpdir(), 'svc-console-project-'));
  let service: Service;
  let admin: Admin;
  let operator: SignedInUser;
  let browser: { browser: BrowserContext; close(): Promise<void> } | undefined;

  before(async () => {
    cpSync(CONSOLE_PROJECT, projectDir, { recursive: true });
    service = await startTestService({ projectDir });
    admin = await bootstrapAdmin(service.url);
    operator = await createUser(service.url, admin.token, 'operator@example.com', { operator: ['runs:read', 'runs:control'] });
    if (!missing) browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await service?.close();
    rmSync(projectDir, { recursive: true, force: true });
  });

  /** A page signed in with `token` the way an OAuth callback signs in (`?token=`), at desktop size. */
  async function pageAs(token: string, at: string): Promise<{ page: Page; failures: string[] }> {
    const { page, failures } = await recordingPage(launchedBrowser(browser));
    await page.setViewportSize(DESKTOP);
    await page.goto(`${service.url}${at}${at.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}`, { waitUntil: 'load' });
    await page.getByRole('button', { name: 'Sign out' }).waitFor({ state: 'visible', timeout: 20_000 });
    return { page, failures };
  }
  const versionRow = (page: Page, version: string) => page.locator(`tr[data-version="${version}"]`);
  const adminVersions = async () =>
    (await client(service.url, admin.token).get('/admin/workflows')).body.trip as { schema_version: string; enabled: boolean }[];

  it('draws the step graph of trip: a node per step and END, an edge per route and the default to the next step', async () => {
    const { page, failures } = await pageAs(admin.token, '/console/workflows');
    try {
      await page.locator('tr[data-workflow="trip"]').getByRole('link', { name: 'trip', exact: true }).click();
      await page.waitForURL(/\/console\/workflows\/trip$/, { timeout: 20_000 });
      const graph = page.getByTestId('step-graph');
      await graph.locator('.react-flow__node').first().waitFor({ timeout: 20_000 });
      expect(await graph.locator('.react-flow__node').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-id')).sort())).to.deep.equal([
        'END',
        'long_stay',
        'short_stay',
        'size',
        'think',
      ]);
      expect(await graph.locator('.react-flow__edge').count()).to.equal(5);
      // xyflow's own stylesheet applies (a file of the bundle under style-src 'self'): nodes are placed absolutely.
      expect(
        await graph
          .locator('.react-flow__node')
          .first()
          .evaluate((node) => (globalThis as unknown as { getComputedStyle(n: unknown): { position: string } }).getComputedStyle(node).position),
      ).to.equal('absolute');
      await page.getByText('The graph as a list').click();
      const transitions = await page.locator('ul.transitions li').allInnerTexts();
      expect(transitions).to.deep.equal([
        'think → size on default (next step)',
        'size → long_stay on true',
        'size → short_stay on false',
        'long_stay → END on default',
        'short_stay → END on default (next step)',
      ]);
      await expectAccessible(page, 'workflow page');
      await screenshot(page, 'workflow-graph');
      await page.setViewportSize(PHONE);
      // Fitted again to the narrower pane: every node inside the canvas.
      const inside = await eventually(
        async () => {
          const pane = (await graph.boundingBox())!;
          const boxes = await Promise.all((await graph.locator('.react-flow__node').all()).map((node) => node.boundingBox()));
          return boxes.every((box) => box !== null && box.x >= pane.x && box.x + box.width <= pane.x + pane.width + 1);
        },
        20_000,
        100,
      );
      expect(inside.ok, 'the graph fits the canvas at phone width').to.equal(true);
      await expectAccessible(page, 'workflow page at phone width');
      await screenshot(page, 'workflow-phone');
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('forks trip v1 as v2 (written disabled), toggles v2 on and off from the page, and the API agrees', async () => {
    const { page, failures } = await pageAs(admin.token, '/console/workflows/trip');
    try {
      await versionRow(page, 'v1').waitFor({ timeout: 20_000 });
      expect(await versionRow(page, 'v1').getAttribute('data-enabled')).to.equal('true');
      await page.getByLabel('New version from v1').fill('v2');
      await page.getByRole('button', { name: 'Fork v1' }).click();
      await page.getByRole('status').filter({ hasText: 'Forked trip v1 as v2' }).waitFor({ timeout: 20_000 });
      await versionRow(page, 'v2').waitFor({ timeout: 20_000 });
      expect(await versionRow(page, 'v2').getAttribute('data-enabled')).to.equal('false');
      expect(existsSync(path.join(projectDir, 'workflows', 'trip_v2.yaml'))).to.equal(true);

      await page.getByRole('button', { name: 'Enable v2' }).click();
      await page.locator('tr[data-version="v2"][data-enabled="true"]').waitFor({ timeout: 20_000 });
      expect((await adminVersions()).find((v) => v.schema_version === 'v2')?.enabled).to.equal(true);
      await expectAccessible(page, 'workflow page with versions');
      await screenshot(page, 'workflow-versions');

      await page.getByRole('button', { name: 'Disable v2' }).click();
      await page.locator('tr[data-version="v2"][data-enabled="false"]').waitFor({ timeout: 20_000 });
      expect((await adminVersions()).find((v) => v.schema_version === 'v2')?.enabled).to.equal(false);
      expect((await adminVersions()).find((v) => v.schema_version === 'v1')?.enabled).to.equal(true);
      // With no version enabled, trip leaves the list and is offered under "No enabled version"; enabled again from its page.
      await page.getByRole('button', { name: 'Disable v1' }).click();
      await page.locator('tr[data-version="v1"][data-enabled="false"]').waitFor({ timeout: 20_000 });
      await page.getByRole('link', { name: 'Workflows' }).click();
      await page.locator('ul.disabled-workflows').getByRole('link', { name: 'trip' }).click();
      await page.waitForURL(/\/console\/workflows\/trip$/, { timeout: 20_000 });
      await page.getByRole('button', { name: 'Enable v1' }).click();
      await page.locator('tr[data-version="v1"][data-enabled="true"]').waitFor({ timeout: 20_000 });
      expect((await adminVersions()).find((v) => v.schema_version === 'v1')?.enabled).to.equal(true);
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('steers a waiting run, forks an ended one from a step, downloads its signed export and verifies the hash chain', async () => {
    const slow = (await client(service.url, admin.token).post('/api/workflows/slow/runs?wait=false', { label: 'steer me' })).body.id as string;
    const trip = (await client(service.url, admin.token).post('/api/workflows/trip/runs?wait=false', { traveller: 'Ada', nights: 5 })).body.id as string;
    await waitForStatus(service.url, admin.token, slow, ['waiting_timer'], 20_000);
    await waitForStatus(service.url, admin.token, trip, ['completed'], 30_000);
    const { page, failures } = await pageAs(admin.token, `/console/runs/${slow}`);
    try {
      await page.getByLabel('Steering message').fill('keep it short');
      await page.getByRole('button', { name: 'Steer' }).click();
      await page.getByRole('status').filter({ hasText: 'Steered' }).waitFor({ timeout: 20_000 });
      await page.setViewportSize(PHONE);
      await expectAccessible(page, "a waiting run's extras at phone width");
      await page.locator('.run-extras').scrollIntoViewIfNeeded();
      await screenshot(page, 'run-extras-phone');
      await page.setViewportSize(DESKTOP);
      const steered = await eventually(
        async () => {
          const events = (await client(service.url, admin.token).get(`/admin/events?stream_id=run-${slow}`)).body.events as {
            type: string;
            data: { message?: string };
          }[];
          return events.some((event) => event.type === 'steered' && JSON.stringify(event.data).includes('keep it short'));
        },
        20_000,
        100,
      );
      expect(steered.ok, 'a steered event on the run stream').to.equal(true);

      await page.goto(`${service.url}/console/runs/${trip}`, { waitUntil: 'load' });
      await page.locator('dl.summary .badge', { hasText: /^completed$/ }).waitFor({ timeout: 20_000 });
      await page.getByRole('button', { name: 'Verify the hash chain' }).click();
      await page.locator('[data-chain="ok"]').waitFor({ timeout: 30_000 });
      expect(await page.locator('[data-chain="ok"]').innerText()).to.match(/^Verified: .*no signed checkpoint yet/);
      // A signed checkpoint over the log so far: verified again, its signature counts.
      expect((await client(service.url, admin.token).post('/admin/audit/checkpoints', {})).status).to.equal(201);
      await page.getByRole('button', { name: 'Verify the hash chain' }).click();
      await page.locator('[data-chain="ok"]', { hasText: /1 signed checkpoint\)/ }).waitFor({ timeout: 30_000 });
      const [download] = await Promise.all([
        page.waitForEvent('download', { timeout: 20_000 }),
        page.getByRole('button', { name: 'Export (signed JSON)' }).click(),
      ]);
      expect(download.suggestedFilename()).to.equal(`run-${trip}.json`);
      const exported = JSON.parse(readFileSync(await download.path(), 'utf8'));
      expect(exported.format).to.equal('svc.run/v1');
      expect(exported.run.id).to.equal(trip);
      expect(exported.signature).to.match(/^[\w-]+\.\.[\w-]+$/);
      await expectAccessible(page, 'run page with its extras');
      await page.locator('.run-extras').scrollIntoViewIfNeeded();
      await screenshot(page, 'run-extras');

      await page.getByLabel('Fork from step').selectOption('size');
      await page.getByLabel('Input changes (JSON, optional)').fill('{"nights": 1}');
      await page.getByRole('button', { name: 'Fork', exact: true }).click();
      await page.waitForURL((url) => /\/console\/runs\/[0-9a-f-]{36}$/.test(url.pathname) && !url.pathname.endsWith(trip), { timeout: 20_000 });
      const forkId = page.url().split('/').pop()!;
      const forked = await waitForStatus(service.url, admin.token, forkId, ['completed'], 30_000);
      expect(forked.forked_from).to.deep.equal({ run_id: trip, step_id: 'size' });
      expect(forked.output).to.deep.equal({ traveller: 'Ada' });
      await page.locator('.timeline .step[data-step="short_stay"][data-state="done"]').waitFor({ timeout: 20_000 });
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
      await client(service.url, admin.token).post(`/api/runs/${slow}/abort`, {});
    }
  });

  it('tells a user without audit:read that the chain cannot be verified here, and the API refuses it anyway', async () => {
    const trip = (await client(service.url, operator.token).post('/api/workflows/trip/runs?wait=false', { traveller: 'Bo', nights: 1 })).body.id as string;
    const { page, failures } = await recordingPage(launchedBrowser(browser));
    try {
      await page.setViewportSize(DESKTOP);
      await signIn(page, service.url, operator.email, USER_PASSWORD, `/console/runs/${trip}`);
      await page.locator('[data-chain="unavailable"]').waitFor({ timeout: 20_000 });
      expect(await page.getByRole('button', { name: 'Verify the hash chain' }).count()).to.equal(0);
      expect((await client(service.url, operator.token).get('/admin/audit/verify')).status).to.equal(403);
      await page.getByRole('link', { name: 'Workflows' }).click();
      await page.getByRole('link', { name: 'trip', exact: true }).click();
      await page.getByTestId('step-graph').locator('.react-flow__node').first().waitFor({ timeout: 20_000 });
      await page.getByText('Versions (toggle, fork) need the scope iam:admin.').waitFor({ timeout: 20_000 });
      expect(await page.getByRole('button', { name: /^(Enable|Disable|Fork) / }).count()).to.equal(0);
      await expectAccessible(page, 'workflow page without versions');
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });
});
