// The fixed route families: auth, IAM admin, runs, approvals, artifacts, version admin, system.
import type { OpenAPIV3_1 } from 'openapi-types';
import { anyObject, bool, object, operation, ref, str, strings, type PathItem } from './builders.js';

const page = [
  { name: 'limit', schema: { type: 'integer' as const, minimum: 1, maximum: 1000 } },
  { name: 'offset', schema: { type: 'integer' as const, minimum: 0 } },
];
const list = (item: string): OpenAPIV3_1.SchemaObject => ({ type: 'array', items: ref(item) });
const sse = { status: 200, description: 'Server-Sent Events: `id: <seq>`, `event: <type>`, `data: <run event JSON>`', schema: { type: 'string' as const }, contentType: 'text/event-stream' };

export function authPaths(): Record<string, PathItem> {
  const tags = ['Auth'];
  return {
    '/auth/bootstrap': {
      post: operation({
        operationId: 'bootstrap', summary: 'Create the first user (superadmin); only while no user exists', tags, isPublic: true,
        body: object({ email: str, password: str, tenant: str }, ['email', 'password']),
        ok: { status: 200, description: 'The first user and a token', schema: { allOf: [ref('TokenResponse'), object({ message: str, user_id: str })] } },
        errors: [400, 409],
      }),
    },
    '/auth/token': {
      post: operation({
        operationId: 'login', summary: 'Password login (OAuth 2.0 password grant)', tags, isPublic: true,
        body: object({ username: { type: 'string', description: 'email or phone number' }, password: str, grant_type: { type: 'string', const: 'password' } }, ['username', 'password']),
        bodyType: 'application/x-www-form-urlencoded',
        ok: { status: 200, description: 'A token', schema: ref('TokenResponse') },
        errors: [400],
        extraResponses: { 401: { description: 'Generic failure (unknown user and wrong password alike)', content: { 'application/json': { schema: ref('Error') } } } },
      }),
    },
    '/auth/me': { get: operation({ operationId: 'me', summary: 'Who the token is', tags, ok: { status: 200, description: 'Identity', schema: ref('Identity') } }) },
    '/auth/refresh': { post: operation({ operationId: 'refresh', summary: 'Revoke this token and mint one with current roles', tags, ok: { status: 200, description: 'A new token', schema: ref('TokenResponse') }, errors: [400] }) },
    '/auth/logout': { post: operation({ operationId: 'logout', summary: 'Revoke this token', tags, ok: { status: 204, description: 'Revoked' }, errors: [400] }) },
    '/auth/jwks.json': { get: operation({ operationId: 'jwks', summary: 'The public key set (OKP / Ed25519)', tags, isPublic: true, ok: { status: 200, description: 'JWKS', schema: object({ keys: { type: 'array', items: anyObject } }, ['keys']) } }) },
  };
}

export function iamPaths(): Record<string, PathItem> {
  const tags = ['IAM admin'];
  const scope = 'iam:admin';
  const userBody = object({ email: str, password: str, phone_number: { type: ['string', 'null'] }, tenant: str }, ['email', 'password']);
  const reach = "With `SVC_TENANT_IDS`, a tenant admin (`iam:admin` without the `superadmin` group) reaches only its own tenant's users who do not hold `superadmin`: any other user is 404 to it.";
  const superadminRule = `${reach} Assigning or removing \`superadmin\` is for deployment admins (403).`;
  return {
    '/auth/admin/users': {
      get: operation({ operationId: 'listUsers', summary: 'List users', tags, scope, description: reach, query: page, ok: { status: 200, description: 'Users', schema: list('User') }, errors: [403] }),
      post: operation({ operationId: 'createUser', summary: 'Create a user', tags, scope, description: 'With `SVC_TENANT_IDS`, `tenant` places the user (default: the caller\'s tenant); a tenant admin naming another tenant gets 403.', body: userBody, ok: { status: 201, description: 'The user', schema: ref('User') }, errors: [400, 403, 409] }),
    },
    '/auth/admin/users/{user_id}': {
      get: operation({ operationId: 'getUser', summary: 'One user', tags, scope, description: reach, path: ['user_id'], ok: { status: 200, description: 'The user', schema: ref('User') }, errors: [403, 404] }),
      patch: operation({
        operationId: 'updateUser', summary: 'Change email, password, phone number or is_active (password and deactivation end sessions)', tags, scope, description: reach, path: ['user_id'],
        body: object({ email: str, password: str, is_active: bool, phone_number: { type: ['string', 'null'] } }),
        ok: { status: 200, description: 'The user', schema: ref('User') }, errors: [400, 403, 404, 409],
      }),
      delete: operation({ operationId: 'deleteUser', summary: 'Delete a user (ends their sessions)', tags, scope, description: reach, path: ['user_id'], ok: { status: 204, description: 'Deleted' }, errors: [403, 404] }),
    },
    '/auth/admin/roles': {
      get: operation({ operationId: 'listRoles', summary: 'List roles', tags, scope, ok: { status: 200, description: 'Roles', schema: list('Role') }, errors: [403] }),
      post: operation({ operationId: 'createRole', summary: 'Create a role', tags, scope, deploymentAdmin: true, body: object({ name: str, description: str, scopes: strings }, ['name']), ok: { status: 201, description: 'The role', schema: ref('Role') }, errors: [400, 403, 409] }),
    },
    '/auth/admin/roles/{role_id}': {
      delete: operation({ operationId: 'deleteRole', summary: 'Delete a role (holders lose it; their sessions end)', tags, scope, deploymentAdmin: true, path: ['role_id'], ok: { status: 204, description: 'Deleted' }, errors: [403, 404] }),
    },
    '/auth/admin/roles/{role_id}/scopes': {
      patch: operation({ operationId: 'changeRoleScopes', summary: 'Add and remove scopes atomically', tags, scope, deploymentAdmin: true, path: ['role_id'], body: object({ add: strings, remove: strings }), ok: { status: 200, description: 'The role', schema: ref('Role') }, errors: [400, 403, 404] }),
    },
    '/auth/admin/users/{user_id}/roles/{role_id}': {
      post: operation({ operationId: 'assignRole', summary: 'Assign a role', tags, scope, description: superadminRule, path: ['user_id', 'role_id'], ok: { status: 200, description: 'The user', schema: ref('User') }, errors: [403, 404] }),
      delete: operation({ operationId: 'revokeRole', summary: 'Revoke a role (ends the user\'s sessions)', tags, scope, description: superadminRule, path: ['user_id', 'role_id'], ok: { status: 200, description: 'The user', schema: ref('User') }, errors: [403, 404] }),
    },
  };
}

export function runPaths(): Record<string, PathItem> {
  const tags = ['Runs'];
  const control = (action: string, body?: OpenAPIV3_1.SchemaObject) =>
    operation({
      operationId: `${action}Run`, summary: `${action[0]!.toUpperCase()}${action.slice(1)} a run`, tags, scope: 'runs:control', path: ['id'],
      description: 'Control needs read access too: a run the caller cannot read (another user\'s without `iam:admin`, another tenant\'s) is the 404 `GET /api/runs/{id}` answers, and nothing is done.',
      ...(body ? { body } : {}), ok: { status: 200, description: 'The run', schema: ref('Run') }, errors: [403, 404, 409],
    });
  return {
    '/api/runs': {
      get: operation({
        operationId: 'listRuns', summary: "The caller's runs (every run for iam:admin)", tags,
        query: [...page, { name: 'workflow', schema: str }, { name: 'status', schema: str }],
        ok: { status: 200, description: 'Runs, newest first', schema: list('Run') },
      }),
    },
    '/api/runs/{id}': { get: operation({ operationId: 'getRun', summary: 'A run', tags, path: ['id'], ok: { status: 200, description: 'The run', schema: ref('Run') }, errors: [404] }) },
    '/api/runs/{id}/events': {
      get: operation({
        operationId: 'runEvents', summary: 'The journal over SSE: replay, then live; resume with Last-Event-ID or from_seq', tags, scope: 'runs:read', path: ['id'],
        query: [{ name: 'from_seq', schema: { type: 'integer', minimum: 0 } }, { name: 'follow', schema: { type: 'boolean' }, description: 'false: end after the replay' }],
        ok: sse, errors: [400, 403, 404],
      }),
    },
    '/api/runs/{id}/export': {
      get: operation({
        operationId: 'exportRun', summary: 'Export a run (svc.run/v1)', tags, scope: 'runs:read', path: ['id'],
        ok: { status: 200, description: 'The export', schema: object({ format: { type: 'string', const: 'svc.run/v1' }, run: ref('Run'), workflow: anyObject, events: list('RunEvent') }, ['format', 'run', 'workflow', 'events']) },
        errors: [403, 404],
      }),
    },
    '/api/runs/{id}/pause': { post: control('pause') },
    '/api/runs/{id}/resume': { post: control('resume') },
    '/api/runs/{id}/abort': { post: control('abort', object({ reason: str })) },
    '/api/runs/{id}/steer': { post: control('steer', object({ message: str }, ['message'])) },
  };
}

export function approvalPaths(): Record<string, PathItem> {
  const tags = ['Approvals'];
  const scope = 'approvals:decide';
  return {
    '/api/approvals': { get: operation({ operationId: 'listApprovals', summary: 'Pending approvals the caller may decide', tags, scope, ok: { status: 200, description: 'Approvals', schema: list('Approval') }, errors: [403] }) },
    '/api/approvals/{id}': {
      post: operation({ operationId: 'decideApproval', summary: 'Decide an approval (exactly one decision wins)', tags, scope, path: ['id'], body: ref('Decision'), ok: { status: 200, description: 'The decided approval', schema: ref('Approval') }, errors: [400, 403, 404, 409] }),
    },
    '/api/runs/{id}/human/{agent_id}': {
      post: operation({ operationId: 'answerHuman', summary: "Decide a run's pending human step", tags, scope, description: 'Another tenant\'s run answers 404 like an unknown run.', path: ['id', 'agent_id'], body: ref('Decision'), ok: { status: 200, description: 'The decided approval', schema: ref('Approval') }, errors: [400, 403, 404, 409] }),
    },
  };
}

export function artifactPaths(): Record<string, PathItem> {
  const tags = ['Artifacts'];
  const description = "The project's files (shared by every tenant) and the uploads of the caller's tenant: another tenant's upload is 404 and never listed, and an upload adds a version to the caller's tenant's artifact only.";
  return {
    '/api/artifacts': {
      get: operation({ operationId: 'listArtifacts', summary: 'Every artifact with its versions', tags, scope: 'artifacts:read', description, ok: { status: 200, description: 'Artifacts', schema: { type: 'array', items: anyObject } }, errors: [403] }),
      post: operation({
        operationId: 'uploadArtifact', summary: 'Upload a new version (never an overwrite; 512 KB at most)', tags, scope: 'artifacts:write', description,
        body: object({ name: str, type: { type: 'string', enum: ['prompt', 'steering', 'skill', 'guardrail', 'hook', 'mcp'] }, content: { oneOf: [str, anyObject] }, description: str }, ['name', 'type', 'content']),
        ok: { status: 201, description: 'The new version', schema: ref('Artifact') }, errors: [400, 403, 409, 413],
      }),
    },
    '/api/artifacts/{name}': {
      get: operation({ operationId: 'getArtifact', summary: 'Content and hash of a version (the latest by default)', tags, scope: 'artifacts:read', description, path: ['name'], query: [{ name: 'version', schema: str }], ok: { status: 200, description: 'The artifact', schema: ref('Artifact') }, errors: [403, 404] }),
    },
  };
}

export function versionPaths(): Record<string, PathItem> {
  const tags = ['Version admin'];
  const scope = 'iam:admin';
  const family = (kind: 'workflows' | 'models', record: OpenAPIV3_1.SchemaObject): Record<string, PathItem> => ({
    [`/admin/${kind}`]: {
      get: operation({ operationId: `list${kind}Versions`, summary: `Every ${kind.slice(0, -1)} version`, tags, scope, deploymentAdmin: true, ok: { status: 200, description: 'Versions by name', schema: { type: 'object', additionalProperties: { type: 'array', items: record } } }, errors: [403] }),
    },
    [`/admin/${kind}/{name}/{version}/toggle`]: {
      patch: operation({ operationId: `toggle${kind}Version`, summary: 'Flip enabled (takes effect at once)', tags, scope, deploymentAdmin: true, path: ['name', 'version'], ok: { status: 200, description: 'The new flag', schema: ref('VersionToggle') }, errors: [403, 404] }),
    },
    [`/admin/${kind}/{name}/{version}/fork`]: {
      post: operation({ operationId: `fork${kind}Version`, summary: 'Copy a version into a new file (starts disabled)', tags, scope, deploymentAdmin: true, path: ['name', 'version'], body: object({ new_version: str }, ['new_version']), ok: { status: 200, description: 'The fork', schema: ref('VersionFork') }, errors: [400, 403, 404, 409] }),
    },
  });
  return {
    ...family('workflows', object({ schema_version: str, enabled: bool, trigger_path: str, trigger_method: str, description: { type: ['string', 'null'] } })),
    ...family('models', object({ schema_version: str, enabled: bool, tablename: str, datasource: str, fields: strings, description: { type: ['string', 'null'] } })),
    '/admin/scopes': {
      get: operation({ operationId: 'listScopes', summary: 'Every enforceable scope by source', tags, scope, deploymentAdmin: true, ok: { status: 200, description: 'Scopes', schema: object({ crud: anyObject, workflows: anyObject, system: strings, crud_api_enabled: bool }) }, errors: [403] }),
    },
  };
}

export function systemPaths(): Record<string, PathItem> {
  const tags = ['System'];
  return {
    '/health': { get: operation({ operationId: 'health', summary: 'Liveness and database', tags, isPublic: true, ok: { status: 200, description: 'Healthy', schema: ref('Health') }, extraResponses: { 503: { description: 'The database does not answer', content: { 'application/json': { schema: ref('Health') } } } } }) },
    '/registry': {
      get: operation({
        operationId: 'registry', summary: 'Loaded workflows, models, artifacts, federation providers and agent models', tags, scope: 'iam:admin', deploymentAdmin: true,
        ok: { status: 200, description: 'Each entry with name, version and enabled', schema: ref('Registry') }, errors: [403],
      }),
    },
    '/api/_system/workflows': { get: operation({ operationId: 'listManifests', summary: 'Workflow manifests by name', tags, ok: { status: 200, description: 'Manifests without name and steps', schema: { type: 'object', additionalProperties: anyObject } } }) },
    '/api/_system/workflows/{name}': { get: operation({ operationId: 'getManifest', summary: 'A workflow manifest', tags, path: ['name'], ok: { status: 200, description: 'The manifest', schema: ref('WorkflowManifest') }, errors: [404] }) },
    '/openapi.json': { get: operation({ operationId: 'openapi', summary: 'This document', tags, isPublic: true, ok: { status: 200, description: 'OpenAPI 3.1', schema: anyObject } }) },
  };
}

