// GET /openapi.json: a strictly valid OpenAPI 3.1 document of what is mounted now, for the example
// project and a fixture project, that follows version toggles and the model CRUD switch.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call, client, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { EXAMPLE_PROJECT, FIXTURE_PROJECT } from './helpers.js';
import { expectMatches, operationsOf, routeServes, schemaValidator, validateStrictly, type Doc } from './openapiCheck.js';

const openapi = async (service: Service): Promise<Doc> => {
  const answer = await call(service.url, 'GET', '/openapi.json');
  expect(answer.status).to.equal(200);
  expect(answer.headers.get('content-type')).to.match(/^application\/json/);
  return answer.body as Doc;
};
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * Mounted routes deliberately left out of the document, as `method path`: they are not REST
 * operations (MCP speaks JSON-RPC over Streamable HTTP), they are the docs UIs themselves or the
 * console's pages, or they exist only in dev mode. gRPC (Connect under /grpc) is middleware without a path, never a route.
 */
const UNDOCUMENTED_ROUTES = [
  'all /mcp',
  'get /docs',
  'get /redoc',
  'get /redoc/redoc.standalone.js',
  'get /dev/settings',
  'post /dev/token',
  'get /insight',
  'get /insight/{*rest}',
  'get /console',
  'get /console/{*rest}',
];
/** Path-scoped middleware serving undocumented paths: Swagger UI assets, the ReDoc folder, the dev-mode gates, gRPC-Web. */
const UNDOCUMENTED_MOUNTS = ['/docs', '/redoc', '/dev', '/insight', '/grpc', '/console', '/console/assets'];
/** Path-scoped middleware that only guards documented routes (the iam:admin check). */
const GUARD_MOUNTS = ['/auth/admin', '/admin'];
const jsonSchemaOf = (content: any) => content?.['application/json']?.schema;

describe('OpenAPI document of the example project', () => {
  let service: Service;
  let admin: Admin;
  let doc: Doc;

  before(async () => {
    service = await startTestService({ projectDir: EXAMPLE_PROJECT });
    admin = await bootstrapAdmin(service.url);
    doc = await openapi(service);
  });
  after(async () => {
    await service?.close();
  });

  it('passes swagger-parser validation and the strict checks', async () => {
    await validateStrictly(doc);
  });

  it('describes every enabled workflow trigger, at its path and at /api/workflows/{name}/runs, with its input schema', async () => {
    const manifests = (await client(service.url, admin.token).get('/api/_system/workflows')).body as Record<
      string,
      { trigger_path: string; trigger_method: string }
    >;
    expect(Object.keys(manifests)).to.include.members(['hello', 'open_ticket', 'refund', 'classify', 'what_time', 'service_status', 'support_agent']);
    for (const [name, manifest] of Object.entries(manifests)) {
      const trigger = doc.paths[manifest.trigger_path]?.[manifest.trigger_method.toLowerCase()];
      expect(trigger, `${manifest.trigger_method} ${manifest.trigger_path} of ${name}`).to.be.an('object');
      const generic = doc.paths[`/api/workflows/${name}/runs`]?.post;
      expect(generic, `POST /api/workflows/${name}/runs`).to.be.an('object');
      for (const op of [trigger, generic]) {
        expect(jsonSchemaOf(op.requestBody.content)).to.deep.equal(ref(`${name}.input`));
        expect(jsonSchemaOf(op.responses['202'].content)).to.deep.equal(ref('Run'));
        expect(jsonSchemaOf(op.responses['500'].content)).to.deep.equal(ref('WorkflowError'));
        // Fuzzing finding: IDEMPOTENCY_KEY_REUSED is a 422 in the Error shape.
        expect(jsonSchemaOf(op.responses['422'].content)).to.deep.equal({ anyOf: [ref('ValidationError'), ref('Error')] });
      }
      expect(doc.components.schemas[`${name}.input`], `${name}.input`).to.be.an('object');
    }
    expect(doc.components.schemas['hello.input']).to.deep.include({ type: 'object', required: ['name'] });
    expect(doc.components.schemas['hello.input'].properties).to.have.keys('name', 'values');
    // open_ticket answers Ticket.read: its 201 names the output schema, which is the model's read variant.
    const openTicket = doc.paths['/api/tickets/open'].post;
    expect(jsonSchemaOf(openTicket.responses['201'].content)).to.deep.equal(ref('open_ticket.output'));
    expect(doc.components.schemas['open_ticket.output'].properties).to.have.keys(Object.keys(doc.components.schemas['Ticket.read'].properties));
  });

  it('documents the status_code of Response steps (fuzzing finding: service_status answered an undocumented 502)', () => {
    for (const path of ['/api/status', '/api/workflows/service_status/runs']) {
      const down = doc.paths[path].post.responses['502'];
      expect(down, `${path} documents 502`).to.be.an('object');
      expect(down.description).to.include('`down`');
      expect(jsonSchemaOf(down.content)).to.deep.equal({});
    }
    // A workflow without such a step documents no extra status.
    expect(doc.paths['/api/hello'].post.responses).to.not.have.property('502');
  });

  it('describes every CRUD operation the models opt into, with the create, read and update variants', () => {
    for (const [model, slug] of [
      ['Ticket', 'ticket'],
      ['Customer', 'customer'],
    ]) {
      const collection = doc.paths[`/models/${slug}/`];
      const item = doc.paths[`/models/${slug}/{id}`];
      expect(Object.keys(collection)).to.have.members(['get', 'post']);
      expect(Object.keys(item)).to.have.members(['get', 'patch', 'delete']);
      expect(jsonSchemaOf(collection.post.requestBody.content)).to.deep.equal(ref(`${model}.create`));
      expect(jsonSchemaOf(collection.post.responses['201'].content)).to.deep.equal(ref(`${model}.read`));
      expect(jsonSchemaOf(collection.get.responses['200'].content)).to.deep.equal({ type: 'array', items: ref(`${model}.read`) });
      expect(jsonSchemaOf(item.get.responses['200'].content)).to.deep.equal(ref(`${model}.read`));
      expect(jsonSchemaOf(item.patch.requestBody.content)).to.deep.equal(ref(`${model}.update`));
      expect(item.delete.responses).to.have.property('204');
      for (const variant of ['create', 'read', 'update']) expect(doc.components.schemas[`${model}.${variant}`], `${model}.${variant}`).to.be.an('object');
    }
    expect(doc.components.schemas['Ticket.create'].required).to.deep.equal(['subject']);
    expect(doc.components.schemas['Ticket.create'].properties).to.not.have.property('id');
    expect(doc.paths['/models/ticket/'].get.description).to.include('tickets:read');
    expect(doc.paths['/models/ticket/{id}'].delete.description).to.include('tickets:delete');
  });

  it('describes the auth routes, the bearer scheme, and public operations with security []', () => {
    expect(doc.components.securitySchemes.bearer).to.deep.include({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(doc.security).to.deep.equal([{ bearer: [] }]);
    for (const [path, method] of [
      ['/auth/bootstrap', 'post'],
      ['/auth/token', 'post'],
      ['/auth/me', 'get'],
      ['/auth/refresh', 'post'],
      ['/auth/logout', 'post'],
      ['/auth/jwks.json', 'get'],
    ] as const) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).to.be.an('object');
    }
    expect(Object.keys(doc.paths['/auth/token'].post.requestBody.content)).to.deep.equal(['application/x-www-form-urlencoded']);
    expect(jsonSchemaOf(doc.paths['/auth/token'].post.responses['200'].content)).to.deep.equal(ref('TokenResponse'));
    const publicOps = operationsOf(doc)
      .filter(({ op }) => Array.isArray(op.security) && op.security.length === 0)
      .map(({ path, method }) => `${method} ${path}`);
    expect(publicOps).to.have.members([
      'post /auth/bootstrap',
      'post /auth/token',
      'get /auth/providers',
      'get /auth/jwks.json',
      'get /health',
      'get /openapi.json',
      'get /auth/oauth/{provider}/start',
      'get /auth/oauth/{provider}/callback',
      'post /api/hello',
      'post /api/workflows/hello/runs',
      'post /api/what-time',
      'post /api/workflows/what_time/runs',
    ]);
    // Everything else inherits the document's bearer requirement and documents the 401.
    for (const { path, method, op } of operationsOf(doc)) {
      if (op.security === undefined) expect(op.responses, `${method} ${path} documents 401`).to.have.property('401');
      else expect(op.security, `${method} ${path}`).to.deep.equal([]);
    }
  });

  it('matches the service: public operations answer without a token, the others 401', async () => {
    for (const { path, method, op } of operationsOf(doc)) {
      if (path.includes('{') || path === '/auth/token') continue;
      const answer = await call(service.url, method.toUpperCase(), path, method === 'get' ? {} : { json: {} });
      if (op.security === undefined) expect(answer.status, `${method} ${path} without a token`).to.equal(401);
      else expect(answer.status, `${method} ${path} without a token: ${JSON.stringify(answer.body)}`).to.not.equal(401);
    }
  });

  it('documents every mounted route and method, except the explicit exclusions', () => {
    const { routes, middleware } = service.listMountedRoutes();
    const mounted = routes.map((r) => `${r.method} ${r.path}`);
    expect(mounted, 'the exclusions are all mounted (a stale entry would hide nothing)').to.include.members(UNDOCUMENTED_ROUTES);
    const documented = operationsOf(doc);
    const missing = routes
      .filter((r) => !UNDOCUMENTED_ROUTES.includes(`${r.method} ${r.path}`))
      .filter((r) => !documented.some(({ path, method }) => method === r.method && routeServes(r.path, path)))
      .map((r) => `${r.method} ${r.path}`);
    expect(missing, 'mounted but not in /openapi.json').to.deep.equal([]);
    expect(middleware).to.have.members([...UNDOCUMENTED_MOUNTS, ...GUARD_MOUNTS]);
    for (const guard of GUARD_MOUNTS)
      expect(
        documented.some(({ path }) => path.startsWith(`${guard}/`)),
        `${guard} guards documented routes`,
      ).to.equal(true);
  });

  it('documents only what is served: every operation is a mounted route or a workflow trigger path', () => {
    const { routes } = service.listMountedRoutes();
    const unserved = operationsOf(doc)
      .filter(({ op }) => !String(op.operationId).startsWith('trigger_'))
      .filter(({ path, method }) => !routes.some((r) => r.method === method && routeServes(r.path, path)))
      .map(({ path, method }) => `${method} ${path}`);
    expect(unserved, 'in /openapi.json but not mounted').to.deep.equal([]);
  });

  it('describes federated sign-in and the federation admin routes as the code answers them', () => {
    const start = doc.paths['/auth/oauth/{provider}/start'].get;
    expect(start.security).to.deep.equal([]);
    expect(Object.keys(start.responses)).to.have.members(['302', '404', '501']);
    expect(start.responses['302'].headers).to.have.keys('Location', 'Set-Cookie');
    const callback = doc.paths['/auth/oauth/{provider}/callback'].get;
    expect(callback.security).to.deep.equal([]);
    expect(Object.keys(callback.responses)).to.have.members(['200', '302', '400', '403', '404', '501']);
    expect(jsonSchemaOf(callback.responses['200'].content)).to.deep.equal(ref('TokenResponse'));
    expect(jsonSchemaOf(callback.responses['501'].content)).to.deep.equal(ref('Error'));
    expect(callback.parameters.map((p: any) => p.name)).to.include.members(['provider', 'code', 'state']);
    expect(Object.keys(doc.paths['/auth/admin/federation'])).to.deep.equal(['get']);
    expect(Object.keys(doc.paths['/auth/admin/federation/{name}'])).to.have.members(['get', 'put', 'delete']);
    const put = doc.paths['/auth/admin/federation/{name}'].put;
    expect(jsonSchemaOf(put.requestBody.content)).to.deep.equal(ref('FederationProviderDocument'));
    expect(put.description).to.include('iam:admin');
    expect(Object.keys(doc.paths['/auth/admin/federation/{name}'].delete.responses)).to.have.members(['204', '401', '403', '404', '409']);
    expect(doc.paths['/registry'].get.summary).to.include('federation providers');
    expect(jsonSchemaOf(doc.paths['/registry'].get.responses['200'].content)).to.deep.equal(ref('Registry'));
  });

  it('matches the federation answers: admin reads and writes, 501 without credentials, the redirect, /registry', async () => {
    const admin$ = client(service.url, admin.token);
    const document = {
      kind: 'FederationProvider',
      version: 'v1',
      enabled: true,
      spec: {
        provider: 'custom',
        auth_url: 'https://idp.invalid/authorize',
        token_url: 'https://idp.invalid/token',
        userinfo_url: 'https://idp.invalid/userinfo',
      },
    };
    expectMatches(doc, 'FederationProviderDocument', document);
    const saved = await admin$.put('/auth/admin/federation/docs_idp', document);
    expect(saved.status, JSON.stringify(saved.body)).to.equal(200);
    try {
      expectMatches(doc, 'FederationProvider', saved.body);
      expect(saved.body).to.deep.include({ source: 'admin', has_credentials: false });
      const listed = await admin$.get('/auth/admin/federation');
      expect(listed.status).to.equal(200);
      for (const provider of listed.body) expectMatches(doc, 'FederationProvider', provider);
      expectMatches(doc, 'FederationProvider', (await admin$.get('/auth/admin/federation/docs_idp')).body);
      const registry = await admin$.get('/registry');
      expectMatches(doc, 'Registry', registry.body);
      expect(registry.body.federation_providers).to.deep.include({ name: 'docs_idp', version: 'v1', enabled: true, provider: 'custom', source: 'admin' });

      const noCredentials = await call(service.url, 'GET', '/auth/oauth/docs_idp/start');
      expect(noCredentials.status).to.equal(501);
      expectMatches(doc, 'Error', noCredentials.body);
      const unknown = await call(service.url, 'GET', '/auth/oauth/nobody/callback?code=x&state=y');
      expect(unknown.status).to.equal(404);
      expectMatches(doc, 'Error', unknown.body);

      const withSecret = { ...document, spec: { ...document.spec, client_id: 'docs-client', client_secret: 'docs-secret' } };
      const resaved = await admin$.put('/auth/admin/federation/docs_idp', withSecret);
      expectMatches(doc, 'FederationProvider', resaved.body);
      expect(resaved.body.spec.client_secret).to.equal('***');
      const redirect = await fetch(`${service.url}/auth/oauth/docs_idp/start`, { redirect: 'manual' });
      expect(redirect.status).to.equal(302);
      expect(redirect.headers.get('location')).to.match(/^https:\/\/idp\.invalid\/authorize\?/);
      expect(redirect.headers.get('set-cookie')).to.match(/^svc_oauth_binding=/);
      const stateless = await call(service.url, 'GET', '/auth/oauth/docs_idp/callback?code=x');
      expect(stateless.status).to.equal(400);
      expectMatches(doc, 'Error', stateless.body);

      const skipped = await admin$.put('/auth/admin/federation/pending_idp', { spec: { ...document.spec, client_secret: '${SVC_OAUTH_NEVER_SET_SECRET}' } });
      expect(skipped.status, JSON.stringify(skipped.body)).to.equal(200);
      expect(skipped.body).to.have.keys('metadata', 'skipped');
      const putSchema = jsonSchemaOf(doc.paths['/auth/admin/federation/{name}'].put.responses['200'].content);
      expect(schemaValidator(doc, putSchema)(skipped.body)).to.equal(true);
      await admin$.delete('/auth/admin/federation/pending_idp');
    } finally {
      expect((await admin$.delete('/auth/admin/federation/docs_idp')).status).to.equal(204);
    }
  });

  it('describes the error shapes, and the answers match them', async () => {
    expect(doc.components.schemas.Error.required).to.have.members(['detail', 'code']);
    expect(doc.components.schemas.ValidationError.properties.detail.items.required).to.have.members(['loc', 'msg', 'type']);
    expect(doc.components.schemas.WorkflowError.required).to.have.members(['success', 'status_code', 'data', 'error']);
    expect(jsonSchemaOf(doc.paths['/auth/me'].get.responses['401'].content)).to.deep.equal(ref('Error'));

    const unauthenticated = await call(service.url, 'GET', '/auth/me');
    expect(unauthenticated.status).to.equal(401);
    expectMatches(doc, 'Error', unauthenticated.body);
    const missing = await call(service.url, 'GET', '/api/runs/00000000-0000-4000-8000-000000000000', { token: admin.token });
    expect(missing.status).to.equal(404);
    expectMatches(doc, 'Error', missing.body);
    const invalid = await call(service.url, 'POST', '/api/hello', { json: { name: 42 } });
    expect(invalid.status).to.equal(422);
    expectMatches(doc, 'ValidationError', invalid.body);
    const ran = await call(service.url, 'POST', '/api/tickets/open', { token: admin.token, json: { subject: 'printer on fire' } });
    expect(ran.status, JSON.stringify(ran.body)).to.equal(201);
    expectMatches(doc, 'open_ticket.output', ran.body);
  });

  it('drops a workflow toggled off from the next document, and brings it back when toggled on', async () => {
    const admin$ = client(service.url, admin.token);
    const off = await admin$.patch('/admin/workflows/hello/v1/toggle');
    expect(off.body, JSON.stringify(off.body)).to.deep.equal({ name: 'hello', schema_version: 'v1', enabled: false });
    try {
      const without = await openapi(service);
      expect(without.paths).to.not.have.property('/api/hello');
      expect(without.paths).to.not.have.property('/api/workflows/hello/runs');
      expect(without.components.schemas).to.not.have.property('hello.input');
      expect(without.paths).to.have.property('/api/tickets/open');
      await validateStrictly(without);
    } finally {
      const on = await admin$.patch('/admin/workflows/hello/v1/toggle');
      expect(on.body.enabled).to.equal(true);
    }
    expect((await openapi(service)).paths['/api/hello']).to.have.property('post');
  });

  it('drops the CRUD of a model toggled off, and stays valid while a workflow still names it', async () => {
    const admin$ = client(service.url, admin.token);
    expect((await admin$.patch('/admin/models/Customer/v1/toggle')).body.enabled).to.equal(false);
    try {
      const without = await openapi(service);
      expect(Object.keys(without.paths).filter((p) => p.startsWith('/models/customer'))).to.deep.equal([]);
      expect(without.components.schemas).to.not.have.property('Customer.create');
      expect(without.paths).to.have.property('/models/ticket/');
      await validateStrictly(without);
    } finally {
      expect((await admin$.patch('/admin/models/Customer/v1/toggle')).body.enabled).to.equal(true);
    }
  });
});

describe('OpenAPI document with SVC_EXPOSE_MODEL_CRUD=false', () => {
  let service: Service;
  before(async () => {
    service = await startTestService({ projectDir: EXAMPLE_PROJECT, env: { SVC_EXPOSE_MODEL_CRUD: 'false' } });
  });
  after(async () => {
    await service?.close();
  });

  it('has no /models paths nor model variants, still validates, and the routes are absent', async () => {
    const doc = await openapi(service);
    await validateStrictly(doc);
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/models'))).to.deep.equal([]);
    expect(Object.keys(doc.components.schemas).filter((s) => /^(Ticket|Customer)\./.test(s))).to.deep.equal([]);
    expect(doc.paths).to.have.property('/api/hello');
    const admin = await bootstrapAdmin(service.url);
    expect((await call(service.url, 'GET', '/models/ticket/', { token: admin.token })).status).to.equal(404);
  });
});

describe('OpenAPI document of a fixture project', () => {
  let service: Service;
  let admin: Admin;
  let doc: Doc;
  before(async () => {
    service = await startTestService({ projectDir: FIXTURE_PROJECT });
    admin = await bootstrapAdmin(service.url);
    doc = await openapi(service);
  });
  after(async () => {
    await service?.close();
  });

  it('passes swagger-parser validation and the strict checks', async () => {
    await validateStrictly(doc);
  });

  it('describes each trigger with its declared method, input schema and response schema', () => {
    const triggers: [string, string, string][] = [
      ['echo', '/api/t/echo', 'post'],
      ['lookup', '/api/t/lookup', 'put'],
      ['open_door', '/api/t/open', 'post'],
      ['scoped', '/api/t/scoped', 'post'],
      ['grouped', '/api/t/grouped', 'post'],
      ['http_only', '/api/t/http-only', 'post'],
      ['broken', '/api/t/broken', 'post'],
      ['review', '/api/t/review', 'post'],
    ];
    for (const [name, path, method] of triggers) {
      expect(Object.keys(doc.paths[path] ?? {}), path).to.deep.equal([method]);
      expect(doc.paths[`/api/workflows/${name}/runs`]).to.have.property('post');
    }
    expect(doc.components.schemas['echo.input']).to.deep.equal({
      type: 'object',
      properties: { text: { type: 'string' }, count: { type: ['integer', 'null'] } },
      required: ['text'],
      additionalProperties: false,
    });
    expect(jsonSchemaOf(doc.paths['/api/t/echo'].post.responses['201'].content)).to.deep.equal(ref('echo.output'));
    expect(doc.components.schemas['echo.output']).to.deep.include({ required: ['said'] });
    expect(doc.components.schemas['echo.output'].properties).to.have.keys('said', 'count');
    // Model-variant references resolve to the model's own variants.
    const { title: _title, ...lookupInput } = doc.components.schemas['lookup.input'];
    expect(lookupInput).to.deep.equal(doc.components.schemas['Item.create']);
    expect(doc.components.schemas['lookup.output'].properties).to.have.keys(Object.keys(doc.components.schemas['Item.read'].properties));
    // Gated triggers document the 403 and their gate; the public one needs no token.
    expect(doc.paths['/api/t/scoped'].post.responses).to.have.property('403');
    expect(doc.paths['/api/t/scoped'].post.description).to.include('api:special');
    expect(doc.paths['/api/t/grouped'].post.description).to.include('apigroup');
    expect(doc.paths['/api/t/open'].post.security).to.deep.equal([]);
    expect(doc.paths['/api/t/echo'].post).to.not.have.property('security');
  });

  it('describes only the CRUD operations each model lists', () => {
    expect(Object.keys(doc.paths['/models/item/'])).to.deep.equal(['get']);
    expect(Object.keys(doc.paths['/models/item/{id}'])).to.deep.equal(['get']);
    expect(Object.keys(doc.paths['/models/gadget/'])).to.deep.equal(['post']);
    expect(Object.keys(doc.paths['/models/gadget/{id}'])).to.deep.equal(['patch']);
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/models/vault'))).to.deep.equal([]);
    expect(Object.keys(doc.components.schemas).filter((s) => s.startsWith('Vault.'))).to.deep.equal([]);
    expect(jsonSchemaOf(doc.paths['/models/gadget/'].post.requestBody.content)).to.deep.equal(ref('Gadget.create'));
    expect(jsonSchemaOf(doc.paths['/models/gadget/{id}'].patch.requestBody.content)).to.deep.equal(ref('Gadget.update'));
    expect(doc.components.schemas['Gadget.create'].required).to.deep.equal(['label']);
  });

  it('matches the service: documented routes exist, undocumented CRUD does not, answers fit their schemas', async () => {
    const token = admin.token;
    const created = await call(service.url, 'POST', '/models/gadget/', { token, json: { label: 'lamp', weight: 1.5 } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expectMatches(doc, 'Gadget.read', created.body);
    expect((await call(service.url, 'GET', '/models/gadget/', { token })).status).to.be.oneOf([404, 405]);
    expect((await call(service.url, 'DELETE', `/models/gadget/${created.body.id}`, { token })).status).to.be.oneOf([404, 405]);
    expect((await call(service.url, 'GET', '/models/item/', { token })).status).to.equal(200);
    expect((await call(service.url, 'GET', '/models/vault/', { token })).status).to.equal(404);

    const echoed = await call(service.url, 'POST', '/api/t/echo', { token, json: { text: 'hi', count: 2 } });
    expect(echoed.status, JSON.stringify(echoed.body)).to.equal(201);
    expect(echoed.headers.get('x-svc-run-id')).to.match(/^[0-9a-f-]{36}$/);
    expectMatches(doc, 'echo.output', echoed.body);
    const invalid = await call(service.url, 'POST', '/api/t/echo', { token, json: { count: 'two' } });
    expect(invalid.status).to.equal(422);
    expectMatches(doc, 'ValidationError', invalid.body);
    const failed = await call(service.url, 'POST', '/api/t/broken', { token, json: {} });
    // An error routed to END answers the envelope with 400, as documented.
    expect(failed.status, JSON.stringify(failed.body)).to.equal(400);
    const documented400 = jsonSchemaOf(doc.paths['/api/t/broken'].post.responses['400'].content);
    expect(documented400).to.deep.equal({ anyOf: [ref('WorkflowError'), ref('Error')] });
    expectMatches(doc, 'WorkflowError', failed.body);
    // Fuzzing finding: a trigger's 400 before any run (a bad Idempotency-Key, a body that is not JSON) is
    // the Error shape, which the documented 400 once left out.
    for (const refused of [
      await call(service.url, 'POST', '/api/t/echo', { token, json: { text: 'hi' }, headers: { 'idempotency-key': '' } }),
      await call(service.url, 'POST', '/api/t/echo', { token, json: '{' }),
    ]) {
      expect(refused.status, JSON.stringify(refused.body)).to.equal(400);
      expectMatches(doc, 'Error', refused.body);
      expect(schemaValidator(doc, documented400)(refused.body), JSON.stringify(refused.body)).to.equal(true);
    }
  });
});
