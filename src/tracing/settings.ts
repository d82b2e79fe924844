// What starting the tracer needs, as src/config/ reads it from the standard OTEL_* settings.

export interface TracingSettings {
  /** Where spans go (OTLP over HTTP, JSON); null: tracing is off and no SDK starts. */
  readonly tracesUrl: string | null;
  /** Headers sent with every export (OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TRACES_HEADERS). */
  readonly headers: Readonly<Record<string, string>>;
  readonly serviceName: string;
  /** How long the batch span processor waits before it exports what it holds (OTEL_BSP_SCHEDULE_DELAY). */
  readonly scheduleDelayMs: number;
}
