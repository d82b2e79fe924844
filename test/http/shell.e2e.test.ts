// The HTTP shell over real loopback: body parsing and its limits, request ids, and the one error -> HTTP map.
import { expect } from 'chai';
import { Router } from 'express';
import { UnauthenticatedError, ValidationError } from '../../src/kernel/errors.js';
import type { Service } from '../../src/main.js';
import { startTestService } from '../support/service.js';

const BODY_LIMIT = 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Routes that echo bodies and throw on purpose; `db` gives them the service's real pool. */
function testRouter(db: () => Service): Router {
  const router = Router();
  router.post('/test/echo', (req, res) => {
    res.json({ body: req.body as unknown });
  });
  router.get('/test/items/:id', (req, res) => {
    res.json({ id: req.params.id });
  });
  router.get('/test/crash', () => {
    throw new Error('boom at /srv/secret/path.ts with password=hunter2');
  });
  router.get('/test/sql', async (_req, res) => {
    await db().kernel.pool.query('SELECT secret_column FROM no_such_table WHERE token = $1', ['hunter2']);
    res.json({ unreachable: true });
  });
  router.get('/test/unauthenticated', () => {
    throw new UnauthenticatedError('Token expired');
  });
  router.post('/test/invalid', () => {
    throw new ValidationError([
      { loc: ['body', 'name'], msg: 'Field required', type: 'missing' },
      { loc: ['body', 'tags', 0], msg: 'Input should be a valid string', type: 'string_type' },
    ]);
  });
  return router;
}

describe('HTTP shell', () => {
  let service: Service;

  before(async () => {
    service = await startTestService({ env: { SVC_BODY_LIMIT_BYTES: String(BODY_LIMIT) }, routers: [testRouter(() => service)] });
  });
  after(async () => {
    await service?.close();
  });

  function postJson(path: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${service.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  }

  async function expectError(response: Response, status: number, code: string): Promise<{ detail: string; code: string }> {
    expect(response.status).to.equal(status);
    expect(response.headers.get('content-type')).to.match(/^application\/json/);
    const body = (await response.json()) as { detail: string; code: string };
    expect(body.code).to.equal(code);
    expect(body.detail).to.be.a('string').that.is.not.empty;
    expect(Object.keys(body).sort()).to.deep.equal(['code', 'detail']);
    return body;
  }

  describe('JSON bodies', () => {
    it('parses a JSON body (application/json and application/*+json)', async () => {
      const plain = await postJson('/test/echo', '{"a":[1,{"b":null}]}');
      expect(plain.status).to.equal(200);
      expect(await plain.json()).to.deep.equal({ body: { a: [1, { b: null }] } });
      const vendor = await postJson('/test/echo', '{"x":1}', { 'content-type': 'application/merge-patch+json' });
      expect(await vendor.json()).to.deep.equal({ body: { x: 1 } });
    });

    it('answers 400 BAD_REQUEST for malformed JSON, without echoing the parser message', async () => {
      const body = await expectError(await postJson('/test/echo', '{"a": 1,'), 400, 'BAD_REQUEST');
      expect(body.detail).to.equal('Malformed JSON body');
    });

    it('answers 413 PAYLOAD_TOO_LARGE for a body over SVC_BODY_LIMIT_BYTES', async () => {
      const atLimit = JSON.stringify({ pad: 'x'.repeat(BODY_LIMIT - 10) });
      expect(Buffer.byteLength(atLimit)).to.equal(BODY_LIMIT);
      expect((await postJson('/test/echo', atLimit)).status).to.equal(200);

      const over = JSON.stringify({ pad: 'x'.repeat(BODY_LIMIT) });
      await expectError(await postJson('/test/echo', over), 413, 'PAYLOAD_TOO_LARGE');
    });

    it('answers 413 for a chunked body (no Content-Length) that grows over the limit', async () => {
      const chunk = new TextEncoder().encode(`{"pad":"${'x'.repeat(600)}`);
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(chunk);
          controller.enqueue(new TextEncoder().encode(`${'y'.repeat(600)}"}`));
          controller.close();
        },
      });
      const response = await fetch(`${service.url}/test/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      await expectError(response, 413, 'PAYLOAD_TOO_LARGE');
    });

    for (const [name, json] of [
      ['__proto__ at the top', '{"__proto__": {"isAdmin": true}}'],
      ['constructor at the top', '{"constructor": {"prototype": {"isAdmin": true}}}'],
      ['__proto__ nested in an array', '{"items": [{"ok": 1}, {"deep": {"__proto__": {"x": 1}}}]}'],
      ['constructor nested', '{"a": {"b": {"constructor": 1}}}'],
      ['prototype nested', '{"a": {"prototype": 1}}'],
    ] as const) {
      it(`answers 400 for a body with ${name}`, async () => {
        const body = await expectError(await postJson('/test/echo', json), 400, 'BAD_REQUEST');
        expect(body.detail).to.match(/^Request body may not contain the key "(__proto__|constructor|prototype)"$/);
      });
    }
  });

  describe('routing', () => {
    it('answers 404 NOT_FOUND for an unknown route', async () => {
      const body = await expectError(await fetch(`${service.url}/no/such/route`), 404, 'NOT_FOUND');
      expect(body.detail).to.equal('No route for GET /no/such/route');
    });

    it('answers 400, not 500, for a path parameter with broken percent-encoding', async () => {
      expect(await (await fetch(`${service.url}/test/items/a%20b`)).json()).to.deep.equal({ id: 'a b' });
      await expectError(await fetch(`${service.url}/test/items/%E0%A4%A`), 400, 'BAD_REQUEST');
    });
  });

  describe('request ids', () => {
    it('echoes a given X-Request-Id', async () => {
      const response = await fetch(`${service.url}/health`, { headers: { 'X-Request-Id': 'req-42.abc:1' } });
      expect(response.headers.get('x-request-id')).to.equal('req-42.abc:1');
    });

    it('generates a fresh UUID when none is given, also on errors', async () => {
      const first = await fetch(`${service.url}/health`);
      const second = await fetch(`${service.url}/no/such/route`);
      const ids = [first.headers.get('x-request-id'), second.headers.get('x-request-id')];
      expect(ids[0]).to.match(UUID);
      expect(ids[1]).to.match(UUID);
      expect(ids[0]).to.not.equal(ids[1]);
    });

    it('replaces an X-Request-Id that is too long or holds odd characters', async () => {
      for (const bad of ['x'.repeat(129), 'a b', '<script>']) {
        const response = await fetch(`${service.url}/health`, { headers: { 'X-Request-Id': bad } });
        expect(response.headers.get('x-request-id'), bad).to.match(UUID);
      }
    });
  });

  describe('errors', () => {
    it('answers 500 INTERNAL for an unexpected error without its message or stack', async () => {
      const response = await fetch(`${service.url}/test/crash`);
      expect(response.status).to.equal(500);
      const text = await response.text();
      expect(JSON.parse(text)).to.deep.equal({ detail: 'Internal server error', code: 'INTERNAL' });
      expect(text).to.not.match(/boom|hunter2|secret|\.ts|\bat\b/);
    });

    it('answers 500 INTERNAL for a failed SQL statement without the SQL or the database message', async () => {
      const response = await fetch(`${service.url}/test/sql`);
      expect(response.status).to.equal(500);
      const text = await response.text();
      expect(JSON.parse(text)).to.deep.equal({ detail: 'Internal server error', code: 'INTERNAL' });
      expect(text).to.not.match(/SELECT|no_such_table|secret_column|hunter2|relation/i);
    });

    it('answers 401 UNAUTHENTICATED with WWW-Authenticate: Bearer', async () => {
      const response = await fetch(`${service.url}/test/unauthenticated`);
      expect(response.headers.get('www-authenticate')).to.equal('Bearer');
      const body = await expectError(response, 401, 'UNAUTHENTICATED');
      expect(body.detail).to.equal('Token expired');
    });

    it('answers 422 with the detail array of a ValidationError', async () => {
      const response = await postJson('/test/invalid', '{}');
      expect(response.status).to.equal(422);
      expect(response.headers.get('www-authenticate')).to.equal(null);
      expect(await response.json()).to.deep.equal({
        detail: [
          { loc: ['body', 'name'], msg: 'Field required', type: 'missing' },
          { loc: ['body', 'tags', 0], msg: 'Input should be a valid string', type: 'string_type' },
        ],
      });
    });
  });
});
