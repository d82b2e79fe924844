// Swagger UI (/docs), ReDoc (/redoc) and the dev console (/insight) in Debian's headless Chromium:
// they render the operations and workflows, and no request leaves the service (they work offline).
import { expect } from 'chai';
import type { BrowserContext } from 'playwright-core';
import type { Service } from '../../src/main.js';
import { call } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { launchedBrowser, chromiumMissing, DEV_ENV, EXAMPLE_PROJECT, launchChromium, offLoopback, recordingPage } from './helpers.js';
import { operationsOf } from './openapiCheck.js';

describe('docs UIs and the dev console in Chromium', function () {
  this.timeout(60_000);
  const missing = chromiumMissing();
  let service: Service;
  let browser: { browser: BrowserContext; close(): Promise<void> } | undefined;

  before(async () => {
    // Auto-login dev mode: /insight reads the key from its meta tag; /docs and /redoc are there in every mode.
    service = await startTestService({ projectDir: EXAMPLE_PROJECT, env: { ...DEV_ENV, SVC_DEV_AUTO_LOGIN: '1' } });
    if (!missing) browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await service?.close();
  });

  const requireChromium = (): BrowserContext => launchedBrowser(browser);

  it('Swagger UI at /docs renders every operation, /api/hello among them, from local files only', async function () {
    const context = requireChromium();
    const doc = (await call(service.url, 'GET', '/openapi.json')).body;
    const { page, requested, failures } = await recordingPage(context);
    try {
      await page.goto(`${service.url}/docs`, { waitUntil: 'load' });
      const hello = page.locator('.opblock.opblock-post', { has: page.locator('.opblock-summary-path[data-path="/api/hello"]') });
      await hello.first().waitFor({ state: 'visible', timeout: 20_000 });
      expect(await hello.count()).to.equal(1);
      expect(await hello.first().locator('.opblock-summary-description').innerText()).to.equal(
        'Greets someone in three Functional steps (the benchmark workflow).',
      );
      expect(await page.locator('.opblock').count()).to.equal(operationsOf(doc).length);
      expect(await page.locator('.opblock-summary-path[data-path="/models/ticket/{id}"]').count()).to.equal(3);
      expect(await page.locator('.btn.authorize').count(), 'the Authorize button for the bearer scheme').to.be.at.least(1);
      expect(
        requested.some((url) => url === `${service.url}/openapi.json`),
        requested.join('\n'),
      ).to.equal(true);
      expect(offLoopback(requested, service.url), 'requests that left the service').to.deep.equal([]);
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('ReDoc at /redoc renders the operation headings from local files only', async function () {
    const context = requireChromium();
    const { page, requested, failures } = await recordingPage(context);
    try {
      await page.goto(`${service.url}/redoc`, { waitUntil: 'load' });
      const hello = page.locator('[data-section-id="operation/trigger_hello"] h2');
      await hello.waitFor({ state: 'attached', timeout: 20_000 });
      expect(await hello.innerText()).to.equal('Greets someone in three Functional steps (the benchmark workflow).');
      expect(await page.locator('[data-section-id="operation/login"] h2').innerText()).to.equal('Password login (OAuth 2.0 password grant)');
      expect(await page.locator('[data-section-id^="operation/"] h2').count()).to.be.at.least(40);
      expect(requested).to.include.members([`${service.url}/redoc/redoc.standalone.js`, `${service.url}/openapi.json`]);
      expect(offLoopback(requested, service.url), 'requests that left the service').to.deep.equal([]);
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('/insight with auto-login lists the workflows in its Workflows table', async function () {
    const context = requireChromium();
    const { page, requested, failures } = await recordingPage(context);
    try {
      await page.goto(`${service.url}/insight`, { waitUntil: 'load' });
      const helloRow = page.locator('main table tr', { has: page.locator('td', { hasText: /^hello$/ }) });
      await helloRow.waitFor({ state: 'visible', timeout: 20_000 });
      expect(await helloRow.locator('td').nth(2).innerText()).to.equal('/api/hello');
      const names = await page.locator('main table tr td:first-child').allInnerTexts();
      expect(names).to.include.members(['hello', 'open_ticket', 'refund', 'classify', 'what_time', 'service_status', 'support_agent']);
      expect(await page.locator('#key').inputValue()).to.equal(DEV_ENV.SVC_DEV_API_KEY);
      expect(requested).to.include(`${service.url}/api/_system/workflows`);
      expect(offLoopback(requested, service.url), 'requests that left the service').to.deep.equal([]);
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('/insight/api-docs opens on the API docs tab: Swagger UI in a frame, under both pages’ CSPs', async function () {
    const context = requireChromium();
    const { page, requested, failures } = await recordingPage(context);
    try {
      await page.goto(`${service.url}/insight/api-docs`, { waitUntil: 'load' });
      expect((await page.locator('#tabs a.active').innerText()).trim()).to.equal('API docs');
      const docs = page.frameLocator('main iframe[src="/docs"]');
      await docs.locator('.opblock-summary-path[data-path="/api/hello"]').first().waitFor({ state: 'visible', timeout: 20_000 });
      expect(requested).to.include.members([`${service.url}/insight/insight.js`, `${service.url}/openapi.json`]);
      expect(offLoopback(requested, service.url), 'requests that left the service').to.deep.equal([]);
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });
});
