// GET /metrics: the route on the main port (metrics:read or iam:admin), the port of its own
// (SVC_METRICS_PORT, no token), and the gauges read from the database at scrape time.
import express, { Router, type RequestHandler } from 'express';
import { Gauge } from 'prom-client';
import type { Queryable } from '../db/pool.js';
import type { HorizonWatch } from '../eventstore/index.js';
import type { Authenticator } from '../http/authenticator.js';
import { listen, type HttpServer } from '../http/server.js';
import { METRICS_READ_SCOPE } from '../kernel/access.js';
import { metricsRegistry } from '../metrics/registry.js';
import { prepareMetrics, scrapeMetrics } from '../metrics/scrape.js';
import { projectionLags, type ProjectionRegistry } from '../projections/index.js';
import { countActiveRuns } from '../runs/queries.js';

/** What the scrape-time gauges read: the database and this process's horizon watch. */
export interface ScrapeSource {
  readonly db: Queryable;
  readonly projections: ProjectionRegistry;
  readonly horizon: HorizonWatch;
}

// Several services may share one process (tests): the gauges exist once and read the newest one.
let source: ScrapeSource | undefined;
let isRegistered = false;

/**
 * Every worker reads the same database: in a cluster scrape the aggregator keeps one worker's
 * answer ('first') instead of summing N copies; the horizon takes the oldest any worker saw ('max').
 */
function registerScrapeGauges(): void {
  if (isRegistered) return;
  isRegistered = true;
  new Gauge({
    name: 'svc_runs_active',
    help: 'Runs not ended yet, by workflow and status (read from svc_runs at scrape time)',
    labelNames: ['workflow', 'status'] as const,
    registers: [metricsRegistry],
    aggregator: 'first',
    async collect() {
      this.reset();
      if (!source) return;
      for (const row of await countActiveRuns(source.db)) this.set({ workflow: row.workflow, status: row.status }, row.runs);
    },
  });
  new Gauge({
    name: 'svc_projection_lag_seconds',
    help: 'How far each read model is behind the log (0 while current: projections apply in the append transaction)',
    labelNames: ['projection'] as const,
    registers: [metricsRegistry],
    aggregator: 'first',
    async collect() {
      this.reset();
      if (!source) return;
      for (const lag of await projectionLags(source.db, source.projections)) this.set({ projection: lag.name }, lag.lagSeconds);
    },
  });
  new Gauge({
    name: 'svc_log_horizon_age_seconds',
    help: 'Age of the oldest open transaction holding committed events back from readers of the whole log (0: none)',
    registers: [metricsRegistry],
    aggregator: 'max',
    collect() {
      this.set(source ? source.horizon.heldBackSeconds() : 0);
    },
  });
}

/** Readies this process's series and points the scrape-time gauges at this service. */
export function startMetrics(scrapeSource: ScrapeSource): () => void {
  prepareMetrics();
  registerScrapeGauges();
  source = scrapeSource;
  return () => {
    if (source === scrapeSource) source = undefined;
  };
}

const answerScrape: RequestHandler = async (_req, res) => {
  const scrape = await scrapeMetrics();
  res.setHeader('Content-Type', scrape.contentType);
  res.send(scrape.text);
};

/**
 * @example
 * app.use(metricsRouter({ authenticator }));
 */
export function metricsRouter({ authenticator }: { authenticator: Authenticator }): Router {
  const router = Router();
  router.get('/metrics', authenticator.require({ scope: METRICS_READ_SCOPE }), answerScrape);
  return router;
}

/** SVC_METRICS_PORT: GET /metrics and nothing else, without a token, on HOST. */
export async function listenForScrapes(host: string, port: number): Promise<HttpServer> {
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', answerScrape);
  app.use((_req, res) => {
    res.status(404).type('text/plain').send('only GET /metrics is served here\n');
  });
  // A cluster primary that did not answer, a database that did not: the scraper tries again.
  app.use(((error, _req, res, _next) => {
    res
      .status(503)
      .type('text/plain')
      .send(`metrics unavailable: ${error instanceof Error ? error.message : String(error)}\n`);
  }) satisfies express.ErrorRequestHandler);
  return listen(app, host, port);
}
