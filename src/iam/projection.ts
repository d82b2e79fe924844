// IAM read models: users, roles, assignments, session ends and revoked tokens, folded from IAM events.
import type { RecordedEvent } from '../eventstore/types.js';
import { defineProjection, type Row } from '../projections/types.js';

type Data = Record<string, unknown>;
const data = (event: RecordedEvent) => event.data as Data;
const str = (value: unknown) => value as string;

const nullable = (value: unknown) => (value as string | null | undefined) ?? null;

/**
 * Users as sealed in the log: email, phone and federated subject are envelopes (opened by the reads,
 * null once erased), looked up by their blind indexes; `subject_erased` clears both.
 */
export const usersProjection = defineProjection({
  name: 'iam_users',
  version: 2,
  table: 'iam_users',
  key: ['id'],
  eventTypes: ['UserCreated', 'UserUpdated', 'PasswordChanged', 'UserDeactivated', 'UserReactivated', 'UserDeleted', 'UserFederationLinked', 'subject_erased'],
  keysOf: (event) => {
    if (event.type !== 'subject_erased') return [{ id: str(data(event).userId) }];
    return data(event).subject_type === 'user' ? [{ id: str(data(event).id) }] : [];
  },
  evolve(row: Row | null, _key, event): Row | null {
    const d = data(event);
    switch (event.type) {
      case 'UserCreated':
        return {
          id: str(d.userId),
          email: nullable(d.email),
          email_index: nullable(d.emailIndex),
          phone_number: nullable(d.phoneNumber),
          phone_index: nullable(d.phoneIndex),
          hashed_password: (d.passwordHash as string | null) ?? null,
          is_active: true,
          tenant: (d.tenant as string | null) ?? null,
          federated_provider: (d.federatedProvider as string | null) ?? null,
          federated_sub: nullable(d.federatedSub),
          federated_index: nullable(d.federatedIndex),
          created_at: str(d.at),
          updated_at: str(d.at),
        };
      case 'UserDeleted':
        return null;
      case 'subject_erased':
        // No updated_at: erasure is not a change the user made.
        return row && { ...row, email: null, email_index: null, phone_number: null, phone_index: null, federated_sub: null, federated_index: null };
      default:
        if (!row) return null;
        return { ...row, ...userChanges(event.type, d), updated_at: str(d.at) };
    }
  },
});

function userChanges(type: string, d: Data): Row {
  switch (type) {
    case 'UserUpdated':
      return {
        ...(d.email !== undefined ? { email: nullable(d.email), email_index: nullable(d.emailIndex) } : {}),
        ...(d.phoneNumber !== undefined ? { phone_number: nullable(d.phoneNumber), phone_index: nullable(d.phoneIndex) } : {}),
      };
    case 'PasswordChanged':
      return { hashed_password: str(d.passwordHash) };
    case 'UserDeactivated':
      return { is_active: false };
    case 'UserReactivated':
      return { is_active: true };
    case 'UserFederationLinked':
      return { federated_provider: str(d.provider), federated_sub: nullable(d.subject), federated_index: nullable(d.federatedIndex) };
    default:
      return {};
  }
}

export const rolesProjection = defineProjection({
  name: 'iam_roles',
  version: 1,
  table: 'iam_roles',
  key: ['id'],
  eventTypes: ['RoleCreated', 'RoleScopesChanged', 'RoleDeleted'],
  keysOf: (event) => [{ id: str(data(event).roleId) }],
  evolve(row: Row | null, _key, event): Row | null {
    const d = data(event);
    switch (event.type) {
      case 'RoleCreated':
        return { id: str(d.roleId), name: str(d.name), description: str(d.description), scopes: [], created_at: str(d.at), updated_at: str(d.at) };
      case 'RoleScopesChanged':
        return row ? { ...row, scopes: d.scopes as string[], updated_at: str(d.at) } : null;
      default:
        return null;
    }
  },
});

export const userRolesProjection = defineProjection({
  name: 'iam_user_roles',
  version: 1,
  table: 'iam_user_roles',
  key: ['user_id', 'role_id'],
  eventTypes: ['RoleAssigned', 'RoleRevoked'],
  keysOf: (event) => [{ user_id: str(data(event).userId), role_id: str(data(event).roleId) }],
  evolve: (_row, key, event) => (event.type === 'RoleAssigned' ? { user_id: key.user_id!, role_id: key.role_id!, assigned_at: str(data(event).at) } : null),
});

export const sessionEndsProjection = defineProjection({
  name: 'iam_session_ends',
  version: 1,
  table: 'iam_session_ends',
  key: ['user_id'],
  eventTypes: ['UserSessionsEnded'],
  keysOf: (event) => [{ user_id: str(data(event).userId) }],
  evolve(row: Row | null, key, event): Row {
    const at = str(data(event).at);
    // The latest end wins, whatever order two ends are replayed in.
    if (row && Date.parse(str(row.ended_at)) >= Date.parse(at)) return row;
    return { user_id: key.user_id!, ended_at: at, reason: str(data(event).reason) };
  },
});

export const revokedTokensProjection = defineProjection({
  name: 'iam_revoked_tokens',
  version: 1,
  table: 'iam_revoked_tokens',
  key: ['jti'],
  eventTypes: ['TokenRevoked'],
  keysOf: (event) => [{ jti: str(data(event).jti) }],
  evolve: (_row, key, event) => ({
    jti: key.jti!,
    user_id: str(data(event).userId),
    expires_at: (data(event).expiresAt as string | null) ?? null,
    revoked_at: str(data(event).at),
  }),
});

export const iamProjections = [usersProjection, rolesProjection, userRolesProjection, sessionEndsProjection, revokedTokensProjection];
