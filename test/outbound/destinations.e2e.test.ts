// The destination policy end to end, in production: APICall, MCP over HTTP and LLM calls reach public
// addresses and what SVC_OUTBOUND_ALLOW names, nothing else, in any spelling and across redirects.
import type { ServerResponse } from 'node:http';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { freePort } from '../support/db.js';
import { bootstrapAdmin, client } from '../support/http.js';
import { journalOf } from '../support/runs.js';
import { startTestService, type TestEnv } from '../support/service.js';
import { FakeOpenAi } from '../agents/support/fakeOpenAi.js';
import { agentProject, stepEnd } from '../agents/support/harness.js';
import { McpHttpServer } from '../agents/support/mcpHttpServer.js';
import { ENGINE_PROJECT, FakeServer, sendJson, SIGNING_KEY } from '../workflows/helpers.js';

const PRODUCTION: TestEnv = { SVC_ENV: 'production', SVC_SIGNING_KEY: SIGNING_KEY };

async function startProduction(projectDir: string, env: TestEnv = {}): Promise<{ service: Service; api: ReturnType<typeof client>; token: string }> {
  const service = await startTestService({ projectDir, env: { ...PRODUCTION, ...env } });
  const token = (await bootstrapAdmin(service.url)).token;
  return { service, api: client(service.url, token), token };
}

describe('outbound destinations in production: APICall', function () {
  this.timeout(60_000);
  const target = new FakeServer();
  const inner = new FakeServer();
  let port: number;
  let strict: Awaited<ReturnType<typeof startProduction>>;
  let allowing: Awaited<ReturnType<typeof startProduction>>;

  before(async function () {
    this.timeout(120_000);
    await target.start();
    await inner.start();
    port = Number(new URL(target.url).port);
    target.on('/ok', (_req, res) => sendJson(res, 200, { data: { value: 'reached', list: ['a', 'b'] } }));
    const redirect = (location: string) => (_req: unknown, res: ServerResponse) => {
      res.writeHead(307, { location }).end();
    };
    target.on('/to-inner', redirect(`${inner.url}/ok`));
    target.on('/to-metadata', redirect('http://169.254.169.254/latest/meta-data/'));
    target.on('/to-localhost', redirect(`http://localhost:${new URL(inner.url).port}/ok`));
    inner.on('/ok', (_req, res) => sendJson(res, 200, { data: { value: 'inner' } }));
    strict = await startProduction(ENGINE_PROJECT);
    allowing = await startProduction(ENGINE_PROJECT, { SVC_OUTBOUND_ALLOW: `127.0.0.1:${port}` });
  });
  after(async () => {
    await strict?.service.close();
    await allowing?.service.close();
    await target.stop();
    await inner.stop();
  });

  /** Runs the `fetch` fixture workflow (an APICall to `url`, error routed to a 502 Response). */
  const fetchVia = (api: ReturnType<typeof client>, url: string) => api.post('/api/wf/fetch', { url });

  it('refuses a loopback server in every spelling, names the host and why, and sends it nothing', async () => {
    const spellings: [string, RegExp][] = [
      [`http://127.0.0.1:${port}/ok`, /127\.0\.0\.1.*loopback/],
      [`http://localhost:${port}/ok`, /localhost.*127\.0\.0\.1.*loopback|localhost.*::1.*loopback/],
      [`http://localhost.:${port}/ok`, /localhost.*loopback/],
      [`http://LOCALHOST:${port}/ok`, /localhost.*loopback/],
      [`http://[::1]:${port}/ok`, /::1.*loopback/],
      [`http://[::ffff:127.0.0.1]:${port}/ok`, /::ffff:7f00:1.*loopback/],
      [`http://2130706433:${port}/ok`, /127\.0\.0\.1.*loopback/],
      [`http://0x7f.1:${port}/ok`, /127\.0\.0\.1.*loopback/],
      [`http://127.1:${port}/ok`, /127\.0\.0\.1.*loopback/],
      [`http://017700000001:${port}/ok`, /127\.0\.0\.1.*loopback/],
      [`http://0.0.0.0:${port}/ok`, /0\.0\.0\.0.*unspecified/],
      [`http://[::]:${port}/ok`, /::.*unspecified/],
    ];
    const before = target.requests.length;
    for (const [url, reason] of spellings) {
      const result = await fetchVia(strict.api, url);
      expect(result.status, `${url}: ${JSON.stringify(result.body)}`).to.equal(502);
      expect(result.body.error, url).to.match(/refused/);
      expect(result.body.error, url).to.match(reason);
      expect(result.body.error, url).to.match(/SVC_OUTBOUND_ALLOW/);
    }
    expect(target.requests.length, 'requests that reached the loopback server').to.equal(before);
  });

  it('refuses private, link-local (cloud metadata), unique-local, carrier-grade NAT, multicast and reserved addresses at once, without retrying', async () => {
    const ranges: [string, RegExp][] = [
      ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254.*link-local/],
      ['http://10.1.2.3/', /10\.1\.2\.3.*private/],
      ['http://192.168.0.1:8080/', /192\.168\.0\.1.*private/],
      ['http://172.16.5.4/', /172\.16\.5\.4.*private/],
      ['http://[fd00::1]/', /fd00::1.*unique-local/],
      ['http://[fe80::1]/', /fe80::1.*link-local/],
      ['http://100.64.0.1/', /100\.64\.0\.1.*carrier-grade NAT/],
      ['http://224.0.0.1/', /224\.0\.0\.1.*multicast/],
      ['http://240.0.0.1/', /240\.0\.0\.1.*reserved/],
      ['http://[::ffff:10.0.0.1]/', /private/],
    ];
    for (const [url, reason] of ranges) {
      const result = await fetchVia(strict.api, url);
      expect(result.status, `${url}: ${JSON.stringify(result.body)}`).to.equal(502);
      expect(result.body.error, url).to.match(reason);
      const journal = await journalOf(strict.service.url, strict.token, result.headers.get('x-svc-run-id')!);
      const failed = journal.find((e) => e.type === 'step_failed' && e.agent_id === 'call');
      expect(failed.payload.attempts, `${url}: a refused destination is not retried`).to.equal(1);
      expect(failed.payload.failure, url).to.match(reason);
    }
  });

  it('reaches what SVC_OUTBOUND_ALLOW names (host:port, also by a name that resolves to it), and nothing next to it', async () => {
    const reached = await fetchVia(allowing.api, `${target.url}/ok`);
    expect(reached.status, JSON.stringify(reached.body)).to.equal(201);
    expect(reached.body.value).to.equal('reached');
    const byName = await fetchVia(allowing.api, `http://localhost:${port}/ok`);
    expect(byName.status, JSON.stringify(byName.body)).to.equal(201);
    const otherPort = await freePort();
    const refused = await fetchVia(allowing.api, `http://127.0.0.1:${otherPort}/ok`);
    expect(refused.status).to.equal(502);
    expect(refused.body.error).to.match(new RegExp(`127\\.0\\.0\\.1:${otherPort}.*refused.*loopback`));
  });

  it('checks every redirect again: an allowed host cannot send the request on to loopback or to the metadata address', async () => {
    const innerBefore = inner.requests.length;
    for (const [path, reason] of [
      ['/to-inner', /127\.0\.0\.1.*loopback/],
      ['/to-localhost', /localhost.*loopback/],
      ['/to-metadata', /169\.254\.169\.254.*link-local/],
    ] as const) {
      const result = await fetchVia(allowing.api, `${target.url}${path}`);
      expect(result.status, `${path}: ${JSON.stringify(result.body)}`).to.equal(502);
      expect(result.body.error, path).to.match(reason);
    }
    expect(inner.requests.length, 'requests that reached the server behind the redirect').to.equal(innerBefore);
  });
});

describe('outbound destinations in production: LLM and MCP over HTTP', function () {
  this.timeout(60_000);
  const llm = new FakeOpenAi();
  const mcp = new McpHttpServer();
  let strict: Awaited<ReturnType<typeof startProduction>>;
  let allowing: Awaited<ReturnType<typeof startProduction>>;

  before(async function () {
    this.timeout(120_000);
    await llm.start();
    await mcp.start();
    const project = agentProject(mcp.url);
    const env = { SVC_LLM_BASE_URL: llm.baseUrl };
    strict = await startProduction(project, env);
    const hosts = [new URL(llm.baseUrl).host, new URL(mcp.url).host];
    allowing = await startProduction(project, { ...env, SVC_OUTBOUND_ALLOW: hosts.join(', ') });
  });
  after(async () => {
    await strict?.service.close();
    await allowing?.service.close();
    await llm.stop();
    await mcp.stop();
  });

  it("refuses an Agent step's model call to a loopback base_url, naming the host, and reaches it once allowed", async () => {
    const key = 'outbound-llm-7731';
    llm.script(key, [{ content: 'it works' }]);
    const refused = await strict.api.post('/api/agents/ask', { question: `Does it work? ${key}` });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(400);
    expect(refused.body.error.message).to.match(/127\.0\.0\.1.*refused.*loopback/);
    expect(llm.requestsFor(key)).to.have.length(0);

    const reached = await allowing.api.post('/api/agents/ask', { question: `Does it work? ${key}` });
    expect(reached.status, JSON.stringify(reached.body)).to.equal(201);
    expect(reached.body.answer).to.equal('it works');
    expect(llm.requestsFor(key)).to.have.length(1);
  });

  it('refuses an MCP step over HTTP to a loopback server, naming the host, and reaches it once allowed', async () => {
    const callsBefore = mcp.calls.length;
    const refused = await strict.api.post('/api/agents/mcp-http', { op: 'add', a: 1, b: 2 });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(400);
    expect(refused.body.error.message).to.match(/127\.0\.0\.1.*refused.*loopback/);
    const journal = await journalOf(strict.service.url, strict.token, refused.headers.get('x-svc-run-id')!);
    expect(stepEnd(journal, 'add').payload.signal).to.equal('error');
    expect(mcp.calls.length).to.equal(callsBefore);

    const reached = await allowing.api.post('/api/agents/mcp-http', { op: 'add', a: 1, b: 2 });
    expect(reached.status, JSON.stringify(reached.body)).to.equal(201);
    expect(reached.body).to.include({ sum: 3, via: 'http' });
  });
});
