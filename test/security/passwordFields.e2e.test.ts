// ASVS 5.0 V6.2.6 (password fields masked) and V6.2.7 (paste, browser password helpers and password
// managers permitted) for the console's password fields, in Debian's headless Chromium: the sign-in
// form and IAM's new-user form. A password manager finds a field by its form, its type and its
// `autocomplete` token; paste is checked with the real clipboard and Ctrl+V, and with a paste event
// no handler may cancel.
import { expect } from 'chai';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import type { Service } from '../../src/main.js';
import { chromiumMissing, launchChromium, launchedBrowser, recordingPage } from '../api/helpers.js';
import { bootstrapAdmin, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';

const PASTED = 'a pasted passphrase, 32 characters';

/** What a password manager and a person see of a field: its attributes, and whether it is in a form with a submit button. */
async function fieldOf(field: Locator): Promise<Record<string, unknown>> {
  const attributes = Object.fromEntries(
    await Promise.all(['type', 'autocomplete', 'maxlength', 'readonly', 'disabled'].map(async (name) => [name, await field.getAttribute(name)])),
  );
  const inSubmittableForm = await field.evaluate((element) => {
    const form = (element as unknown as { form: { querySelector(selector: string): unknown } | null }).form;
    return form !== null && form.querySelector('button[type="submit"], input[type="submit"]') !== null;
  });
  return { ...attributes, inSubmittableForm };
}

/** Pastes `text` into the field as a person does (the clipboard, then Ctrl+V) and answers what the field holds. */
async function pasteInto(page: Page, field: Locator, text: string): Promise<string> {
  await page.evaluate(
    (value) => (globalThis as unknown as { navigator: { clipboard: { writeText(v: string): Promise<void> } } }).navigator.clipboard.writeText(value),
    text,
  );
  await field.fill('');
  await field.focus();
  await page.keyboard.press('Control+V');
  return field.inputValue();
}

/** Whether a cancelable paste event dispatched on the field comes back not cancelled (no handler blocks paste). */
const pasteAllowed = (field: Locator): Promise<boolean> =>
  field.evaluate((element) => {
    const event = new (globalThis as unknown as { Event: new (type: string, init: object) => { defaultPrevented: boolean } }).Event('paste', {
      bubbles: true,
      cancelable: true,
    });
    (element as unknown as { dispatchEvent(e: unknown): boolean }).dispatchEvent(event);
    return !event.defaultPrevented;
  });

describe('ASVS V6.2.6 V6.2.7 the console password fields in Chromium', function () {
  this.timeout(60_000);
  const missing = chromiumMissing();
  let service: Service;
  let admin: Admin;
  let browser: { browser: BrowserContext; close(): Promise<void> } | undefined;

  before(async () => {
    service = await startTestService();
    admin = await bootstrapAdmin(service.url);
    if (!missing) browser = await launchChromium();
    await launchedBrowser(browser).grantPermissions(['clipboard-read', 'clipboard-write'], { origin: service.url });
  });
  after(async () => {
    await browser?.close();
    await service?.close();
  });

  it('V6.2.6 V6.2.7 the sign-in password is masked, current-password beside a username field, takes a paste, and signs in with it', async () => {
    const { page, failures } = await recordingPage(launchedBrowser(browser));
    try {
      await page.goto(`${service.url}/console/`, { waitUntil: 'load' });
      const password = page.getByLabel('Password');
      const username = page.getByLabel('Email or phone number');
      expect(await fieldOf(password)).to.deep.equal({
        type: 'password',
        autocomplete: 'current-password',
        maxlength: null,
        readonly: null,
        disabled: null,
        inSubmittableForm: true,
      });
      expect(await fieldOf(username)).to.include({ autocomplete: 'username', readonly: null, inSubmittableForm: true });
      expect(await pasteAllowed(password)).to.equal(true);
      expect(await pasteInto(page, password, PASTED)).to.equal(PASTED);
      // The pasted text is what is sent: the admin's password, pasted, signs in.
      await username.fill(admin.email);
      expect(await pasteInto(page, password, admin.password)).to.equal(admin.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor({ state: 'visible', timeout: 20_000 });
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it("V6.2.6 V6.2.7 IAM's new-user password is masked, new-password (a manager may suggest one), and takes a paste", async () => {
    const { page, failures } = await recordingPage(launchedBrowser(browser));
    try {
      await page.goto(`${service.url}/console/iam`, { waitUntil: 'load' });
      await page.getByLabel('Email or phone number').fill(admin.email);
      await page.getByLabel('Password').fill(admin.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'New user' }).click();
      const password = page.locator('#user-form').getByLabel('Password');
      expect(await fieldOf(password)).to.deep.equal({
        type: 'password',
        autocomplete: 'new-password',
        maxlength: null,
        readonly: null,
        disabled: null,
        inSubmittableForm: true,
      });
      expect(await pasteAllowed(password)).to.equal(true);
      expect(await pasteInto(page, password, PASTED)).to.equal(PASTED);
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });
});
