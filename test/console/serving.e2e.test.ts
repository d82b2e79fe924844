// How svc serves the console: /console and every client route under it answer the built index page
// under a strict CSP (no inline script or style, framed by nobody), in every mode; its files come
// from the build; GET /auth/providers lists what the sign-in page offers.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { call } from '../support/http.js';
import { emptyProjectDir, startTestService } from '../support/service.js';
import { CONSOLE_PROJECT } from './browser.js';

const directives = (policy: string | null): Map<string, string> =>
  new Map(
    (policy ?? '')
      .split(';')
      .map((part) => part.trim())
      .filter(Boolean)
      .map((part) => [part.split(/\s+/)[0]!, part.slice(part.indexOf(' ') + 1)]),
  );

describe('serving the console', () => {
  let service: Service;
  let bare: Service;

  before(async () => {
    // Neither is in dev mode: /console is there in every mode.
    service = await startTestService({ projectDir: CONSOLE_PROJECT });
    bare = await startTestService({ projectDir: emptyProjectDir() });
  });
  after(async () => {
    await service?.close();
    await bare?.close();
  });

  it('answers /console and its client routes with the index page under a strict CSP, never cached', async () => {
    for (const path of ['/console', '/console/', '/console/runs', '/console/runs/0190c3f0-0000-7000-8000-000000000000', '/console/approvals']) {
      const page = await call(service.url, 'GET', path);
      expect(page.status, path).to.equal(200);
      expect(page.headers.get('content-type'), path).to.match(/^text\/html/);
      expect(page.headers.get('cache-control'), path).to.equal('no-store');
      const html = String(page.body);
      expect(html, path).to.include('<div id="root"></div>');
      // Every script is a file of the service: none inline, none from elsewhere.
      const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((match) => match[1]!);
      expect(scripts.length, path).to.be.at.least(1);
      for (const attributes of scripts) expect(attributes, path).to.match(/src="\/console\/assets\/[^"]+\.js"/);
      expect(html, path).not.to.match(/<style\b|\sstyle="|https?:\/\//);
      const policy = directives(page.headers.get('content-security-policy'));
      expect(policy.get('script-src'), path).to.equal("'self'");
      expect(policy.get('style-src'), path).to.equal("'self'");
      expect(policy.get('connect-src'), path).to.equal("'self'");
      expect(policy.get('frame-ancestors'), path).to.equal("'none'");
      expect(policy.get('object-src'), path).to.equal("'none'");
      expect(page.headers.get('x-frame-options'), path).to.equal('DENY');
    }
  });

  it('serves the files the index page names, long-cached under hashed names; a missing one is a 404', async () => {
    const html = String((await call(service.url, 'GET', '/console/')).body);
    const files = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((match) => match[1]!);
    expect(files.some((file) => file.endsWith('.js'))).to.equal(true);
    expect(files.some((file) => file.endsWith('.css'))).to.equal(true);
    for (const file of files) {
      const served = await call(service.url, 'GET', file);
      expect(served.status, file).to.equal(200);
      expect(served.headers.get('content-type'), file).to.match(file.endsWith('.js') ? /javascript/ : /text\/css/);
      expect(served.headers.get('cache-control'), file).to.include('immutable');
    }
    expect((await call(service.url, 'GET', '/console/assets/nothing-here.js')).status).to.equal(404);
  });

  it('lists on GET /auth/providers, without a token, the providers a user can sign in with now', async () => {
    const listed = await call(service.url, 'GET', '/auth/providers');
    expect(listed.status).to.equal(200);
    expect(listed.body).to.deep.equal([{ name: 'console_idp', kind: 'custom', start_url: '/auth/oauth/console_idp/start' }]);
    const none = await call(bare.url, 'GET', '/auth/providers');
    expect(none.status).to.equal(200);
    expect(none.body).to.deep.equal([]);
  });
});
