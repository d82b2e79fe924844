// LinkFederation decided from the user's stream (not the read model): one account, one federated identity.
import { expect } from 'chai';
import type { UserEvent } from '../../src/iam/events.js';
import { given } from '../iam/decider.js';

const AT = '2030-01-01T00:00:00.000Z';
const userId = 'u-1';
const created = (federated: { provider: string; sub: string } | null): UserEvent => ({
  type: 'UserCreated',
  data: {
    userId,
    email: 'one@example.com',
    phoneNumber: null,
    passwordHash: federated ? null : '$2b$12$hash',
    tenant: null,
    federatedProvider: federated?.provider ?? null,
    federatedSub: federated?.sub ?? null,
    at: AT,
  },
});
const linked = (provider: string, subject: string): UserEvent => ({
  type: 'UserFederationLinked',
  data: { userId, provider, subject, email: 'one@example.com', at: AT },
});
const link = (provider: string, subject: string) => ({ type: 'LinkFederation' as const, userId, provider, subject, at: AT });

describe('LinkFederation (decider)', () => {
  it('links a password account that has no federated identity yet', () => {
    given({ user: [created(null)] })
      .when(link('google', 'sub-a'))
      .then({
        'unique-federated-identity:google sub-a': [{ type: 'UniqueValueClaimed', data: { owner: userId, at: AT } }],
        [`user-${userId}`]: [{ type: 'UserFederationLinked', data: { userId, provider: 'google', subject: 'sub-a', email: 'one@example.com', at: AT } }],
      });
  });

  it('refuses an identity another account holds already (one account per provider subject)', () => {
    given({ user: [created(null)], claims: { 'unique-federated-identity:google sub-a': [{ type: 'UniqueValueClaimed', data: { owner: 'u-2', at: AT } }] } })
      .when(link('google', 'sub-a'))
      .thenFails('ALREADY_EXISTS');
  });

  it('refuses a second identity once the stream holds a link (a racing link lost on the read model)', () => {
    given({ user: [created(null), linked('google', 'sub-a')] })
      .when(link('google', 'sub-b'))
      .thenFails('PERMISSION_DENIED', /already linked/);
    given({ user: [created(null), linked('google', 'sub-a')] })
      .when(link('github', 'sub-a'))
      .thenFails('PERMISSION_DENIED', /already linked/);
  });

  it('refuses to link a user created by another federated identity', () => {
    given({ user: [created({ provider: 'github', sub: '42' })] })
      .when(link('google', 'sub-a'))
      .thenFails('PERMISSION_DENIED', /already linked/);
  });

  it('lets the same identity link again (a retried login)', () => {
    const decision = given({ user: [created(null), linked('google', 'sub-a')] })
      .when(link('google', 'sub-a'))
      .decision();
    expect(decision[`user-${userId}`]).to.have.length(1);
  });
});
