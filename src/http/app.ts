// The express application: request ids and logs, JSON bodies, feature routers, the error map.
import { randomUUID } from 'node:crypto';
import express, { type RequestHandler, type Router } from 'express';
import { pinoHttp } from 'pino-http';
import { refuseUnsafeJson } from '../kernel/json.js';
import type { pino } from 'pino';
import { queryWithoutCredentials, withoutCredentials, type Logger } from '../kernel/logger.js';
import { enterRequestCausation } from './context.js';
import { errorHandler, notFoundHandler } from './errors.js';
import { parseQueryString } from './queryString.js';
import { recordRequestDuration } from './requestMetrics.js';
import { enterRequestSpan, startRequestSpan } from './requestTracing.js';
import { tracingEnabled } from '../tracing/tracer.js';
import { apiSecurityHeaders } from './securityHeaders.js';
import type { TrustProxy } from '../config/settingTypes.js';

export interface AppOptions {
  logger: Logger;
  bodyLimitBytes: number;
  /** Express's `trust proxy` (SVC_TRUST_PROXY): whose X-Forwarded-For makes `req.ip`; none by default. */
  trustProxy?: TrustProxy;
  routers: Router[];
}

const REQUEST_ID_PATTERN = /^[\w.\-:]{1,128}$/;

/**
 * Every parsed body, before any route: too deep, a prototype key or text PostgreSQL cannot store is
 * refused here, on every route alike. JSON.parse itself does not recurse; this check does not either.
 */
const refuseUnsafeBody: RequestHandler = (req, _res, next) => {
  if (req.body !== undefined) refuseUnsafeJson(req.body, 'body');
  next();
};

export function createApp({ logger, bodyLimitBytes, trustProxy = false, routers }: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', trustProxy);
  app.set('query parser', parseQueryString);
  // Off, the request passes no tracing handler at all.
  if (tracingEnabled()) app.use(startRequestSpan);
  app.use(recordRequestDuration);
  app.use(apiSecurityHeaders);
  app.use(
    pinoHttp({
      logger,
      genReqId: (req, res) => {
        const incoming = req.headers['x-request-id'];
        const id = typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'info' : 'debug'),
      autoLogging: { ignore: (req) => req.url === '/health' },
      // No log line carries a credential from a URL: request URLs and queries, redirect Locations.
      serializers: {
        req: (req: pino.SerializedRequest) => ({ ...req, url: withoutCredentials(req.url), query: queryWithoutCredentials(req.query ?? {}) }),
        res: (res: pino.SerializedResponse) => {
          const location = res.headers?.location;
          return typeof location === 'string' ? { ...res, headers: { ...res.headers, location: withoutCredentials(location) } } : res;
        },
      },
    }),
  );
  // strict: false: a well-formed JSON scalar or null reaches the route, whose validation answers 422 (not "Malformed JSON").
  app.use(express.json({ strict: false, limit: bodyLimitBytes, type: ['application/json', 'application/*+json'] }));
  app.use(express.urlencoded({ extended: false, limit: bodyLimitBytes }));
  app.use(refuseUnsafeBody);
  if (tracingEnabled()) app.use(enterRequestSpan);
  app.use(enterRequestCausation);
  for (const router of routers) app.use(router);
  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}
