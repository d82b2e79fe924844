// IAM commands that race: each invariant must hold whichever request commits first.
import { expect } from 'chai';
import { SESSION_ENDED_MESSAGE } from '../../src/iam/authenticator.js';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, client, expectUnauthenticated, login, requestToken, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser } from '../support/users.js';

describe('IAM races', () => {
  let service: Service;
  let admin: Admin;
  const adminApi = () => client(service.url, admin.token);

  /** A user with this password, not signed in: answers its id. */
  const newUser = async (email: string, password: string): Promise<string> =>
    (await createUser(service.url, admin.token, email, {}, { password, signIn: false })).id;

  async function createRole(name: string, scopes: string[] = ['runs:read']): Promise<string> {
    const created = await adminApi().post('/auth/admin/roles', { name, scopes });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body.id as string;
  }

  before(async () => {
    service = await startTestService();
    admin = await bootstrapAdmin(service.url);
  });
  after(async () => {
    await service?.close();
  });

  it('refreshes one token once: of concurrent refreshes exactly one gets a new token', async () => {
    await newUser('refresher@example.com', 'refresher-password');
    const token = await login(service.url, 'refresher@example.com', 'refresher-password');
    const answers = await Promise.all(Array.from({ length: 8 }, () => client(service.url, token).post('/auth/refresh')));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).to.deep.equal([200, 401, 401, 401, 401, 401, 401, 401]);
    const fresh = answers.find((a) => a.status === 200)!.body.access_token as string;
    expect((await client(service.url, fresh).get('/auth/me')).status).to.equal(200);
    expectUnauthenticated(await client(service.url, token).get('/auth/me'), /revoked/);
  });

  it('deleting a role while it is being assigned leaves no user holding the deleted role', async () => {
    const userIds = await Promise.all(Array.from({ length: 6 }, (_, i) => newUser(`holder${i}@example.com`, 'holder-password')));
    for (let round = 0; round < 4; round++) {
      const roleId = await createRole(`contested-${round}`);
      const answers = await Promise.all([
        ...userIds.map((id) => adminApi().post(`/auth/admin/users/${id}/roles/${roleId}`)),
        adminApi().delete(`/auth/admin/roles/${roleId}`),
      ]);
      expect(answers.at(-1)!.status, JSON.stringify(answers.at(-1)!.body)).to.equal(204);
      // An assignment either committed before the delete (and was undone by it) or found the role gone.
      for (const answer of answers.slice(0, -1)) expect([200, 404], JSON.stringify(answer.body)).to.include(answer.status);
      for (const id of userIds) {
        const user = await adminApi().get(`/auth/admin/users/${id}`);
        expect(
          user.body.roles.map((r: { id: string }) => r.id),
          `round ${round}`,
        ).to.not.include(roleId);
      }
    }
    const { rows } = await service.kernel.pool.query(
      'SELECT count(*)::int AS n FROM iam_user_roles ur LEFT JOIN iam_roles r ON r.id = ur.role_id WHERE r.id IS NULL',
    );
    expect(rows[0].n).to.equal(0);
  });

  it('a login racing a deactivation never yields a token that outlives it', async () => {
    for (let round = 0; round < 6; round++) {
      const email = `racer${round}@example.com`;
      const userId = await newUser(email, 'racer-password');
      const [loginAnswer, patched] = await Promise.all([
        requestToken(service.url, email, 'racer-password'),
        // Let the login read the account first, so the deactivation lands while bcrypt runs.
        new Promise((resolve) => setTimeout(resolve, round * 5)).then(() => adminApi().patch(`/auth/admin/users/${userId}`, { is_active: false })),
      ]);
      expect(patched.status).to.equal(200);
      if (loginAnswer.status === 200) {
        expectUnauthenticated(await client(service.url, loginAnswer.body.access_token).get('/auth/me'), SESSION_ENDED_MESSAGE);
      } else {
        expect(loginAnswer.status).to.equal(401);
      }
    }
  });

  it('bootstrap reopens once every user is deleted, and the new admin holds iam:admin again', async () => {
    const users = await adminApi().get('/auth/admin/users?limit=1000');
    expect(users.status).to.equal(200);
    const others = (users.body as { id: string }[]).filter((u) => u.id !== admin.userId);
    for (const user of others) expect((await adminApi().delete(`/auth/admin/users/${user.id}`)).status).to.equal(204);
    const closed = await client(service.url).post('/auth/bootstrap', { email: 'second@example.com', password: 'second-admin-password' });
    expect(closed.status).to.equal(409);
    // The superadmin role is stripped of iam:admin before its last holder goes (who keeps admin rights
    // through another role, signing in again since the strip ended its session).
    const keeper = await createRole('keeper', ['iam:admin']);
    expect((await adminApi().post(`/auth/admin/users/${admin.userId}/roles/${keeper}`)).status).to.equal(200);
    const superadmin = (await adminApi().get('/auth/admin/roles')).body.find((r: { name: string }) => r.name === 'superadmin');
    expect((await adminApi().patch(`/auth/admin/roles/${superadmin.id}/scopes`, { remove: ['iam:admin'] })).status).to.equal(200);
    admin = { ...admin, token: await login(service.url, admin.email, admin.password) };
    expect((await adminApi().delete(`/auth/admin/users/${admin.userId}`)).status).to.equal(204);

    const [first, second] = await Promise.all([
      client(service.url).post('/auth/bootstrap', { email: 'second@example.com', password: 'second-admin-password' }),
      client(service.url).post('/auth/bootstrap', { email: 'third@example.com', password: 'third-admin-password' }),
    ]);
    expect([first.status, second.status].sort()).to.deep.equal([200, 409]);
    const winner = first.status === 200 ? first : second;
    const me = await client(service.url, winner.body.access_token).get('/auth/me');
    expect(me.status).to.equal(200);
    expect(me.body.scopes).to.include('iam:admin');
    const roles = (await client(service.url, winner.body.access_token).get('/auth/admin/roles')).body as { id: string; name: string }[];
    expect(roles.filter((r) => r.name === 'superadmin').map((r) => r.id)).to.deep.equal([superadmin.id]);
  });
});
