// The request histogram: every answered request by method, the route template Express matched
// (never the raw URL, whose ids would make a series per run) and status.
import type { Request, RequestHandler } from 'express';
import { httpRequestDuration } from '../metrics/registry.js';

/** What a request matched: its router's mount path and route path; `unmatched` for a 404 of no route. */
export function routeTemplateOf(req: Request): string {
  const route: unknown = req.route;
  const path = typeof route === 'object' && route !== null && 'path' in route ? (route as { path: unknown }).path : undefined;
  if (typeof path === 'string') return `${req.baseUrl}${path}`;
  if (path instanceof RegExp) return `${req.baseUrl}${path.source}`;
  return 'unmatched';
}

export const recordRequestDuration: RequestHandler = (req, res, next) => {
  const stopTimer = httpRequestDuration.startTimer();
  res.once('finish', () => stopTimer({ method: req.method, route: routeTemplateOf(req), status: String(res.statusCode) }));
  next();
};
