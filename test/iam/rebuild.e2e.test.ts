// Rebuilding each IAM read model from the log after a realistic history gives, byte for byte, the table built inline.
import { expect } from 'chai';
import { openDataKeys } from '../../src/privacy/boot.js';
import { IamCommands } from '../../src/iam/handlers.js';
import { iamProjections } from '../../src/iam/projection.js';
import { systemClock } from '../../src/kernel/clock.js';
import type { Service } from '../../src/main.js';
import { rebuildProjection } from '../../src/projections/index.js';
import type { RowProjection } from '../../src/projections/types.js';
import { bootstrapAdmin, client, login, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser } from '../support/users.js';

const quote = (name: string) => `"${name}"`;

describe('IAM projections: rebuild after a realistic history', function () {
  this.timeout(120_000);
  let service: Service;
  let admin: Admin;
  const ids: Record<string, string> = {};

  const api = () => client(service.url, admin.token);
  const ok = async (result: Promise<{ status: number; body: any }>, status = 200): Promise<any> => {
    const answer = await result;
    expect(answer.status, JSON.stringify(answer.body)).to.equal(status);
    return answer.body;
  };
  const newUser = async (name: string, fields: Record<string, unknown> = {}) => {
    ids[name] = (await createUser(service.url, admin.token, `${name}@example.com`, {}, { password: `${name}-password-1`, fields, signIn: false })).id;
  };
  const createRole = async (name: string, scopes: string[]) => {
    ids[name] = (await ok(api().post('/auth/admin/roles', { name, description: `the ${name} role`, scopes }), 201)).id;
  };
  const assign = (user: string, role: string) => ok(api().post(`/auth/admin/users/${ids[user]}/roles/${ids[role]}`));
  const unassign = (user: string, role: string) => ok(api().delete(`/auth/admin/users/${ids[user]}/roles/${ids[role]}`));
  const signIn = (name: string, email = `${name}@example.com`) => login(service.url, email, `${name}-password-1`);
  const logout = (token: string) => ok(client(service.url, token).post('/auth/logout'), 204);

  /** The whole table as one JSON text, rows ordered by the key; timestamps as PostgreSQL renders them (microseconds). */
  async function tableJson(projection: RowProjection): Promise<string> {
    const order = projection.key.map((k) => `t.${quote(k)}`).join(', ');
    const { rows } = await service.kernel.pool.query<{ rows: string }>(
      `SELECT coalesce(json_agg(t ORDER BY ${order}), '[]'::json)::text AS rows FROM ${quote(projection.table)} t`,
    );
    return rows[0]!.rows;
  }

  before(async () => {
    service = await startTestService();
    admin = await bootstrapAdmin(service.url);
    const commands = new IamCommands(service.kernel.store, systemClock, await openDataKeys(service.kernel.pool, service.kernel.settings, false));

    await Promise.all([
      createRole('reader', ['runs:read']),
      createRole('writer', ['runs:control', 'runs:read']),
      createRole('auditor', ['artifacts:read']),
      createRole('temp', ['temp:scope']),
      createRole('empty', []),
    ]);
    await Promise.all([
      newUser('amy', { phone_number: '+15550001' }),
      newUser('ben'),
      newUser('cat', { phone_number: '+15550003' }),
      newUser('dan'),
      newUser('eve'),
      newUser('fay', { phone_number: '+15550006' }),
    ]);
    // Concurrent assignments: RoleAssigned on the user, RoleHolderAdded on the role, in interleaved transactions.
    await Promise.all([
      assign('amy', 'reader'),
      assign('amy', 'writer'),
      assign('ben', 'reader'),
      assign('cat', 'auditor'),
      assign('dan', 'temp'),
      assign('eve', 'temp'),
      assign('fay', 'reader'),
      assign('fay', 'writer'),
      assign('eve', 'empty'),
    ]);
    await assign('amy', 'reader'); // already held: no events

    // Logouts and a refresh revoke tokens.
    const [amyToken, benToken, catToken] = await Promise.all([signIn('amy'), signIn('ben'), signIn('cat')]);
    await Promise.all([logout(amyToken), logout(benToken)]);
    await ok(client(service.url, catToken).post('/auth/refresh'));

    // Scopes: granting ends nothing, stripping ends the holders' sessions, add and remove at once.
    await ok(api().patch(`/auth/admin/roles/${ids.reader}/scopes`, { add: ['approvals:decide'] }));
    await ok(api().patch(`/auth/admin/roles/${ids.writer}/scopes`, { remove: ['runs:read'] }));
    await ok(api().patch(`/auth/admin/roles/${ids.auditor}/scopes`, { add: ['artifacts:write'], remove: ['artifacts:read'] }));

    await unassign('ben', 'reader');
    await ok(api().delete(`/auth/admin/roles/${ids.temp}`), 204);

    // Users: email and phone changes, a password change, deactivation and reactivation.
    await ok(api().patch(`/auth/admin/users/${ids.amy}`, { email: 'amy.new@example.com', phone_number: '+15550009' }));
    await ok(api().patch(`/auth/admin/users/${ids.cat}`, { phone_number: null }));
    await ok(api().patch(`/auth/admin/users/${ids.ben}`, { password: 'ben-password-2' }));
    await ok(api().patch(`/auth/admin/users/${ids.dan}`, { is_active: false }));
    await ok(api().patch(`/auth/admin/users/${ids.dan}`, { is_active: true }));
    await ok(api().patch(`/auth/admin/users/${ids.eve}`, { is_active: false }));

    // A deleted user holding two roles, and a new account under the freed email.
    await ok(api().delete(`/auth/admin/users/${ids.fay}`), 204);
    const fayAgain = (await ok(api().post('/auth/admin/users', { email: 'fay@example.com', password: 'fay-password-1' }), 201)).id as string;
    ids.fay2 = fayAgain;
    await assign('fay2', 'reader');

    // Federation: a passwordless user and a link on an existing one.
    await commands.createUser({ email: 'gus@example.com', passwordHash: null, federatedProvider: 'github', federatedSub: '4242' });
    await commands.linkFederation(ids.cat!, 'google', 'cat-subject');

    // A busy moment: sign-ins, logouts, refreshes, assignments and a role deletion racing each other.
    const [amy2, cat2, dan2] = await Promise.all([signIn('amy', 'amy.new@example.com'), signIn('cat'), signIn('dan')]);
    await Promise.all([
      logout(amy2),
      logout(cat2),
      ok(client(service.url, dan2).post('/auth/refresh')),
      assign('dan', 'auditor'),
      assign('ben', 'auditor'),
      assign('fay2', 'writer'),
      ok(api().delete(`/auth/admin/roles/${ids.empty}`), 204),
    ]);
    await Promise.all([
      unassign('amy', 'writer'),
      ok(api().patch(`/auth/admin/roles/${ids.reader}/scopes`, { remove: ['approvals:decide'] })),
      ok(api().patch(`/auth/admin/users/${ids.dan}`, { password: 'dan-password-2' })),
    ]);
  });
  after(async () => {
    await service?.close();
  });

  it('went through every kind of IAM event', async () => {
    const { rows } = await service.kernel.pool.query<{ type: string; n: number }>('SELECT type, count(*)::int AS n FROM events GROUP BY type');
    const counts = Object.fromEntries(rows.map((r) => [r.type, r.n]));
    const expected = [
      'UserCreated',
      'UserUpdated',
      'PasswordChanged',
      'UserDeactivated',
      'UserReactivated',
      'UserDeleted',
      'UserFederationLinked',
      'RoleCreated',
      'RoleScopesChanged',
      'RoleDeleted',
      'RoleAssigned',
      'RoleRevoked',
      'RoleHolderAdded',
      'RoleHolderRemoved',
      'UserSessionsEnded',
      'TokenRevoked',
    ];
    for (const type of expected) expect(counts[type] ?? 0, `${type} events`).to.be.greaterThan(0);
    expect(counts.TokenRevoked).to.equal(6);
    // What was deleted is gone from the read models.
    const live = await service.kernel.pool.query<{ users: string[]; roles: string[]; held: string[] }>(
      `SELECT (SELECT array_agg(id::text) FROM iam_users) AS users, (SELECT array_agg(id::text) FROM iam_roles) AS roles,
              (SELECT array_agg(DISTINCT role_id::text) FROM iam_user_roles) AS held`,
    );
    const { users, roles, held } = live.rows[0]!;
    expect(users).to.include.members([ids.amy, ids.fay2]).and.not.include(ids.fay);
    expect(roles).to.not.include.members([ids.temp]).and.not.include(ids.empty);
    expect(held).to.not.include(ids.temp).and.not.include(ids.empty);
  });

  for (const projection of iamProjections) {
    it(`rebuilds ${projection.table} into byte-identical rows`, async () => {
      const inline = await tableJson(projection);
      expect(JSON.parse(inline), `${projection.table} is empty`).to.not.be.empty;
      const { rows } = await service.kernel.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE type = ANY($1::text[])', [
        projection.eventTypes,
      ]);

      const result = await rebuildProjection(service.kernel.pool, service.kernel.registry, service.kernel.registry.get(projection.name)!);

      expect(await tableJson(projection)).to.equal(inline);
      expect(result).to.include({ projection: projection.name, events: rows[0]!.n, rows: JSON.parse(inline).length });
    });
  }

  it('keeps applying new events inline to the rebuilt tables', async () => {
    const previous = Object.fromEntries(await Promise.all(iamProjections.map(async (p) => [p.table, await tableJson(p)] as const)));
    await newUser('hal');
    await assign('hal', 'writer');
    await logout(await signIn('hal'));
    await ok(api().patch(`/auth/admin/users/${ids.hal}`, { is_active: false }));
    const changed = await Promise.all(iamProjections.map(async (p) => (await tableJson(p)) !== previous[p.table]));
    expect(changed).to.deep.equal(iamProjections.map((p) => p.table !== 'iam_roles'));
    expect((await api().get(`/auth/admin/users/${ids.hal}`)).body).to.include({ email: 'hal@example.com', is_active: false });
  });
});
