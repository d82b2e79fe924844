// IAM state folded from a stream's events: what deciders need to know, nothing more.
import type { RoleEvent, UniqueValueEvent, UserEvent } from './events.js';

export interface UserState {
  exists: boolean;
  isDeleted: boolean;
  userId: string;
  /** null once erased. */
  email: string | null;
  phoneNumber: string | null;
  hasPassword: boolean;
  isErased: boolean;
  isActive: boolean;
  tenant: string | null;
  roleIds: string[];
  /** `<provider> <subject>` once a federated identity signs in as this user. */
  federatedIdentity: string | null;
}

export const initialUser: UserState = {
  exists: false,
  isDeleted: false,
  userId: '',
  email: null,
  phoneNumber: null,
  hasPassword: false,
  isErased: false,
  isActive: false,
  tenant: null,
  roleIds: [],
  federatedIdentity: null,
};

export function evolveUser(state: UserState, event: UserEvent): UserState {
  switch (event.type) {
    case 'UserCreated':
      return {
        ...state,
        exists: true,
        userId: event.data.userId,
        email: event.data.email,
        phoneNumber: event.data.phoneNumber,
        hasPassword: event.data.passwordHash !== null,
        isActive: true,
        tenant: event.data.tenant,
        federatedIdentity:
          event.data.federatedProvider !== null && event.data.federatedSub !== null ? `${event.data.federatedProvider} ${event.data.federatedSub}` : null,
      };
    case 'UserUpdated':
      return {
        ...state,
        email: event.data.email ?? state.email,
        phoneNumber: event.data.phoneNumber !== undefined ? event.data.phoneNumber : state.phoneNumber,
      };
    case 'PasswordChanged':
      return { ...state, hasPassword: true };
    case 'UserDeactivated':
      return { ...state, isActive: false };
    case 'UserReactivated':
      return { ...state, isActive: true };
    case 'UserDeleted':
      return { ...state, isDeleted: true, isActive: false, roleIds: [] };
    case 'RoleAssigned':
      return state.roleIds.includes(event.data.roleId) ? state : { ...state, roleIds: [...state.roleIds, event.data.roleId] };
    case 'RoleRevoked':
      return { ...state, roleIds: state.roleIds.filter((id) => id !== event.data.roleId) };
    case 'UserFederationLinked':
      return { ...state, federatedIdentity: event.data.subject !== null ? `${event.data.provider} ${event.data.subject}` : null };
    case 'subject_erased':
      return { ...state, isErased: true, email: null, phoneNumber: null, federatedIdentity: null };
    case 'UserSessionsEnded':
    case 'UserSignedIn':
      return state;
  }
}

export interface RoleState {
  exists: boolean;
  isDeleted: boolean;
  roleId: string;
  name: string;
  scopes: string[];
  /** User ids holding the role, in assignment order. */
  holders: string[];
}

export const initialRole: RoleState = { exists: false, isDeleted: false, roleId: '', name: '', scopes: [], holders: [] };

export function evolveRole(state: RoleState, event: RoleEvent): RoleState {
  switch (event.type) {
    case 'RoleCreated':
      return { ...state, exists: true, roleId: event.data.roleId, name: event.data.name };
    case 'RoleScopesChanged':
      return { ...state, scopes: event.data.scopes };
    case 'RoleDeleted':
      return { ...state, isDeleted: true, holders: [] };
    case 'RoleHolderAdded':
      return state.holders.includes(event.data.userId) ? state : { ...state, holders: [...state.holders, event.data.userId] };
    case 'RoleHolderRemoved':
      return { ...state, holders: state.holders.filter((id) => id !== event.data.userId) };
  }
}

/** Who holds a unique value now (null: free). */
export function evolveUniqueOwner(owner: string | null, event: UniqueValueEvent): string | null {
  switch (event.type) {
    case 'UniqueValueClaimed':
      return event.data.owner;
    case 'UniqueValueReleased':
      return event.data.owner === owner ? null : owner;
  }
}
