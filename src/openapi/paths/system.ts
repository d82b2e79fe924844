// The system routes: health, registry, workflow manifests, OpenAPI and doc pages.
// shape: OpenAPI operation tables: one function per route family reads as the API does; splitting them would scatter it.
import { anyObject, operation, ref, type PathItem } from '../builders.js';

export function systemPaths(): Record<string, PathItem> {
  const tags = ['System'];
  return {
    '/health': {
      get: operation({
        operationId: 'health',
        summary: 'Liveness and database',
        tags,
        isPublic: true,
        ok: { status: 200, description: 'Healthy', schema: ref('Health') },
        extraResponses: { 503: { description: 'The database does not answer', content: { 'application/json': { schema: ref('Health') } } } },
      }),
    },
    '/metrics': {
      get: operation({
        operationId: 'metrics',
        summary: 'Prometheus metrics of every worker',
        description:
          'The Prometheus text exposition format (prom-client): the series docs/operations.md "Metrics" lists. With `SVC_METRICS_PORT` set, the same answer is served without a token on that port.',
        tags,
        scope: 'metrics:read',
        ok: { status: 200, description: 'Prometheus text format, version 0.0.4', schema: { type: 'string' }, contentType: 'text/plain' },
        errors: [403],
      }),
    },
    '/registry': {
      get: operation({
        operationId: 'registry',
        summary: 'Loaded workflows, models, artifacts, federation providers and agent models',
        tags,
        scope: 'iam:admin',
        deploymentAdmin: true,
        ok: { status: 200, description: 'Each entry with name, version and enabled', schema: ref('Registry') },
        errors: [403],
      }),
    },
    '/api/_system/workflows': {
      get: operation({
        operationId: 'listManifests',
        summary: 'Workflow manifests by name',
        tags,
        ok: { status: 200, description: 'Manifests without name and steps', schema: { type: 'object', additionalProperties: anyObject } },
      }),
    },
    '/api/_system/workflows/{name}': {
      get: operation({
        operationId: 'getManifest',
        summary: 'A workflow manifest',
        tags,
        path: ['name'],
        ok: { status: 200, description: 'The manifest', schema: ref('WorkflowManifest') },
        errors: [404],
      }),
    },
    '/openapi.json': {
      get: operation({
        operationId: 'openapi',
        summary: 'This document',
        tags,
        isPublic: true,
        ok: { status: 200, description: 'OpenAPI 3.1', schema: anyObject },
      }),
    },
  };
}
