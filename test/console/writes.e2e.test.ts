// The console's write pages end to end in Debian's headless Chromium: a role made from the scopes
// palette and changed, a user made with that role (a refused password shown under its field first)
// who then signs in, disabled and deleted; a model record created (a 422 under its field first),
// edited and deleted; a reader without the write scopes sees no write button and the API refuses
// anyway; and the keyboard pass: the skip link first, then every stop of Tab visibly focused on every
// page at desktop and phone width. axe-core on the new states.
import path from 'node:path';
import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import type { Service } from '../../src/main.js';
import { launchChromium, chromiumMissing } from '../api/helpers.js';
import { bootstrapAdmin, client, eventually, login, requestToken, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser, USER_PASSWORD } from '../support/users.js';
import { CONSOLE_PROJECT, DESKTOP, PHONE, expectAccessible, screenshot, signIn, desktopPage } from './browser.js';

const ADMIN_PROJECT = path.join(path.dirname(CONSOLE_PROJECT), 'admin-project');
const CLERK = { email: 'clerk@example.com', password: 'clerk-password-long-enough' };

interface Role {
  id: string;
  name: string;
  scopes: string[];
}
interface User {
  id: string;
  email: string | null;
  is_active: boolean;
  roles: { name: string }[];
}

/** What the focused element is and whether a person sees where focus is (the page's outline). */
interface FocusStop {
  what: string;
  outline: string;
  isShown: boolean;
}
const focusStop = (page: Page): Promise<FocusStop | undefined> =>
  page.evaluate(() => {
    // The test's tsconfig has no DOM types: the little of the DOM used here, typed by hand.
    interface Element {
      tagName: string;
      textContent: string | null;
      getAttribute(name: string): string | null;
      getBoundingClientRect(): { width: number; height: number };
    }
    const global = globalThis as unknown as {
      document: { activeElement: Element | null; body: Element };
      getComputedStyle(element: Element): { outlineStyle: string; outlineWidth: string };
    };
    const element = global.document.activeElement;
    if (!element || element === global.document.body) return undefined;
    const style = global.getComputedStyle(element);
    const box = element.getBoundingClientRect();
    const label = element.getAttribute('aria-label') ?? element.getAttribute('name') ?? (element.textContent ?? '').trim().slice(0, 40);
    return {
      what: `${element.tagName.toLowerCase()} "${label}"`,
      outline: `${style.outlineStyle} ${style.outlineWidth}`,
      isShown: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2 && box.width > 0 && box.height > 0,
    };
  });

describe('the console write pages and the keyboard in Chromium', function () {
  this.timeout(120_000);
  const missing = chromiumMissing();
  let service: Service;
  let admin: Admin;
  let browser: { browser: BrowserContext; close(): Promise<void> } | undefined;

  before(async () => {
    service = await startTestService({ projectDir: ADMIN_PROJECT });
    admin = await bootstrapAdmin(service.url);
    if (!missing) browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await service?.close();
  });

  const freshPage = () => desktopPage(browser);
  const asAdmin = () => client(service.url, admin.token);
  const roleNamed = async (name: string) => ((await asAdmin().get('/auth/admin/roles')).body as Role[]).find((role) => role.name === name);
  const userNamed = async (email: string) => ((await asAdmin().get('/auth/admin/users?limit=1000')).body as User[]).find((user) => user.email === email);
  const focusedId = (page: Page) =>
    page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document.activeElement?.id);

  it('creates a role from the scopes palette, changes its scopes, and creates a user holding it who signs in', async () => {
    const { page, failures } = await freshPage();
    try {
      await signIn(page, service.url, admin.email, admin.password, '/console/iam');
      await page.getByRole('button', { name: 'New role' }).click();
      expect(await focusedId(page)).to.equal('role-form-title');
      const form = page.locator('#role-form');
      await form.getByLabel('Name').fill('clerks');
      await form.getByLabel('Description').fill('Keep the books');
      await form.getByRole('group', { name: 'book' }).getByRole('checkbox', { name: 'book:read' }).check();
      await form.getByRole('checkbox', { name: 'book:write' }).check();
      await expectAccessible(page, 'IAM with the new role form');
      await form.getByRole('button', { name: 'Create role' }).click();
      await page.getByRole('status').filter({ hasText: 'Role clerks created.' }).waitFor({ timeout: 20_000 });
      expect((await focusStop(page))?.what, 'focus back on the button that opened the form').to.equal('button "New role"');
      expect((await roleNamed('clerks'))?.scopes).to.deep.equal(['book:read', 'book:write']);
      await page.getByRole('button', { name: 'Scopes of clerks' }).click();
      await form.getByRole('checkbox', { name: 'book:delete' }).check();
      await form.getByRole('button', { name: 'Save scopes' }).click();
      await page.locator('table.roles tr[data-role="clerks"] ul.scopes li', { hasText: 'book:delete' }).waitFor({ timeout: 20_000 });
      expect((await roleNamed('clerks'))?.scopes).to.deep.equal(['book:delete', 'book:read', 'book:write']);

      await page.getByRole('button', { name: 'New user' }).click();
      const userForm = page.locator('#user-form');
      await userForm.getByLabel('Email').fill(CLERK.email);
      await userForm.getByLabel('Password').fill('short');
      await userForm.getByRole('checkbox', { name: 'clerks' }).check();
      await userForm.getByRole('button', { name: 'Create user' }).click();
      await page
        .getByRole('alert')
        .filter({ hasText: /^password must have at least/ })
        .waitFor({ timeout: 20_000 });
      expect(await focusedId(page), 'focus on the field in error').to.equal('user-form-password');
      expect(await userForm.getByLabel('Password').getAttribute('aria-describedby')).to.equal('user-form-password-problem');
      expect(await page.locator('#user-form-password-problem').innerText()).to.match(/^password must have at least/);
      await expectAccessible(page, 'IAM with a refused user form');
      await userForm.getByLabel('Password').fill(CLERK.password);
      await userForm.getByRole('button', { name: 'Create user' }).click();
      await page.locator(`tr[data-user="${CLERK.email}"]`, { hasText: 'clerks' }).waitFor({ timeout: 20_000 });
      expect((await userNamed(CLERK.email))?.roles.map((role) => role.name)).to.deep.equal(['clerks']);
      await screenshot(page, 'iam-write');
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
    const { page: clerkPage, failures: clerkFailures } = await freshPage();
    try {
      await signIn(clerkPage, service.url, CLERK.email, CLERK.password, '/console/models');
      expect(await clerkPage.getByRole('navigation', { name: 'Main' }).getByRole('link').allInnerTexts()).to.deep.equal(['Workflows', 'Models', 'More']);
      expect(clerkFailures).to.deep.equal([]);
    } finally {
      await clerkPage.close();
    }
  });

  it('creates, edits and deletes a model record, the 422 shown under its field', async () => {
    const { page, failures } = await freshPage();
    try {
      await signIn(page, service.url, CLERK.email, CLERK.password, '/console/models');
      await page.getByRole('button', { name: 'New book' }).click();
      const form = page.locator('#record-book');
      await form.getByLabel(/^title/).fill('Dune');
      await form.getByLabel(/^pages/).fill('90071992547409930');
      await form.getByRole('button', { name: 'Create' }).click();
      await page.locator('#record-book-pages-problem').waitFor({ timeout: 20_000 });
      expect(await focusedId(page), 'focus on the field in error').to.equal('record-book-pages');
      expect(await page.getByRole('alert').innerText()).to.match(/^pages: /);
      await expectAccessible(page, 'models with a refused record');
      await screenshot(page, 'models-invalid');
      await form.getByLabel(/^pages/).fill('412');
      await form.getByRole('button', { name: 'Create' }).click();
      const row = page.locator('table.records tbody tr', { hasText: 'Dune' });
      await row.waitFor({ timeout: 20_000 });
      const id = (await row.getAttribute('data-record'))!;
      await page.getByRole('button', { name: `Edit book ${id}` }).click();
      expect(await form.getByLabel(/^title/).inputValue()).to.equal('Dune');
      await form.getByLabel(/^title/).fill('Dune Messiah');
      await form.getByLabel(/^pages/).fill('');
      await form.getByRole('button', { name: 'Save' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Saved book ${id}.` })
        .waitFor({ timeout: 20_000 });
      const clerk = client(service.url, await login(service.url, CLERK.email, CLERK.password));
      expect((await clerk.get(`/models/book/${id}`)).body).to.deep.include({ title: 'Dune Messiah', pages: null });
      expect((await focusStop(page))?.what, 'focus back on Edit').to.equal(`button "Edit book ${id}"`);
      await page.getByRole('button', { name: `Delete book ${id}` }).click();
      await page.getByRole('button', { name: `Confirm: delete book ${id}` }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Deleted book ${id}.` })
        .waitFor({ timeout: 20_000 });
      expect((await clerk.get(`/models/book/${id}`)).status).to.equal(404);
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('shows a reader no write button, and the API refuses the writes anyway', async () => {
    expect((await asAdmin().post('/models/book/', { title: 'Emma', pages: 474 })).status).to.equal(201);
    const reader = await createUser(service.url, admin.token, 'reader@example.com', { readers: ['book:read'] });
    const { page, failures } = await freshPage();
    try {
      await signIn(page, service.url, reader.email, USER_PASSWORD, '/console/models');
      const row = page.locator('table.records tbody tr', { hasText: 'Emma' });
      await row.waitFor({ timeout: 20_000 });
      expect(await page.getByRole('button', { name: /^(New book|Edit|Delete)/ }).count()).to.equal(0);
      expect(await row.getByRole('button').count()).to.equal(0);
      const id = (await row.getAttribute('data-record'))!;
      const asReader = client(service.url, reader.token);
      expect((await asReader.post('/models/book/', { title: 'Sneaky' })).status).to.equal(403);
      expect((await asReader.patch(`/models/book/${id}`, { title: 'Sneaky' })).status).to.equal(403);
      expect((await asReader.delete(`/models/book/${id}`)).status).to.equal(403);
      expect((await asReader.post('/auth/admin/roles', { name: 'sneaky', scopes: ['iam:admin'] })).status).to.equal(403);
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('disables and deletes a user from the IAM page, and deletes a role', async () => {
    const { page, failures } = await freshPage();
    try {
      await signIn(page, service.url, admin.email, admin.password, '/console/iam');
      await page.getByRole('button', { name: `Disable ${CLERK.email}` }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `${CLERK.email} disabled.` })
        .waitFor({ timeout: 20_000 });
      expect((await userNamed(CLERK.email))?.is_active).to.equal(false);
      expect((await requestToken(service.url, CLERK.email, CLERK.password)).status).to.not.equal(200);
      await page.getByRole('button', { name: `Delete ${CLERK.email}` }).click();
      expect((await focusStop(page))?.what, 'focus on Confirm').to.equal(`button "Confirm: delete ${CLERK.email}"`);
      await page.keyboard.press('Enter');
      await page
        .getByRole('status')
        .filter({ hasText: `${CLERK.email} deleted.` })
        .waitFor({ timeout: 20_000 });
      expect(await userNamed(CLERK.email)).to.equal(undefined);
      await page.getByRole('button', { name: 'Delete role clerks' }).click();
      await page.getByRole('button', { name: 'Confirm: delete role clerks' }).click();
      await page.getByRole('status').filter({ hasText: 'Role clerks deleted.' }).waitFor({ timeout: 20_000 });
      expect(await roleNamed('clerks')).to.equal(undefined);
      expect(failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('starts every page with the skip link and shows where focus is at each Tab, at desktop and phone width', async () => {
    const pages = ['/workflows', '/workflows/nightly_report', '/runs', '/approvals', '/schedules', '/audit', '/iam', '/artifacts', '/models', '/more'];
    const { page, failures } = await freshPage();
    try {
      await signIn(page, service.url, admin.email, admin.password, '/console/workflows');
      const unseen: string[] = [];
      for (const size of [DESKTOP, PHONE]) {
        await page.setViewportSize(size);
        for (const route of pages) {
          await page.goto(`${service.url}/console${route}`, { waitUntil: 'load' });
          await page.locator('main h1').first().waitFor({ timeout: 20_000 });
          await page.keyboard.press('Tab');
          expect((await focusStop(page))?.what, `${route}: the first Tab`).to.equal('a "Skip to the page"');
          await page.keyboard.press('Enter');
          expect(await focusedId(page), `${route}: the skip link`).to.equal('main');
          for (let stop = 0; stop < 20; stop++) {
            await page.keyboard.press('Tab');
            const focused = await focusStop(page);
            if (!focused) break;
            if (!focused.isShown) unseen.push(`${size.width}px ${route}: ${focused.what} (outline ${focused.outline})`);
          }
        }
      }
      expect(unseen, 'focus stops without a visible outline').to.deep.equal([]);
      const settled = await eventually(async () => failures.length === 0, 1_000, 100);
      expect(settled.ok, failures.join('\n')).to.equal(true);
    } finally {
      await page.close();
    }
  });
});
