// An Agent run's LLM turns and tool calls in the console's timeline, end to end in Debian's headless
// Chromium: the agent test project against the loopback OpenAI-compatible server (test/agents), an
// autonomous run that calls its lookup tool, and the rows under the Agent step's bar with their details.
import { expect } from 'chai';
import type { BrowserContext } from 'playwright-core';
import type { Service } from '../../src/main.js';
import { AGENT_PROJECT } from '../agents/support/harness.js';
import { FakeOpenAi } from '../agents/support/fakeOpenAi.js';
import { chromiumMissing, launchChromium, launchedBrowser, offLoopback, recordingPage } from '../api/helpers.js';
import { bootstrapAdmin, type Admin } from '../support/http.js';
import { startRun } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { DESKTOP, PHONE, expectAccessible, screenshot } from './browser.js';

describe('an Agent run’s turns and tool calls in the console timeline', function () {
  this.timeout(90_000);
  const missing = chromiumMissing();
  const fake = new FakeOpenAi();
  let service: Service;
  let admin: Admin;
  let browser: { browser: BrowserContext; close(): Promise<void> } | undefined;

  before(async () => {
    await fake.start();
    service = await startTestService({ projectDir: AGENT_PROJECT, env: { SVC_LLM_BASE_URL: fake.baseUrl } });
    admin = await bootstrapAdmin(service.url);
    if (!missing) browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await service?.close();
    await fake.stop();
  });

  it('draws each LLM turn and tool call as a row under the Agent step, with the answer, the arguments and the result', async () => {
    const key = 'console-timeline-turns';
    fake.script(key, [
      { toolCalls: [{ name: 'lookup', args: { query: 'alpha' }, id: 'call_lookup' }], usage: { prompt_tokens: 100, completion_tokens: 20 } },
      { content: 'Found 3 hits for alpha.', usage: { prompt_tokens: 50, completion_tokens: 10 } },
    ]);
    const runId = await startRun(service.url, admin.token, 'helper', { question: key });
    const { page, requested, failures } = await recordingPage(launchedBrowser(browser));
    try {
      await page.setViewportSize(DESKTOP);
      await page.goto(`${service.url}/console/runs/${runId}?token=${encodeURIComponent(admin.token)}`, { waitUntil: 'load' });
      const agent = page.locator('.timeline .step[data-step="agent"]');
      await agent.locator('.agent-row[data-name="lookup"][data-state="done"]').waitFor({ timeout: 20_000 });
      await page.locator('dl.summary .badge', { hasText: /^completed$/ }).waitFor({ timeout: 20_000 });
      const rows = agent.getByRole('list', { name: 'LLM turns and tool calls of agent' }).locator('.agent-row');
      await rows.nth(2).waitFor({ timeout: 20_000 });
      expect(await rows.evaluateAll((items) => items.map((item) => item.getAttribute('data-name')))).to.deep.equal(['LLM turn 1', 'lookup', 'LLM turn 2']);
      expect(await agent.locator('> details .step-info').innerText()).to.match(/^\(Agent\): done, .*, 2 LLM turns, 1 tool call$/);
      expect(await rows.nth(0).locator('.step-info').innerText()).to.match(/^fake-model-1, .*: asks for lookup, 120 tokens so far$/);
      expect(await rows.nth(2).locator('.step-info').innerText()).to.match(/^fake-model-1, .*: answers “Found 3 hits for alpha\.”, 180 tokens so far$/);
      // Each row opens from the keyboard on its detail.
      await rows.nth(1).locator('summary').focus();
      await page.keyboard.press('Enter');
      expect(JSON.parse(await page.getByLabel('Arguments of lookup').innerText())).to.deep.equal({ query: 'alpha' });
      expect(JSON.parse(await page.getByLabel('Result of lookup').innerText())).to.deep.equal({ looked_up: { query: 'alpha', hits: 3 } });
      await rows.nth(2).locator('summary').click();
      expect(await page.getByLabel('Answer of LLM turn 2').innerText()).to.equal('Found 3 hits for alpha.');
      // The turns are rows now, not events in the list below.
      expect(await page.locator('.timeline .marks li[data-type="llm_turn"], .timeline .marks li[data-type="agent_progress"]').count()).to.equal(0);
      await expectAccessible(page, 'run page with agent rows');
      await screenshot(page, 'run-agent');
      await page.setViewportSize(PHONE);
      await expectAccessible(page, 'run page with agent rows at phone width');
      expect(offLoopback(requested, service.url), 'requests that left the service').to.deep.equal([]);
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });
});
