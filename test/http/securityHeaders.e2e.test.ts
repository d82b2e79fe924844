// Security headers: nosniff on every answer, a CSP without inline scripts (and with frame-ancestors) on
// the HTML pages, no-store on every answer that carries a token, and the dev pages only under the
// service's own names (a page embedding the dev key is never served to another origin's Host).
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { create, toBinary } from '@bufbuild/protobuf';
import { expect } from 'chai';
import { RunWorkflowRequestSchema } from '../../src/contract/gen/svc/v1/execution_pb.js';
import type { Service } from '../../src/main.js';
import { DEV_ENV, DEV_KEY } from '../api/helpers.js';
import { freePort } from '../support/db.js';
import { bootstrapAdmin, call, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';

const PROJECT = fileURLToPath(new URL('./fixtures/hardening', import.meta.url));
const PAGES = ['/docs/', '/redoc', '/insight', '/insight/api-docs'];
/** The console under /insight: framed by nobody; it frames only the service's own /docs. */
const INSIGHT_PAGES = ['/insight', '/insight/api-docs'];
/** The name the service is reached by through its proxy (SVC_OAUTH_BASE_URL). */
const PUBLIC_ORIGIN = 'svc.example.test:8443';

/** A GET with a Host header of our choosing (fetch does not let a caller set Host). */
function getWithHost(
  url: string,
  host: string,
  token?: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers: { host, ...(token ? { authorization: `Bearer ${token}` } : {}) } }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

/** The directives of a Content-Security-Policy header, by name. */
function directivesOf(policy: string | null): Map<string, string[]> {
  const directives = new Map<string, string[]>();
  for (const part of (policy ?? '').split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) directives.set(name.toLowerCase(), values);
  }
  return directives;
}

describe('security headers', function () {
  this.timeout(60_000);
  let service: Service;
  let port: number;
  let admin: Admin;

  before(async () => {
    port = await freePort();
    service = await startTestService({
      projectDir: PROJECT,
      env: { ...DEV_ENV, SVC_DEV_AUTO_LOGIN: '1', PORT: String(port), SVC_OAUTH_BASE_URL: `https://${PUBLIC_ORIGIN}` },
    });
    admin = await bootstrapAdmin(service.url);
  });
  after(async () => {
    await service?.close();
  });

  it('sends X-Content-Type-Options: nosniff on every answer: JSON, errors, pages, scripts, SSE and gRPC-Web', async () => {
    const run = await call(service.url, 'POST', '/api/h/echo', { token: admin.token, json: { text: 'hi' } });
    const runId = run.headers.get('x-svc-run-id')!;
    const answers: [string, Response][] = [];
    const fetched = async (label: string, path: string, init: RequestInit = {}) => {
      const response = await fetch(`${service.url}${path}`, init);
      answers.push([label, response]);
      await response.body?.cancel();
    };
    const bearer = { authorization: `Bearer ${admin.token}` };
    await fetched('health', '/health');
    await fetched('404', '/no/such/route');
    await fetched('401', '/auth/me');
    await fetched('400 malformed JSON', '/api/h/echo', { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: '{' });
    await fetched('422', '/api/h/echo', { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: '{}' });
    await fetched('a run', `/api/runs/${runId}`, { headers: bearer });
    await fetched('an SSE stream', `/api/runs/${runId}/events`, { headers: { ...bearer, accept: 'text/event-stream' } });
    await fetched('openapi', '/openapi.json');
    await fetched('jwks', '/auth/jwks.json');
    for (const page of PAGES) await fetched(page, page, { headers: bearer });
    await fetched('redoc bundle', '/redoc/redoc.standalone.js');
    await fetched('swagger init', '/docs/swagger-ui-init.js');
    await fetched('console script', String((await call(service.url, 'GET', '/insight')).body).match(/src="(\/console\/assets\/[^"]+\.js)"/)![1]!);
    const message = toBinary(RunWorkflowRequestSchema, create(RunWorkflowRequestSchema, { workflowName: 'echo', payloadJson: '{"text":"grpc"}' }));
    const envelope = Buffer.concat([Buffer.from([0, 0, 0, 0, message.length]), message]);
    await fetched('gRPC-Web', '/grpc/svc.v1.Execution/RunWorkflow', {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/grpc-web+proto' },
      body: envelope,
    });
    for (const [label, response] of answers) expect(response.headers.get('x-content-type-options'), `${label} (${response.status})`).to.equal('nosniff');
  });

  it('serves /docs, /redoc and /insight with a CSP that allows no inline or eval script and names frame-ancestors, and no inline script in them', async () => {
    for (const page of PAGES) {
      const response = await fetch(`${service.url}${page}`);
      expect(response.status, page).to.equal(200);
      const directives = directivesOf(response.headers.get('content-security-policy'));
      const scripts = directives.get('script-src') ?? directives.get('default-src');
      expect(scripts, `${page}: script-src or default-src`).to.be.an('array').that.is.not.empty;
      expect(scripts, page).to.not.include.members(["'unsafe-inline'"]);
      expect(scripts, page).to.not.include.members(["'unsafe-eval'"]);
      expect(
        scripts!.some((source) => source === '*' || source.endsWith(':')),
        `${page}: no wildcard or scheme source`,
      ).to.equal(false);
      const isInsight = INSIGHT_PAGES.includes(page);
      expect(directives.get('frame-ancestors'), `${page}: frame-ancestors`).to.deep.equal([isInsight ? "'none'" : "'self'"]);
      expect(directives.get('frame-src'), `${page}: frame-src`).to.deep.equal([isInsight ? "'self'" : "'none'"]);
      expect(directives.get('object-src'), `${page}: object-src`).to.deep.equal(["'none'"]);
      const html = await response.text();
      const inline = [...html.matchAll(/<script\b([^>]*)>/gi)].filter((tag) => !/\bsrc=/i.test(tag[1]!));
      expect(
        inline.map((tag) => tag[0]),
        `${page}: inline script tags`,
      ).to.deep.equal([]);
      expect(html, `${page}: inline event handlers`).to.not.match(/\son[a-z]+\s*=/i);
    }
  });

  it('frames nothing else: API answers carry frame-ancestors none', async () => {
    for (const path of ['/health', '/openapi.json', '/no/such/route']) {
      const response = await fetch(`${service.url}${path}`);
      expect(directivesOf(response.headers.get('content-security-policy')).get('frame-ancestors'), path).to.deep.equal(["'none'"]);
      expect(response.headers.get('x-frame-options'), path).to.equal('DENY');
    }
  });

  it('sends Cache-Control: no-store on every answer that carries a token or the dev key', async () => {
    const fresh = await startTestService({ projectDir: PROJECT, env: { ...DEV_ENV, SVC_DEV_AUTO_LOGIN: '1' } });
    try {
      const bootstrap = await call(fresh.url, 'POST', '/auth/bootstrap', { json: { email: 'root@example.com', password: 'a-long-password-1' } });
      expect(bootstrap.status).to.equal(200);
      const login = await call(fresh.url, 'POST', '/auth/token', { form: { username: 'root@example.com', password: 'a-long-password-1' } });
      const refresh = await call(fresh.url, 'POST', '/auth/refresh', { token: login.body.access_token });
      const devToken = await call(fresh.url, 'POST', '/dev/token', { token: DEV_KEY, json: { user_id: bootstrap.body.user_id } });
      const answers = { bootstrap, login, refresh, devToken };
      for (const [label, answer] of Object.entries(answers)) {
        expect(answer.status, `${label}: ${JSON.stringify(answer.body)}`).to.equal(200);
        expect(answer.body.access_token, label).to.be.a('string');
        expect(answer.headers.get('cache-control'), label).to.equal('no-store');
      }
      for (const page of INSIGHT_PAGES) {
        const response = await fetch(`${fresh.url}${page}`);
        expect(await response.text(), page).to.include(DEV_KEY);
        expect(response.headers.get('cache-control'), page).to.equal('no-store');
      }
    } finally {
      await fresh.close();
    }
  });

  it('serves /insight and /dev only to the service’s own names: the listen address, localhost and SVC_OAUTH_BASE_URL’s host', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, PUBLIC_ORIGIN]) {
      for (const page of INSIGHT_PAGES) {
        const answer = await getWithHost(`${service.url}${page}`, host);
        expect(answer.status, `${page} as ${host}`).to.equal(200);
        expect(answer.body, `${page} as ${host}`).to.include(DEV_KEY);
      }
      expect((await getWithHost(`${service.url}/dev/settings`, host, DEV_KEY)).status, `/dev/settings as ${host}`).to.equal(200);
    }
    // DNS rebinding: a page of evil.example.test whose name now resolves to 127.0.0.1.
    const strangers = [
      `evil.example.test:${port}`,
      'evil.example.test',
      `localhost.evil.example.test:${port}`,
      `127.0.0.1:${port + 1}`,
      `svc.example.test:${port}`,
    ];
    for (const host of strangers) {
      for (const path of [...INSIGHT_PAGES, '/insight/runs']) {
        const answer = await getWithHost(`${service.url}${path}`, host);
        expect(answer.status, `${path} as "${host}"`).to.equal(403);
        expect(answer.body, `${path} as "${host}"`).to.not.include(DEV_KEY);
        expect(JSON.parse(answer.body), `${path} as "${host}"`).to.include({ code: 'PERMISSION_DENIED' });
      }
      const settings = await getWithHost(`${service.url}/dev/settings`, host, DEV_KEY);
      expect(settings.status, `/dev/settings as "${host}"`).to.equal(403);
    }
  });
});
