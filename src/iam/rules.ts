// IAM rules every decision shares: value checks, unique-value claims, the existence guards.
import { AlreadyExistsError, BadRequestError, NotFoundError, PermissionDeniedError } from '../kernel/errors.js';
import type { NewEvent } from '../eventstore/types.js';
import { uniqueStream, type UniqueKind } from './events.js';
import type { TenantFence, UniqueOwners } from './commands.js';
import type { RoleState, UserState } from './evolve.js';

/** Events to append, keyed by stream id. */
export type Decision = Record<string, NewEvent[]>;

export const NAME_PATTERN = /^[\w:.\-/]+$/;
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE_PATTERN = /^\+?[0-9][0-9 ().-]{3,30}$/;

export const SUPERADMIN_ROLE = 'superadmin';

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

export function existingUser(user: UserState | undefined, userId: string): UserState {
  if (!user?.exists || user.isDeleted) throw new NotFoundError(`User ${userId} not found`);
  return user;
}

/** Whether a tenant admin's fence reaches a user of `tenant` holding `roleIds` (no fence reaches everyone). */
export function isWithinFence(fence: TenantFence | undefined, tenant: string | null, roleIds: readonly string[]): boolean {
  if (!fence) return true;
  return tenant === fence.tenant && !(fence.superadminRoleId !== null && roleIds.includes(fence.superadminRoleId));
}

/** An existing user the fence reaches; one it does not is unknown to it (404), like a user that does not exist. */
export function administrableUser(user: UserState | undefined, userId: string, fence: TenantFence | undefined): UserState {
  const existing = existingUser(user, userId);
  if (!isWithinFence(fence, existing.tenant, existing.roleIds)) throw new NotFoundError(`User ${userId} not found`);
  return existing;
}

/** Granting or taking back superadmin makes or unmakes a deployment admin: no tenant admin may. */
export function checkRoleWithinFence(fence: TenantFence | undefined, role: RoleState | undefined, roleId: string): void {
  if (!fence) return;
  if (role?.name === SUPERADMIN_ROLE || roleId === fence.superadminRoleId) {
    throw new PermissionDeniedError(
      `Permission denied: only a deployment admin (iam:admin and the ${SUPERADMIN_ROLE} group) assigns or removes the ${SUPERADMIN_ROLE} role`,
    );
  }
}

export function existingRole(role: RoleState | undefined, roleId: string): RoleState {
  if (!role?.exists || role.isDeleted) throw new NotFoundError(`Role ${roleId} not found`);
  return role;
}

export function sessionsEnded(userId: string, at: string, reason: string): NewEvent {
  return { type: 'UserSessionsEnded', data: { userId, at, reason } };
}

/** Claims a unique value for `owner`; someone else holding it is a 409. */
export function claim(decision: Decision, owners: UniqueOwners, kind: UniqueKind, value: string, owner: string, at: string, label: string): void {
  const stream = uniqueStream(kind, value);
  const current = owners[stream] ?? null;
  if (current === owner) return;
  if (current !== null) throw new AlreadyExistsError(`${label} ${value} already exists`);
  (decision[stream] ??= []).push({ type: 'UniqueValueClaimed', data: { owner, at } });
}

export function release(decision: Decision, kind: UniqueKind, value: string, owner: string, at: string): void {
  (decision[uniqueStream(kind, value)] ??= []).push({ type: 'UniqueValueReleased', data: { owner, at } });
}

/** Appends `events` to `stream` in the decision, after what it already holds. */
export function push(decision: Decision, stream: string, ...events: NewEvent[]): void {
  (decision[stream] ??= []).push(...events);
}
