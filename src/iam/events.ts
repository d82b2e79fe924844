// IAM events: users, roles, unique-value claims, bootstrap and token revocation (past tense, never renamed).
import type { JsonObject } from '../kernel/json.js';

type Event<Type extends string, Data extends JsonObject> = { type: Type; data: Data };

// Users' email, phone number and federated subject are sealed in the stored events (iam/personalStore.ts:
// `enc:v1:...` envelopes, with blind indexes `emailIndex`, `phoneIndex`, `federatedIndex` beside them);
// the types below are what deciders see once opened, where an erased value is null.
export type UserCreated = Event<
  'UserCreated',
  {
    userId: string;
    email: string | null;
    phoneNumber: string | null;
    passwordHash: string | null;
    tenant: string | null;
    federatedProvider: string | null;
    federatedSub: string | null;
    at: string;
  }
>;
export type UserUpdated = Event<'UserUpdated', { userId: string; email?: string; phoneNumber?: string | null; at: string }>;
export type PasswordChanged = Event<'PasswordChanged', { userId: string; passwordHash: string; at: string }>;
export type UserDeactivated = Event<'UserDeactivated', { userId: string; at: string }>;
export type UserReactivated = Event<'UserReactivated', { userId: string; at: string }>;
export type UserDeleted = Event<'UserDeleted', { userId: string; at: string }>;
export type RoleAssigned = Event<'RoleAssigned', { userId: string; roleId: string; at: string }>;
export type RoleRevoked = Event<'RoleRevoked', { userId: string; roleId: string; at: string }>;
/** A federated identity (provider + provider subject) now signs in as this existing user. */
export type UserFederationLinked = Event<
  'UserFederationLinked',
  { userId: string; provider: string; subject: string | null; email: string | null; at: string }
>;
/**
 * A subject's personal values were erased (docs/privacy.md): its data key is destroyed, so every
 * value sealed with it reads as null. Stored under the name BEYOND.md gives it. For a user, on the
 * user's stream.
 */
export type SubjectErased = Event<'subject_erased', { subject_type: string; id: string; at: string }>;
/** A successful sign-in (journaled for federated logins). */
export type UserSignedIn = Event<'UserSignedIn', { userId: string; method: string; provider: string | null; at: string }>;
/** Every token of the user issued before `at` (millisecond precision) is refused from now on. */
export type UserSessionsEnded = Event<'UserSessionsEnded', { userId: string; at: string; reason: string }>;

export type RoleCreated = Event<'RoleCreated', { roleId: string; name: string; description: string; at: string }>;
export type RoleScopesChanged = Event<
  'RoleScopesChanged',
  {
    roleId: string;
    added: string[];
    removed: string[];
    scopes: string[];
    at: string;
  }
>;
export type RoleDeleted = Event<'RoleDeleted', { roleId: string; at: string }>;
/**
 * The role's own record of who holds it, written with RoleAssigned/RoleRevoked on the user's stream:
 * a role change that touches every holder (delete, scope removal) then reads its holders from the
 * stream it appends to, so a concurrent assignment is a version conflict, never a missed holder.
 */
export type RoleHolderAdded = Event<'RoleHolderAdded', { roleId: string; userId: string; at: string }>;
export type RoleHolderRemoved = Event<'RoleHolderRemoved', { roleId: string; userId: string; at: string }>;

/** A unique value (email, phone number, role name) taken by an owner, or given back. */
export type UniqueValueClaimed = Event<'UniqueValueClaimed', { owner: string; at: string }>;
export type UniqueValueReleased = Event<'UniqueValueReleased', { owner: string; at: string }>;

export type BootstrapCompleted = Event<'BootstrapCompleted', { userId: string; roleId: string; at: string }>;
export type TokenRevoked = Event<'TokenRevoked', { jti: string; userId: string; expiresAt: string | null; at: string }>;

export type UserEvent =
  | UserCreated
  | UserUpdated
  | PasswordChanged
  | UserDeactivated
  | UserReactivated
  | UserDeleted
  | RoleAssigned
  | RoleRevoked
  | UserFederationLinked
  | UserSignedIn
  | UserSessionsEnded
  | SubjectErased;
export type RoleEvent = RoleCreated | RoleScopesChanged | RoleDeleted | RoleHolderAdded | RoleHolderRemoved;
export type UniqueValueEvent = UniqueValueClaimed | UniqueValueReleased;
export type BootstrapEvent = BootstrapCompleted;
export type TokenEvent = TokenRevoked;

export const userStream = (userId: string) => `user-${userId}`;
export const roleStream = (roleId: string) => `role-${roleId}`;
export const tokenStream = (jti: string) => `token-${jti}`;
export const BOOTSTRAP_STREAM = 'iam-bootstrap';

export type UniqueKind = 'email' | 'phone' | 'role-name' | 'federated-identity';
/** The claim value of a federated identity: one account per (provider, provider subject). */
export const federatedIdentity = (provider: string, subject: string) => `${provider} ${subject}`;

/** Emails are unique case-insensitively; the claim stream is named by the folded value. */
export function uniqueStream(kind: UniqueKind, value: string): string {
  return `unique-${kind}:${kind === 'email' ? value.toLowerCase() : value}`;
}
