// IAM command handlers: load the streams a command touches, decide, append with their versions.
import { runCommand } from '../eventstore/command.js';
import type { EventStore } from '../eventstore/store.js';
import type { EventMetadata, RecordedEvent } from '../eventstore/types.js';
import type { Clock } from '../kernel/clock.js';
import { newId } from '../kernel/ids.js';
import { decide, type IamCommand, type IamState } from './decide.js';
import {
  BOOTSTRAP_STREAM,
  roleStream,
  tokenStream,
  uniqueStream,
  userStream,
  type RoleEvent,
  type UniqueValueEvent,
  type UserEvent,
} from './events.js';
import { evolveRole, evolveUniqueOwner, evolveUser, initialRole, initialUser, type RoleState, type UserState } from './evolve.js';
import { anyUserExists, holdersOfRole } from './queries.js';

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
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async createUser(input: NewUserInput, metadata?: EventMetadata): Promise<string> {
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
        at: this.now(),
      },
      { user: userStream(userId), claims: [uniqueStream('email', input.email), ...(phoneNumber ? [uniqueStream('phone', phoneNumber)] : [])] },
      metadata,
    );
    return userId;
  }

  async updateUser(userId: string, changes: UserChanges, metadata?: EventMetadata): Promise<void> {
    const claims = [
      ...(changes.email !== undefined ? [uniqueStream('email', changes.email)] : []),
      ...(changes.phoneNumber ? [uniqueStream('phone', changes.phoneNumber)] : []),
    ];
    // The current email/phone claim streams are released, so they are read too (found from the user's stream).
    const current = foldUser(await this.store.readWholeStream(userStream(userId)));
    if (current.exists && changes.email !== undefined) claims.push(uniqueStream('email', current.email));
    if (current.exists && changes.phoneNumber !== undefined && current.phoneNumber) claims.push(uniqueStream('phone', current.phoneNumber));
    await this.run({ type: 'UpdateUser', userId, ...changes, at: this.now() }, { user: userStream(userId), claims }, metadata);
  }

  async deleteUser(userId: string, metadata?: EventMetadata): Promise<void> {
    const current = foldUser(await this.store.readWholeStream(userStream(userId)));
    const claims = current.exists
      ? [uniqueStream('email', current.email), ...(current.phoneNumber ? [uniqueStream('phone', current.phoneNumber)] : [])]
      : [];
    await this.run({ type: 'DeleteUser', userId, at: this.now() }, { user: userStream(userId), claims }, metadata);
  }

  async assignRole(userId: string, roleId: string, metadata?: EventMetadata): Promise<void> {
    await this.run({ type: 'AssignRole', userId, roleId, at: this.now() }, { user: userStream(userId), role: roleStream(roleId) }, metadata);
  }

  async revokeRole(userId: string, roleId: string, metadata?: EventMetadata): Promise<void> {
    await this.run({ type: 'RevokeRole', userId, roleId, at: this.now() }, { user: userStream(userId) }, metadata);
  }

  async createRole(input: { name: string; description: string; scopes?: string[] }, metadata?: EventMetadata): Promise<string> {
    const roleId = newId();
    await this.run(
      { type: 'CreateRole', roleId, name: input.name, description: input.description, scopes: input.scopes ?? [], at: this.now() },
      { role: roleStream(roleId), claims: [uniqueStream('role-name', input.name)] },
      metadata,
    );
    return roleId;
  }

  async changeRoleScopes(roleId: string, add: string[], remove: string[], metadata?: EventMetadata): Promise<void> {
    const holders = await holdersOfRole(this.store.pool, roleId);
    await this.run({ type: 'ChangeRoleScopes', roleId, add, remove, at: this.now() }, { role: roleStream(roleId), holders: { roleId, userIds: holders } }, metadata);
  }

  async deleteRole(roleId: string, metadata?: EventMetadata): Promise<void> {
    const role = foldRole(await this.store.readWholeStream(roleStream(roleId)));
    const holders = await holdersOfRole(this.store.pool, roleId);
    const claims = role.exists ? [uniqueStream('role-name', role.name)] : [];
    await this.run({ type: 'DeleteRole', roleId, at: this.now() }, { role: roleStream(roleId), holders: { roleId, userIds: holders }, claims }, metadata);
  }

  /** Creates the first user with the superadmin role; exactly one of racing calls wins. */
  async bootstrap(input: { email: string; passwordHash: string; tenant?: string | null }): Promise<{ userId: string; roleId: string }> {
    const userId = newId();
    const roleId = newId();
    const exists = await anyUserExists(this.store.pool);
    await this.run(
      { type: 'Bootstrap', userId, roleId, email: input.email, passwordHash: input.passwordHash, tenant: input.tenant ?? null, at: this.now() },
      {
        user: userStream(userId),
        role: roleStream(roleId),
        claims: [uniqueStream('email', input.email), uniqueStream('role-name', 'superadmin')],
        bootstrap: true,
        anyUserExists: exists,
      },
      { actor: userId },
    );
    return { userId, roleId };
  }

  async linkFederation(userId: string, provider: string, subject: string, metadata?: EventMetadata): Promise<void> {
    await this.run({ type: 'LinkFederation', userId, provider, subject, at: this.now() }, { user: userStream(userId) }, metadata);
  }

  async recordSignIn(userId: string, method: string, provider: string | null, metadata?: EventMetadata): Promise<void> {
    await this.run({ type: 'RecordSignIn', userId, method, provider, at: this.now() }, { user: userStream(userId) }, metadata);
  }

  /** Revokes one token (by its jti); revoking twice is harmless. */
  async revokeToken(jti: string, userId: string, expiresAt: string | null, metadata?: EventMetadata): Promise<void> {
    await runCommand(this.store, {
      streams: [tokenStream(jti)],
      decide: (read) => ({
        events: read.get(tokenStream(jti))!.length > 0 ? {} : { [tokenStream(jti)]: [{ type: 'TokenRevoked', data: { jti, userId, expiresAt, at: this.now() } }] },
        result: undefined,
      }),
      ...(metadata ? { metadata } : {}),
    });
  }

  private now(): string {
    return this.clock.now().toISOString();
  }

  /** Reads the named streams, folds them into IamState, decides, appends. */
  private async run(
    command: IamCommand,
    scope: {
      user?: string;
      role?: string;
      claims?: string[];
      holders?: { roleId: string; userIds: string[] };
      bootstrap?: boolean;
      anyUserExists?: boolean;
    },
    metadata?: EventMetadata,
  ): Promise<void> {
    const holderStreams = (scope.holders?.userIds ?? []).map(userStream);
    const streams = [
      ...(scope.user ? [scope.user] : []),
      ...(scope.role ? [scope.role] : []),
      ...(scope.claims ?? []),
      ...holderStreams,
      ...(scope.bootstrap ? [BOOTSTRAP_STREAM] : []),
    ];
    await runCommand(this.store, {
      streams: [...new Set(streams)],
      decide: (read) => {
        const state: IamState = {
          ...(scope.user ? { user: foldUser(read.get(scope.user)!) } : {}),
          ...(scope.role ? { role: foldRole(read.get(scope.role)!) } : {}),
          owners: Object.fromEntries((scope.claims ?? []).map((c) => [c, foldOwner(read.get(c)!)])),
          // The read model may lag the streams: a holder is whoever's stream says so now.
          holders: (scope.holders?.userIds ?? []).filter((id) => foldUser(read.get(userStream(id))!).roleIds.includes(scope.holders!.roleId)),
          ...(scope.bootstrap ? { bootstrapped: read.get(BOOTSTRAP_STREAM)!.length > 0, anyUserExists: scope.anyUserExists ?? false } : {}),
        };
        return { events: decide(command, state), result: undefined };
      },
      ...(metadata ? { metadata } : {}),
    });
  }
}
