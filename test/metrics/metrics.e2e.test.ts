// GET /metrics: Prometheus text that parses, counters that move with the work done, the scope on the
// main port, SVC_METRICS_PORT without a token, and one scrape of a two-worker cluster showing both.
import { expect } from 'chai';
import { SvcClient } from '../../src/client/index.js';
import type { Service } from '../../src/main.js';
import { EXAMPLE_PROJECT } from '../api/helpers.js';
import { createTestDatabase, freePort } from '../support/db.js';
import { bootstrapAdmin, call, client, eventually, expectError, onNewConnection, type Admin } from '../support/http.js';
import { parseScrape, type Scraped } from '../support/prometheus.js';
import { startTestService } from '../support/service.js';
import { SseReader } from '../support/sse.js';
import { killAllServices, ServiceProcess } from '../support/serviceProcess.js';
import { createUser } from '../support/users.js';

/** One request on a connection of its own (a cluster hands each new connection to the next worker). */
async function scrape(url: string, token?: string): Promise<Scraped> {
  const answer = await onNewConnection(url, 'GET', undefined, token);
  expect(answer.status, answer.text).to.equal(200);
  expect(answer.type).to.match(/^text\/plain/);
  return parseScrape(answer.text);
}

/** Scrapes until `isDone` holds (a request is counted once its answer is out, a moment after the client has it). */
async function scrapeUntil(url: string, token: string | undefined, isDone: (scraped: Scraped) => boolean): Promise<Scraped> {
  let last = await scrape(url, token);
  await eventually(
    async () => {
      last = await scrape(url, token);
      return isDone(last);
    },
    15_000,
    100,
  );
  return last;
}

describe('GET /metrics', () => {
  let service: Service;
  let admin: Admin;
  let metricsPort: number;

  before(async () => {
    metricsPort = await freePort();
    service = await startTestService({ projectDir: EXAMPLE_PROJECT, env: { SVC_METRICS_PORT: String(metricsPort) } });
    admin = await bootstrapAdmin(service.url);
  });
  after(async () => {
    await service?.close();
    await killAllServices();
  });

  it('answers metrics:read and iam:admin, refuses other scopes (403) and no token (401)', async () => {
    const scraper = await createUser(service.url, admin.token, 'scraper@example.com', { scrapers: ['metrics:read'] });
    const reader = await createUser(service.url, admin.token, 'reader@example.com', { readers: ['runs:read'] });
    expect((await call(service.url, 'GET', '/metrics')).status).to.equal(401);
    expectError(await client(service.url, reader.token).get('/metrics'), 403);
    const scraped = await scrape(`${service.url}/metrics`, scraper.token);
    // The client library reads the same text.
    expect(parseScrape(await new SvcClient({ baseUrl: service.url, token: scraper.token }).metrics()).families.length).to.be.greaterThan(10);
    await scrape(`${service.url}/metrics`, admin.token);
    for (const name of [
      'svc_http_request_duration_seconds',
      'svc_runs_total',
      'svc_runs_active',
      'svc_step_duration_seconds',
      'svc_events_appended_total',
      'svc_projection_lag_seconds',
      'svc_log_horizon_age_seconds',
      'svc_sse_connections',
      'svc_listen_reconnects_total',
      'svc_llm_tokens_total',
      'process_cpu_user_seconds_total',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect(
        scraped.families.map((f) => f.name),
        name,
      ).to.include(name);
    }
    // Read at scrape time: every projection of the service, current (0 behind).
    const projections = scraped.labelSets('svc_projection_lag_seconds').map((labels) => labels.projection);
    expect(projections).to.include.members(['svc_runs', 'iam_users']);
    for (const projection of projections) expect(scraped.value('svc_projection_lag_seconds', { projection: projection! })).to.equal(0);
  });

  it('counts a completed run, its steps, its events and its request by route template', async () => {
    const url = `${service.url}/metrics`;
    const before = await scrape(url, admin.token);
    const answer = await call(service.url, 'POST', '/api/hello', { json: { name: 'ada', values: [1, 2] } });
    expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
    const runId = String(answer.headers.get('x-svc-run-id'));
    expect((await client(service.url, admin.token).get(`/api/runs/${runId}`)).status).to.equal(200);
    const trigger = { method: 'POST', route: '/api/hello', status: '201' };
    const triggers = (scraped: Scraped) => scraped.histogramCount('svc_http_request_duration_seconds', trigger);
    const after = await scrapeUntil(url, admin.token, (scraped) => triggers(scraped) > triggers(before));

    const completed = { workflow: 'hello', status: 'completed' };
    expect(after.value('svc_runs_total', completed) - before.value('svc_runs_total', completed)).to.equal(1);
    const functional = { workflow: 'hello', kind: 'Functional' };
    expect(after.histogramCount('svc_step_duration_seconds', functional) - before.histogramCount('svc_step_duration_seconds', functional)).to.equal(3);
    const runEvents = { stream_type: 'run' };
    expect(after.value('svc_events_appended_total', runEvents) - before.value('svc_events_appended_total', runEvents)).to.be.at.least(5);
    expect(triggers(after) - triggers(before)).to.equal(1);
    // The template, never the raw URL: no series names the run's id.
    const byId = { method: 'GET', route: '/api/runs/:id', status: '200' };
    expect(after.histogramCount('svc_http_request_duration_seconds', byId)).to.be.at.least(1);
    expect(after.labelSets('svc_http_request_duration_seconds').some((labels) => Object.values(labels).some((v) => v.includes(runId)))).to.equal(false);
  });

  it('counts an abort, the runs waiting and the SSE streams open', async () => {
    const url = `${service.url}/metrics`;
    const waitingHuman = { workflow: 'refund', status: 'waiting_human' };
    const aborted = { workflow: 'refund', status: 'aborted' };
    const before = await scrape(url, admin.token);
    const started = await call(service.url, 'POST', '/api/refunds', { token: admin.token, json: { order_id: 'M1', amount: 500 } });
    expect(started.status, JSON.stringify(started.body)).to.be.oneOf([200, 201, 202]);
    const runId = String(started.headers.get('x-svc-run-id'));
    const waiting = await scrape(url, admin.token);
    expect(waiting.value('svc_runs_active', waitingHuman) - before.value('svc_runs_active', waitingHuman)).to.equal(1);

    const stream = await SseReader.open(`${service.url}/api/runs/${runId}/events`, { token: admin.token });
    expect(stream.status).to.equal(200);
    const open = await scrapeUntil(url, admin.token, (scraped) => scraped.value('svc_sse_connections') >= 1);
    expect(open.value('svc_sse_connections')).to.be.at.least(1);
    stream.close();
    await scrapeUntil(url, admin.token, (scraped) => scraped.value('svc_sse_connections') === 0);

    expect((await client(service.url, admin.token).post(`/api/runs/${runId}/abort`, { reason: 'test' })).status).to.equal(200);
    const after = await scrape(url, admin.token);
    expect(after.value('svc_runs_total', aborted) - before.value('svc_runs_total', aborted)).to.equal(1);
    expect(after.value('svc_runs_active', waitingHuman)).to.equal(before.value('svc_runs_active', waitingHuman));
    expect(after.value('svc_sse_connections')).to.equal(0);
  });

  it('says how far behind a projection whose table another code version built is', async () => {
    const url = `${service.url}/metrics`;
    const pool = service.kernel.pool;
    // As during a rolling deploy: the table was last built by another version, before the events since.
    await pool.query(`UPDATE projection_state SET version = version + 1000, rebuilt_at = now() - interval '1 hour' WHERE name = 'svc_runs'`);
    try {
      const stale = await scrape(url, admin.token);
      expect(stale.value('svc_projection_lag_seconds', { projection: 'svc_runs' })).to.be.greaterThan(0);
      expect(stale.value('svc_projection_lag_seconds', { projection: 'iam_users' })).to.equal(0);
    } finally {
      await pool.query(`UPDATE projection_state SET version = version - 1000 WHERE name = 'svc_runs'`);
    }
    expect((await scrape(url, admin.token)).value('svc_projection_lag_seconds', { projection: 'svc_runs' })).to.equal(0);
  });

  it('serves the same text on SVC_METRICS_PORT without a token, and nothing else there', async () => {
    const port = `http://127.0.0.1:${metricsPort}`;
    const before = await scrape(`${port}/metrics`);
    expect((await call(service.url, 'POST', '/api/hello', { json: { name: 'bob' } })).status).to.equal(201);
    const after = await scrape(`${port}/metrics`);
    const completed = { workflow: 'hello', status: 'completed' };
    expect(after.value('svc_runs_total', completed) - before.value('svc_runs_total', completed)).to.equal(1);
    expect((await onNewConnection(`${port}/health`, 'GET')).status).to.equal(404);
    expect((await onNewConnection(`${port}/auth/bootstrap`, 'POST', {})).status).to.equal(404);
  });

  it('shows every worker of an SVC_WORKERS=2 cluster in one scrape', async function () {
    this.timeout(90_000);
    const port = await freePort();
    const cluster = await ServiceProcess.start(await createTestDatabase(), EXAMPLE_PROJECT, { SVC_WORKERS: '2', SVC_METRICS_PORT: String(port) });
    const scrapeUrl = `http://127.0.0.1:${port}/metrics`;
    // Both workers up: the primary's aggregator answers only once each worker does.
    const up = await eventually(async () => (await onNewConnection(scrapeUrl, 'GET').catch(() => ({ status: 0 }))).status === 200, 30_000, 200);
    expect(up.ok, cluster.output).to.equal(true);
    const runs = 12;
    for (let i = 0; i < runs; i++) {
      const answer = await onNewConnection(`${cluster.url}/api/hello`, 'POST', { name: `n${i}` });
      expect(answer.status, answer.text).to.equal(201);
    }
    // Runs waiting for a person: the gauge read from the database counts them once, not once per worker.
    const clusterAdmin = await bootstrapAdmin(cluster.url);
    for (const orderId of ['R1', 'R2', 'R3']) {
      const waiting = await call(cluster.url, 'POST', '/api/refunds', { token: clusterAdmin.token, json: { order_id: orderId, amount: 500 } });
      expect(waiting.status, JSON.stringify(waiting.body)).to.be.oneOf([200, 201, 202]);
    }
    // Each connection went to the next worker, so each journaled about half of the runs; every
    // scrape, whichever worker takes it, counts them all, and the runs' requests with them.
    const triggers = { route: '/api/hello', status: '201' };
    await scrapeUntil(scrapeUrl, undefined, (scraped) => scraped.histogramCount('svc_http_request_duration_seconds', triggers) >= runs);
    for (let i = 0; i < 4; i++) {
      const scraped = await scrape(scrapeUrl);
      expect(scraped.value('svc_runs_total', { workflow: 'hello', status: 'completed' }), `scrape ${i}`).to.equal(runs);
      expect(scraped.histogramCount('svc_http_request_duration_seconds', triggers)).to.equal(runs);
      expect(scraped.histogramCount('svc_step_duration_seconds', { workflow: 'hello', kind: 'Functional' })).to.equal(3 * runs);
      expect(scraped.value('svc_runs_active', { workflow: 'refund', status: 'waiting_human' })).to.equal(3);
    }
    await cluster.stop();
  });
});
