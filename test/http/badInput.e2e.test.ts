// Bad input is a 4xx on every route, never a 500: malformed compressed bodies, JSON nested past the
// documented 100 levels, NUL characters and lone surrogates (which PostgreSQL cannot store), numbers past
// a double's range, and a
// database error inside a run never reaches the client as its text.
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call, eventually, type Admin, type HttpResult } from '../support/http.js';
import { startTestService } from '../support/service.js';

const PROJECT = fileURLToPath(new URL('./fixtures/hardening', import.meta.url));
/** The documented limit (docs/api.md): a JSON document may nest 100 levels, the outermost counted. */
const MAX_DEPTH = 100;

/** JSON text nested `levels` deep (objects and arrays alternating, an object outermost), built without recursion. */
function nestedJson(levels: number): string {
  let open = '';
  let close = '';
  for (let level = 0; level < levels; level += 1) {
    open += level % 2 === 0 ? '{"k":' : '[';
    close = (level % 2 === 0 ? '}' : ']') + close;
  }
  return `${open}"leaf"${close}`;
}

/** The error body of the spec: exactly `{detail, code}`, the detail a non-empty string. */
function expectErrorBody(result: HttpResult, status: number, code: string, label: string): void {
  expect(result.status, `${label}: ${JSON.stringify(result.body)}`).to.equal(status);
  expect(result.body, label).to.be.an('object');
  expect(Object.keys(result.body).sort(), label).to.deep.equal(['code', 'detail']);
  expect(result.body.code, label).to.equal(code);
  expect(result.body.detail, label).to.be.a('string').that.is.not.empty;
}

/** A 422 whose `detail` names the offending location and says what is wrong with it. */
function expectTextRefused(result: HttpResult, label: string, loc: (string | number)[], what: RegExp): void {
  expect(result.status, `${label}: ${JSON.stringify(result.body)}`).to.equal(422);
  const issues = result.body.detail as { loc: (string | number)[]; msg: string; type: string }[];
  expect(issues, label).to.be.an('array').that.is.not.empty;
  expect(
    issues.map((i) => i.loc),
    label,
  ).to.deep.include(loc);
  for (const issue of issues) expect(issue.msg, label).to.match(what);
}

describe('bad input is a 4xx on every route, never a 500', function () {
  this.timeout(60_000);
  let service: Service;
  let admin: Admin;
  const countEvents = async () => (await service.kernel.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]!.n;
  const raw = (method: string, path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    fetch(`${service.url}${path}`, { method, body, headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json', ...headers } }).then(
      async (response) => {
        const text = await response.text();
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON
        }
        return { status: response.status, headers: response.headers, body: parsed } as HttpResult;
      },
    );
  /** Routes that read a JSON body (plus the MCP endpoint), each with a body it would accept. */
  const jsonRoutes = () => [
    { method: 'POST', path: '/auth/admin/users', valid: { email: 'new@example.com', password: 'a-long-password-1' } },
    { method: 'POST', path: '/auth/admin/roles', valid: { name: 'readers', scopes: ['runs:read'] } },
    { method: 'POST', path: '/api/h/echo', valid: { text: 'hi' } },
    { method: 'POST', path: '/api/workflows/echo/runs', valid: { text: 'hi' } },
    { method: 'POST', path: '/models/note/', valid: { title: 'a note' } },
    { method: 'POST', path: '/api/artifacts', valid: { name: 'greeting', type: 'prompt', content: 'Hello' } },
    { method: 'POST', path: '/mcp', valid: { jsonrpc: '2.0', id: 1, method: 'tools/list' } },
  ];

  before(async () => {
    service = await startTestService({ projectDir: PROJECT });
    admin = await bootstrapAdmin(service.url);
  });
  after(async () => {
    await service?.close();
  });

  it('answers 400 BAD_REQUEST to a malformed gzip, deflate or br body on every JSON route, and writes nothing', async () => {
    const eventsBefore = await countEvents();
    const json = JSON.stringify({ text: 'hi' });
    const bodies: [string, Buffer][] = [
      ['gzip', Buffer.from('this is not gzip at all')],
      ['gzip', gzipSync(json).subarray(0, 12)],
      ['deflate', Buffer.from('this is not deflate at all')],
      ['br', Buffer.from('this is not brotli at all, not even close')],
      ['br', brotliCompressSync(json).subarray(0, 3)],
      ['deflate', deflateSync(json).subarray(0, 4)],
    ];
    for (const route of jsonRoutes()) {
      for (const [encoding, body] of bodies) {
        const label = `${route.method} ${route.path} with a broken ${encoding} body of ${body.length} bytes`;
        expectErrorBody(await raw(route.method, route.path, body, { 'content-encoding': encoding }), 400, 'BAD_REQUEST', label);
      }
    }
    expect(await countEvents()).to.equal(eventsBefore);
    // Well-formed compressed bodies still work.
    const echoed = await raw('POST', '/api/h/echo', gzipSync(json), { 'content-encoding': 'gzip' });
    expect(echoed.status, JSON.stringify(echoed.body)).to.equal(201);
    expect(echoed.body).to.deep.equal({ text: 'hi', data: null });
  });

  it(`refuses JSON nested deeper than ${MAX_DEPTH} levels with 400 on every route, deep or shallow, compressed or not, and writes nothing`, async () => {
    const eventsBefore = await countEvents();
    for (const route of jsonRoutes()) {
      for (const levels of [MAX_DEPTH + 1, 2_000, 2_600, 100_000]) {
        const label = `${route.method} ${route.path} nested ${levels} levels`;
        const body = nestedJson(levels);
        expectErrorBody(await raw(route.method, route.path, body), 400, 'BAD_REQUEST', label);
        // Inside an otherwise valid body, and gzip-compressed.
        const inside = JSON.stringify(route.valid).replace(/^\{/, `{"extra":${nestedJson(levels - 1)},`);
        expectErrorBody(await raw(route.method, route.path, gzipSync(inside), { 'content-encoding': 'gzip' }), 400, 'BAD_REQUEST', `${label} (inside, gzip)`);
      }
    }
    const deep = await raw('POST', '/models/note/', nestedJson(3_000));
    expect(deep.body.detail).to.equal(`JSON nested deeper than ${MAX_DEPTH} levels`);
    expect(await countEvents()).to.equal(eventsBefore);
  });

  it(`takes JSON nested exactly ${MAX_DEPTH} levels on records, artifacts and workflow inputs`, async () => {
    const inner = JSON.parse(nestedJson(MAX_DEPTH - 1)) as unknown;
    const note = await raw('POST', '/models/note/', `{"title":"deep","body":${nestedJson(MAX_DEPTH - 1)}}`);
    expect(note.status, JSON.stringify(note.body)).to.equal(201);
    expect(note.body.body).to.deep.equal(inner);
    const artifact = await raw('POST', '/api/artifacts', `{"name":"deep_hook","type":"hook","content":${nestedJson(MAX_DEPTH - 1)}}`);
    expect(artifact.status, JSON.stringify(artifact.body)).to.equal(201);
    expect(artifact.body.content).to.deep.equal(inner);
    const echoed = await raw('POST', '/api/h/echo', `{"text":"deep","data":${nestedJson(MAX_DEPTH - 1)}}`);
    expect(echoed.status, JSON.stringify(echoed.body)).to.equal(201);
    expect(echoed.body).to.deep.equal({ text: 'deep', data: inner });
  });

  it('refuses NUL characters and lone surrogates anywhere in a JSON body with 422 naming the place, on every route, and writes nothing', async () => {
    const eventsBefore = await countEvents();
    // JSON escapes, as a client sends them: a lone high surrogate, a lone low one, a high one at the end.
    const strings = [
      { text: String.raw`"a\u0000b"`, what: /NUL/ },
      { text: String.raw`"a\ud800b"`, what: /surrogate/ },
      { text: String.raw`"\udc00"`, what: /surrogate/ },
      { text: String.raw`"tail\ud83d"`, what: /surrogate/ },
    ];
    for (const route of jsonRoutes()) {
      const valid = JSON.stringify(route.valid);
      for (const { text, what } of strings) {
        const asValue = valid.replace(/^\{/, `{"extra":{"list":[1,${text}]},`);
        expectTextRefused(await raw(route.method, route.path, asValue), `${route.path} value ${text}`, ['body', 'extra', 'list', 1], what);
        const asKey = valid.replace(/^\{/, `{"extra":{${text}:1},`);
        const keyResult = await raw(route.method, route.path, asKey);
        expect(keyResult.status, `${route.path} key ${text}: ${JSON.stringify(keyResult.body)}`).to.equal(422);
      }
    }
    // Where the value is used: a workflow input, a record, an artifact, a role name, a tool argument.
    const nul = String.raw`"a\u0000b"`;
    const lone = String.raw`"a\udfffb"`;
    for (const text of [nul, lone]) {
      expectTextRefused(await raw('POST', '/api/h/echo', `{"text":${text}}`), 'trigger', ['body', 'text'], /NUL|surrogate/);
      expectTextRefused(
        await raw('POST', '/api/workflows/echo/runs', `{"text":"x","data":{"deep":[${text}]}}`),
        'runs',
        ['body', 'data', 'deep', 0],
        /NUL|surrogate/,
      );
      expectTextRefused(await raw('POST', '/models/note/', `{"title":${text}}`), 'record', ['body', 'title'], /NUL|surrogate/);
      expectTextRefused(
        await raw('POST', '/api/artifacts', `{"name":"x","type":"prompt","content":${text}}`),
        'artifact',
        ['body', 'content'],
        /NUL|surrogate/,
      );
      expectTextRefused(await raw('POST', '/auth/admin/roles', `{"name":${text},"scopes":[]}`), 'role', ['body', 'name'], /NUL|surrogate/);
      const toolCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":${text}}}}`;
      expectTextRefused(
        await raw('POST', '/mcp', toolCall, { accept: 'application/json, text/event-stream' }),
        'mcp',
        ['body', 'params', 'arguments', 'text'],
        /NUL|surrogate/,
      );
    }
    expect(await countEvents()).to.equal(eventsBefore);
    // A surrogate pair (an emoji) is one character, not a lone surrogate.
    const emoji = await raw('POST', '/api/h/echo', String.raw`{"text":"smile \ud83d\ude00"}`);
    expect(emoji.status, JSON.stringify(emoji.body)).to.equal(201);
    expect(emoji.body.text).to.equal('smile 😀');
  });

  it('refuses a number past the range of a double (1e999, Infinity once parsed) with 422 naming the place, on every route, and writes nothing', async () => {
    // Fuzzing finding: {"name":1e999} as the input of a workflow without input_schema failed to hash
    // into the event log and was answered 503 "the database is unavailable".
    const eventsBefore = await countEvents();
    for (const route of jsonRoutes()) {
      const body = JSON.stringify(route.valid).replace(/^\{/, '{"extra":{"list":[1,-1e999]},');
      expectTextRefused(await raw(route.method, route.path, body), `${route.path} -1e999`, ['body', 'extra', 'list', 1], /finite/);
    }
    expectTextRefused(await raw('POST', '/api/workflows/echo/runs', '{"text":"x","data":1e999}'), 'runs', ['body', 'data'], /finite/);
    expect(await countEvents()).to.equal(eventsBefore);
    // Large but finite numbers are fine.
    const large = await raw('POST', '/api/h/echo', '{"text":"x","data":1e308}');
    expect(large.status, JSON.stringify(large.body)).to.equal(201);
    expect(large.body.data).to.equal(1e308);
  });

  it('refuses NUL in a form body and in a GET trigger query with 422, and writes nothing', async () => {
    const eventsBefore = await countEvents();
    const form = await raw('POST', '/api/h/echo', 'text=a%00b', { 'content-type': 'application/x-www-form-urlencoded' });
    expectTextRefused(form, 'form', ['body', 'text'], /NUL/);
    const query = await call(service.url, 'GET', '/api/h/lookup?text=a%00b', { token: admin.token });
    expectTextRefused(query, 'query', ['query', 'text'], /NUL/);
    expect(await countEvents()).to.equal(eventsBefore);
    const fine = await call(service.url, 'GET', '/api/h/lookup?text=ab', { token: admin.token });
    expect(fine.status, JSON.stringify(fine.body)).to.equal(201);
  });

  it('fails a run whose step output PostgreSQL refuses without the database error text in its envelope, its record or its events', async () => {
    const result = await call(service.url, 'POST', '/api/h/unstorable', { token: admin.token, json: {} });
    expect(result.status, JSON.stringify(result.body)).to.equal(500);
    expect(result.body).to.include({ success: false, status_code: 500 });
    expect(result.body.error.message).to.equal('engine failure');
    const runId = result.headers.get('x-svc-run-id')!;
    // The engine's error text names PostgreSQL's refusal ("unsupported Unicode escape sequence"): never shown.
    const shown = [JSON.stringify(result.body)];
    const settled = await eventually(
      async () => (await call(service.url, 'GET', `/api/runs/${runId}`, { token: admin.token })).body?.status === 'failed',
      10_000,
    );
    expect(settled.ok, 'the run is recorded as failed').to.equal(true);
    shown.push(JSON.stringify((await call(service.url, 'GET', `/api/runs/${runId}`, { token: admin.token })).body));
    const { rows } = await service.kernel.pool.query<{ data: unknown }>(`SELECT data FROM events WHERE stream_id = $1 AND type = 'run_failed'`, [
      `run-${runId}`,
    ]);
    shown.push(JSON.stringify(rows));
    for (const text of shown) {
      expect(text).to.not.match(/unicode|escape sequence|byte sequence|sqlstate|22P05|postgres/i);
    }
    expect(result.body.error.details).to.be.a('string').that.includes(runId);
  });
});
