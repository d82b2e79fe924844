// The IAM decider, command by command: which events land on which stream, and which commands are refused.
import { expect } from 'chai';
import type { CreateUser } from '../../src/iam/commands.js';
import { uniqueStream, type RoleEvent, type UniqueValueEvent, type UserEvent } from '../../src/iam/events.js';
import { given } from './decider.js';

const T0 = '2030-01-01T00:00:00.000Z';
const T1 = '2030-01-01T00:00:01.234Z';

const emailOf = (email: string) => uniqueStream('email', email);
const phoneOf = (phone: string) => uniqueStream('phone', phone);
const roleNameOf = (name: string) => uniqueStream('role-name', name);

const claimed = (owner: string): UniqueValueEvent => ({ type: 'UniqueValueClaimed', data: { owner, at: T0 } });
const released = (owner: string): UniqueValueEvent => ({ type: 'UniqueValueReleased', data: { owner, at: T0 } });

function userCreated(userId: string, email: string, phoneNumber: string | null = null): UserEvent {
  return {
    type: 'UserCreated',
    data: { userId, email, phoneNumber, passwordHash: '$2b$12$hash', tenant: null, federatedProvider: null, federatedSub: null, at: T0 },
  };
}
const roleAssigned = (userId: string, roleId: string): UserEvent => ({ type: 'RoleAssigned', data: { userId, roleId, at: T0 } });
const roleCreated = (roleId: string, name: string): RoleEvent => ({ type: 'RoleCreated', data: { roleId, name, description: '', at: T0 } });
const scopesSet = (roleId: string, scopes: string[]): RoleEvent => ({
  type: 'RoleScopesChanged',
  data: { roleId, added: scopes, removed: [], scopes, at: T0 },
});
const holderAdded = (roleId: string, userId: string): RoleEvent => ({ type: 'RoleHolderAdded', data: { roleId, userId, at: T0 } });
const sessionsEnded = (userId: string, reason: string) => ({ type: 'UserSessionsEnded', data: { userId, at: T1, reason } });

function createUser(overrides: Partial<CreateUser> = {}): CreateUser {
  return {
    type: 'CreateUser',
    userId: 'u1',
    email: 'alice@example.com',
    phoneNumber: null,
    passwordHash: '$2b$12$hash',
    tenant: null,
    at: T1,
    ...overrides,
  };
}

describe('IAM decide', () => {
  describe('CreateUser', () => {
    it('creates the user and claims its email and phone number', () => {
      given()
        .when(createUser({ email: 'Alice@Example.com', phoneNumber: '+1 555 0100' }))
        .then({
          'unique-email:alice@example.com': [{ type: 'UniqueValueClaimed', data: { owner: 'u1', at: T1 } }],
          'unique-phone:+1 555 0100': [{ type: 'UniqueValueClaimed', data: { owner: 'u1', at: T1 } }],
          'user-u1': [
            {
              type: 'UserCreated',
              data: {
                userId: 'u1',
                email: 'Alice@Example.com',
                phoneNumber: '+1 555 0100',
                passwordHash: '$2b$12$hash',
                tenant: null,
                federatedProvider: null,
                federatedSub: null,
                at: T1,
              },
            },
          ],
        });
    });

    it('answers 409 when another user holds the email, whatever its case', () => {
      given({ claims: { [emailOf('alice@example.com')]: [claimed('u2')] } })
        .when(createUser({ email: 'ALICE@example.com' }))
        .thenFails('ALREADY_EXISTS', /alice@example\.com/i);
    });

    it('answers 409 when another user holds the phone number', () => {
      given({ claims: { [emailOf('alice@example.com')]: [], [phoneOf('+15550100')]: [claimed('u2')] } })
        .when(createUser({ phoneNumber: '+15550100' }))
        .thenFails('ALREADY_EXISTS');
    });

    it('takes an email a deleted user gave back', () => {
      const decision = given({ claims: { [emailOf('alice@example.com')]: [claimed('u2'), released('u2')] } })
        .when(createUser())
        .decision();
      expect(decision[emailOf('alice@example.com')]).to.deep.equal([{ type: 'UniqueValueClaimed', data: { owner: 'u1', at: T1 } }]);
    });

    for (const email of ['not-an-email', 'alice@', 'a b@example.com', '@example.com', `${'a'.repeat(250)}@x.io`]) {
      it(`answers 400 for the invalid email ${JSON.stringify(email.slice(0, 20))}`, () => {
        given().when(createUser({ email })).thenFails('BAD_REQUEST', /email/);
      });
    }

    it('answers 400 for an invalid phone number', () => {
      given()
        .when(createUser({ phoneNumber: 'call me' }))
        .thenFails('BAD_REQUEST', /phone/);
    });

    it('answers 409 when the user id exists already', () => {
      given({ user: [userCreated('u1', 'other@example.com')] })
        .when(createUser())
        .thenFails('ALREADY_EXISTS');
    });
  });

  describe('UpdateUser', () => {
    const alice = [userCreated('u1', 'alice@example.com', '+15550100')];

    it('claims a new email and releases the old one without ending sessions', () => {
      given({ user: alice, claims: { [emailOf('alice@example.com')]: [claimed('u1')], [emailOf('alice@new.io')]: [] } })
        .when({ type: 'UpdateUser', userId: 'u1', email: 'alice@new.io', at: T1 })
        .then({
          [emailOf('alice@new.io')]: [{ type: 'UniqueValueClaimed', data: { owner: 'u1', at: T1 } }],
          [emailOf('alice@example.com')]: [{ type: 'UniqueValueReleased', data: { owner: 'u1', at: T1 } }],
          'user-u1': [{ type: 'UserUpdated', data: { userId: 'u1', email: 'alice@new.io', at: T1 } }],
        });
    });

    it('keeps the claim when only the case of the email changes', () => {
      given({ user: alice, claims: { [emailOf('alice@example.com')]: [claimed('u1')] } })
        .when({ type: 'UpdateUser', userId: 'u1', email: 'Alice@Example.com', at: T1 })
        .then({ 'user-u1': [{ type: 'UserUpdated', data: { userId: 'u1', email: 'Alice@Example.com', at: T1 } }] });
    });

    it('answers 409 when the new email belongs to someone else', () => {
      given({ user: alice, claims: { [emailOf('bob@example.com')]: [claimed('u2')] } })
        .when({ type: 'UpdateUser', userId: 'u1', email: 'bob@example.com', at: T1 })
        .thenFails('ALREADY_EXISTS');
    });

    it('answers 400 for an invalid new email', () => {
      given({ user: alice }).when({ type: 'UpdateUser', userId: 'u1', email: 'nope', at: T1 }).thenFails('BAD_REQUEST');
    });

    it('ends the sessions when the password changes', () => {
      given({ user: alice })
        .when({ type: 'UpdateUser', userId: 'u1', passwordHash: '$2b$12$new', at: T1 })
        .then({
          'user-u1': [{ type: 'PasswordChanged', data: { userId: 'u1', passwordHash: '$2b$12$new', at: T1 } }, sessionsEnded('u1', 'password changed')],
        });
    });

    it('ends the sessions when the user is deactivated', () => {
      given({ user: alice })
        .when({ type: 'UpdateUser', userId: 'u1', isActive: false, at: T1 })
        .then({ 'user-u1': [{ type: 'UserDeactivated', data: { userId: 'u1', at: T1 } }, sessionsEnded('u1', 'user deactivated')] });
    });

    it('ends the sessions once when password change and deactivation come together', () => {
      const decision = given({ user: alice }).when({ type: 'UpdateUser', userId: 'u1', passwordHash: '$2b$12$new', isActive: false, at: T1 }).decision();
      const types = decision['user-u1']!.map((e) => e.type);
      expect(types).to.deep.equal(['PasswordChanged', 'UserDeactivated', 'UserSessionsEnded']);
    });

    it('reactivates without ending sessions', () => {
      given({ user: [...alice, { type: 'UserDeactivated', data: { userId: 'u1', at: T0 } }] })
        .when({ type: 'UpdateUser', userId: 'u1', isActive: true, at: T1 })
        .then({ 'user-u1': [{ type: 'UserReactivated', data: { userId: 'u1', at: T1 } }] });
    });

    it('does nothing when nothing changes (deactivating an inactive user included)', () => {
      given({ user: alice }).when({ type: 'UpdateUser', userId: 'u1', email: 'alice@example.com', isActive: true, at: T1 }).then({});
      given({ user: [...alice, { type: 'UserDeactivated', data: { userId: 'u1', at: T0 } }] })
        .when({ type: 'UpdateUser', userId: 'u1', isActive: false, at: T1 })
        .then({});
    });

    it('releases the phone number when it is cleared', () => {
      given({ user: alice, claims: { [phoneOf('+15550100')]: [claimed('u1')] } })
        .when({ type: 'UpdateUser', userId: 'u1', phoneNumber: null, at: T1 })
        .then({
          [phoneOf('+15550100')]: [{ type: 'UniqueValueReleased', data: { owner: 'u1', at: T1 } }],
          'user-u1': [{ type: 'UserUpdated', data: { userId: 'u1', phoneNumber: null, at: T1 } }],
        });
    });

    it('answers 404 for an unknown or deleted user', () => {
      given().when({ type: 'UpdateUser', userId: 'u1', isActive: false, at: T1 }).thenFails('NOT_FOUND');
      given({ user: [...alice, { type: 'UserDeleted', data: { userId: 'u1', at: T0 } }] })
        .when({ type: 'UpdateUser', userId: 'u1', isActive: false, at: T1 })
        .thenFails('NOT_FOUND');
    });
  });

  describe('DeleteUser', () => {
    it('revokes every role on both sides, deletes, ends the sessions and releases email and phone', () => {
      given({
        user: [userCreated('u1', 'Alice@Example.com', '+15550100'), roleAssigned('u1', 'r1'), roleAssigned('u1', 'r2')],
        heldRoles: { r1: [roleCreated('r1', 'writer'), holderAdded('r1', 'u1')], r2: [roleCreated('r2', 'reader'), holderAdded('r2', 'u1')] },
      })
        .when({ type: 'DeleteUser', userId: 'u1', at: T1 })
        .then({
          'role-r1': [{ type: 'RoleHolderRemoved', data: { roleId: 'r1', userId: 'u1', at: T1 } }],
          'role-r2': [{ type: 'RoleHolderRemoved', data: { roleId: 'r2', userId: 'u1', at: T1 } }],
          [emailOf('alice@example.com')]: [{ type: 'UniqueValueReleased', data: { owner: 'u1', at: T1 } }],
          [phoneOf('+15550100')]: [{ type: 'UniqueValueReleased', data: { owner: 'u1', at: T1 } }],
          'user-u1': [
            { type: 'RoleRevoked', data: { userId: 'u1', roleId: 'r1', at: T1 } },
            { type: 'RoleRevoked', data: { userId: 'u1', roleId: 'r2', at: T1 } },
            { type: 'UserDeleted', data: { userId: 'u1', at: T1 } },
            sessionsEnded('u1', 'user deleted'),
          ],
        });
    });

    it('releases the federated identity, so that identity can sign in again as a new account', () => {
      const federated: UserEvent = { type: 'UserFederationLinked', data: { userId: 'u1', provider: 'google', subject: 's-1', email: 'a@example.com', at: T0 } };
      const decision = given({ user: [userCreated('u1', 'a@example.com'), federated] })
        .when({ type: 'DeleteUser', userId: 'u1', at: T1 })
        .decision();
      expect(decision['unique-federated-identity:google s-1']).to.deep.equal([{ type: 'UniqueValueReleased', data: { owner: 'u1', at: T1 } }]);
    });

    it('answers 404 for an unknown user and for a second delete', () => {
      given().when({ type: 'DeleteUser', userId: 'u1', at: T1 }).thenFails('NOT_FOUND');
      given({ user: [userCreated('u1', 'a@example.com'), { type: 'UserDeleted', data: { userId: 'u1', at: T0 } }] })
        .when({ type: 'DeleteUser', userId: 'u1', at: T1 })
        .thenFails('NOT_FOUND');
    });
  });

  describe('AssignRole', () => {
    const role = [roleCreated('r1', 'writer')];

    it('assigns on the user and the role stream, without ending sessions', () => {
      given({ user: [userCreated('u1', 'a@example.com')], role })
        .when({ type: 'AssignRole', userId: 'u1', roleId: 'r1', at: T1 })
        .then({
          'user-u1': [{ type: 'RoleAssigned', data: { userId: 'u1', roleId: 'r1', at: T1 } }],
          'role-r1': [{ type: 'RoleHolderAdded', data: { roleId: 'r1', userId: 'u1', at: T1 } }],
        });
    });

    it('is idempotent: assigning a held role changes nothing', () => {
      given({ user: [userCreated('u1', 'a@example.com'), roleAssigned('u1', 'r1')], role })
        .when({ type: 'AssignRole', userId: 'u1', roleId: 'r1', at: T1 })
        .then({});
    });

    it('answers 404 for an unknown user, an unknown role and a deleted role', () => {
      given({ role }).when({ type: 'AssignRole', userId: 'u1', roleId: 'r1', at: T1 }).thenFails('NOT_FOUND', /User/);
      given({ user: [userCreated('u1', 'a@example.com')] })
        .when({ type: 'AssignRole', userId: 'u1', roleId: 'r1', at: T1 })
        .thenFails('NOT_FOUND', /Role/);
      given({ user: [userCreated('u1', 'a@example.com')], role: [...role, { type: 'RoleDeleted', data: { roleId: 'r1', at: T0 } }] })
        .when({ type: 'AssignRole', userId: 'u1', roleId: 'r1', at: T1 })
        .thenFails('NOT_FOUND', /Role/);
    });
  });

  describe('RevokeRole', () => {
    it('revokes on both streams and ends the sessions', () => {
      given({ user: [userCreated('u1', 'a@example.com'), roleAssigned('u1', 'r1')], role: [roleCreated('r1', 'writer'), holderAdded('r1', 'u1')] })
        .when({ type: 'RevokeRole', userId: 'u1', roleId: 'r1', at: T1 })
        .then({
          'user-u1': [{ type: 'RoleRevoked', data: { userId: 'u1', roleId: 'r1', at: T1 } }, sessionsEnded('u1', 'role removed')],
          'role-r1': [{ type: 'RoleHolderRemoved', data: { roleId: 'r1', userId: 'u1', at: T1 } }],
        });
    });

    it('answers 404 when the user does not hold the role', () => {
      given({ user: [userCreated('u1', 'a@example.com'), roleAssigned('u1', 'r1')] })
        .when({ type: 'RevokeRole', userId: 'u1', roleId: 'r2', at: T1 })
        .thenFails('NOT_FOUND');
    });
  });

  describe('EndSessions', () => {
    it('records the end on the user stream', () => {
      given()
        .when({ type: 'EndSessions', userId: 'u1', reason: 'by hand', at: T1 })
        .then({ 'user-u1': [sessionsEnded('u1', 'by hand')] });
    });
  });

  describe('CreateRole', () => {
    it('creates the role with its scopes sorted and distinct, and claims the name', () => {
      given()
        .when({ type: 'CreateRole', roleId: 'r1', name: 'team:eng/ops.v-2_x', description: 'd', scopes: ['runs:read', 'iam:admin', 'runs:read'], at: T1 })
        .then({
          [roleNameOf('team:eng/ops.v-2_x')]: [{ type: 'UniqueValueClaimed', data: { owner: 'r1', at: T1 } }],
          'role-r1': [
            { type: 'RoleCreated', data: { roleId: 'r1', name: 'team:eng/ops.v-2_x', description: 'd', at: T1 } },
            { type: 'RoleScopesChanged', data: { roleId: 'r1', added: ['iam:admin', 'runs:read'], removed: [], scopes: ['iam:admin', 'runs:read'], at: T1 } },
          ],
        });
    });

    it('records no scope change for a role without scopes', () => {
      const decision = given().when({ type: 'CreateRole', roleId: 'r1', name: 'empty', description: '', scopes: [], at: T1 }).decision();
      expect(decision['role-r1']!.map((e) => e.type)).to.deep.equal(['RoleCreated']);
    });

    for (const name of ['bad name', '', 'semi;colon', 'ünïcode!', 'a'.repeat(201)]) {
      it(`answers 400 for the role name ${JSON.stringify(name.slice(0, 20))}`, () => {
        given().when({ type: 'CreateRole', roleId: 'r1', name, description: '', scopes: [], at: T1 }).thenFails('BAD_REQUEST');
      });
    }

    it('answers 400 for a scope name outside the pattern', () => {
      given()
        .when({ type: 'CreateRole', roleId: 'r1', name: 'ok', description: '', scopes: ['runs:read', 'runs read'], at: T1 })
        .thenFails('BAD_REQUEST', /Scope/);
    });

    it('answers 409 when the name is taken', () => {
      given({ claims: { [roleNameOf('writer')]: [claimed('r0')] } })
        .when({ type: 'CreateRole', roleId: 'r1', name: 'writer', description: '', scopes: [], at: T1 })
        .thenFails('ALREADY_EXISTS');
    });
  });

  describe('ChangeRoleScopes', () => {
    const role = [roleCreated('r1', 'writer'), scopesSet('r1', ['a:read', 'b:write'])];
    const heldBy = (...userIds: string[]) => [...role, ...userIds.map((id) => holderAdded('r1', id))];

    it("ends every holder's sessions when a scope is removed", () => {
      given({ role: heldBy('u1', 'u2') })
        .when({ type: 'ChangeRoleScopes', roleId: 'r1', add: ['c:x'], remove: ['a:read'], at: T1 })
        .then({
          'role-r1': [{ type: 'RoleScopesChanged', data: { roleId: 'r1', added: ['c:x'], removed: ['a:read'], scopes: ['b:write', 'c:x'], at: T1 } }],
          'user-u1': [sessionsEnded('u1', 'role scope removed')],
          'user-u2': [sessionsEnded('u2', 'role scope removed')],
        });
    });

    it('ends nothing when scopes are only granted', () => {
      given({ role: heldBy('u1') })
        .when({ type: 'ChangeRoleScopes', roleId: 'r1', add: ['z:z', 'c:x', 'c:x'], remove: [], at: T1 })
        .then({
          'role-r1': [
            { type: 'RoleScopesChanged', data: { roleId: 'r1', added: ['c:x', 'z:z'], removed: [], scopes: ['a:read', 'b:write', 'c:x', 'z:z'], at: T1 } },
          ],
        });
    });

    it('does nothing for scopes already held or not held', () => {
      given({ role: heldBy('u1') })
        .when({ type: 'ChangeRoleScopes', roleId: 'r1', add: ['a:read'], remove: ['nope'], at: T1 })
        .then({});
    });

    it('answers 400 when a scope is both added and removed', () => {
      given({ role })
        .when({ type: 'ChangeRoleScopes', roleId: 'r1', add: ['c:x'], remove: ['c:x'], at: T1 })
        .thenFails('BAD_REQUEST', /c:x/);
    });

    it('answers 400 for a scope name outside the pattern', () => {
      given({ role })
        .when({ type: 'ChangeRoleScopes', roleId: 'r1', add: ['c x'], remove: [], at: T1 })
        .thenFails('BAD_REQUEST');
      given({ role })
        .when({ type: 'ChangeRoleScopes', roleId: 'r1', add: [], remove: [''], at: T1 })
        .thenFails('BAD_REQUEST');
    });

    it('answers 404 for an unknown or deleted role', () => {
      given()
        .when({ type: 'ChangeRoleScopes', roleId: 'r1', add: ['c:x'], remove: [], at: T1 })
        .thenFails('NOT_FOUND');
      given({ role: [...role, { type: 'RoleDeleted', data: { roleId: 'r1', at: T0 } }] })
        .when({ type: 'ChangeRoleScopes', roleId: 'r1', add: ['c:x'], remove: [], at: T1 })
        .thenFails('NOT_FOUND');
    });
  });

  describe('DeleteRole', () => {
    it('deletes, releases the name, and revokes it from every holder ending their sessions', () => {
      given({ role: [roleCreated('r1', 'writer'), holderAdded('r1', 'u1'), holderAdded('r1', 'u2')] })
        .when({ type: 'DeleteRole', roleId: 'r1', at: T1 })
        .then({
          [roleNameOf('writer')]: [{ type: 'UniqueValueReleased', data: { owner: 'r1', at: T1 } }],
          'role-r1': [{ type: 'RoleDeleted', data: { roleId: 'r1', at: T1 } }],
          'user-u1': [{ type: 'RoleRevoked', data: { userId: 'u1', roleId: 'r1', at: T1 } }, sessionsEnded('u1', 'role deleted')],
          'user-u2': [{ type: 'RoleRevoked', data: { userId: 'u2', roleId: 'r1', at: T1 } }, sessionsEnded('u2', 'role deleted')],
        });
    });

    it('answers 404 for an unknown role and for a second delete', () => {
      given().when({ type: 'DeleteRole', roleId: 'r1', at: T1 }).thenFails('NOT_FOUND');
      given({ role: [roleCreated('r1', 'writer'), { type: 'RoleDeleted', data: { roleId: 'r1', at: T0 } }] })
        .when({ type: 'DeleteRole', roleId: 'r1', at: T1 })
        .thenFails('NOT_FOUND');
    });
  });

  describe('Bootstrap', () => {
    const command = {
      type: 'Bootstrap',
      userId: 'u1',
      roleId: 'r1',
      email: 'root@example.com',
      passwordHash: '$2b$12$hash',
      tenant: null,
      at: T1,
    } as const;

    const rootCreated = { ...userCreated('u1', 'root@example.com'), data: { ...userCreated('u1', 'root@example.com').data, at: T1 } };

    it('creates the superadmin role with iam:admin, the first user, the assignment and closes bootstrap', () => {
      given()
        .when(command)
        .then({
          [emailOf('root@example.com')]: [{ type: 'UniqueValueClaimed', data: { owner: 'u1', at: T1 } }],
          'user-u1': [rootCreated, { type: 'RoleAssigned', data: { userId: 'u1', roleId: 'r1', at: T1 } }],
          [roleNameOf('superadmin')]: [{ type: 'UniqueValueClaimed', data: { owner: 'r1', at: T1 } }],
          'role-r1': [
            { type: 'RoleCreated', data: { roleId: 'r1', name: 'superadmin', description: 'Created by bootstrap', at: T1 } },
            { type: 'RoleScopesChanged', data: { roleId: 'r1', added: ['iam:admin'], removed: [], scopes: ['iam:admin'], at: T1 } },
            { type: 'RoleHolderAdded', data: { roleId: 'r1', userId: 'u1', at: T1 } },
          ],
          'iam-bootstrap': [{ type: 'BootstrapCompleted', data: { userId: 'u1', roleId: 'r1', at: T1 } }],
        });
    });

    it('reopens once every user is gone, reusing the superadmin role and giving it iam:admin back', () => {
      const survivor = [roleCreated('r0', 'superadmin'), scopesSet('r0', ['runs:read'])];
      given({ role: survivor, claims: { [roleNameOf('superadmin')]: [claimed('r0')] } })
        .when(command)
        .then({
          [emailOf('root@example.com')]: [{ type: 'UniqueValueClaimed', data: { owner: 'u1', at: T1 } }],
          'user-u1': [rootCreated, { type: 'RoleAssigned', data: { userId: 'u1', roleId: 'r0', at: T1 } }],
          'role-r0': [
            { type: 'RoleScopesChanged', data: { roleId: 'r0', added: ['iam:admin'], removed: [], scopes: ['iam:admin', 'runs:read'], at: T1 } },
            { type: 'RoleHolderAdded', data: { roleId: 'r0', userId: 'u1', at: T1 } },
          ],
          'iam-bootstrap': [{ type: 'BootstrapCompleted', data: { userId: 'u1', roleId: 'r0', at: T1 } }],
        });
    });

    it('answers 409 while any user exists', () => {
      given({ anyUserExists: true }).when(command).thenFails('ALREADY_EXISTS');
    });

    it('answers 400 for an invalid email', () => {
      given()
        .when({ ...command, email: 'root' })
        .thenFails('BAD_REQUEST');
    });
  });

  describe('a tenant admin’s fence (multi-tenant: its own tenant’s users without superadmin, no superadmin role)', () => {
    const fence = { tenant: 't1', superadminRoleId: 'r-super' };
    const createdIn = (userId: string, tenant: string): UserEvent => ({
      type: 'UserCreated',
      data: {
        userId,
        email: `${userId}@example.com`,
        phoneNumber: null,
        passwordHash: '$2b$12$hash',
        tenant,
        federatedProvider: null,
        federatedSub: null,
        at: T0,
      },
    });
    const superadmin = [roleCreated('r-super', 'superadmin'), scopesSet('r-super', ['iam:admin'])];
    const runner = [roleCreated('r-run', 'runner')];

    it('reaches a user of its tenant that does not hold superadmin', () => {
      given({ user: [createdIn('u1', 't1')] })
        .when({ type: 'UpdateUser', userId: 'u1', isActive: false, fence, at: T1 })
        .then({ 'user-u1': [{ type: 'UserDeactivated', data: { userId: 'u1', at: T1 } }, sessionsEnded('u1', 'user deactivated')] });
      given({ user: [createdIn('u1', 't1')], role: runner })
        .when({ type: 'AssignRole', userId: 'u1', roleId: 'r-run', fence, at: T1 })
        .decision();
    });

    it('answers 404 for a user of another tenant, whatever the command', () => {
      const history = { user: [createdIn('u2', 't2')], role: runner };
      given(history)
        .when({ type: 'UpdateUser', userId: 'u2', passwordHash: 'x', fence, at: T1 })
        .thenFails('NOT_FOUND', /User u2 not found/);
      given(history).when({ type: 'DeleteUser', userId: 'u2', fence, at: T1 }).thenFails('NOT_FOUND');
      given(history).when({ type: 'AssignRole', userId: 'u2', roleId: 'r-run', fence, at: T1 }).thenFails('NOT_FOUND');
      given(history).when({ type: 'RevokeRole', userId: 'u2', roleId: 'r-run', fence, at: T1 }).thenFails('NOT_FOUND');
    });

    it('answers 404 for a user of its tenant who holds superadmin, also when the grant landed just before (the retry of a lost race)', () => {
      const history = { user: [createdIn('u1', 't1'), roleAssigned('u1', 'r-super')], role: runner };
      given(history).when({ type: 'UpdateUser', userId: 'u1', passwordHash: 'x', fence, at: T1 }).thenFails('NOT_FOUND');
      given(history).when({ type: 'DeleteUser', userId: 'u1', fence, at: T1 }).thenFails('NOT_FOUND');
      given(history).when({ type: 'AssignRole', userId: 'u1', roleId: 'r-run', fence, at: T1 }).thenFails('NOT_FOUND');
    });

    it('answers 403 for assigning or removing the superadmin role (by its name, or its id once deleted)', () => {
      given({ user: [createdIn('u1', 't1')], role: superadmin })
        .when({ type: 'AssignRole', userId: 'u1', roleId: 'r-super', fence: { tenant: 't1', superadminRoleId: null }, at: T1 })
        .thenFails('PERMISSION_DENIED', /deployment admin/);
      given({ user: [createdIn('u1', 't1')], role: [] })
        .when({ type: 'RevokeRole', userId: 'u1', roleId: 'r-super', fence, at: T1 })
        .thenFails('PERMISSION_DENIED');
      given({ user: [createdIn('u1', 't1')], role: superadmin })
        .when({ type: 'AssignRole', userId: 'u1', roleId: 'r-super', at: T1 })
        .decision();
    });

    it('creates users in its own tenant only (403 for another)', () => {
      given()
        .when(createUser({ tenant: 't2', fence }))
        .thenFails('PERMISSION_DENIED', /tenant t1/);
      expect(
        given()
          .when(createUser({ tenant: 't1', fence }))
          .decision()['user-u1']![0]!.data,
      ).to.include({ tenant: 't1' });
    });
  });
});
