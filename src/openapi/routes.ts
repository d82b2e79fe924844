// /openapi.json, Swagger UI at /docs and ReDoc at /redoc, all served from local packages (no CDN).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import express, { Router } from 'express';
import swaggerUi from 'swagger-ui-express';
import { pageSecurityHeaders } from '../http/securityHeaders.js';
import { buildOpenApi, type OpenApiSources } from './document.js';

const require = createRequire(import.meta.url);
const REDOC_BUNDLE_FILE = require.resolve('redoc/bundles/redoc.standalone.js');
const REDOC_BUNDLES = path.dirname(REDOC_BUNDLE_FILE);
// The bundle's sidebar badge loads its logo from cdn.redoc.ly; an empty data: URL keeps the page offline
// (the badge hides its image when it fails to load).
const REDOC_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

const REDOC_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>svc API (ReDoc)</title><meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><redoc spec-url="/openapi.json"></redoc><script src="/redoc/redoc.standalone.js"></script></body>
</html>`;

export function docsRouter(sources: OpenApiSources): Router {
  const router = Router();
  router.get('/openapi.json', (_req, res) => {
    res.json(buildOpenApi(sources));
  });
  router.use(['/docs', '/redoc'], pageSecurityHeaders);
  router.use('/docs', swaggerUi.serve);
  router.get('/docs', swaggerUi.setup(undefined, { customSiteTitle: 'svc API', swaggerOptions: { url: '/openapi.json', persistAuthorization: true } }));
  router.get('/redoc', (_req, res) => {
    res.type('html').send(REDOC_PAGE);
  });
  const bundle = readFileSync(REDOC_BUNDLE_FILE, 'utf8').replaceAll(REDOC_LOGO, 'data:,');
  router.get('/redoc/redoc.standalone.js', (_req, res) => {
    res.type('js').setHeader('Cache-Control', 'public, max-age=3600').send(bundle);
  });
  router.use('/redoc', express.static(REDOC_BUNDLES, { index: false, maxAge: '1h' }));
  return router;
}
