// The client library's browser bundle in Debian's headless Chromium, against the real service:
// a page on the service's origin imports the bundle and runs workflows over REST, SSE and gRPC-Web.
import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import { bundleClient } from '../../scripts/bundleClient.js';
import type { Service } from '../../src/main.js';
import { launchedBrowser, chromiumMissing, launchChromium, offLoopback, recordingPage } from '../api/helpers.js';
import { bootstrapAdmin, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { CLIENT_PROJECT } from './support/project.js';

const PAGE = '/__client-test/index.html';
const BUNDLE = '/__client-test/svc-client.js';

describe('client library in a browser (headless Chromium)', function () {
  this.timeout(60_000);
  let service: Service;
  let admin: Admin;
  let launched: Awaited<ReturnType<typeof launchChromium>> | undefined;
  let bundle: string;

  before(async () => {
    service = await startTestService({ projectDir: CLIENT_PROJECT });
    admin = await bootstrapAdmin(service.url);
    bundle = (await bundleClient(null))!;
    if (!chromiumMissing()) launched = await launchChromium();
  });
  after(async () => {
    await launched?.close();
    await service?.close();
  });

  /** A page of the service's origin (served by the test, not the service) that has imported the bundle as `window.svc`. */
  async function clientPage(context: BrowserContext): Promise<Page & { requested: string[]; failures: string[] }> {
    const { page, requested, failures } = await recordingPage(context);
    // tsx compiles the callbacks given to page.evaluate with esbuild's keepNames, which calls a `__name` helper.
    await page.addInitScript('globalThis.__name = (target) => target');
    await page.route(`${service.url}${PAGE}`, (route) =>
      route.fulfill({ contentType: 'text/html', body: `<!doctype html><script type="module">import * as svc from '${BUNDLE}'; window.svc = svc;</script>` }),
    );
    await page.route(`${service.url}${BUNDLE}`, (route) => route.fulfill({ contentType: 'text/javascript', body: bundle }));
    await page.goto(`${service.url}${PAGE}`);
    await page.waitForFunction(() => 'svc' in globalThis);
    return Object.assign(page, { requested, failures });
  }

  it('logs in, runs a workflow over REST, SSE and gRPC-Web, follows the journal and uses CRUD', async function () {
    const page = await clientPage(launchedBrowser(launched));
    try {
      const result = await page.evaluate(
        async ({ baseUrl, email, password }) => {
          // The bundle's exports, as the page imported them (types are the test's business, not the page's).
          const { SvcAuth, SvcClient, SvcRunFailedError, SvcRunPendingError } = (globalThis as unknown as { svc: typeof import('../../src/client/index.js') })
            .svc;
          const auth = new SvcAuth({ baseUrl });
          await auth.loginWithPassword(email, password);
          const me = await auth.getMe();
          const client = new SvcClient({ baseUrl, token: auth.token });
          const frames: Record<string, string[]> = { sse: [], grpc: [] };
          const rest = await client.execute('echo', { payload: { text: 'rest' } });
          const sse = await client.execute('echo', { payload: { text: 'sse' }, mode: 'sse', onProgress: (f) => frames.sse!.push(f.step_id!) });
          const grpc = await client.execute('echo', { payload: { text: 'grpc' }, mode: 'grpc', onProgress: (f) => frames.grpc!.push(f.step_id!) });
          let failed = '';
          try {
            await client.execute('echo', { payload: { text: 'fail' }, mode: 'grpc' });
          } catch (error) {
            failed = error instanceof SvcRunFailedError ? error.message : `wrong error: ${String(error)}`;
          }
          let pendingStatus = '';
          try {
            await client.execute('review', { payload: { subject: 'browser' }, mode: 'grpc' });
          } catch (error) {
            pendingStatus = error instanceof SvcRunPendingError ? error.run.status : `wrong error: ${String(error)}`;
          }
          const [latest] = await client.runs.list({ workflow: 'echo', status: 'completed', limit: 1 });
          const journal: string[] = [];
          for await (const event of client.runs.events(latest!.id)) journal.push(event.type);
          const note = await client.crud('note').create({ title: 'from the browser' });
          const listed = await client.crud('note').list({ filters: { title: 'from the browser' } });
          return { me: me.user_id, rest, sse, grpc, frames, failed, pendingStatus, journal, created: note.title, listed: listed.length };
        },
        { baseUrl: service.url, email: admin.email, password: admin.password },
      );
      expect(result.me).to.equal(admin.userId);
      expect(result.rest).to.deep.equal({ said: 'rest', loud: 'REST' });
      expect(result.sse).to.deep.equal({ said: 'sse', loud: 'SSE' });
      expect(result.grpc).to.deep.equal({ said: 'grpc', loud: 'GRPC' });
      expect(result.frames).to.deep.equal({ sse: ['shout', 'answer'], grpc: ['shout', 'answer'] });
      expect(result.failed).to.match(/shout was told to fail/);
      expect(result.pendingStatus).to.equal('waiting_human');
      expect(result.journal[0]).to.equal('run_started');
      expect(result.journal.at(-1)).to.equal('run_completed');
      expect(result).to.include({ created: 'from the browser', listed: 1 });
      expect(page.requested).to.include(`${service.url}/grpc/svc.v1.Execution/RunWorkflow`);
      expect(offLoopback(page.requested, service.url)).to.deep.equal([]);
      expect(page.failures).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('gRPC-Web in a browser authenticates with the token in the message body when the header is lost', async function () {
    const page = await clientPage(launchedBrowser(launched));
    const seenAuthorization: (string | undefined)[] = [];
    // As a proxy that drops the Authorization header would: only the body's token_fallback is left.
    await page.route(`${service.url}/grpc/**`, async (route) => {
      const { authorization, ...headers } = route.request().headers();
      seenAuthorization.push(authorization);
      await route.continue({ headers });
    });
    try {
      const output = await page.evaluate(
        async ({ baseUrl, token }) => {
          const { SvcClient } = (globalThis as unknown as { svc: typeof import('../../src/client/index.js') }).svc;
          return new SvcClient({ baseUrl, token }).execute('echo', { payload: { text: 'fallback' }, mode: 'grpc' });
        },
        { baseUrl: service.url, token: admin.token },
      );
      expect(output).to.deep.equal({ said: 'fallback', loud: 'FALLBACK' });
      expect(seenAuthorization).to.deep.equal([`Bearer ${admin.token}`]);
    } finally {
      await page.close();
    }
  });
});
