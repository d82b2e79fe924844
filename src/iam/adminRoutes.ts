// /auth/admin users and roles (scope iam:admin): validate, command, answer the read model. In a
// multi-tenant deployment a tenant admin reaches its own tenant's users who do not hold superadmin
// (others are 404 to it) and changes no role; deployment admins reach everything (docs/auth.md).
import { Router, type Request } from 'express';
import type { Pool } from '../db/pool.js';
import type { Authenticator } from '../http/authenticator.js';
import { ADMIN_SCOPE } from '../kernel/access.js';
import type { AuthService } from './signIn.js';
import { requestMetadata, uuidParam } from '../http/context.js';
import { NotFoundError } from '../kernel/errors.js';
import { compileValidator, integerParam } from '../kernel/validation.js';
import type { IamCommands, UserChanges } from './handlers.js';
import { checkPasswordPolicy, hashPassword } from './passwords.js';
import type { TenantFence } from './commands.js';
import { findRole, findRoleByName, findUser, listRoles, listUsers, type UserRecord } from './queries.js';
import { isWithinFence, SUPERADMIN_ROLE } from './rules.js';

const nullableString = { anyOf: [{ type: 'string' }, { type: 'null' }] };
const scopeList = { type: 'array', items: { type: 'string', maxLength: 200 }, maxItems: 500 };

const createUserBody = compileValidator<{ email: string; password?: string; phone_number?: string | null; tenant?: string }>({
  type: 'object',
  properties: { email: { type: 'string', maxLength: 254 }, password: { type: 'string' }, phone_number: nullableString, tenant: { type: 'string' } },
  required: ['email', 'password'],
  additionalProperties: false,
});
const updateUserBody = compileValidator<{ email?: string; password?: string; is_active?: boolean; phone_number?: string | null }>({
  type: 'object',
  properties: { email: { type: 'string', maxLength: 254 }, password: { type: 'string' }, is_active: { type: 'boolean' }, phone_number: nullableString },
  additionalProperties: false,
});
const createRoleBody = compileValidator<{ name: string; description?: string; scopes?: string[] }>({
  type: 'object',
  properties: { name: { type: 'string', maxLength: 200 }, description: { type: 'string', maxLength: 2000 }, scopes: scopeList },
  required: ['name'],
  additionalProperties: false,
});
const roleScopesBody = compileValidator<{ add?: string[]; remove?: string[] }>({
  type: 'object',
  properties: { add: scopeList, remove: scopeList },
  additionalProperties: false,
});
const pageQuery = compileValidator<{ limit?: string; offset?: string }>(
  { type: 'object', properties: { limit: {}, offset: {} }, additionalProperties: false },
  'query',
);

interface AdminDeps {
  pool: Pool;
  commands: IamCommands;
  auth: AuthService;
  authenticator: Authenticator;
}

/** What one admin reaches: a tenant admin's fence (undefined for a deployment admin) and the users within it. */
interface Reach {
  fenceOf(req: Request): Promise<TenantFence | undefined>;
  /** A user the fence reaches; one it does not is 404, like an unknown one (the decision checks again). */
  userOr404(id: string, fence: TenantFence | undefined): Promise<UserRecord>;
}

/** The read model holds users' personal values sealed: opened here, null once erased. */
function openUsers(commands: IamCommands, users: UserRecord[]): Promise<UserRecord[]> {
  return commands.personal.keys.openFields(users, ['email', 'phone_number', 'federated_sub']);
}

const userId = (req: Request) => uuidParam(req, 'user_id', 'User');
const roleId = (req: Request) => uuidParam(req, 'role_id', 'Role');

export function iamAdminRouter(deps: AdminDeps): Router {
  const router = Router();
  router.use('/auth/admin', deps.authenticator.require({ scope: ADMIN_SCOPE }));
  const reach = reachOf(deps);
  mountUserRoutes(router, deps, reach);
  mountRoleRoutes(router, deps, reach);
  return router;
}

function reachOf({ pool, authenticator, commands }: AdminDeps): Reach {
  return {
    async fenceOf(req) {
      const principal = req.principal!;
      if (authenticator.isDeploymentAdmin(principal)) return undefined;
      return { tenant: principal.tenant ?? null, superadminRoleId: (await findRoleByName(pool, SUPERADMIN_ROLE))?.id ?? null };
    },
    async userOr404(id, fence) {
      const user = await findUser(pool, id);
      if (
        !user ||
        !isWithinFence(
          fence,
          user.tenant,
          user.roles.map((role) => role.id),
        )
      )
        throw new NotFoundError(`User ${id} not found`);
      return (await openUsers(commands, [user]))[0]!;
    },
  };
}

function mountUserRoutes(router: Router, { pool, commands, auth }: AdminDeps, { fenceOf, userOr404 }: Reach): void {
  router.get('/auth/admin/users', async (req, res) => {
    const query = pageQuery.parse(req.query);
    const [limit, offset] = [integerParam(query.limit, 'limit', 100, 1, 1000), integerParam(query.offset, 'offset', 0, 0, 1_000_000_000)];
    res.json(await openUsers(commands, await listUsers(pool, limit, offset, await fenceOf(req))));
  });

  router.post('/auth/admin/users', async (req, res) => {
    const body = createUserBody.parse(req.body ?? {});
    checkPasswordPolicy(body.password!);
    const fence = await fenceOf(req);
    const tenant = auth.tenantFor(body.tenant, req.principal!.tenant);
    const id = await commands.createUser(
      { email: body.email, phoneNumber: body.phone_number ?? null, passwordHash: await hashPassword(body.password!), tenant },
      requestMetadata(req),
      fence,
    );
    res.status(201).json(await userOr404(id, fence));
  });

  router.get('/auth/admin/users/:user_id', async (req, res) => {
    res.json(await userOr404(userId(req), await fenceOf(req)));
  });

  router.patch('/auth/admin/users/:user_id', async (req, res) => {
    const id = userId(req);
    const body = updateUserBody.parse(req.body ?? {});
    const fence = await fenceOf(req);
    // Before the costly password hash; the decision checks the fence again on the user's stream.
    await userOr404(id, fence);
    await commands.updateUser(id, await userChangesOf(body), requestMetadata(req), fence);
    res.json(await userOr404(id, fence));
  });

  router.delete('/auth/admin/users/:user_id', async (req, res) => {
    await commands.deleteUser(userId(req), requestMetadata(req), await fenceOf(req));
    res.status(204).end();
  });
}

async function userChangesOf(body: { email?: string; password?: string; is_active?: boolean; phone_number?: string | null }): Promise<UserChanges> {
  const changes: UserChanges = {};
  if (body.email !== undefined) changes.email = body.email;
  if (body.phone_number !== undefined) changes.phoneNumber = body.phone_number;
  if (body.is_active !== undefined) changes.isActive = body.is_active;
  if (body.password !== undefined) {
    checkPasswordPolicy(body.password);
    changes.passwordHash = await hashPassword(body.password);
  }
  return changes;
}

function mountRoleRoutes(router: Router, { pool, commands, authenticator }: AdminDeps, { fenceOf, userOr404 }: Reach): void {
  const deploymentAdmin = authenticator.requireDeploymentAdmin('roles are shared by every tenant');
  const roleOr404 = async (id: string) => {
    const role = await findRole(pool, id);
    if (!role) throw new NotFoundError(`Role ${id} not found`);
    return role;
  };

  router.get('/auth/admin/roles', async (_req, res) => {
    res.json(await listRoles(pool));
  });

  router.post('/auth/admin/roles', deploymentAdmin, async (req, res) => {
    const body = createRoleBody.parse(req.body ?? {});
    const id = await commands.createRole({ name: body.name, description: body.description ?? '', scopes: body.scopes ?? [] }, requestMetadata(req));
    res.status(201).json(await roleOr404(id));
  });

  router.delete('/auth/admin/roles/:role_id', deploymentAdmin, async (req, res) => {
    await commands.deleteRole(roleId(req), requestMetadata(req));
    res.status(204).end();
  });

  router.patch('/auth/admin/roles/:role_id/scopes', deploymentAdmin, async (req, res) => {
    const id = roleId(req);
    const body = roleScopesBody.parse(req.body ?? {});
    await commands.changeRoleScopes(id, body.add ?? [], body.remove ?? [], requestMetadata(req));
    res.json(await roleOr404(id));
  });

  router.post('/auth/admin/users/:user_id/roles/:role_id', async (req, res) => {
    const [user, role, fence] = [userId(req), roleId(req), await fenceOf(req)];
    await commands.assignRole(user, role, requestMetadata(req), fence);
    res.json(await userOr404(user, fence));
  });

  router.delete('/auth/admin/users/:user_id/roles/:role_id', async (req, res) => {
    const [user, role, fence] = [userId(req), roleId(req), await fenceOf(req)];
    await commands.revokeRole(user, role, requestMetadata(req), fence);
    res.json(await userOr404(user, fence));
  });
}
