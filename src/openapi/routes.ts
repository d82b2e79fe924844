// /openapi.json, Swagger UI at /docs and ReDoc at /redoc, all served from local packages (no CDN).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Router, type RequestHandler } from 'express';
import swaggerUi from 'swagger-ui-express';
import { pageSecurityHeaders } from '../http/securityHeaders.js';
import { NotFoundError } from '../kernel/errors.js';
import { buildOpenApi, type OpenApiSources } from './document.js';

const require = createRequire(import.meta.url);
const REDOC_BUNDLE_FILE = require.resolve('redoc/bundles/redoc.standalone.js');
// The bundle's sidebar badge loads its logo from cdn.redoc.ly; an empty data: URL keeps the page offline
// (the badge hides its image when it fails to load).
const REDOC_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

const REDOC_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>svc API (ReDoc)</title><meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><redoc spec-url="/openapi.json"></redoc><script src="/redoc/redoc.standalone.js"></script></body>
</html>`;

/**
 * The files Swagger UI's page loads (swagger-ui-express's HTML): nothing else of the package's folder
 * (its README, source maps, Node files, sample index page) is served (ASVS 13.4.7).
 */
const SWAGGER_UI_FILES = new Set([
  '/swagger-ui.css',
  '/swagger-ui-bundle.js',
  '/swagger-ui-standalone-preset.js',
  '/swagger-ui-init.js',
  '/favicon-32x32.png',
  '/favicon-16x16.png',
]);

const onlySwaggerUiFiles: RequestHandler = (req, _res, next) => {
  if (req.path !== '/' && !SWAGGER_UI_FILES.has(req.path)) throw new NotFoundError(`No docs file ${req.path}`);
  next();
};

export function docsRouter(sources: OpenApiSources): Router {
  const router = Router();
  router.get('/openapi.json', (_req, res) => {
    res.json(buildOpenApi(sources));
  });
  router.use(['/docs', '/redoc'], pageSecurityHeaders);
  router.use('/docs', onlySwaggerUiFiles, swaggerUi.serve);
  router.get('/docs', swaggerUi.setup(undefined, { customSiteTitle: 'svc API', swaggerOptions: { url: '/openapi.json', persistAuthorization: true } }));
  router.get('/redoc', (_req, res) => {
    res.type('html').send(REDOC_PAGE);
  });
  // Read at its first request, not at boot: 2 MB a process would otherwise hold whether or not anyone opens /redoc.
  let bundle: string | undefined;
  router.get('/redoc/redoc.standalone.js', (_req, res) => {
    bundle ??= readFileSync(REDOC_BUNDLE_FILE, 'utf8').replaceAll(REDOC_LOGO, 'data:,');
    res.type('js').setHeader('Cache-Control', 'public, max-age=3600').send(bundle);
  });
  return router;
}
