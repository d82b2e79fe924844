// SVC_TOKEN_TTL_SECONDS: `exp` is iat + TTL and enforced (with a few seconds of skew); 0 means no `exp` at all.
import { expect } from 'chai';
import { generateSigningKeyHex } from '../../src/iam/keys.js';
import { fixedClock } from '../../src/kernel/clock.js';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, client, expectUnauthenticated, login, payloadOf, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';

describe('token lifetime', () => {
  const clock = fixedClock(new Date());
  const env = { SVC_SIGNING_KEY: generateSigningKeyHex() };
  const services: Service[] = [];
  let shortLived: Service;
  let unlimited: Service;
  let admin: Admin;

  before(async () => {
    const databaseUrl = await createTestDatabase();
    shortLived = await startTestService({ databaseUrl, clock, env: { ...env, SVC_TOKEN_TTL_SECONDS: '60' } });
    services.push(shortLived);
    unlimited = await startTestService({ databaseUrl, clock, env: { ...env, SVC_TOKEN_TTL_SECONDS: '0' } });
    services.push(unlimited);
    admin = await bootstrapAdmin(shortLived.url);
  });
  after(async () => {
    await Promise.all(services.map((s) => s.close()));
  });

  it('signs exp = iat + TTL and refuses the token once it passed', async () => {
    const token = admin.token;
    const claims = payloadOf(token);
    expect(claims.exp).to.equal(Math.floor(claims.iat) + 60);
    clock.advance(60_000);
    expect((await call(shortLived.url, 'GET', '/auth/me', { token })).status).to.equal(200);
    clock.advance(10_000);
    expectUnauthenticated(await call(shortLived.url, 'GET', '/auth/me', { token }), /expired/);
  });

  it('omits exp when the TTL is 0, and such a token still can be logged out', async () => {
    const minted = await call(unlimited.url, 'POST', '/auth/token', { form: { username: admin.email, password: admin.password } });
    expect(minted.status).to.equal(200);
    expect(minted.body.expires_in).to.equal(0);
    const token = minted.body.access_token as string;
    expect(payloadOf(token)).to.not.have.property('exp');
    clock.advance(400 * 86_400_000);
    expect((await client(unlimited.url, token).get('/auth/me')).status).to.equal(200);
    expect((await client(unlimited.url, token).post('/auth/logout')).status).to.equal(204);
    expectUnauthenticated(await client(unlimited.url, token).get('/auth/me'), /revoked/);
    // A TTL-bound service refuses the exp-less token: exp is required there.
    const again = await login(unlimited.url, admin.email, admin.password);
    expectUnauthenticated(await client(shortLived.url, again).get('/auth/me'), /exp/);
  });
});
