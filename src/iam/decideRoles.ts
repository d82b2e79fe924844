// Role decisions: roles and their scopes, who holds them, and the bootstrap that creates the first admin.
import { AlreadyExistsError, BadRequestError, NotFoundError } from '../kernel/errors.js';
import { BOOTSTRAP_STREAM, roleStream, userStream } from './events.js';
import type { AssignRole, Bootstrap, ChangeRoleScopes, CreateRole, DeleteRole, IamState, RevokeRole } from './commands.js';
import { createUser } from './decideUsers.js';
import { ADMIN_SCOPE } from '../kernel/access.js';
import {
  administrableUser,
  checkName,
  checkRoleWithinFence,
  claim,
  existingRole,
  push,
  release,
  sessionsEnded,
  SUPERADMIN_ROLE,
  type Decision,
} from './rules.js';

export function createRole(command: CreateRole, state: IamState): Decision {
  if (state.role?.exists) throw new AlreadyExistsError(`Role ${command.roleId} already exists`);
  checkName('Role name', command.name);
  command.scopes.forEach((scope) => checkName('Scope', scope));
  const decision: Decision = {};
  claim(decision, state.owners ?? {}, 'role-name', command.name, command.roleId, command.at, 'A role named');
  const scopes = [...new Set(command.scopes)].sort();
  push(decision, roleStream(command.roleId), {
    type: 'RoleCreated',
    data: { roleId: command.roleId, name: command.name, description: command.description, at: command.at },
  });
  if (scopes.length > 0) {
    push(decision, roleStream(command.roleId), {
      type: 'RoleScopesChanged',
      data: { roleId: command.roleId, added: scopes, removed: [], scopes, at: command.at },
    });
  }
  return decision;
}

export function changeRoleScopes(command: ChangeRoleScopes, state: IamState): Decision {
  const role = existingRole(state.role, command.roleId);
  [...command.add, ...command.remove].forEach((scope) => checkName('Scope', scope));
  const overlap = command.add.filter((scope) => command.remove.includes(scope));
  if (overlap.length > 0) throw new BadRequestError(`Scopes both added and removed: ${overlap.join(', ')}`);
  const current = new Set(role.scopes);
  const added = [...new Set(command.add)].filter((s) => !current.has(s)).sort();
  const removed = [...new Set(command.remove)].filter((s) => current.has(s)).sort();
  if (added.length === 0 && removed.length === 0) return {};
  const scopes = [...role.scopes.filter((s) => !removed.includes(s)), ...added].sort();
  const decision: Decision = {
    [roleStream(role.roleId)]: [{ type: 'RoleScopesChanged', data: { roleId: role.roleId, added, removed, scopes, at: command.at } }],
  };
  // Stripping a scope ends the sessions of everyone holding the role; granting ends nothing.
  if (removed.length > 0) {
    for (const userId of role.holders) push(decision, userStream(userId), sessionsEnded(userId, command.at, 'role scope removed'));
  }
  return decision;
}

export function deleteRole(command: DeleteRole, state: IamState): Decision {
  const role = existingRole(state.role, command.roleId);
  const decision: Decision = {};
  release(decision, 'role-name', role.name, role.roleId, command.at);
  push(decision, roleStream(role.roleId), { type: 'RoleDeleted', data: { roleId: role.roleId, at: command.at } });
  for (const userId of role.holders) {
    push(
      decision,
      userStream(userId),
      { type: 'RoleRevoked', data: { userId, roleId: role.roleId, at: command.at } },
      sessionsEnded(userId, command.at, 'role deleted'),
    );
  }
  return decision;
}

export function assignRole(command: AssignRole, state: IamState): Decision {
  const user = administrableUser(state.user, command.userId, command.fence);
  const role = existingRole(state.role, command.roleId);
  checkRoleWithinFence(command.fence, role, role.roleId);
  if (user.roleIds.includes(role.roleId)) return {};
  return holderAdded(user.userId, role.roleId, command.at);
}

export function revokeRole(command: RevokeRole, state: IamState): Decision {
  const user = administrableUser(state.user, command.userId, command.fence);
  checkRoleWithinFence(command.fence, state.role, command.roleId);
  if (!user.roleIds.includes(command.roleId)) throw new NotFoundError(`User ${command.userId} does not hold role ${command.roleId}`);
  const decision: Decision = {
    [userStream(user.userId)]: [
      { type: 'RoleRevoked', data: { userId: user.userId, roleId: command.roleId, at: command.at } },
      sessionsEnded(user.userId, command.at, 'role removed'),
    ],
  };
  if (state.role?.exists && !state.role.isDeleted) {
    push(decision, roleStream(command.roleId), { type: 'RoleHolderRemoved', data: { roleId: command.roleId, userId: user.userId, at: command.at } });
  }
  return decision;
}

/**
 * Open only while no user exists (also again after every user was deleted). A superadmin role that
 * survived is reused, and given back `iam:admin` if it lost it; otherwise the role is created.
 */
export function bootstrap(command: Bootstrap, state: IamState): Decision {
  if (state.anyUserExists) throw new AlreadyExistsError('Bootstrap is closed: a user already exists');
  const owners = state.owners ?? {};
  const existing = state.role?.exists && !state.role.isDeleted ? state.role : undefined;
  const roleId = existing?.roleId ?? command.roleId;
  const decision: Decision = createUser({ ...command, type: 'CreateUser', phoneNumber: null }, { owners });
  const roleDecision = existing
    ? existing.scopes.includes(ADMIN_SCOPE)
      ? {}
      : changeRoleScopes({ type: 'ChangeRoleScopes', roleId, add: [ADMIN_SCOPE], remove: [], at: command.at }, { role: existing })
    : createRole({ type: 'CreateRole', roleId, name: SUPERADMIN_ROLE, description: 'Created by bootstrap', scopes: [ADMIN_SCOPE], at: command.at }, { owners });
  for (const [stream, events] of Object.entries(roleDecision)) push(decision, stream, ...events);
  for (const [stream, events] of Object.entries(holderAdded(command.userId, roleId, command.at))) push(decision, stream, ...events);
  push(decision, BOOTSTRAP_STREAM, { type: 'BootstrapCompleted', data: { userId: command.userId, roleId, at: command.at } });
  return decision;
}

/** An assignment is written on both sides: the user's roles and the role's holders. */
function holderAdded(userId: string, roleId: string, at: string): Decision {
  return {
    [userStream(userId)]: [{ type: 'RoleAssigned', data: { userId, roleId, at } }],
    [roleStream(roleId)]: [{ type: 'RoleHolderAdded', data: { roleId, userId, at } }],
  };
}
