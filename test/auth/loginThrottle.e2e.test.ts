// Login throttling over real HTTP: 429 with Retry-After after repeated failures (also for the right
// password), the owner still signing in from another address, counters shared by two worker
// processes, and X-Forwarded-For believed only from a proxy SVC_TRUST_PROXY names.
import { request } from 'node:http';
import { expect } from 'chai';
import { THROTTLED_MESSAGE } from '../../src/iam/loginThrottle.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, type Admin } from '../support/http.js';
import type { Service } from '../../src/main.js';
import { emptyProjectDir, startTestService } from '../support/service.js';
import { killAllServices, ServiceProcess } from '../support/serviceProcess.js';
import { createUser } from '../support/users.js';

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: { detail?: string; code?: string; access_token?: string };
}

/** POST /auth/token from a chosen loopback address (all of 127.0.0.0/8 is the loopback interface). */
function signIn(baseUrl: string, username: string, password: string, from = '127.0.0.1', headers: Record<string, string> = {}): Promise<Answer> {
  const body = new URLSearchParams({ username, password, grant_type: 'password' }).toString();
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${baseUrl}/auth/token`,
      { method: 'POST', localAddress: from, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, retryAfter: response.headers['retry-after'], body: JSON.parse(text) }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

function expectThrottled(answer: Answer): void {
  expect(answer.status, JSON.stringify(answer.body)).to.equal(429);
  expect(answer.body).to.deep.equal({ detail: THROTTLED_MESSAGE, code: 'TOO_MANY_REQUESTS' });
  expect(Number(answer.retryAfter)).to.be.within(1, 15 * 60);
}

describe('login throttling across two worker processes', function () {
  this.timeout(120_000);
  let first: Service;
  let second: ServiceProcess;
  let admin: Admin;
  const email = 'gus@example.com';
  const password = 'gus-password-1';

  before(async () => {
    const databaseUrl = await createTestDatabase();
    first = await startTestService({ databaseUrl });
    second = await ServiceProcess.start(databaseUrl, emptyProjectDir());
    admin = await bootstrapAdmin(first.url);
    await createUser(first.url, admin.token, email, undefined, { password, signIn: false });
  });
  after(async () => {
    await first?.close();
    await killAllServices();
  });

  it('counts failures on both workers, then answers 429 with Retry-After, also for the right password', async () => {
    const answers = [];
    for (let i = 0; i < 50; i++) answers.push(await signIn(i % 2 === 0 ? first.url : second.url, email, `wrong-${i}`));
    expect(answers.slice(0, 5).map((a) => a.status)).to.deep.equal([401, 401, 401, 401, 401]);
    for (const answer of answers.slice(5)) expectThrottled(answer);
    expectThrottled(await signIn(second.url, email, password));
  });

  it('still lets the owner sign in from another address', async () => {
    const owner = await signIn(first.url, email, password, '127.0.0.2');
    expect(owner.status, JSON.stringify(owner.body)).to.equal(200);
    expect(owner.body.access_token).to.be.a('string');
  });

  it('believes no X-Forwarded-For without SVC_TRUST_PROXY: a spoofed address changes nothing', async () => {
    expectThrottled(await signIn(first.url, email, password, '127.0.0.1', { 'x-forwarded-for': '203.0.113.7' }));
  });
});

describe('login throttling behind a trusted proxy (SVC_TRUST_PROXY=loopback)', function () {
  this.timeout(120_000);
  let service: Service;
  let admin: Admin;
  const email = 'hal@example.com';
  const password = 'hal-password-1';

  before(async () => {
    service = await startTestService({ env: { SVC_TRUST_PROXY: 'loopback' } });
    admin = await bootstrapAdmin(service.url);
    await createUser(service.url, admin.token, email, undefined, { password, signIn: false });
  });
  after(async () => {
    await service?.close();
  });

  it('throttles the client the proxy names, not the proxy', async () => {
    for (let i = 0; i < 5; i++) expect((await signIn(service.url, email, 'wrong', '127.0.0.1', { 'x-forwarded-for': '198.51.100.1' })).status).to.equal(401);
    expectThrottled(await signIn(service.url, email, password, '127.0.0.1', { 'x-forwarded-for': '198.51.100.1' }));
    // Same proxy, another client: its own allowance.
    expect((await signIn(service.url, email, password, '127.0.0.1', { 'x-forwarded-for': '198.51.100.2' })).status).to.equal(200);
  });
});

describe('SVC_LOGIN_THROTTLE=off', function () {
  this.timeout(120_000);
  let service: Service;
  let admin: Admin;

  before(async () => {
    service = await startTestService({ env: { SVC_LOGIN_THROTTLE: 'off' } });
    admin = await bootstrapAdmin(service.url);
  });
  after(async () => {
    await service?.close();
  });

  it('answers every failure with 401 and lets the right password in', async () => {
    for (let i = 0; i < 7; i++) expect((await signIn(service.url, admin.email, 'wrong')).status).to.equal(401);
    expect((await signIn(service.url, admin.email, admin.password)).status).to.equal(200);
  });
});
