// User decisions: accounts, their unique email and phone number, federation links and sign-ins.
import { AlreadyExistsError, NotFoundError, PermissionDeniedError } from '../kernel/errors.js';
import type { NewEvent } from '../eventstore/types.js';
import { federatedIdentity, roleStream, userStream } from './events.js';
import type { CreateUser, DeleteUser, EraseUser, IamState, LinkFederation, RecordSignIn, UpdateUser } from './commands.js';
import { administrableUser, checkEmail, checkPhoneNumber, claim, existingUser, push, release, sessionsEnded, type Decision } from './rules.js';

export function createUser(command: CreateUser, state: IamState): Decision {
  if (state.user?.exists) throw new AlreadyExistsError(`User ${command.userId} already exists`);
  if (command.fence && command.tenant !== command.fence.tenant) {
    throw new PermissionDeniedError(
      `Permission denied: the admin of tenant ${String(command.fence.tenant)} creates users in tenant ${String(command.fence.tenant)} only`,
    );
  }
  checkEmail(command.email);
  if (command.phoneNumber !== null) checkPhoneNumber(command.phoneNumber);
  const owners = state.owners ?? {};
  const decision: Decision = {};
  claim(decision, owners, 'email', command.email, command.userId, command.at, 'A user with email');
  if (command.phoneNumber !== null) claim(decision, owners, 'phone', command.phoneNumber, command.userId, command.at, 'A user with phone number');
  if (command.federatedProvider && command.federatedSub) {
    const identity = federatedIdentity(command.federatedProvider, command.federatedSub);
    claim(decision, owners, 'federated-identity', identity, command.userId, command.at, 'An account for the identity');
  }
  push(decision, userStream(command.userId), {
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
  });
  return decision;
}

export function updateUser(command: UpdateUser, state: IamState): Decision {
  const user = administrableUser(state.user, command.userId, command.fence);
  const owners = state.owners ?? {};
  const decision: Decision = {};
  const events: NewEvent[] = [];
  const changes: { email?: string; phoneNumber?: string | null } = {};
  if (command.email !== undefined && command.email !== user.email) {
    checkEmail(command.email);
    if (command.email.toLowerCase() !== user.email?.toLowerCase()) {
      claim(decision, owners, 'email', command.email, user.userId, command.at, 'A user with email');
      if (user.email !== null) release(decision, 'email', user.email, user.userId, command.at);
    }
    changes.email = command.email;
  }
  if (command.phoneNumber !== undefined && command.phoneNumber !== user.phoneNumber) {
    if (command.phoneNumber !== null) {
      checkPhoneNumber(command.phoneNumber);
      claim(decision, owners, 'phone', command.phoneNumber, user.userId, command.at, 'A user with phone number');
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
  if (events.length > 0) push(decision, userStream(user.userId), ...events);
  return decision;
}

export function deleteUser(command: DeleteUser, state: IamState): Decision {
  const user = administrableUser(state.user, command.userId, command.fence);
  const decision: Decision = {};
  if (user.email !== null) release(decision, 'email', user.email, user.userId, command.at);
  if (user.phoneNumber !== null) release(decision, 'phone', user.phoneNumber, user.userId, command.at);
  if (user.federatedIdentity !== null) release(decision, 'federated-identity', user.federatedIdentity, user.userId, command.at);
  for (const roleId of user.roleIds) {
    push(decision, userStream(user.userId), { type: 'RoleRevoked', data: { userId: user.userId, roleId, at: command.at } });
    const role = state.heldRoles?.[roleId];
    if (role?.exists && !role.isDeleted) {
      push(decision, roleStream(roleId), { type: 'RoleHolderRemoved', data: { roleId, userId: user.userId, at: command.at } });
    }
  }
  push(
    decision,
    userStream(user.userId),
    { type: 'UserDeleted', data: { userId: user.userId, at: command.at } },
    sessionsEnded(user.userId, command.at, 'user deleted'),
  );
  return decision;
}

/** Erasure gives back the unique values a live user holds; erasing twice appends nothing. */
export function eraseUser(command: EraseUser, state: IamState): Decision {
  const user = state.user;
  if (!user?.exists) throw new NotFoundError(`User ${command.userId} not found`);
  const decision: Decision = {};
  if (user.isErased) return decision;
  if (!user.isDeleted) {
    if (user.email !== null) release(decision, 'email', user.email, user.userId, command.at);
    if (user.phoneNumber !== null) release(decision, 'phone', user.phoneNumber, user.userId, command.at);
    if (user.federatedIdentity !== null) release(decision, 'federated-identity', user.federatedIdentity, user.userId, command.at);
  }
  push(decision, userStream(user.userId), { type: 'subject_erased', data: { subject_type: 'user', id: user.userId, at: command.at } });
  return decision;
}

export function linkFederation(command: LinkFederation, state: IamState): Decision {
  const user = existingUser(state.user, command.userId);
  // The read model the caller checked may lag: of two identities linking at once, the stream decides.
  const identity = federatedIdentity(command.provider, command.subject);
  if (user.federatedIdentity !== null && user.federatedIdentity !== identity) {
    throw new PermissionDeniedError('An account with this email is already linked to another identity');
  }
  const decision: Decision = {};
  claim(decision, state.owners ?? {}, 'federated-identity', identity, user.userId, command.at, 'An account for the identity');
  push(decision, userStream(user.userId), {
    type: 'UserFederationLinked',
    data: { userId: user.userId, provider: command.provider, subject: command.subject, email: user.email, at: command.at },
  });
  return decision;
}

export function recordSignIn(command: RecordSignIn, state: IamState): Decision {
  const user = existingUser(state.user, command.userId);
  return {
    [userStream(user.userId)]: [{ type: 'UserSignedIn', data: { userId: user.userId, method: command.method, provider: command.provider, at: command.at } }],
  };
}
