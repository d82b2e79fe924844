// Shared pieces of the API-surface tests: project folders, the dev-mode settings, headless Chromium.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The example project npm start serves (read only here: toggles live in the database). */
export const EXAMPLE_PROJECT = path.resolve(here, '..', '..');
/** A fixture project with gated, failing, human-waiting and MCP-exported workflows and partial CRUD. */
export const FIXTURE_PROJECT = path.join(here, 'fixtures', 'project');
export const DEV_KEY = 'ABCD-EFGH-IJKL-MNOP';
export const DEV_ENV = { SVC_DEV_MODE: 'true', SVC_ALLOW_DEV_AUTH: 'true', SVC_DEV_API_KEY: DEV_KEY };

export const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Why the browser tests cannot run here, or undefined when they can. */
export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is not installed: the browser tests need Debian's chromium (never a downloaded browser)`;
}

/** Debian's Chromium, headless, with a fresh profile folder removed on close. */
export async function launchChromium(): Promise<{ browser: BrowserContext; close(): Promise<void> }> {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(path.join(tmpdir(), 'svc-api-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  return {
    browser: context,
    async close() {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** The browser of a suite; a missing or failed Chromium fails the test (a browser test never skips). */
export function launchedBrowser(launched: { browser: BrowserContext } | undefined): BrowserContext {
  if (!launched) throw new Error(chromiumMissing() ?? 'Chromium did not start (see the before hook)');
  return launched.browser;
}

/** A new page that records every URL it requests, its uncaught errors and what its CSP blocked. */
export async function recordingPage(context: BrowserContext | Browser): Promise<{ page: Page; requested: string[]; failures: string[] }> {
  const page = await context.newPage();
  const requested: string[] = [];
  const failures: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  page.on('pageerror', (error) => failures.push(String(error)));
  // A resource or script the page's Content-Security-Policy blocked: the page is broken under its own policy.
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) failures.push(message.text());
  });
  return { page, requested, failures };
}

/** Every recorded URL that is not the service itself (data: and blob: URLs stay in the page). */
export function offLoopback(requested: string[], serviceUrl: string): string[] {
  return requested.filter((url) => !url.startsWith(`${serviceUrl}/`) && url !== serviceUrl && !url.startsWith('data:') && !url.startsWith('blob:'));
}
