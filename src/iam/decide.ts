// IAM commands: each a small pure function from command + current state to the events of each stream.
import { AlreadyExistsError, BadRequestError, ConflictError, NotFoundError, PermissionDeniedError } from '../kernel/errors.js';
import type { NewEvent } from '../eventstore/types.js';
import {
  roleStream,
  uniqueStream,
  userStream,
  BOOTSTRAP_STREAM,
  type UniqueKind,
} from './events.js';
import type { RoleState, UserState } from './evolve.js';

/** Events to append, keyed by stream id. */
export type Decision = Record<string, NewEvent[]>;

export const NAME_PATTERN = /^[\w:.\-/]+$/;
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE_PATTERN = /^\+?[0-9][0-9 ().-]{3,30}$/;

export interface UniqueOwners {
  /** Current owner of each unique value the command claims, keyed by claim stream id. */
  [claimStream: string]: string | null;
}

export type CreateUser = {
  type: 'CreateUser';
  userId: string;
  email: string;
  phoneNumber: string | null;
  passwordHash: string | null;
  tenant: string | null;
  federatedProvider?: string | null;
  federatedSub?: string | null;
  at: string;
};
export type UpdateUser = {
  type: 'UpdateUser';
  userId: string;
  email?: string;
  phoneNumber?: string | null;
  passwordHash?: string;
  isActive?: boolean;
  at: string;
};
export type DeleteUser = { type: 'DeleteUser'; userId: string; at: string };
export type AssignRole = { type: 'AssignRole'; userId: string; roleId: string; at: string };
export type RevokeRole = { type: 'RevokeRole'; userId: string; roleId: string; at: string };
export type EndSessions = { type: 'EndSessions'; userId: string; reason: string; at: string };
export type LinkFederation = { type: 'LinkFederation'; userId: string; provider: string; subject: string; at: string };
export type RecordSignIn = { type: 'RecordSignIn'; userId: string; method: string; provider: string | null; at: string };
export type CreateRole = { type: 'CreateRole'; roleId: string; name: string; description: string; scopes: string[]; at: string };
export type ChangeRoleScopes = { type: 'ChangeRoleScopes'; roleId: string; add: string[]; remove: string[]; at: string };
export type DeleteRole = { type: 'DeleteRole'; roleId: string; at: string };
export type Bootstrap = {
  type: 'Bootstrap';
  userId: string;
  roleId: string;
  email: string;
  passwordHash: string;
  tenant: string | null;
  at: string;
};

export type IamCommand =
  | CreateUser
  | UpdateUser
  | DeleteUser
  | AssignRole
  | RevokeRole
  | EndSessions
  | LinkFederation
  | RecordSignIn
  | CreateRole
  | ChangeRoleScopes
  | DeleteRole
  | Bootstrap;

/** Everything a decision may need; handlers load only what the command touches. */
export interface IamState {
  user?: UserState;
  role?: RoleState;
  owners?: UniqueOwners;
  /** User ids holding the role (for role-wide session ends). */
  holders?: string[];
  bootstrapped?: boolean;
  anyUserExists?: boolean;
}

export function decide(command: IamCommand, state: IamState): Decision {
  switch (command.type) {
    case 'CreateUser':
      return createUser(command, state);
    case 'UpdateUser':
      return updateUser(command, state);
    case 'DeleteUser':
      return deleteUser(command, state);
    case 'AssignRole':
      return assignRole(command, state);
    case 'RevokeRole':
      return revokeRole(command, state);
    case 'EndSessions':
      return { [userStream(command.userId)]: [sessionsEnded(command.userId, command.at, command.reason)] };
    case 'LinkFederation': {
      const user = existingUser(state, command.userId);
      // The read model the caller checked may lag: of two identities linking at once, the stream decides.
      if (user.federatedIdentity !== null && user.federatedIdentity !== `${command.provider} ${command.subject}`) {
        throw new PermissionDeniedError('An account with this email is already linked to another identity');
      }
      return {
        [userStream(user.userId)]: [
          { type: 'UserFederationLinked', data: { userId: user.userId, provider: command.provider, subject: command.subject, email: user.email, at: command.at } },
        ],
      };
    }
    case 'RecordSignIn': {
      const user = existingUser(state, command.userId);
      return { [userStream(user.userId)]: [{ type: 'UserSignedIn', data: { userId: user.userId, method: command.method, provider: command.provider, at: command.at } }] };
    }
    case 'CreateRole':
      return createRole(command, state);
    case 'ChangeRoleScopes':
      return changeRoleScopes(command, state);
    case 'DeleteRole':
      return deleteRole(command, state);
    case 'Bootstrap':
      return bootstrap(command, state);
    default: {
      const unknown: never = command;
      throw new Error(`Unknown IAM command ${JSON.stringify(unknown)}`);
    }
  }
}

export function checkEmail(email: string): void {
  if (email.length > 254 || !EMAIL_PATTERN.test(email)) throw new BadRequestError('email is not a valid address');
}

export function checkPhoneNumber(phone: string): void {
  if (!PHONE_PATTERN.test(phone)) throw new BadRequestError('phone_number is not a valid phone number');
}

export function checkName(kind: string, name: string): void {
  if (name.length === 0 || name.length > 200 || !NAME_PATTERN.test(name)) {
    throw new BadRequestError(`${kind} "${name}" must match ^[\\w:.\\-/]+$ (at most 200 characters)`);
  }
}

function existingUser(state: IamState, userId: string): UserState {
  if (!state.user?.exists || state.user.isDeleted) throw new NotFoundError(`User ${userId} not found`);
  return state.user;
}

function existingRole(state: IamState, roleId: string): RoleState {
  if (!state.role?.exists || state.role.isDeleted) throw new NotFoundError(`Role ${roleId} not found`);
  return state.role;
}

function sessionsEnded(userId: string, at: string, reason: string): NewEvent {
  return { type: 'UserSessionsEnded', data: { userId, at, reason } };
}

/** Claims a unique value for `owner`; someone else holding it is a 409. */
function claim(decision: Decision, state: IamState, kind: UniqueKind, value: string, owner: string, at: string, label: string): void {
  const stream = uniqueStream(kind, value);
  const current = state.owners?.[stream] ?? null;
  if (current === owner) return;
  if (current !== null) throw new AlreadyExistsError(`${label} ${value} already exists`);
  (decision[stream] ??= []).push({ type: 'UniqueValueClaimed', data: { owner, at } });
}

function release(decision: Decision, kind: UniqueKind, value: string, owner: string, at: string): void {
  (decision[uniqueStream(kind, value)] ??= []).push({ type: 'UniqueValueReleased', data: { owner, at } });
}

function createUser(command: CreateUser, state: IamState): Decision {
  if (state.user?.exists) throw new AlreadyExistsError(`User ${command.userId} already exists`);
  checkEmail(command.email);
  if (command.phoneNumber !== null) checkPhoneNumber(command.phoneNumber);
  const decision: Decision = {};
  claim(decision, state, 'email', command.email, command.userId, command.at, 'A user with email');
  if (command.phoneNumber !== null) {
    claim(decision, state, 'phone', command.phoneNumber, command.userId, command.at, 'A user with phone number');
  }
  decision[userStream(command.userId)] = [
    {
      type: 'UserCreated',
      data: {
        userId: command.userId,
        email: command.email,
        phoneNumber: command.phoneNumber,
        passwordHash: command.passwordHash,
        tenant: command.tenant,
        federatedProvider: command.federatedProvider ?? null,
        federatedSub: command.federatedSub ?? null,
        at: command.at,
      },
    },
  ];
  return decision;
}

function updateUser(command: UpdateUser, state: IamState): Decision {
  const user = existingUser(state, command.userId);
  const decision: Decision = {};
  const events: NewEvent[] = [];
  const changes: { email?: string; phoneNumber?: string | null } = {};
  if (command.email !== undefined && command.email !== user.email) {
    checkEmail(command.email);
    if (command.email.toLowerCase() !== user.email.toLowerCase()) {
      claim(decision, state, 'email', command.email, user.userId, command.at, 'A user with email');
      release(decision, 'email', user.email, user.userId, command.at);
    }
    changes.email = command.email;
  }
  if (command.phoneNumber !== undefined && command.phoneNumber !== user.phoneNumber) {
    if (command.phoneNumber !== null) {
      checkPhoneNumber(command.phoneNumber);
      claim(decision, state, 'phone', command.phoneNumber, user.userId, command.at, 'A user with phone number');
    }
    if (user.phoneNumber !== null) release(decision, 'phone', user.phoneNumber, user.userId, command.at);
    changes.phoneNumber = command.phoneNumber;
  }
  if (Object.keys(changes).length > 0) events.push({ type: 'UserUpdated', data: { userId: user.userId, ...changes, at: command.at } });
  let endsSessions: string | undefined;
  if (command.passwordHash !== undefined) {
    events.push({ type: 'PasswordChanged', data: { userId: user.userId, passwordHash: command.passwordHash, at: command.at } });
    endsSessions = 'password changed';
  }
  if (command.isActive === false && user.isActive) {
    events.push({ type: 'UserDeactivated', data: { userId: user.userId, at: command.at } });
    endsSessions = 'user deactivated';
  }
  if (command.isActive === true && !user.isActive) events.push({ type: 'UserReactivated', data: { userId: user.userId, at: command.at } });
  if (endsSessions) events.push(sessionsEnded(user.userId, command.at, endsSessions));
  if (events.length > 0) decision[userStream(user.userId)] = events;
  return decision;
}

function deleteUser(command: DeleteUser, state: IamState): Decision {
  const user = existingUser(state, command.userId);
  const decision: Decision = {};
  release(decision, 'email', user.email, user.userId, command.at);
  if (user.phoneNumber !== null) release(decision, 'phone', user.phoneNumber, user.userId, command.at);
  decision[userStream(user.userId)] = [
    ...user.roleIds.map((roleId) => ({ type: 'RoleRevoked', data: { userId: user.userId, roleId, at: command.at } })),
    { type: 'UserDeleted', data: { userId: user.userId, at: command.at } },
    sessionsEnded(user.userId, command.at, 'user deleted'),
  ];
  return decision;
}

function assignRole(command: AssignRole, state: IamState): Decision {
  const user = existingUser(state, command.userId);
  existingRole(state, command.roleId);
  if (user.roleIds.includes(command.roleId)) return {};
  return { [userStream(user.userId)]: [{ type: 'RoleAssigned', data: { userId: user.userId, roleId: command.roleId, at: command.at } }] };
}

function revokeRole(command: RevokeRole, state: IamState): Decision {
  const user = existingUser(state, command.userId);
  if (!user.roleIds.includes(command.roleId)) throw new NotFoundError(`User ${command.userId} does not hold role ${command.roleId}`);
  return {
    [userStream(user.userId)]: [
      { type: 'RoleRevoked', data: { userId: user.userId, roleId: command.roleId, at: command.at } },
      sessionsEnded(user.userId, command.at, 'role removed'),
    ],
  };
}

function createRole(command: CreateRole, state: IamState): Decision {
  if (state.role?.exists) throw new AlreadyExistsError(`Role ${command.roleId} already exists`);
  checkName('Role name', command.name);
  command.scopes.forEach((scope) => checkName('Scope', scope));
  const decision: Decision = {};
  claim(decision, state, 'role-name', command.name, command.roleId, command.at, 'A role named');
  const scopes = [...new Set(command.scopes)].sort();
  decision[roleStream(command.roleId)] = [
    { type: 'RoleCreated', data: { roleId: command.roleId, name: command.name, description: command.description, at: command.at } },
    ...(scopes.length > 0
      ? [{ type: 'RoleScopesChanged', data: { roleId: command.roleId, added: scopes, removed: [], scopes, at: command.at } }]
      : []),
  ];
  return decision;
}

function changeRoleScopes(command: ChangeRoleScopes, state: IamState): Decision {
  const role = existingRole(state, command.roleId);
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
    for (const userId of state.holders ?? []) decision[userStream(userId)] = [sessionsEnded(userId, command.at, 'role scope removed')];
  }
  return decision;
}

function deleteRole(command: DeleteRole, state: IamState): Decision {
  const role = existingRole(state, command.roleId);
  const decision: Decision = {};
  release(decision, 'role-name', role.name, role.roleId, command.at);
  decision[roleStream(role.roleId)] = [{ type: 'RoleDeleted', data: { roleId: role.roleId, at: command.at } }];
  for (const userId of state.holders ?? []) {
    decision[userStream(userId)] = [
      { type: 'RoleRevoked', data: { userId, roleId: role.roleId, at: command.at } },
      sessionsEnded(userId, command.at, 'role deleted'),
    ];
  }
  return decision;
}

export const SUPERADMIN_ROLE = 'superadmin';
export const ADMIN_SCOPE = 'iam:admin';

function bootstrap(command: Bootstrap, state: IamState): Decision {
  if (state.bootstrapped || state.anyUserExists) throw new AlreadyExistsError('Bootstrap is closed: a user already exists');
  if (state.role?.exists) throw new ConflictError('The superadmin role exists already');
  const user = createUser({ ...command, type: 'CreateUser', phoneNumber: null }, { owners: state.owners ?? {} });
  const role = createRole(
    { type: 'CreateRole', roleId: command.roleId, name: SUPERADMIN_ROLE, description: 'Created by bootstrap', scopes: [ADMIN_SCOPE], at: command.at },
    { owners: state.owners ?? {} },
  );
  const decision: Decision = { ...user, ...role };
  decision[userStream(command.userId)]!.push({
    type: 'RoleAssigned',
    data: { userId: command.userId, roleId: command.roleId, at: command.at },
  });
  decision[BOOTSTRAP_STREAM] = [{ type: 'BootstrapCompleted', data: { userId: command.userId, roleId: command.roleId, at: command.at } }];
  return decision;
}
