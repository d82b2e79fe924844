// ASVS 5.0 V15 Secure Coding and Architecture, and V5.3.2 (file paths from trusted data only), over the
// example project: path fragments in every route parameter that names a file or a definition are refused
// and write nothing anywhere, and no GET answer of /openapi.json, read as the admin with real ids, carries
// a password hash or a secret (the signing key, the key that wraps data keys, a wrapped data key, an OAuth
// client secret, a password).
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { EXAMPLE_PROJECT } from '../api/helpers.js';
import { client } from '../support/http.js';
import { SseReader } from '../support/sse.js';
import { hit, routesOf, startSuite, type Suite } from './routes.js';

const MARK = `svcpwn${randomBytes(4).toString('hex')}`;
const SIGNING_KEY = randomBytes(32).toString('hex');
const DATA_KEY = randomBytes(32).toString('hex');
const CLIENT_SECRET = `partner-secret-${randomBytes(8).toString('hex')}`;
const USER_PASSWORD = `user password ${randomBytes(4).toString('hex')}`;

/** Every file and folder under `dir`, relative to it. */
function listTree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

/** Path fragments a file name must never follow: up, absolute, NUL, separators of another system, encoded ones. */
function hostileNames(mark: string): string[] {
  return [
    `../${mark}`,
    `../../${mark}`,
    `v1/../../${mark}`,
    `/tmp/${mark}`,
    `${tmpdir()}/${mark}`,
    `..\\${mark}`,
    `C:\\${mark}`,
    `v2\u0000${mark}`,
    `%2e%2e%2f${mark}`,
    `..%2F${mark}`,
    `..%252f${mark}`,
    `....//${mark}`,
    `\uff0e\uff0e\uff0f${mark}`,
    `\u2025/${mark}`,
    `.${mark}`,
    `${mark}/`,
    `${mark}.yaml`,
    `${mark}\r\n`,
    `~/${mark}`,
  ];
}

describe('ASVS V15 Secure Coding and Architecture (and V5.3.2 file paths)', function () {
  this.timeout(60_000);
  let suite: Suite;
  let root: string;
  let projectDir: string;
  let api: ReturnType<typeof client>;

  before(async function () {
    this.timeout(60_000);
    // The project two folders deep in a folder of its own: a path that climbs out lands where it is seen.
    root = mkdtempSync(path.join(tmpdir(), 'svc-secure-coding-'));
    projectDir = path.join(root, 'deployments', 'project');
    mkdirSync(projectDir, { recursive: true });
    for (const folder of ['workflows', 'models', 'nodes', 'llms', 'artifacts', 'tools', 'federation']) {
      if (existsSync(path.join(EXAMPLE_PROJECT, folder))) cpSync(path.join(EXAMPLE_PROJECT, folder), path.join(projectDir, folder), { recursive: true });
    }
    suite = await startSuite({ projectDir, env: { SVC_SIGNING_KEY: SIGNING_KEY, SVC_DATA_KEY: DATA_KEY }, logLevel: 'silent' });
    api = client(suite.service.url, suite.admin.token);
  });
  after(async () => {
    await suite?.service.close();
    if (root !== undefined) rmSync(root, { recursive: true, force: true });
  });

  it('V5.3.2 a version fork refuses path fragments in new_version, and in the name and version it forks from, with a 4xx, and writes nothing anywhere', async () => {
    const before = listTree(root);
    const forks = [
      ['workflows', 'hello', 'v1'],
      ['models', 'Customer', 'v1'],
    ] as const;
    const wrong: string[] = [];
    for (const [kind, name, version] of forks) {
      for (const hostile of hostileNames(MARK)) {
        const answers = [
          await api.post(`/admin/${kind}/${name}/${version}/fork`, { new_version: hostile }),
          await api.post(`/admin/${kind}/${encodeURIComponent(hostile)}/${version}/fork`, { new_version: `${MARK}a` }),
          await api.post(`/admin/${kind}/${name}/${encodeURIComponent(hostile)}/fork`, { new_version: `${MARK}b` }),
        ];
        for (const answer of answers) if (answer.status < 400 || answer.status >= 500) wrong.push(`${kind} ${JSON.stringify(hostile)}: ${answer.status}`);
      }
    }
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
    expect(listTree(root)).to.deep.equal(before);
    expect(readdirSync(tmpdir()).filter((name) => name.includes(MARK))).to.deep.equal([]);
    // The route itself works: a plain version is written inside the project's folder.
    const plain = await api.post('/admin/workflows/hello/v1/fork', { new_version: 'v9' });
    expect(plain.status, JSON.stringify(plain.body)).to.equal(200);
    expect(listTree(root).filter((file) => !before.includes(file))).to.deep.equal([path.join('deployments', 'project', 'workflows', 'hello_v9.yaml')]);
  });

  it('V5.3.2 every other route parameter that names something (artifacts, workflows, models, providers) answers a path fragment with a 4xx and no file', async () => {
    const named = routesOf(suite.doc).filter((route) => /\{(name|version|provider|workflow)\}/.test(route.path));
    expect(named.length).to.be.greaterThan(8);
    const wrong: string[] = [];
    for (const route of named) {
      for (const hostile of [...hostileNames(MARK), '../../../../package.json', '..%2F..%2Fpackage.json', '/etc/passwd']) {
        const url = route.path.replace(/\{(\w+)\}/g, () => encodeURIComponent(hostile));
        const answer = await hit(suite.service.url, { method: route.method, url }, { token: suite.admin.token, ...(route.hasBody ? { body: '{}' } : {}) });
        const isRefused = answer.status >= 400 && answer.status < 500;
        if (!isRefused || /"(name|version)":\s*"svc"|root:x:0:0/.test(answer.text)) wrong.push(`${route.key} ${JSON.stringify(hostile)}: ${answer.status}`);
      }
    }
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
    expect(readdirSync(tmpdir()).filter((name) => name.includes(MARK))).to.deep.equal([]);
  });

  describe('answers as the admin, with users, an OAuth client secret, personal data and a run in the database', () => {
    let secrets: string[];
    let values: Record<string, string>;
    let byPath: Record<string, string>;

    before(async () => {
      const user = await api.post('/auth/admin/users', { email: 'someone@example.com', password: USER_PASSWORD });
      expect(user.status).to.equal(201);
      const provider = await api.put('/auth/admin/federation/partner', partnerProvider());
      expect(provider.status, JSON.stringify(provider.body)).to.be.oneOf([200, 201]);
      const customer = await api.post('/models/customer', { name: 'Ada', email: 'ada@example.com' });
      expect(customer.status, JSON.stringify(customer.body)).to.equal(201);
      expect((await api.post('/api/hello', { name: 'Ada' })).status).to.be.oneOf([200, 201]);
      const runs = (await api.get('/api/runs')).body as { id?: string; run_id?: string }[];
      const listed = (await api.get('/api/artifacts')).body;
      const artifacts = (Array.isArray(listed) ? listed : listed.artifacts) as { name: string }[];
      const runId = runs[0]?.run_id ?? runs[0]?.id;
      const userId = user.body.id ?? user.body.user_id;
      expect([runId, userId, customer.body.id].every((id) => /^[0-9a-f-]{36}$/.test(String(id)))).to.equal(true);
      values = { user_id: userId, id: runId!, provider: 'partner' };
      byPath = { '/auth/admin/federation/{name}': 'partner', '/api/artifacts/{name}': artifacts[0]!.name, '/models/customer/{id}': customer.body.id };
      const wrapped = (await suite.service.kernel.pool.query<{ wrapped_key: string }>('SELECT wrapped_key FROM svc_data_keys WHERE wrapped_key IS NOT NULL'))
        .rows;
      expect(wrapped.length).to.be.greaterThan(0);
      const keys = [SIGNING_KEY, DATA_KEY].flatMap((hex) => [hex, Buffer.from(hex, 'hex').toString('base64url'), Buffer.from(hex, 'hex').toString('base64')]);
      secrets = [...keys, CLIENT_SECRET, USER_PASSWORD, suite.admin.password, ...wrapped.flatMap(({ wrapped_key }) => wrapped_key.split('.'))];
    });

    it('V15.3.1 no GET answer of /openapi.json, read as the admin with real ids, carries a password hash, a password or a secret', async () => {
      // The OAuth start routes are public redirects to the provider; they carry no data.
      const reads = routesOf(suite.doc, values).filter((route) => route.method === 'GET' && !route.path.startsWith('/auth/oauth/'));
      expect(reads.length).to.be.greaterThan(30);
      const leaks: string[] = [];
      let answeredOk = 0;
      for (const route of reads) {
        const url = byPath[route.path] !== undefined ? route.path.replace(/\{\w+\}/, encodeURIComponent(byPath[route.path]!)) : route.url;
        const answer = await hit(suite.service.url, { method: 'GET', url }, { token: suite.admin.token });
        if (answer.status === 200) answeredOk += 1;
        leaks.push(...secretsIn(answer.text, secrets).map((what) => `${route.key}: ${what}`));
      }
      expect(leaks, leaks.join('\n')).to.deep.equal([]);
      expect(answeredOk).to.be.greaterThan(reads.length * 0.8);
    });

    it('V15.3.1 the audit log, paged and streamed (replay and live), shows a password hash or a client secret as *** and marks the event redacted', async () => {
      const logged = (await api.get('/admin/events?limit=1000')).body.events as { type: string; redacted?: boolean }[];
      const redacted = logged.filter((event) => event.redacted === true);
      expect(redacted.map((event) => event.type)).to.include.members(['UserCreated', 'FederationProviderSaved']);
      expect(redacted.every((event) => JSON.stringify(event).includes('"***"'))).to.equal(true);
      const stream = await SseReader.open(`${suite.service.url}/admin/events/stream`, { token: suite.admin.token });
      try {
        await stream.until('FederationProviderSaved');
        expect((await api.post('/auth/admin/users', { email: 'later@example.com', password: USER_PASSWORD })).status).to.equal(201);
        expect((await stream.until('UserCreated')).data).to.include({ redacted: true });
        expect(secretsIn(stream.text, secrets)).to.deep.equal([]);
      } finally {
        stream.close();
      }
    });
  });
});

/** What of `secrets` (or any bcrypt hash) `text` shows, named by their first characters. */
function secretsIn(text: string, secrets: string[]): string[] {
  const found = secrets.filter((secret) => text.includes(secret)).map((secret) => `${secret.slice(0, 6)}…`);
  return /\$2[aby]?\$\d\d\$/.test(text) ? [...found, 'a bcrypt hash'] : found;
}

/** A custom OAuth provider whose client secret is CLIENT_SECRET (its endpoints are never called). */
function partnerProvider(): Record<string, unknown> {
  const endpoints = { auth_url: 'http://127.0.0.1:9/authorize', token_url: 'http://127.0.0.1:9/token', userinfo_url: 'http://127.0.0.1:9/userinfo' };
  return {
    kind: 'FederationProvider',
    version: 'v1',
    metadata: { name: 'partner' },
    enabled: true,
    spec: { provider: 'custom', client_id: 'partner', client_secret: CLIENT_SECRET, ...endpoints },
  };
}
