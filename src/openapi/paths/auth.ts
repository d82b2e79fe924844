// The auth and IAM admin route families.
// shape: OpenAPI operation tables: one function per route family reads as the API does; splitting them would scatter it.
import { anyObject, bool, object, operation, ref, str, strings, type PathItem } from '../builders.js';
import { page, list } from './shared.js';

export function authPaths(): Record<string, PathItem> {
  const tags = ['Auth'];
  return {
    '/auth/bootstrap': {
      post: operation({
        operationId: 'bootstrap',
        summary: 'Create the first user (superadmin); only while no user exists',
        tags,
        isPublic: true,
        body: object({ email: str, password: str, tenant: str }, ['email', 'password']),
        ok: { status: 200, description: 'The first user and a token', schema: { allOf: [ref('TokenResponse'), object({ message: str, user_id: str })] } },
        errors: [400, 409],
      }),
    },
    '/auth/token': {
      post: operation({
        operationId: 'login',
        summary: 'Password login (OAuth 2.0 password grant)',
        tags,
        isPublic: true,
        body: object({ username: { type: 'string', description: 'email or phone number' }, password: str, grant_type: { type: 'string', const: 'password' } }, [
          'username',
          'password',
        ]),
        bodyType: 'application/x-www-form-urlencoded',
        ok: { status: 200, description: 'A token', schema: ref('TokenResponse') },
        description:
          'Failed attempts are throttled per account and client address (docs/auth.md, "Login throttling"): 429 with Retry-After, also for the right password.',
        errors: [400, 429],
        extraResponses: {
          401: { description: 'Generic failure (unknown user and wrong password alike)', content: { 'application/json': { schema: ref('Error') } } },
        },
      }),
    },
    '/auth/me': {
      get: operation({ operationId: 'me', summary: 'Who the token is', tags, ok: { status: 200, description: 'Identity', schema: ref('Identity') } }),
    },
    '/auth/refresh': {
      post: operation({
        operationId: 'refresh',
        summary: 'Revoke this token and mint one with current roles',
        tags,
        ok: { status: 200, description: 'A new token', schema: ref('TokenResponse') },
        errors: [400],
      }),
    },
    '/auth/logout': {
      post: operation({ operationId: 'logout', summary: 'Revoke this token', tags, ok: { status: 204, description: 'Revoked' }, errors: [400] }),
    },
    '/auth/jwks.json': {
      get: operation({
        operationId: 'jwks',
        summary: 'The public key set (OKP / Ed25519)',
        tags,
        isPublic: true,
        ok: { status: 200, description: 'JWKS', schema: object({ keys: { type: 'array', items: anyObject } }, ['keys']) },
      }),
    },
  };
}

export function iamPaths(): Record<string, PathItem> {
  const tags = ['IAM admin'];
  const scope = 'iam:admin';
  const userBody = object({ email: str, password: str, phone_number: { type: ['string', 'null'] }, tenant: str }, ['email', 'password']);
  const reach =
    "With `SVC_TENANT_IDS`, a tenant admin (`iam:admin` without the `superadmin` group) reaches only its own tenant's users who do not hold `superadmin`: any other user is 404 to it.";
  const superadminRule = `${reach} Assigning or removing \`superadmin\` is for deployment admins (403).`;
  return {
    '/auth/admin/users': {
      get: operation({
        operationId: 'listUsers',
        summary: 'List users',
        tags,
        scope,
        description: reach,
        query: page,
        ok: { status: 200, description: 'Users', schema: list('User') },
        errors: [403],
      }),
      post: operation({
        operationId: 'createUser',
        summary: 'Create a user',
        tags,
        scope,
        description: "With `SVC_TENANT_IDS`, `tenant` places the user (default: the caller's tenant); a tenant admin naming another tenant gets 403.",
        body: userBody,
        ok: { status: 201, description: 'The user', schema: ref('User') },
        errors: [400, 403, 409],
      }),
    },
    '/auth/admin/users/{user_id}': {
      get: operation({
        operationId: 'getUser',
        summary: 'One user',
        tags,
        scope,
        description: reach,
        path: ['user_id'],
        ok: { status: 200, description: 'The user', schema: ref('User') },
        errors: [403, 404],
      }),
      patch: operation({
        operationId: 'updateUser',
        summary: 'Change email, password, phone number or is_active (password and deactivation end sessions)',
        tags,
        scope,
        description: reach,
        path: ['user_id'],
        body: object({ email: str, password: str, is_active: bool, phone_number: { type: ['string', 'null'] } }),
        ok: { status: 200, description: 'The user', schema: ref('User') },
        errors: [400, 403, 404, 409],
      }),
      delete: operation({
        operationId: 'deleteUser',
        summary: 'Delete a user (ends their sessions)',
        tags,
        scope,
        description: reach,
        path: ['user_id'],
        ok: { status: 204, description: 'Deleted' },
        errors: [403, 404],
      }),
    },
    '/auth/admin/roles': {
      get: operation({
        operationId: 'listRoles',
        summary: 'List roles',
        tags,
        scope,
        ok: { status: 200, description: 'Roles', schema: list('Role') },
        errors: [403],
      }),
      post: operation({
        operationId: 'createRole',
        summary: 'Create a role',
        tags,
        scope,
        deploymentAdmin: true,
        body: object({ name: str, description: str, scopes: strings }, ['name']),
        ok: { status: 201, description: 'The role', schema: ref('Role') },
        errors: [400, 403, 409],
      }),
    },
    '/auth/admin/roles/{role_id}': {
      delete: operation({
        operationId: 'deleteRole',
        summary: 'Delete a role (holders lose it; their sessions end)',
        tags,
        scope,
        deploymentAdmin: true,
        path: ['role_id'],
        ok: { status: 204, description: 'Deleted' },
        errors: [403, 404],
      }),
    },
    '/auth/admin/roles/{role_id}/scopes': {
      patch: operation({
        operationId: 'changeRoleScopes',
        summary: 'Add and remove scopes atomically',
        tags,
        scope,
        deploymentAdmin: true,
        path: ['role_id'],
        body: object({ add: strings, remove: strings }),
        ok: { status: 200, description: 'The role', schema: ref('Role') },
        errors: [400, 403, 404],
      }),
    },
    '/auth/admin/users/{user_id}/roles/{role_id}': {
      post: operation({
        operationId: 'assignRole',
        summary: 'Assign a role',
        tags,
        scope,
        description: superadminRule,
        path: ['user_id', 'role_id'],
        ok: { status: 200, description: 'The user', schema: ref('User') },
        errors: [403, 404],
      }),
      delete: operation({
        operationId: 'revokeRole',
        summary: "Revoke a role (ends the user's sessions)",
        tags,
        scope,
        description: superadminRule,
        path: ['user_id', 'role_id'],
        ok: { status: 200, description: 'The user', schema: ref('User') },
        errors: [403, 404],
      }),
    },
  };
}
