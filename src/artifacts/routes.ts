// /api/artifacts: list (artifacts:read), read with content and hash (artifacts:read), upload (artifacts:write);
// each sees the project files and the uploads of the caller's tenant only.
import { Router, type Request } from 'express';
import type { Authenticator } from '../http/authenticator.js';
import { requestMetadata } from '../http/context.js';
import { NotFoundError } from '../kernel/errors.js';
import type { JsonValue } from '../kernel/json.js';
import { compileValidator } from '../kernel/validation.js';
import { ARTIFACT_TYPES, type Artifact, type ArtifactType } from './artifact.js';
import type { ArtifactCatalog } from './catalog.js';

const uploadBody = compileValidator<{ name: string; type: ArtifactType; content: JsonValue; description?: string }>({
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 128 },
    type: { enum: [...ARTIFACT_TYPES] },
    content: { anyOf: [{ type: 'string' }, { type: 'object' }] },
    description: { type: 'string', maxLength: 2000 },
  },
  required: ['name', 'type', 'content'],
  additionalProperties: false,
});
const readQuery = compileValidator<{ version?: string }>(
  { type: 'object', properties: { version: { type: 'string', maxLength: 32 } }, additionalProperties: false },
  'query',
);

export function presentArtifact(artifact: Artifact) {
  return {
    name: artifact.name,
    version: artifact.version,
    type: artifact.type,
    source: artifact.source,
    description: artifact.description,
    hash: artifact.hash,
    created_at: artifact.createdAt,
    content: artifact.content,
  };
}

export function artifactRouter(deps: { catalog: ArtifactCatalog; authenticator: Authenticator }): Router {
  const { catalog, authenticator } = deps;
  const router = Router();

  const tenantOf = (req: Request) => req.principal!.tenant ?? null;

  router.get('/api/artifacts', authenticator.require({ scope: 'artifacts:read' }), async (req, res) => {
    res.json(await catalog.list(tenantOf(req)));
  });

  router.get('/api/artifacts/:name', authenticator.require({ scope: 'artifacts:read' }), async (req, res) => {
    const { version } = readQuery.parse(req.query);
    const artifact = await catalog.get(tenantOf(req), String(req.params.name), version);
    if (!artifact) throw new NotFoundError(`Artifact ${req.params.name}${version ? ` version ${version}` : ''} not found`);
    res.json(presentArtifact(artifact));
  });

  router.post('/api/artifacts', authenticator.require({ scope: 'artifacts:write' }), async (req, res) => {
    const body = uploadBody.parse(req.body ?? {});
    const artifact = await catalog.upload(tenantOf(req), body, requestMetadata(req));
    res.status(201).json(presentArtifact(artifact));
  });

  return router;
}
