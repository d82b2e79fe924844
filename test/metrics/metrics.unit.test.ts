// The metrics' own parts: the request histogram's route label, what the run engine counts from a
// commit, and SVC_METRICS_PORT.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import { expect } from 'chai';
import { loadSettings, SettingsError } from '../../src/config/settings.js';
import { listen } from '../../src/http/server.js';
import { nameRouteTemplate, recordRequestDuration } from '../../src/http/requestMetrics.js';
import { countLlmTokens, metricsRegistry } from '../../src/metrics/registry.js';
import type { RecordedRunEvent } from '../../src/runs/events.js';
import { countJournaled } from '../../src/runs/engine/runMetrics.js';
import { initialRunState } from '../../src/runs/state.js';
import { parseScrape } from '../support/prometheus.js';

const scrapeHere = async () => parseScrape(await metricsRegistry.metrics());

describe('metrics', () => {
  it('labels a request with the route template it matched, a template its handler named, or unmatched', async () => {
    const app = express();
    app.use(recordRequestDuration);
    app.get('/things/:id', (_req, res) => void res.json({}));
    app.use((req, res, next) => {
      if (req.path !== '/claimed/by/hand') return next();
      nameRouteTemplate(res, '/claimed/*');
      res.status(202).end();
    });
    const server = await listen(app, '127.0.0.1', 0);
    try {
      const before = await scrapeHere();
      for (const id of ['a1', 'b2', 'c3']) expect((await fetch(`${server.url}/things/${id}`)).status).to.equal(200);
      expect((await fetch(`${server.url}/claimed/by/hand`)).status).to.equal(202);
      expect((await fetch(`${server.url}/nowhere/42`)).status).to.equal(404);
      const after = await scrapeHere();
      const delta = (labels: Record<string, string>) =>
        after.histogramCount('svc_http_request_duration_seconds', labels) - before.histogramCount('svc_http_request_duration_seconds', labels);
      expect(delta({ method: 'GET', route: '/things/:id', status: '200' })).to.equal(3);
      expect(delta({ method: 'GET', route: '/claimed/*', status: '202' })).to.equal(1);
      expect(delta({ method: 'GET', route: 'unmatched', status: '404' })).to.equal(1);
      const routes = after.labelSets('svc_http_request_duration_seconds').map((labels) => labels.route);
      expect(routes.filter((route) => route?.includes('a1') || route?.includes('/nowhere'))).to.deep.equal([]);
    } finally {
      await server.close();
    }
  });

  it("counts a commit's finished steps by workflow and kind, and the run's end by workflow and status", async () => {
    const event = (type: string, engine: string, payload: object) => ({ type, data: { agent_id: 's', engine, payload } }) as unknown as RecordedRunEvent;
    const before = await scrapeHere();
    const state = { ...initialRunState, workflow: 'unit_flow', status: 'failed' } as typeof initialRunState;
    countJournaled(state, [
      event('step_started', 'APICall', {}),
      event('step_completed', 'APICall', { duration_ms: 1200 }),
      event('step_failed', 'Functional', { duration_ms: 3 }),
      event('run_failed', 'Workflow', {}),
    ]);
    const after = await scrapeHere();
    expect(
      after.value('svc_runs_total', { workflow: 'unit_flow', status: 'failed' }) - before.value('svc_runs_total', { workflow: 'unit_flow', status: 'failed' }),
    ).to.equal(1);
    expect(after.histogramCount('svc_step_duration_seconds', { workflow: 'unit_flow', kind: 'APICall' })).to.equal(1);
    expect(after.histogramCount('svc_step_duration_seconds', { workflow: 'unit_flow', kind: 'Functional' })).to.equal(1);
    expect(after.histogramCount('svc_step_duration_seconds', { workflow: 'unit_flow', kind: 'Workflow' })).to.equal(0);
  });

  it('never throws on a count a peer or an old event got wrong, and counts nothing of it', async () => {
    const before = await scrapeHere();
    const event = { type: 'step_completed', data: { agent_id: 's', engine: 'APICall', payload: {} } } as unknown as RecordedRunEvent;
    countJournaled({ ...initialRunState, workflow: 'odd_flow', status: 'running' } as typeof initialRunState, [event]);
    for (const tokens of [Number.NaN, -3, '12', undefined]) countLlmTokens('odd-model', 'input', tokens);
    countLlmTokens('odd-model', 'output', 7);
    const after = await scrapeHere();
    expect(after.histogramCount('svc_step_duration_seconds', { workflow: 'odd_flow' })).to.equal(0);
    expect(after.value('svc_llm_tokens_total', { model: 'odd-model', direction: 'input' })).to.equal(0);
    expect(
      after.value('svc_llm_tokens_total', { model: 'odd-model', direction: 'output' }) -
        before.value('svc_llm_tokens_total', { model: 'odd-model', direction: 'output' }),
    ).to.equal(7);
  });

  it('reads SVC_METRICS_PORT: unset or 0 is no port of its own, a port number is one, anything else a settings error', () => {
    const cwd = mkdtempSync(path.join(tmpdir(), 'svc-metrics-settings-'));
    expect(loadSettings({}, cwd).metricsPort).to.equal(null);
    expect(loadSettings({ SVC_METRICS_PORT: '0' }, cwd).metricsPort).to.equal(null);
    expect(loadSettings({ SVC_METRICS_PORT: '9464' }, cwd).metricsPort).to.equal(9464);
    expect(() => loadSettings({ SVC_METRICS_PORT: 'ninety' }, cwd)).to.throw(SettingsError, /SVC_METRICS_PORT/);
    expect(() => loadSettings({ SVC_METRICS_PORT: '70000' }, cwd)).to.throw(SettingsError, /SVC_METRICS_PORT/);
  });
});
