// Starting the OpenTelemetry SDK: a Node tracer provider exporting spans in batches over OTLP/HTTP
// (JSON), registered globally with the AsyncLocalStorage context manager and the W3C propagators.
// Nothing here runs, and the SDK is not even loaded (about 12 MB a process would hold), unless an
// OTLP endpoint is set.
import { context, propagation, trace } from '@opentelemetry/api';
import type { Logger } from '../kernel/logger.js';
import { SERVICE_VERSION } from '../kernel/version.js';
import type { TracingSettings } from './settings.js';
import { setTracingEnabled, tracingEnabled } from './tracer.js';

/** Stops the SDK after exporting what it holds; a no-op while tracing is off. */
export type StopTracing = () => Promise<void>;

/**
 * Starts tracing when `settings.tracesUrl` is set (once per process: a second start while one is on
 * leaves the first in place). Answers how to stop it.
 */
export async function startTracing(settings: TracingSettings, logger: Logger): Promise<StopTracing> {
  if (settings.tracesUrl === null || tracingEnabled()) return async () => undefined;
  const [
    { OTLPTraceExporter },
    { defaultResource, detectResources, envDetector, resourceFromAttributes },
    { BatchSpanProcessor, NodeTracerProvider },
    { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION },
  ] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/semantic-conventions'),
  ]);
  // Another start may have turned it on while these loaded.
  if (tracingEnabled()) return async () => undefined;
  // OTEL_RESOURCE_ATTRIBUTES (the env detector) adds to the resource; the service name set here wins.
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_SERVICE_VERSION]: SERVICE_VERSION }));
  const exporter = new OTLPTraceExporter({ url: settings.tracesUrl, headers: { ...settings.headers } });
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: settings.scheduleDelayMs })],
  });
  provider.register();
  setTracingEnabled(true);
  logger.info({ url: settings.tracesUrl, service: settings.serviceName }, 'tracing on: spans go over OTLP/HTTP');
  return async () => {
    setTracingEnabled(false);
    await provider.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'exporting the last spans failed'));
    trace.disable();
    context.disable();
    propagation.disable();
  };
}
