// Oversize input on the sign-in and user routes: passwords over 1024 bytes and bodies over SVC_BODY_LIMIT_BYTES are a 4xx, and nothing is written.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call, client, expectError, expectUnauthenticated, login, requestToken, type Admin, type HttpResult } from '../support/http.js';
import { startTestService } from '../support/service.js';

/** Roomy enough for a password of a few KB, small enough to cross cheaply. */
const BODY_LIMIT = 8192;
const MAX_PASSWORD_BYTES = 1024;

/** A form body for POST /auth/token of exactly `size` bytes (the password pads it). */
function tokenFormOfSize(username: string, size: number): Record<string, string> {
  const form = { username, password: '', grant_type: 'password' };
  const overhead = new URLSearchParams(form).toString().length;
  const result = { ...form, password: 'p'.repeat(size - overhead) };
  expect(new URLSearchParams(result).toString()).to.have.length(size);
  return result;
}

/** A JSON body for POST /auth/admin/users of exactly `size` bytes (the password pads it). */
function userJsonOfSize(email: string, size: number): string {
  const overhead = JSON.stringify({ email, password: '' }).length;
  const body = JSON.stringify({ email, password: 'p'.repeat(size - overhead) });
  expect(Buffer.byteLength(body)).to.equal(size);
  return body;
}

describe('oversize input on /auth', () => {
  let service: Service;
  let admin: Admin;
  const olga = { email: 'olga@example.com', password: 'olga-password-1' };
  /** Longer than the 72 bytes bcrypt considers. */
  const lena = { email: 'lena@example.com', password: `lena-${'L'.repeat(75)}` };

  const adminApi = () => client(service.url, admin.token);
  const countEvents = async () => (await service.kernel.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]!.n;
  const userEmails = async () => (await service.kernel.pool.query<{ email: string }>('SELECT email FROM iam_users ORDER BY email')).rows.map((r) => r.email);

  /** The error body of the spec's routes: exactly `{detail, code}`. */
  function expectErrorBody(result: HttpResult, status: number, code: string): void {
    expectError(result, status, code);
    expect(Object.keys(result.body).sort()).to.deep.equal(['code', 'detail']);
    expect(result.body.detail).to.be.a('string').that.is.not.empty;
  }

  before(async () => {
    service = await startTestService({ env: { SVC_BODY_LIMIT_BYTES: String(BODY_LIMIT) } });
    admin = await bootstrapAdmin(service.url);
    expect((await adminApi().post('/auth/admin/users', olga)).status).to.equal(201);
    expect((await adminApi().post('/auth/admin/users', lena)).status).to.equal(201);
  });
  after(async () => {
    await service?.close();
  });

  it('refuses a password over 1024 bytes at bootstrap, user creation and password change with 400, writing nothing', async () => {
    const eventsBefore = await countEvents();
    const usersBefore = await userEmails();
    const olgaId = (await adminApi().get('/auth/admin/users')).body.find((u: { email: string }) => u.email === olga.email).id as string;
    // Bytes count, not characters: 513 × `é` is 513 characters but 1026 bytes.
    const oversize = ['x'.repeat(MAX_PASSWORD_BYTES + 1), 'é'.repeat(513), 'y'.repeat(BODY_LIMIT / 2)];
    for (const password of oversize) {
      const label = `${[...password].length} characters, ${Buffer.byteLength(password)} bytes`;
      const created = await adminApi().post('/auth/admin/users', { email: 'huge@example.com', password });
      expectErrorBody(created, 400, 'BAD_REQUEST');
      expect(created.body.detail, label).to.equal('password must be at most 1024 bytes');
      const changed = await adminApi().patch(`/auth/admin/users/${olgaId}`, { password });
      expectErrorBody(changed, 400, 'BAD_REQUEST');
      expect(changed.body.detail, label).to.equal('password must be at most 1024 bytes');
      // Checked before the bootstrap command (which would answer 409 here).
      const bootstrap = await call(service.url, 'POST', '/auth/bootstrap', { json: { email: 'root@example.com', password } });
      expectErrorBody(bootstrap, 400, 'BAD_REQUEST');
    }
    expect(await countEvents()).to.equal(eventsBefore);
    expect(await userEmails()).to.deep.equal(usersBefore);
    // Olga's password is unchanged and the refused account does not exist.
    await login(service.url, olga.email, olga.password);
    expectUnauthenticated(await requestToken(service.url, 'huge@example.com', 'x'.repeat(MAX_PASSWORD_BYTES + 1)));

    // Exactly 1024 bytes is still a valid password.
    const atLimit = 'z'.repeat(MAX_PASSWORD_BYTES);
    expect((await adminApi().post('/auth/admin/users', { email: 'limit@example.com', password: atLimit })).status).to.equal(201);
    await login(service.url, 'limit@example.com', atLimit);
  });

  it('refuses a password over 1024 bytes at login with the generic 401, even when its first 72 bytes are right', async () => {
    const eventsBefore = await countEvents();
    const wrongPassword = await requestToken(service.url, lena.email, 'not-her-password');
    expectUnauthenticated(wrongPassword);
    // bcrypt only sees 72 bytes: past 72 anything matches (the login tests show it), past 1024 nothing may.
    await login(service.url, lena.email, `${lena.password}Z`);
    const padded = lena.password.padEnd(MAX_PASSWORD_BYTES + 1, 'Z');
    const attempts = [
      await requestToken(service.url, lena.email, padded),
      await requestToken(service.url, lena.email, lena.password.padEnd(BODY_LIMIT - 100, 'Z')),
      await requestToken(service.url, 'nobody@example.com', padded),
    ];
    for (const attempt of attempts) {
      expectUnauthenticated(attempt);
      expect(attempt.body).to.deep.equal(wrongPassword.body);
    }
    expect(await countEvents()).to.equal(eventsBefore);
    await login(service.url, lena.email, lena.password);
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a body over SVC_BODY_LIMIT_BYTES on /auth/token and /auth/admin/users, writing nothing', async () => {
    const eventsBefore = await countEvents();
    const usersBefore = await userEmails();

    // At the limit the body is read: the route answers (a wrong password, an oversize one).
    expectUnauthenticated(await call(service.url, 'POST', '/auth/token', { form: tokenFormOfSize(olga.email, BODY_LIMIT) }));
    const atLimit = await call(service.url, 'POST', '/auth/admin/users', { token: admin.token, json: userJsonOfSize('big@example.com', BODY_LIMIT) });
    expectErrorBody(atLimit, 400, 'BAD_REQUEST');

    for (const size of [BODY_LIMIT + 1, 4 * BODY_LIMIT]) {
      const token = await call(service.url, 'POST', '/auth/token', { form: tokenFormOfSize(olga.email, size) });
      expectErrorBody(token, 413, 'PAYLOAD_TOO_LARGE');
      const user = await call(service.url, 'POST', '/auth/admin/users', { token: admin.token, json: userJsonOfSize('big@example.com', size) });
      expectErrorBody(user, 413, 'PAYLOAD_TOO_LARGE');
    }
    expect(await countEvents()).to.equal(eventsBefore);
    expect(await userEmails()).to.deep.equal(usersBefore);
    // The service stays up.
    expect((await call(service.url, 'GET', '/health')).status).to.equal(200);
    await login(service.url, olga.email, olga.password);
  });
});
