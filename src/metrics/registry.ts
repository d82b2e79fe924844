// The series this process counts as work happens: defined here, low, so that the event store, the
// HTTP plumbing, the run engine and the LLM client can count without knowing how they are scraped.
// Gauges read from the database at scrape time live with the route, in the composition root.
import { Counter, Gauge, Histogram, register } from 'prom-client';

/** prom-client's default registry: the one its cluster aggregator asks every worker for. */
export const metricsRegistry = register;

export const httpRequestDuration = new Histogram({
  name: 'svc_http_request_duration_seconds',
  help: 'HTTP requests by method, matched route template (never the raw URL) and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
});

export const runsTotal = new Counter({
  name: 'svc_runs_total',
  help: "Runs that ended, by workflow and terminal status, counted where this process journaled the run's end",
  labelNames: ['workflow', 'status'] as const,
});

export const stepDuration = new Histogram({
  name: 'svc_step_duration_seconds',
  help: 'Steps this process journaled as completed or failed, from step_started to its end, by workflow and kind',
  labelNames: ['workflow', 'kind'] as const,
  buckets: [0.001, 0.005, 0.025, 0.1, 0.5, 1, 5, 30, 120, 600],
});

export const eventsAppended = new Counter({
  name: 'svc_events_appended_total',
  help: 'Events this process appended to the log, by stream type',
  labelNames: ['stream_type'] as const,
});

export const sseConnections = new Gauge({
  name: 'svc_sse_connections',
  help: 'Server-Sent Event streams open on this process',
});

export const listenReconnects = new Counter({
  name: 'svc_listen_reconnects_total',
  help: "Times this process's LISTEN connection for log wake-ups was restored after a loss",
});

export const llmTokens = new Counter({
  name: 'svc_llm_tokens_total',
  help: 'LLM tokens used by completions of this process, by model and direction (input, output)',
  labelNames: ['model', 'direction'] as const,
});

/** Adds the tokens a model server reported: anything but a finite count above 0 adds nothing (prom-client would throw). */
export function countLlmTokens(model: string, direction: 'input' | 'output', tokens: unknown): void {
  if (typeof tokens === 'number' && Number.isFinite(tokens) && tokens > 0) llmTokens.inc({ model, direction }, tokens);
}

/** Counts the recorded events of one commit by stream type. */
export function countAppended(events: readonly { streamType: string }[]): void {
  for (const event of events) eventsAppended.inc({ stream_type: event.streamType });
}

export const replicaReads = new Counter({
  name: 'svc_replica_reads_total',
  help: 'Reads that could use the read replica (SVC_READ_DATABASE_URL), by where they went (replica, primary) and why (current, waited, lagging, unavailable, missed)',
  labelNames: ['target', 'reason'] as const,
});
