// IAM commands (imperative, one per change an admin or a sign-in makes) and the state a decision reads.
import type { RoleState, UserState } from './evolve.js';

/** Current owner of each unique value a command claims, keyed by claim stream id (null: free). */
export type UniqueOwners = Record<string, string | null>;

/**
 * What a tenant admin's command may reach (absent for a deployment admin's): the users of its own
 * tenant that do not hold the superadmin role, and roles other than superadmin. Checked on the
 * streams the command appends to, so a grant of superadmin racing the command is seen on its retry.
 */
export interface TenantFence {
  tenant: string | null;
  /** The superadmin role's id, when that role exists. */
  superadminRoleId: string | null;
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
  fence?: TenantFence;
  at: string;
};
export type UpdateUser = {
  type: 'UpdateUser';
  userId: string;
  email?: string;
  phoneNumber?: string | null;
  passwordHash?: string;
  isActive?: boolean;
  fence?: TenantFence;
  at: string;
};
export type EraseUser = { type: 'EraseUser'; userId: string; at: string };
export type DeleteUser = { type: 'DeleteUser'; userId: string; fence?: TenantFence; at: string };
export type AssignRole = { type: 'AssignRole'; userId: string; roleId: string; fence?: TenantFence; at: string };
export type RevokeRole = { type: 'RevokeRole'; userId: string; roleId: string; fence?: TenantFence; at: string };
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
  | EraseUser
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
  /** The roles the user holds, by id: deleting the user leaves each of them. */
  heldRoles?: Record<string, RoleState>;
  owners?: UniqueOwners;
  /** Whether any user exists: bootstrap is open only while none does. */
  anyUserExists?: boolean;
}
