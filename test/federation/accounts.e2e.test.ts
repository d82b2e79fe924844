// Which account a federated login lands on: upsert by (provider, subject), linking only by verified email,
// allowed domains, default role for new users, no password, disabled accounts, and the journaled events.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, client, expectError, expectUnauthenticated, payloadOf, requestToken, type Admin } from '../support/http.js';
import { createUser } from '../support/users.js';
import type { FakeProvider } from './support/fakeProvider.js';
import {
  Browser,
  countUsers,
  eventsOfStream,
  eventsOfType,
  signIn,
  signInOk,
  startFakeProvider,
  startFederationService,
  usersWhere,
} from './support/harness.js';

const PASSWORD = 'a long enough password';

describe('federated login: which account signs in', () => {
  let fake: FakeProvider;
  let service: Service;
  let admin: Admin;
  let api: ReturnType<typeof client>;
  before(async () => {
    fake = await startFakeProvider();
    service = await startFederationService(fake);
    admin = await bootstrapAdmin(service.url);
    api = client(service.url, admin.token);
  });
  after(async () => {
    await service?.close();
    await fake?.stop();
  });

  const pool = () => service.kernel.pool;
  async function createPasswordUser(email: string): Promise<string> {
    return (await createUser(service.url, admin.token, email, {}, { password: PASSWORD, signIn: false })).id;
  }

  it('creates a new user keyed by (provider, subject), journaling UserCreated and UserSignedIn on its stream', async () => {
    const { userId } = await signInOk(service, fake, 'google', { sub: 'new-1', email: 'newbie@example.com', email_verified: true });
    const events = await eventsOfStream(pool(), `user-${userId}`);
    expect(events.map((e) => e.type)).to.deep.equal(['UserCreated', 'UserSignedIn']);
    expect(events[0]!.data).to.include({ userId, email: 'newbie@example.com', passwordHash: null, federatedProvider: 'google', federatedSub: 'new-1' });
    expect(events[1]!.data).to.include({ userId, method: 'federated', provider: 'google' });
  });

  it('finds the same user on the next login even when the provider email changed; never re-keys by email', async () => {
    const first = await signInOk(service, fake, 'google', { sub: 'stable-1', email: 'first@example.com', email_verified: true });
    const second = await signInOk(service, fake, 'google', { sub: 'stable-1', email: 'changed@example.com', email_verified: true });
    expect(second.userId).to.equal(first.userId);
    expect(await usersWhere(pool(), "federated_sub = 'stable-1'")).to.have.length(1);
    expect(await usersWhere(pool(), "email = 'changed@example.com'")).to.deep.equal([]);
    const signIns = (await eventsOfStream(pool(), `user-${first.userId}`)).filter((e) => e.type === 'UserSignedIn');
    expect(signIns).to.have.length(2);

    // Another identity asserting the same (verified) email does not get that account, at any provider.
    const users = await countUsers(pool());
    expectError(await signIn(service, fake, 'google', { sub: 'stable-2', email: 'first@example.com', email_verified: true }), 403, 'PERMISSION_DENIED');
    expectError(await signIn(service, fake, 'acme', { sub: 'stable-1', email: 'first@example.com', email_verified: true }), 403, 'PERMISSION_DENIED');
    expect(await countUsers(pool())).to.equal(users);
    expect(await usersWhere(pool(), 'id = $1', [first.userId])).to.have.nested.property('[0].federated_sub', 'stable-1');
  });

  it('links an existing password account only when the provider verified the email (403 and no link otherwise)', async () => {
    const userId = await createPasswordUser('linkme@example.com');
    const refused = await signIn(service, fake, 'google', { sub: 'link-1', email: 'linkme@example.com', email_verified: false });
    expectError(refused, 403, 'PERMISSION_DENIED');
    expect(await usersWhere(pool(), 'id = $1', [userId])).to.have.nested.property('[0].federated_provider', null);
    expect((await eventsOfStream(pool(), `user-${userId}`)).map((e) => e.type)).to.not.include('UserFederationLinked');
    expect(await usersWhere(pool(), "federated_sub = 'link-1'")).to.deep.equal([]);

    const linked = await signInOk(service, fake, 'google', { sub: 'link-1', email: 'LinkMe@Example.com', email_verified: true });
    expect(linked.userId).to.equal(userId);
    const events = await eventsOfStream(pool(), `user-${userId}`);
    expect(events.map((e) => e.type)).to.deep.equal(['UserCreated', 'UserFederationLinked', 'UserSignedIn']);
    expect(events[1]!.data).to.include({ userId, provider: 'google', subject: 'link-1', email: 'linkme@example.com' });
    expect(await usersWhere(pool(), 'id = $1', [userId])).to.have.nested.property('[0].federated_sub', 'link-1');
    // The account keeps its password, and later logins find it by identity.
    expect((await requestToken(service.url, 'linkme@example.com', PASSWORD)).status).to.equal(200);
    const again = await signInOk(service, fake, 'google', { sub: 'link-1', email: 'other-address@example.com', email_verified: false });
    expect(again.userId).to.equal(userId);
  });

  it('github: links only through an address its email list marks verified', async () => {
    const userId = await createPasswordUser('dave@example.com');
    const unverified = await signIn(service, fake, 'github', { githubId: 9001, githubEmails: [{ email: 'dave@example.com', verified: false, primary: true }] });
    expectError(unverified, 403, 'PERMISSION_DENIED');
    expect(await usersWhere(pool(), 'id = $1', [userId])).to.have.nested.property('[0].federated_provider', null);

    const verified = await signInOk(service, fake, 'github', {
      githubId: 9001,
      githubEmails: [
        { email: 'dave@example.com', verified: true, primary: false },
        { email: 'dave-old@example.com', verified: false, primary: true },
      ],
    });
    expect(verified.userId).to.equal(userId);
    expect(await usersWhere(pool(), 'id = $1', [userId])).to.have.nested.property('[0].federated_sub', '9001');
  });

  it('refuses emails outside allowed_domains (case-insensitively) with 403 and creates nobody', async () => {
    const users = await countUsers(pool());
    expectError(await signIn(service, fake, 'corp', { sub: 'out-1', email: 'eve@elsewhere.example', email_verified: true }), 403, 'PERMISSION_DENIED');
    expectError(await signIn(service, fake, 'corp', { sub: 'out-2', email: 'eve@corp.example.evil', email_verified: true }), 403, 'PERMISSION_DENIED');
    expectError(await signIn(service, fake, 'corp', { sub: 'out-3', email: null }), 403, 'PERMISSION_DENIED');
    // An address the provider does not vouch for says nothing about the organisation.
    expectError(await signIn(service, fake, 'corp', { sub: 'out-4', email: 'eve@corp.example', email_verified: false }), 403, 'PERMISSION_DENIED');
    expectError(await signIn(service, fake, 'corp', { sub: 'out-5', email: 'eve@corp.example' }), 403, 'PERMISSION_DENIED');
    expect(await countUsers(pool())).to.equal(users);
    const inside = await signInOk(service, fake, 'corp', { sub: 'in-1', email: 'ivy@CORP.example', email_verified: true });
    expect(inside.userId).to.be.a('string');
  });

  it('gives default_role to new users only, and only once the role exists', async () => {
    const early = await signInOk(service, fake, 'google', { sub: 'role-early', email: 'early@example.com', email_verified: true });
    expect(early.groups).to.deep.equal([]);

    const role = await api.post('/auth/admin/roles', { name: 'staff', description: 'federated staff' });
    expect(role.status, JSON.stringify(role.body)).to.equal(201);
    expect((await api.patch(`/auth/admin/roles/${role.body.id}/scopes`, { add: ['runs:read'], remove: [] })).status).to.equal(200);

    const late = await signInOk(service, fake, 'google', { sub: 'role-late', email: 'late@example.com', email_verified: true });
    expect(late.groups).to.deep.equal(['staff']);
    expect(payloadOf(late.token)).to.deep.include({ groups: ['staff'], scopes: ['runs:read'] });
    const roleEvents = (await eventsOfStream(pool(), `user-${late.userId}`)).map((e) => e.type);
    expect(roleEvents).to.deep.equal(['UserCreated', 'RoleAssigned', 'UserSignedIn']);

    // Existing users are not changed by a later login, whether found by identity or linked by email.
    const earlyAgain = await signInOk(service, fake, 'google', { sub: 'role-early', email: 'early@example.com', email_verified: true });
    expect(earlyAgain.groups).to.deep.equal([]);
    const passwordUser = await createPasswordUser('linked-late@example.com');
    const linked = await signInOk(service, fake, 'google', { sub: 'role-link', email: 'linked-late@example.com', email_verified: true });
    expect(linked.userId).to.equal(passwordUser);
    expect(linked.groups).to.deep.equal([]);

    // A provider without default_role gives nothing.
    const other = await signInOk(service, fake, 'acme', { sub: 'acme-norole', email: 'norole@acme.example', email_verified: true });
    expect(other.groups).to.deep.equal([]);
  });

  it('makes federated users without a password: the password grant answers the generic 401', async () => {
    const { userId } = await signInOk(service, fake, 'google', { sub: 'nopw', email: 'nopw@example.com', email_verified: true });
    expect(await usersWhere(pool(), 'id = $1', [userId])).to.have.nested.property('[0].hashed_password', null);
    for (const password of ['', 'anything at all', PASSWORD]) {
      expectUnauthenticated(await requestToken(service.url, 'nopw@example.com', password));
    }
    expect((await api.get(`/auth/admin/users/${userId}`)).body).to.include({ has_password: false, federated_provider: 'google' });
  });

  it('two first logins of one identity at once make one account, and both sign in to it', async () => {
    const profile = { sub: 'twin', email: 'twin@example.com', email_verified: true };
    const a = new Browser(service.url);
    const b = new Browser(service.url);
    fake.willSignIn(profile, profile);
    const [loginA, loginB] = [await a.startLogin('google'), await b.startLogin('google')];
    const results = await Promise.all([a.finishLogin(loginA.callbackUrl), b.finishLogin(loginB.callbackUrl)]);
    expect(
      results.map((r) => r.status),
      JSON.stringify(results.map((r) => r.body)),
    ).to.deep.equal([200, 200]);
    const ids = results.map((r) => payloadOf(r.body.access_token).sub as string);
    expect(ids[0]).to.equal(ids[1]);
    expect(await usersWhere(pool(), "federated_sub = 'twin'")).to.have.length(1);
  });

  it('two identities racing to link one password account: one links, the other gets 403', async () => {
    const userId = await createPasswordUser('contested@example.com');
    const a = new Browser(service.url);
    const b = new Browser(service.url);
    fake.willSignIn(
      { sub: 'contender-a', email: 'contested@example.com', email_verified: true },
      { sub: 'contender-b', email: 'contested@example.com', email_verified: true },
    );
    const [loginA, loginB] = [await a.startLogin('google'), await b.startLogin('google')];
    const results = await Promise.all([a.finishLogin(loginA.callbackUrl), b.finishLogin(loginB.callbackUrl)]);
    expect(results.map((r) => r.status).sort(), JSON.stringify(results.map((r) => r.body))).to.deep.equal([200, 403]);
    const links = (await eventsOfStream(pool(), `user-${userId}`)).filter((e) => e.type === 'UserFederationLinked');
    expect(links).to.have.length(1);
    const [row] = await usersWhere(pool(), 'id = $1', [userId]);
    expect(row!.federated_sub).to.equal(links[0]!.data.subject);
  });

  it('refuses a disabled account with 403 and journals no sign-in; re-enabled, it signs in again', async () => {
    const { userId } = await signInOk(service, fake, 'google', { sub: 'off-1', email: 'off@example.com', email_verified: true });
    expect((await api.patch(`/auth/admin/users/${userId}`, { is_active: false })).status).to.equal(200);
    const signInsBefore = (await eventsOfType(pool(), 'UserSignedIn')).length;
    expectError(await signIn(service, fake, 'google', { sub: 'off-1', email: 'off@example.com', email_verified: true }), 403, 'PERMISSION_DENIED');
    expect((await eventsOfType(pool(), 'UserSignedIn')).length).to.equal(signInsBefore);

    // A disabled password account is not taken over by linking either.
    const passwordUser = await createPasswordUser('off-linked@example.com');
    expect((await api.patch(`/auth/admin/users/${passwordUser}`, { is_active: false })).status).to.equal(200);
    expectError(await signIn(service, fake, 'google', { sub: 'off-2', email: 'off-linked@example.com', email_verified: true }), 403, 'PERMISSION_DENIED');
    expect(await usersWhere(pool(), 'id = $1', [passwordUser])).to.have.nested.property('[0].federated_provider', null);

    expect((await api.patch(`/auth/admin/users/${userId}`, { is_active: true })).status).to.equal(200);
    expect((await signInOk(service, fake, 'google', { sub: 'off-1', email: 'off@example.com', email_verified: true })).userId).to.equal(userId);
  });
});
