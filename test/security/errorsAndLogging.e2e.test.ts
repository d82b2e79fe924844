// ASVS 5.0 V16 Security Logging and Error Handling: every error answer of every operation is the
// documented shape with nothing internal in it; sign-ins and refusals are logged (one JSON line each,
// with when, which request and what answer) and no log line carries a password or a token.
import { expect } from 'chai';
import { schemaValidator } from '../api/openapiCheck.js';
import { call, requestToken } from '../support/http.js';
import { hit, startSuite, sweep, type Answered, type Suite } from './routes.js';

/** What an answer must never show: a stack frame, a source path, SQL or a driver's words. */
const INTERNALS = /\bat [\w.<>]+ \(|node_modules|\/src\/|\.ts:\d+|\.js:\d+|\bSELECT\b|\bINSERT INTO\b|relation "|syntax error at|duplicate key value/;

describe('ASVS V16 Security Logging and Error Handling', function () {
  this.timeout(60_000);
  let suite: Suite;
  let answered: Answered[];

  before(async function () {
    this.timeout(60_000);
    suite = await startSuite({ logLevel: 'info' });
    answered = await sweep(suite);
  });
  after(async () => {
    await suite?.service.close();
  });

  it('V16.5.1 every error answer of every operation is {detail, code} (or the 422 detail list) and shows no stack trace, path or SQL', () => {
    const errors = answered.filter(({ answer }) => answer.status >= 400);
    expect(errors.length).to.be.greaterThan(100);
    const shape = schemaValidator(suite.doc, { anyOf: [{ $ref: '#/components/schemas/Error' }, { $ref: '#/components/schemas/ValidationError' }] });
    const wrong = errors
      .filter(({ answer }) => !shape(answer.body) || INTERNALS.test(answer.text))
      .map(({ route, as, answer }) => `${route.key} [${as}]: ${answer.status} ${answer.text.slice(0, 200)}`);
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
    expect(errors.every(({ answer }) => answer.status < 500)).to.equal(true);
  });

  it('V16.3.1 V16.2.1 a failed sign-in is logged (time, request id, route, 401) and so is a successful one, naming the user', async () => {
    const failed = await requestToken(suite.service.url, suite.admin.email, 'not the password');
    expect(failed.status).to.equal(401);
    const requestId = failed.headers.get('x-request-id')!;
    const line = suite.lines.map((text) => JSON.parse(text) as Record<string, any>).find((entry) => entry.req?.id === requestId);
    expect(line, 'the failed sign-in has a log line').to.not.equal(undefined);
    expect(line).to.include.keys('time', 'level');
    expect(line!.req).to.include({ method: 'POST', url: '/auth/token' });
    expect(line!.res.statusCode).to.equal(401);

    const signedIn = await requestToken(suite.service.url, suite.admin.email, suite.admin.password);
    expect(signedIn.status).to.equal(200);
    const success = suite.lines
      .map((text) => JSON.parse(text) as Record<string, any>)
      .find((entry) => entry.req?.id === signedIn.headers.get('x-request-id') && entry.msg === 'signed in');
    expect(success, 'the successful sign-in has an info line').to.include({ user_id: suite.admin.userId, method: 'password', level: 30 });
  });

  it('V16.3.2 a refused authorization (403) is logged with its route and status', async () => {
    const plain = await call(suite.service.url, 'POST', '/auth/admin/users', {
      token: suite.admin.token,
      json: { email: 'plain@example.com', password: 'a password of plain' },
    });
    expect(plain.status).to.equal(201);
    const token = (await requestToken(suite.service.url, 'plain@example.com', 'a password of plain')).body.access_token as string;
    const refused = await call(suite.service.url, 'GET', '/auth/admin/roles', { token });
    expect(refused.status).to.equal(403);
    const requestId = refused.headers.get('x-request-id');
    const line = suite.lines.map((text) => JSON.parse(text) as Record<string, any>).find((entry) => entry.req?.id === requestId);
    expect(line?.res?.statusCode).to.equal(403);
    expect(line?.req?.url).to.equal('/auth/admin/roles');
  });

  it('V16.2.5 no log line carries a password or a token, after the sweep, the sign-ins and the refusals', () => {
    expect(suite.lines.length).to.be.greaterThan(100);
    for (const secret of [suite.admin.password, 'not the password', 'a password of plain', suite.admin.token]) {
      expect(suite.lines.filter((line) => line.includes(secret)).length, `a line carries ${secret.slice(0, 6)}…`).to.equal(0);
    }
  });

  it('V16.4.1 a CRLF in a URL or a header cannot forge a log line: every line is one JSON object', async () => {
    const before = suite.lines.length;
    await hit(suite.service.url, { method: 'GET', url: '/api/runs/%0d%0a{"level":60,"msg":"forged"}' }, { token: suite.admin.token });
    await hit(suite.service.url, { method: 'GET', url: '/no/such?q=%0a%0d{"msg":"forged"}\u2028' }, { headers: { 'user-agent': 'x"},{"msg":"forged' } });
    expect(suite.lines.length).to.be.greaterThan(before);
    for (const text of suite.lines) {
      expect(text.trimEnd().split('\n')).to.have.length(1);
      expect(JSON.parse(text).msg).to.not.equal('forged');
    }
  });
});
