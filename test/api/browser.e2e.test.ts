// Swagger UI (/docs) and ReDoc (/redoc) in Debian's headless Chromium: they render the operations, and
// no request leaves the service (they work offline). The console under /insight: test/console/insight.e2e.
import { expect } from 'chai';
import type { BrowserContext } from 'playwright-core';
import type { Service } from '../../src/main.js';
import { call } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { launchedBrowser, chromiumMissing, EXAMPLE_PROJECT, launchChromium, offLoopback, recordingPage } from './helpers.js';
import { operationsOf } from './openapiCheck.js';

describe('docs UIs in Chromium', function () {
  this.timeout(60_000);
  const missing = chromiumMissing();
  let service: Service;
  let browser: { browser: BrowserContext; close(): Promise<void> } | undefined;

  before(async () => {
    // Not in dev mode: /docs and /redoc are there in every mode.
    service = await startTestService({ projectDir: EXAMPLE_PROJECT });
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
});
