// The span of an HTTP request: opened when the request arrives (a `traceparent` it carries is its
// parent), named by the route template it matched once it is answered. Its context is entered after
// the body is parsed: the body parser resumes from the socket's own async context, not this one.
import { context, propagation, ROOT_CONTEXT, SpanKind, trace, type Span } from '@opentelemetry/api';
import type { RequestHandler, Response } from 'express';
import { withoutCredentials } from '../kernel/logger.js';
import { svcTracer, tracingEnabled } from '../tracing/tracer.js';
import { routeTemplateOf } from './requestMetrics.js';

const REQUEST_SPAN = 'svcRequestSpan';

/**
 * Opens the request's span, ended when the answer is sent or the connection closes. (Mounted while
 * tracing is on; tracing stopped since, it lets requests pass.)
 */
export const startRequestSpan: RequestHandler = (req, res, next) => {
  if (!tracingEnabled()) return next();
  const parent = propagation.extract(ROOT_CONTEXT, req.headers);
  const span = svcTracer().startSpan(
    req.method,
    {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': req.method,
        'url.path': withoutCredentials(req.path),
        'url.scheme': req.protocol,
        ...(req.headers['user-agent'] ? { 'user_agent.original': req.headers['user-agent'] } : {}),
      },
    },
    parent,
  );
  res.locals[REQUEST_SPAN] = span;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    const route = routeTemplateOf(req, res);
    if (route !== 'unmatched') {
      span.updateName(`${req.method} ${route}`);
      span.setAttribute('http.route', route);
    }
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: 2 /* SpanStatusCode.ERROR */ });
    span.end();
  };
  res.once('finish', end);
  res.once('close', end);
  context.with(trace.setSpan(parent, span), next);
};

/** Every later handler runs with the request's span active (after the body parsers). */
export const enterRequestSpan: RequestHandler = (_req, res, next) => {
  const span = requestSpanOf(res);
  if (!span) return next();
  context.with(trace.setSpan(context.active(), span), next);
};

function requestSpanOf(res: Response): Span | undefined {
  const span: unknown = res.locals[REQUEST_SPAN];
  return span === undefined ? undefined : (span as Span);
}
