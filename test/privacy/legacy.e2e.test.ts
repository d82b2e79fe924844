// A user written before personal data was sealed (clear email in its events) is sealed at start and signs in again.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { hashPassword } from '../../src/iam/passwords.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, login, requestToken } from '../support/http.js';
import { startTestService } from '../support/service.js';

describe('privacy: users from before sealing', () => {
  let service: Service | undefined;
  after(async () => service?.close());

  it('appends their values sealed at start: sign-in by email and phone works, reads open, the read model holds no clear text', async () => {
    const databaseUrl = await createTestDatabase();
    service = await startTestService({ databaseUrl });
    const admin = await bootstrapAdmin(service.url);
    const userId = randomUUID();
    const at = new Date().toISOString();
    // What an older version wrote: clear values, no blind indexes, claims under clear names.
    await service.kernel.store.append([
      {
        streamId: `user-${userId}`,
        expectedVersion: 0,
        events: [
          {
            type: 'UserCreated',
            data: {
              userId,
              email: 'Old.Timer@example.com',
              phoneNumber: '+15550777',
              passwordHash: await hashPassword('an old password!'),
              tenant: null,
              federatedProvider: null,
              federatedSub: null,
              at,
            },
          },
        ],
      },
      { streamId: 'unique-email:old.timer@example.com', expectedVersion: 0, events: [{ type: 'UniqueValueClaimed', data: { owner: userId, at } }] },
    ]);
    expect((await requestToken(service.url, 'old.timer@example.com', 'an old password!')).status, 'not found by blind index yet').to.equal(401);
    await service.close();

    service = await startTestService({ databaseUrl });
    expect((await requestToken(service.url, 'old.timer@example.com', 'an old password!')).status).to.equal(200);
    expect((await requestToken(service.url, '+15550777', 'an old password!')).status).to.equal(200);
    // A new process signs with a new (ephemeral) key: the admin signs in again.
    const token = await login(service.url, admin.email, admin.password);
    const user = await call(service.url, 'GET', `/auth/admin/users/${userId}`, { token });
    expect(user.body, JSON.stringify(user.body)).to.include({ email: 'Old.Timer@example.com', phone_number: '+15550777' });
    const { rows } = await service.kernel.pool.query('SELECT 1 FROM iam_users u WHERE u::text ILIKE $1', ['%old.timer%']);
    expect(rows).to.deep.equal([]);
    const taken = await call(service.url, 'POST', '/auth/admin/users', {
      token,
      json: { email: 'old.timer@EXAMPLE.com', password: 'another long password' },
    });
    expect(taken.status, JSON.stringify(taken.body)).to.equal(409);
  });
});
