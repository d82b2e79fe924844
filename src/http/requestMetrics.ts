// The request histogram: every answered request by method, the route template Express matched
// (never the raw URL, whose ids would make a series per run) and status.
import type { Request, RequestHandler, Response } from 'express';
import { httpRequestDuration } from '../metrics/registry.js';

const ROUTE_TEMPLATE = 'svcRouteTemplate';

/** For a handler that matches paths itself (router.use): the template it served, in place of Express's. */
export function nameRouteTemplate(res: Response, template: string): void {
  res.locals[ROUTE_TEMPLATE] = template;
}

/**
 * What a request matched: a template a handler named, else its router's mount path and route path;
 * `unmatched` for a request no route template took (a 404, static pages, gRPC-Web).
 */
export function routeTemplateOf(req: Request, res: Response): string {
  const named: unknown = res.locals[ROUTE_TEMPLATE];
  if (typeof named === 'string') return named;
  const route: unknown = req.route;
  const path = typeof route === 'object' && route !== null && 'path' in route ? (route as { path: unknown }).path : undefined;
  if (typeof path === 'string') return `${req.baseUrl}${path}`;
  if (path instanceof RegExp) return `${req.baseUrl}${path.source}`;
  return 'unmatched';
}

/** When the response's request arrived (performance.now()): a field, not a timer closure per request. */
const STARTED_AT = Symbol('svc.requestStartedAt');
type TimedResponse = Response & { [STARTED_AT]?: number };

// One listener for every response ('finish' fires once): a stream held open for hours keeps no closure for it.
function observeDuration(this: TimedResponse): void {
  const startedAt = this[STARTED_AT];
  if (startedAt === undefined) return;
  const { req } = this;
  httpRequestDuration.observe(
    { method: req.method, route: routeTemplateOf(req, this), status: String(this.statusCode) },
    (performance.now() - startedAt) / 1000,
  );
}

export const recordRequestDuration: RequestHandler = (_req, res, next) => {
  (res as TimedResponse)[STARTED_AT] = performance.now();
  res.on('finish', observeDuration);
  next();
};
