// GET /openapi.json: an OpenAPI 3.1 document of the routes mounted now (it follows toggles).
import type { OpenAPIV3_1 } from 'openapi-types';
import { SERVICE_VERSION } from '../kernel/version.js';
import type { ModelRegistry } from '../models/registry.js';
import type { WorkflowRegistry } from '../workflows/registry.js';
import type { PathItem, Schema } from './builders.js';
import { components } from './components.js';
import { modelPaths, workflowPaths } from './paths/project.js';
import { federationAdminPaths, oauthPaths } from './paths/federation.js';
import { authPaths, iamPaths } from './paths/auth.js';
import { artifactPaths, versionPaths } from './paths/definitions.js';
import { approvalPaths, runPaths } from './paths/runs.js';
import { systemPaths } from './paths/system.js';
import { schedulePaths } from './paths/schedules.js';
import { auditPaths } from './paths/audit.js';
import { privacyPaths } from './paths/privacy.js';

export interface OpenApiSources {
  workflows: WorkflowRegistry;
  models: ModelRegistry;
  crudEnabled: boolean;
}

export function buildOpenApi({ workflows, models, crudEnabled }: OpenApiSources): OpenAPIV3_1.Document {
  const schemas: Record<string, Schema> = {};
  const paths: Record<string, PathItem> = {
    ...systemPaths(),
    ...authPaths(),
    ...oauthPaths(),
    ...iamPaths(),
    ...federationAdminPaths(),
    ...workflowPaths(workflows, models, schemas),
    ...runPaths(),
    ...approvalPaths(),
    ...artifactPaths(),
    ...versionPaths(),
    ...schedulePaths(),
    ...auditPaths(),
    ...privacyPaths(),
    ...(crudEnabled ? modelPaths(models, schemas) : {}),
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'svc',
      version: SERVICE_VERSION,
      description:
        'Event-sourced workflow and model service. Errors outside triggers and validation are `{detail, code}`; request validation is 422 `{detail: [{loc, msg, type}]}`; failed runs answer the workflow envelope. With a read replica (SVC_READ_DATABASE_URL) every write answers `X-Svc-Lsn`; send the highest one received back as `X-Svc-Lsn` on later requests and no read answers older than that write.',
    },
    security: [{ bearer: [] }],
    // openapi-types cannot express 3.1 operations in PathsObject (see PathItem).
    paths: paths as unknown as OpenAPIV3_1.PathsObject,
    components: { ...components, schemas: { ...components.schemas, ...schemas } },
  };
}
