// The client span of an outbound request (tracing on): the request carries its `traceparent`, so
// the called server's spans join the trace. It ends when the response's headers arrive.
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { withoutCredentials } from '../kernel/logger.js';
import { recordFailure, svcTracer } from '../tracing/tracer.js';

type Send = (url: string | URL, init: RequestInit | undefined) => Promise<Response>;

export async function tracedFetch(url: string | URL, init: RequestInit | undefined, send: Send): Promise<Response> {
  const target = new URL(url);
  const method = (init?.method ?? 'GET').toUpperCase();
  const span = svcTracer().startSpan(method, {
    kind: SpanKind.CLIENT,
    attributes: {
      'http.request.method': method,
      'url.full': fullUrl(target),
      'server.address': target.hostname,
      'server.port': Number(target.port) || (target.protocol === 'https:' ? 443 : 80),
    },
  });
  const headers = new Headers(init?.headers);
  propagation.inject(trace.setSpan(context.active(), span), headers, { set: (carrier, key, value) => carrier.set(key, value) });
  try {
    const response = await context.with(trace.setSpan(context.active(), span), () => send(url, { ...init, headers }));
    span.setAttribute('http.response.status_code', response.status);
    if (response.status >= 500) span.setStatus({ code: 2 /* SpanStatusCode.ERROR */ });
    return response;
  } catch (error) {
    recordFailure(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** The URL without its user and password, and with credentials in its query redacted. */
function fullUrl(url: URL): string {
  const shown = new URL(url);
  shown.username = '';
  shown.password = '';
  return withoutCredentials(shown.href);
}
