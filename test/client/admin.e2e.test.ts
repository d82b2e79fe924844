// The client's IAM reads and writes, artifact and audit-verify calls (`client.iam`, `client.artifacts`, `client.audit.verify`)
// against the real service over loopback, on the console's admin fixture project.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { SvcClient, SvcRequestError } from '../../src/client/index.js';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser } from '../support/users.js';

const PROJECT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'console', 'fixtures', 'admin-project');

describe('client library: users, roles, scopes, artifacts and audit verification', function () {
  this.timeout(30_000);
  let service: Service;
  let client: SvcClient;
  let plain: SvcClient;

  before(async () => {
    service = await startTestService({ projectDir: PROJECT });
    const admin = await bootstrapAdmin(service.url);
    client = new SvcClient({ baseUrl: service.url, token: admin.token });
    plain = new SvcClient({ baseUrl: service.url, token: (await createUser(service.url, admin.token, 'plain@example.com', { readers: ['book:read'] })).token });
  });
  after(async () => {
    await service?.close();
  });

  it('lists users with their roles, roles with their scopes, and the scopes palette', async () => {
    const users = await client.iam.users({ limit: 10 });
    expect(users.find((user) => user.email === 'plain@example.com')?.roles?.map((role) => role.name)).to.deep.equal(['readers']);
    expect(await client.iam.users({ limit: 1, offset: 1 })).to.have.length(1);
    expect((await client.iam.roles()).find((role) => role.name === 'readers')?.scopes).to.deep.equal(['book:read']);
    const palette = await client.iam.scopes();
    expect(palette.crud.book).to.include({ list: 'book:read', read: 'book:read' });
    expect(palette.system).to.include('iam:admin');
  });

  it('creates, disables, grants, revokes and deletes a user, and creates, changes and deletes a role', async () => {
    const role = await client.iam.createRole({ name: 'clerks', description: 'Book clerks', scopes: ['book:read'] });
    expect(role).to.include({ name: 'clerks', description: 'Book clerks' });
    expect((await client.iam.changeRoleScopes(role.id, { add: ['book:write'], remove: ['book:read'] })).scopes).to.deep.equal(['book:write']);
    const user = await client.iam.createUser({ email: 'clerk@example.com', password: 'a long enough password' });
    expect(user).to.include({ email: 'clerk@example.com', is_active: true });
    expect((await client.iam.assignRole(user.id, role.id)).roles?.map((held) => held.name)).to.deep.equal(['clerks']);
    expect((await client.iam.revokeRole(user.id, role.id)).roles).to.deep.equal([]);
    expect((await client.iam.updateUser(user.id, { is_active: false })).is_active).to.equal(false);
    await client.iam.deleteUser(user.id);
    expect((await client.iam.users({ limit: 1000 })).some((listed) => listed.id === user.id)).to.equal(false);
    await client.iam.deleteRole(role.id);
    expect((await client.iam.roles()).some((listed) => listed.id === role.id)).to.equal(false);
  });

  it('lists artifacts with their versions and reads a version', async () => {
    const listed = (await client.artifacts.list()).find((artifact) => artifact.name === 'greeting_prompt');
    expect(listed).to.include({ type: 'prompt', source: 'project', latest_version: '1' });
    const read = await client.artifacts.get('greeting_prompt', '1');
    expect(read.content).to.equal('Say hello to {{ name }} in one sentence.\n');
    expect(read.hash).to.equal(listed!.versions[0]!.hash);
  });

  it('verifies the audit log', async () => {
    const report = await client.audit.verify();
    expect(report).to.include({ ok: true, first_broken: null });
    expect(report.events_checked).to.be.greaterThan(0);
  });

  it('throws SvcRequestError 403 without the scopes', async () => {
    const calls = [
      () => plain.iam.users(),
      () => plain.iam.scopes(),
      () => plain.iam.createUser({ email: 'sneaky@example.com', password: 'a long enough password' }),
      () => plain.iam.createRole({ name: 'sneaky', scopes: ['iam:admin'] }),
      () => plain.artifacts.list(),
      () => plain.audit.verify(),
    ];
    for (const call of calls) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(SvcRequestError);
      expect((error as SvcRequestError).status).to.equal(403);
    }
  });
});
