// Shared pieces of the console's browser tests: the fixture project, sign-in through the page, the
// axe-core check, and screenshots into docs/console/.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { launchedBrowser, recordingPage } from '../api/helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
/** Workflows trip (a timer and a decision), slow (a minute's wait) and expense (a human step), and a federation provider. */
export const CONSOLE_PROJECT = path.join(here, 'fixtures', 'project');
export const SCREENSHOTS = path.resolve(here, '..', '..', 'docs', 'console');
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** The console's stored token, read in the page (the test's tsconfig has no DOM types). */
export const storedToken = (page: Page): Promise<string | null> =>
  page.evaluate(() => (globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }).sessionStorage.getItem('svc-console-token'));

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** A fresh page (its own sessionStorage: signed out) at desktop size; CSP violations and page errors are recorded. */
export async function desktopPage(launched: Parameters<typeof launchedBrowser>[0]): Promise<{ page: Page; requested: string[]; failures: string[] }> {
  const recording = await recordingPage(launchedBrowser(launched));
  await recording.page.setViewportSize(DESKTOP);
  return recording;
}

/** Signs in through the console's own form and waits for the navigation that follows. */
export async function signIn(page: Page, serviceUrl: string, email: string, password: string, path = '/console/'): Promise<void> {
  await page.goto(`${serviceUrl}${path}`, { waitUntil: 'load' });
  await page.getByLabel('Email or phone number').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor({ state: 'visible', timeout: 20_000 });
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core over the page as it is now: no serious or critical violation. Evaluated through the
 * DevTools protocol, which the page's CSP does not govern (the page itself runs no inline script).
 */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run();
    return result.violations.map(({ id, impact, help, nodes }) => ({ id, impact, help, nodes: nodes.map((n) => ({ target: n.target })) }));
  });
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious, `${what}: ${JSON.stringify(serious, null, 1)}`).to.deep.equal([]);
}

/** A screenshot for docs/console.md (committed): the page as a person sees it. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: false });
}
