// IAM command handlers: load the streams a command touches, decide, append with their versions.
import { runCommand } from '../eventstore/command.js';
import type { EventStore } from '../eventstore/store.js';
import type { EventMetadata, RecordedEvent } from '../eventstore/types.js';
import type { Clock } from '../kernel/clock.js';
import { newId } from '../kernel/ids.js';
import { actorOfUserId } from '../kernel/causation.js';
import { decide } from './decide.js';
import type { IamCommand, IamState, TenantFence } from './commands.js';
import {
  BOOTSTRAP_STREAM,
  federatedIdentity,
  roleStream,
  tokenStream,
  uniqueStream,
  userStream,
  type RoleEvent,
  type UniqueValueEvent,
  type UserEvent,
} from './events.js';
import { evolveRole, evolveUniqueOwner, evolveUser, initialRole, initialUser, type RoleState, type UserState } from './evolve.js';
import { anyUserExists } from './queries.js';
import { SUPERADMIN_ROLE } from './rules.js';
import { PersonalUserStore } from './personalStore.js';
import { userSubject, type DataKeys } from '../privacy/dataKeys.js';

export interface NewUserInput {
  email: string;
  phoneNumber?: string | null;
  passwordHash: string | null;
  tenant?: string | null;
  federatedProvider?: string | null;
  federatedSub?: string | null;
}

export interface UserChanges {
  email?: string;
  phoneNumber?: string | null;
  passwordHash?: string;
  isActive?: boolean;
}

const foldUser = (events: RecordedEvent[]): UserState => events.reduce((s, e) => evolveUser(s, e as unknown as UserEvent), initialUser);
const foldRole = (events: RecordedEvent[]): RoleState => events.reduce((s, e) => evolveRole(s, e as unknown as RoleEvent), initialRole);
const foldOwner = (events: RecordedEvent[]): string | null =>
  events.reduce<string | null>((owner, e) => evolveUniqueOwner(owner, e as unknown as UniqueValueEvent), null);

export class IamCommands {
  /** What commands read and append through: users' personal values sealed, claims by blind index. */
  readonly personal: PersonalUserStore;

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    keys: DataKeys,
  ) {
    this.personal = new PersonalUserStore(store, keys);
  }

  /** `fence`: the command is a tenant admin's (see TenantFence); absent for a deployment admin or the system. */
  async createUser(input: NewUserInput, metadata?: EventMetadata, fence?: TenantFence): Promise<string> {
    const userId = newId();
    const phoneNumber = input.phoneNumber ?? null;
    await this.run(
      {
        type: 'CreateUser',
        userId,
        email: input.email,
        phoneNumber,
        passwordHash: input.passwordHash,
        tenant: input.tenant ?? null,
        federatedProvider: input.federatedProvider ?? null,
        federatedSub: input.federatedSub ?? null,
        ...(fence ? { fence } : {}),
        at: this.now(),
      },
      async () => ({
        user: userStream(userId),
        claims: [
          uniqueStream('email', input.email),
          ...(phoneNumber ? [uniqueStream('phone', phoneNumber)] : []),
          ...(input.federatedProvider && input.federatedSub
            ? [uniqueStream('federated-identity', federatedIdentity(input.federatedProvider, input.federatedSub))]
            : []),
        ],
      }),
      metadata,
    );
    return userId;
  }

  async updateUser(userId: string, changes: UserChanges, metadata?: EventMetadata, fence?: TenantFence): Promise<void> {
    await this.run(
      { type: 'UpdateUser', userId, ...changes, ...(fence ? { fence } : {}), at: this.now() },
      async () => {
        // The current email/phone claim streams are released, so they are read too (found from the user's stream).
        const current = await this.user(userId);
        const claims = [
          ...(changes.email !== undefined ? [uniqueStream('email', changes.email)] : []),
          ...(changes.phoneNumber ? [uniqueStream('phone', changes.phoneNumber)] : []),
          ...(current.exists && changes.email !== undefined && current.email !== null ? [uniqueStream('email', current.email)] : []),
          ...(current.exists && changes.phoneNumber !== undefined && current.phoneNumber ? [uniqueStream('phone', current.phoneNumber)] : []),
        ];
        return { user: userStream(userId), claims };
      },
      metadata,
    );
  }

  async deleteUser(userId: string, metadata?: EventMetadata, fence?: TenantFence): Promise<void> {
    await this.run(
      { type: 'DeleteUser', userId, ...(fence ? { fence } : {}), at: this.now() },
      async () => {
        const current = await this.user(userId);
        const claims = current.exists ? userClaims(current) : [];
        return { user: userStream(userId), claims, heldRoles: current.roleIds };
      },
      metadata,
    );
  }

  async assignRole(userId: string, roleId: string, metadata?: EventMetadata, fence?: TenantFence): Promise<void> {
    const command = { type: 'AssignRole' as const, userId, roleId, ...(fence ? { fence } : {}), at: this.now() };
    await this.run(command, async () => ({ user: userStream(userId), role: roleStream(roleId) }), metadata);
  }

  async revokeRole(userId: string, roleId: string, metadata?: EventMetadata, fence?: TenantFence): Promise<void> {
    const command = { type: 'RevokeRole' as const, userId, roleId, ...(fence ? { fence } : {}), at: this.now() };
    await this.run(command, async () => ({ user: userStream(userId), role: roleStream(roleId) }), metadata);
  }

  async createRole(input: { name: string; description: string; scopes?: string[] }, metadata?: EventMetadata): Promise<string> {
    const roleId = newId();
    await this.run(
      { type: 'CreateRole', roleId, name: input.name, description: input.description, scopes: input.scopes ?? [], at: this.now() },
      async () => ({ role: roleStream(roleId), claims: [uniqueStream('role-name', input.name)] }),
      metadata,
    );
    return roleId;
  }

  async changeRoleScopes(roleId: string, add: string[], remove: string[], metadata?: EventMetadata): Promise<void> {
    await this.run({ type: 'ChangeRoleScopes', roleId, add, remove, at: this.now() }, () => this.roleWithHolders(roleId), metadata);
  }

  async deleteRole(roleId: string, metadata?: EventMetadata): Promise<void> {
    await this.run({ type: 'DeleteRole', roleId, at: this.now() }, () => this.roleWithHolders(roleId, { withNameClaim: true }), metadata);
  }

  /** Creates a first user holding the superadmin role while no user exists; exactly one of racing calls wins. */
  async bootstrap(input: { email: string; passwordHash: string; tenant?: string | null }): Promise<{ userId: string; roleId: string }> {
    const userId = newId();
    const newRoleId = newId();
    const roleName = uniqueStream('role-name', SUPERADMIN_ROLE);
    let roleId = newRoleId;
    await this.run(
      { type: 'Bootstrap', userId, roleId: newRoleId, email: input.email, passwordHash: input.passwordHash, tenant: input.tenant ?? null, at: this.now() },
      async () => {
        // A superadmin role left from before every user was deleted is reused.
        roleId = foldOwner(await this.personal.readWholeStream(roleName)) ?? newRoleId;
        return {
          user: userStream(userId),
          role: roleStream(roleId),
          claims: [uniqueStream('email', input.email), roleName],
          // Every bootstrap appends to this stream: of two racing, the loser retries and finds a user.
          extra: [BOOTSTRAP_STREAM],
          anyUserExists: await anyUserExists(this.store.pool),
        };
      },
      // The caller had no principal: the user it became is who acted.
      { actor: actorOfUserId(userId) },
    );
    return { userId, roleId };
  }

  async linkFederation(userId: string, provider: string, subject: string, metadata?: EventMetadata): Promise<void> {
    await this.run(
      { type: 'LinkFederation', userId, provider, subject, at: this.now() },
      async () => ({ user: userStream(userId), claims: [uniqueStream('federated-identity', federatedIdentity(provider, subject))] }),
      metadata,
    );
  }

  /**
   * Erases a user's personal values (docs/privacy.md): gives back the user's email, phone and
   * federated identity claims, appends `subject_erased`, then destroys the user's data key. A retry
   * after a crash in between appends nothing new and destroys the key.
   */
  async eraseUser(userId: string, metadata?: EventMetadata): Promise<void> {
    await this.run(
      { type: 'EraseUser', userId, at: this.now() },
      async () => {
        const current = await this.user(userId);
        const claims = current.exists && !current.isDeleted && !current.isErased ? userClaims(current) : [];
        return { user: userStream(userId), claims };
      },
      metadata,
    );
    await this.personal.keys.erase(userSubject(userId));
  }

  async recordSignIn(userId: string, method: string, provider: string | null, metadata?: EventMetadata): Promise<void> {
    await this.run({ type: 'RecordSignIn', userId, method, provider, at: this.now() }, async () => ({ user: userStream(userId) }), metadata);
  }

  /** Revokes one token (by its jti); true only for the call that revoked it (of racing refreshes, one wins). */
  async revokeToken(jti: string, userId: string, expiresAt: string | null, metadata?: EventMetadata): Promise<boolean> {
    const { result } = await runCommand(this.personal, {
      streams: [tokenStream(jti)],
      decide: (read) => {
        const alreadyRevoked = read.get(tokenStream(jti))!.length > 0;
        const events = alreadyRevoked ? {} : { [tokenStream(jti)]: [{ type: 'TokenRevoked', data: { jti, userId, expiresAt, at: this.now() } }] };
        return { events, result: !alreadyRevoked };
      },
      ...(metadata ? { metadata } : {}),
    });
    return result;
  }

  private now(): string {
    return this.clock.now().toISOString();
  }

  private async user(userId: string): Promise<UserState> {
    return foldUser(await this.personal.readWholeStream(userStream(userId)));
  }

  /** The role, its holders' streams (each gets a session end or a revocation) and, to delete it, its name claim. */
  private async roleWithHolders(roleId: string, options: { withNameClaim?: boolean } = {}): Promise<CommandScope> {
    const role = foldRole(await this.personal.readWholeStream(roleStream(roleId)));
    return {
      role: roleStream(roleId),
      extra: role.holders.map(userStream),
      claims: options.withNameClaim && role.exists ? [uniqueStream('role-name', role.name)] : [],
    };
  }

  /**
   * Reads the streams `scope` names (asked again after a lost race, since what they are can depend
   * on state that changed), folds them into IamState, decides, appends.
   */
  private async run(command: IamCommand, scopeOf: () => Promise<CommandScope>, metadata?: EventMetadata): Promise<void> {
    let scope: CommandScope = {};
    await runCommand(this.personal, {
      streams: async () => {
        scope = await scopeOf();
        return [
          ...(scope.user ? [scope.user] : []),
          ...(scope.role ? [scope.role] : []),
          ...(scope.claims ?? []),
          ...(scope.heldRoles ?? []).map(roleStream),
          ...(scope.extra ?? []),
        ];
      },
      decide: (read) => {
        const state: IamState = {
          ...(scope.user ? { user: foldUser(read.get(scope.user)!) } : {}),
          ...(scope.role ? { role: foldRole(read.get(scope.role)!) } : {}),
          ...(scope.heldRoles ? { heldRoles: Object.fromEntries(scope.heldRoles.map((id) => [id, foldRole(read.get(roleStream(id))!)])) } : {}),
          owners: Object.fromEntries((scope.claims ?? []).map((c) => [c, foldOwner(read.get(c)!)])),
          ...(scope.anyUserExists !== undefined ? { anyUserExists: scope.anyUserExists } : {}),
        };
        return { events: decide(command, state), result: undefined };
      },
      ...(metadata ? { metadata } : {}),
    });
  }
}

/** The claim streams a user holds (an erased value holds none). */
function userClaims(user: UserState): string[] {
  return [
    ...(user.email !== null ? [uniqueStream('email', user.email)] : []),
    ...(user.phoneNumber ? [uniqueStream('phone', user.phoneNumber)] : []),
    ...(user.federatedIdentity ? [uniqueStream('federated-identity', user.federatedIdentity)] : []),
  ];
}

/** The streams one attempt of a command reads (and may append to). */
interface CommandScope {
  user?: string;
  role?: string;
  claims?: string[];
  /** Role ids whose streams are read as IamState.heldRoles. */
  heldRoles?: string[];
  /** Streams read only to append to them (holders' user streams, the bootstrap fence). */
  extra?: string[];
  anyUserExists?: boolean;
}
