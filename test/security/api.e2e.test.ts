// ASVS 5.0 V4 API and Web Service, over every operation of the example project's /openapi.json: content
// types that say what the body is, only the methods the API has, and HTTP/1.1 framing that cannot be
// smuggled past the parser.
import { connect } from 'node:net';
import { expect } from 'chai';
import { operationsOf } from '../api/openapiCheck.js';
import { hit, startSuite, sweep, type Answered, type Suite } from './routes.js';

/** The raw answer to raw bytes sent on a connection of their own. */
function rawExchange(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(bytes));
    let text = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => resolve(text)).on('close', () => resolve(text));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
  });
}

describe('ASVS V4 API and Web Service', function () {
  this.timeout(60_000);
  let suite: Suite;
  let answered: Answered[];

  before(async function () {
    this.timeout(60_000);
    suite = await startSuite();
    answered = await sweep(suite);
  });
  after(async () => {
    await suite?.service.close();
  });

  it('V4.1.1 every answer with a body names its content type, with charset=utf-8 for JSON, and a JSON type carries JSON', () => {
    expect(answered.length).to.be.greaterThan(100);
    const wrong: string[] = [];
    for (const { route, as, answer } of answered) {
      if (answer.text.length === 0) continue;
      const type = answer.headers.get('content-type') ?? '';
      const isJson = type.startsWith('application/json');
      if (!isJson || !/charset=utf-8/i.test(type) || typeof answer.body === 'string') wrong.push(`${route.key} [${as}]: ${answer.status} ${type}`);
    }
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
  });

  it('V6.3.4 V4 every operation the document does not mark public answers 401 with WWW-Authenticate: Bearer without credentials (no undocumented pathway)', () => {
    const wrong = answered
      .filter(({ route, as }) => as === 'none' && !route.isPublic)
      .filter(({ answer }) => answer.status !== 401 || answer.headers.get('www-authenticate') !== 'Bearer' || answer.body?.code !== 'UNAUTHENTICATED')
      .map(({ route, answer }) => `${route.key}: ${answer.status} ${answer.text.slice(0, 120)}`);
    expect(answered.filter(({ route }) => route.isPublic).length).to.be.greaterThan(3);
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
  });

  it('V4.1.4 a method the API does not have on a path is refused (404, or 405 on a trigger path, in the error shape), never served', async () => {
    const wrong: string[] = [];
    for (const [path, item] of Object.entries(suite.doc.paths as Record<string, Record<string, unknown>>)) {
      const url = path.replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000');
      for (const method of ['PUT', 'PATCH', 'DELETE', 'POST'].filter((m) => item[m.toLowerCase()] === undefined)) {
        const answer = await hit(suite.service.url, { method, url }, { token: suite.admin.token, body: '{}' });
        const isRefused = (answer.status === 404 && answer.body?.code === 'NOT_FOUND') || (answer.status === 405 && answer.body?.code === 'METHOD_NOT_ALLOWED');
        if (!isRefused) wrong.push(`${method} ${path}: ${answer.status} ${answer.text.slice(0, 120)}`);
      }
    }
    expect(operationsOf(suite.doc).length).to.be.greaterThan(80);
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
  });

  it('V4.2.1 a request with both Content-Length and Transfer-Encoding, or two Content-Lengths, is refused before any route (no request smuggling)', async () => {
    const body = '{"email":"x@example.com","password":"p"}';
    const both = await rawExchange(
      suite.service.url,
      `POST /auth/bootstrap HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /health HTTP/1.1\r\nHost: localhost\r\n\r\n`,
    );
    expect(both).to.match(/^HTTP\/1\.1 400 /);
    expect(both.match(/HTTP\/1\.1 /g)).to.have.length(1);
    const twice = await rawExchange(
      suite.service.url,
      `POST /auth/bootstrap HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nContent-Length: 5\r\n\r\n${body}`,
    );
    expect(twice).to.match(/^HTTP\/1\.1 400 /);
  });

  it('V4.2.4 a header value carrying CR or LF is refused by the parser (no header injection)', async () => {
    const answer = await rawExchange(suite.service.url, `GET /health HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: a\rInjected: yes\r\n\r\n`);
    expect(answer).to.match(/^HTTP\/1\.1 400 /);
  });
});
