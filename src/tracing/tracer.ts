// The one tracer of svc and whether it is on. Off (no SDK started), every helper here answers at
// once without creating a span: the hot paths (append, a run's steps) pay one boolean check.
import { context, propagation, ROOT_CONTEXT, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { SERVICE_VERSION } from '../kernel/version.js';

let enabled = false;

/** Whether spans are recorded and exported in this process (an OTLP endpoint is set). */
export function tracingEnabled(): boolean {
  return enabled;
}

/** Set by startTracing only. */
export function setTracingEnabled(on: boolean): void {
  enabled = on;
}

export function svcTracer(): Tracer {
  return trace.getTracer('svc', SERVICE_VERSION);
}

/** The W3C `traceparent` of a span's context (what the journal keeps), or undefined. */
export function traceparentOf(span: Span | undefined): string | undefined {
  if (!span || !trace.isSpanContextValid(span.spanContext())) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
  return carrier.traceparent;
}

/** The context a journaled `traceparent` names (a remote parent), or undefined for none or a malformed one. */
export function contextOfTraceparent(traceparent: unknown): Context | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const extracted = propagation.extract(ROOT_CONTEXT, { traceparent });
  return trace.getSpanContext(extracted) ? extracted : undefined;
}

/** Runs `work` with `span` as the active span (its callees' spans are its children). */
export function withSpan<T>(span: Span, work: () => T): T {
  return context.with(trace.setSpan(context.active(), span), work);
}

/** Ends `span` when `work` settles, recording an exception; `work` runs with the span active. */
export async function inSpan<T>(span: Span, work: () => Promise<T>): Promise<T> {
  try {
    return await withSpan(span, work);
  } catch (error) {
    recordFailure(span, error);
    throw error;
  } finally {
    span.end();
  }
}

export function recordFailure(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: 2 /* SpanStatusCode.ERROR */, message: error instanceof Error ? error.message : String(error) });
}
