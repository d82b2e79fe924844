// The artifact and version administration route families.
// shape: OpenAPI operation tables: one function per route family reads as the API does; splitting them would scatter it.
import type { OpenAPIV3_1 } from 'openapi-types';
import { anyObject, bool, object, operation, ref, str, strings, type PathItem } from '../builders.js';

export function artifactPaths(): Record<string, PathItem> {
  const tags = ['Artifacts'];
  const description =
    "The project's files (shared by every tenant) and the uploads of the caller's tenant: another tenant's upload is 404 and never listed, and an upload adds a version to the caller's tenant's artifact only.";
  return {
    '/api/artifacts': {
      get: operation({
        operationId: 'listArtifacts',
        summary: 'Every artifact with its versions',
        tags,
        scope: 'artifacts:read',
        description,
        ok: { status: 200, description: 'Artifacts', schema: { type: 'array', items: anyObject } },
        errors: [403],
      }),
      post: operation({
        operationId: 'uploadArtifact',
        summary: 'Upload a new version (never an overwrite; 512 KB at most)',
        tags,
        scope: 'artifacts:write',
        description,
        body: object(
          {
            name: str,
            type: { type: 'string', enum: ['prompt', 'steering', 'skill', 'guardrail', 'hook', 'mcp'] },
            content: { oneOf: [str, anyObject] },
            description: str,
          },
          ['name', 'type', 'content'],
        ),
        ok: { status: 201, description: 'The new version', schema: ref('Artifact') },
        errors: [400, 403, 409, 413],
      }),
    },
    '/api/artifacts/{name}': {
      get: operation({
        operationId: 'getArtifact',
        summary: 'Content and hash of a version (the latest by default)',
        tags,
        scope: 'artifacts:read',
        description,
        path: ['name'],
        query: [{ name: 'version', schema: str }],
        ok: { status: 200, description: 'The artifact', schema: ref('Artifact') },
        errors: [403, 404],
      }),
    },
  };
}

export function versionPaths(): Record<string, PathItem> {
  const tags = ['Version admin'];
  const scope = 'iam:admin';
  const family = (kind: 'workflows' | 'models', record: OpenAPIV3_1.SchemaObject): Record<string, PathItem> => ({
    [`/admin/${kind}`]: {
      get: operation({
        operationId: `list${kind}Versions`,
        summary: `Every ${kind.slice(0, -1)} version`,
        tags,
        scope,
        deploymentAdmin: true,
        ok: { status: 200, description: 'Versions by name', schema: { type: 'object', additionalProperties: { type: 'array', items: record } } },
        errors: [403],
      }),
    },
    [`/admin/${kind}/{name}/{version}/toggle`]: {
      patch: operation({
        operationId: `toggle${kind}Version`,
        summary: 'Flip enabled (takes effect at once)',
        tags,
        scope,
        deploymentAdmin: true,
        path: ['name', 'version'],
        ok: { status: 200, description: 'The new flag', schema: ref('VersionToggle') },
        errors: [403, 404],
      }),
    },
    [`/admin/${kind}/{name}/{version}/fork`]: {
      post: operation({
        operationId: `fork${kind}Version`,
        summary: 'Copy a version into a new file (starts disabled)',
        tags,
        scope,
        deploymentAdmin: true,
        path: ['name', 'version'],
        body: object({ new_version: str }, ['new_version']),
        ok: { status: 200, description: 'The fork', schema: ref('VersionFork') },
        errors: [400, 403, 404, 409],
      }),
    },
  });
  return {
    ...family('workflows', object({ schema_version: str, enabled: bool, trigger_path: str, trigger_method: str, description: { type: ['string', 'null'] } })),
    ...family(
      'models',
      object({ schema_version: str, enabled: bool, tablename: str, datasource: str, fields: strings, description: { type: ['string', 'null'] } }),
    ),
    '/admin/scopes': {
      get: operation({
        operationId: 'listScopes',
        summary: 'Every enforceable scope by source',
        tags,
        scope,
        deploymentAdmin: true,
        ok: { status: 200, description: 'Scopes', schema: object({ crud: anyObject, workflows: anyObject, system: strings, crud_api_enabled: bool }) },
        errors: [403],
      }),
    },
  };
}
