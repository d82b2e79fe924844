// /api/artifacts: scopes, versioned uploads that never overwrite (stored as they always were), SHA-256 hashes, the 512 KB cap, the
// closed type set, project files owning their names, and uploads seen by a second process (and its agents).
import { createHash } from 'node:crypto';
import path from 'node:path';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, client } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser } from '../support/users.js';
import { FakeOpenAi } from './support/fakeOpenAi.js';
import { FIXTURES, SIGNING_KEY } from './support/harness.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const CAP = 512 * 1024;

describe('artifacts', function () {
  this.timeout(30_000);
  const fake = new FakeOpenAi();
  let databaseUrl: string;
  let service: Service;
  let admin: ReturnType<typeof client>;
  let reader: ReturnType<typeof client>;
  let writer: ReturnType<typeof client>;
  let outsider: ReturnType<typeof client>;
  let adminToken: string;
  let readerToken: string;

  before(async function () {
    this.timeout(60_000);
    await fake.start();
    databaseUrl = await createTestDatabase();
    service = await startTestService({ databaseUrl, projectDir: path.join(FIXTURES, 'shadow'), env: { SVC_SIGNING_KEY: SIGNING_KEY } });
    adminToken = (await bootstrapAdmin(service.url)).token;
    admin = client(service.url, adminToken);
    readerToken = (await createUser(service.url, adminToken, 'reader@example.com', { artifact_readers: ['artifacts:read'] })).token;
    reader = client(service.url, readerToken);
    writer = client(service.url, (await createUser(service.url, adminToken, 'writer@example.com', { artifact_writers: ['artifacts:write'] })).token);
    outsider = client(service.url, (await createUser(service.url, adminToken, 'outsider@example.com', { run_readers: ['runs:read'] })).token);
  });
  after(async () => {
    await service?.close();
    await fake.stop();
  });

  it('listing and reading need artifacts:read (iam:admin bypasses); a read carries content and its SHA-256', async () => {
    expect((await client(service.url).get('/api/artifacts')).status).to.equal(401);
    expect((await outsider.get('/api/artifacts')).status).to.equal(403);
    expect((await writer.get('/api/artifacts/house_rules')).status, 'write does not imply read').to.equal(403);
    const list = await reader.get('/api/artifacts');
    expect(list.status).to.equal(200);
    const rules = (list.body as any[]).find((a) => a.name === 'house_rules');
    expect(rules).to.include({ type: 'steering', source: 'project', latest_version: '1' });

    const read = await reader.get('/api/artifacts/house_rules');
    expect(read.status).to.equal(200);
    expect(read.body).to.include({ name: 'house_rules', version: '1', type: 'steering', source: 'project', description: 'House rules.' });
    expect(read.body.content.trim()).to.equal('HOUSE-RULE: never promise refunds.');
    expect(read.body.hash).to.equal(sha256(read.body.content));
    expect((await admin.get('/api/artifacts/house_rules')).status).to.equal(200);
    expect((await reader.get('/api/artifacts/no_such_thing')).status).to.equal(404);
    expect((await reader.get('/api/artifacts/house_rules?version=7')).status).to.equal(404);
  });

  it('uploads need artifacts:write (iam:admin bypasses) and append versions 1, 2, 3 without overwriting', async () => {
    expect((await reader.post('/api/artifacts', { name: 'notes', type: 'prompt', content: 'nope' })).status).to.equal(403);
    expect((await outsider.post('/api/artifacts', { name: 'notes', type: 'prompt', content: 'nope' })).status).to.equal(403);
    const texts = ['first {{ x }}', 'second', 'third'];
    for (const [index, content] of texts.entries()) {
      const uploaded = await writer.post('/api/artifacts', { name: 'notes', type: 'prompt', content, description: `take ${index + 1}` });
      expect(uploaded.status, JSON.stringify(uploaded.body)).to.equal(201);
      expect(uploaded.body).to.include({ name: 'notes', version: String(index + 1), type: 'prompt', source: 'upload', content, hash: sha256(content) });
    }
    for (const [index, content] of texts.entries()) {
      const read = await reader.get(`/api/artifacts/notes?version=${index + 1}`);
      expect(read.status).to.equal(200);
      expect(read.body).to.include({ version: String(index + 1), content, hash: sha256(content), description: `take ${index + 1}` });
    }
    const latest = await reader.get('/api/artifacts/notes');
    expect(latest.body).to.include({ version: '3', content: 'third' });
    const byAdmin = await admin.post('/api/artifacts', { name: 'notes', type: 'prompt', content: 'fourth, by an admin' });
    expect(byAdmin.status, JSON.stringify(byAdmin.body)).to.equal(201);
    expect(byAdmin.body.version).to.equal('4');
    const listed = ((await reader.get('/api/artifacts')).body as any[]).find((a) => a.name === 'notes');
    expect(listed).to.include({ source: 'upload', latest_version: '4', type: 'prompt' });
    expect(listed.versions.map((v: any) => [v.version, v.hash])).to.deep.equal([...texts, 'fourth, by an admin'].map((t, i) => [String(i + 1), sha256(t)]));
    expect((await writer.post('/api/artifacts', { name: 'notes', type: 'steering', content: 'other type' })).status, 'a name keeps its type').to.equal(409);
  });

  it('without SVC_TENANT_IDS an upload is the event it always was: stream artifact-<name>, no tenant in its data', async () => {
    const { rows } = await service.kernel.pool.query<{ stream_id: string; data: Record<string, unknown> }>(
      `SELECT stream_id, data FROM events WHERE type = 'ArtifactUploaded' AND data->>'name' = 'notes' ORDER BY global_position`,
    );
    expect(rows).to.have.length(4);
    for (const row of rows) {
      expect(row.stream_id).to.equal('artifact-notes');
      expect(Object.keys(row.data).sort()).to.deep.equal(['at', 'content', 'description', 'hash', 'name', 'type', 'version']);
    }
  });

  it('structured artifacts hash their canonical JSON: key order does not change the hash', async () => {
    const first = await writer.post('/api/artifacts', { name: 'limits', type: 'guardrail', content: { regex_deny: ['x'], max_chars: 5 } });
    const second = await writer.post('/api/artifacts', { name: 'limits', type: 'guardrail', content: { max_chars: 5, regex_deny: ['x'] } });
    expect([first.status, second.status]).to.deep.equal([201, 201]);
    expect(first.body.hash).to.equal(sha256('{"max_chars":5,"regex_deny":["x"]}'));
    expect(second.body.hash).to.equal(first.body.hash);
    expect(second.body.version).to.equal('2');
    expect((await reader.get('/api/artifacts/limits?version=1')).body.content).to.deep.equal({ regex_deny: ['x'], max_chars: 5 });
  });

  it('caps content at 512 KB (counted in bytes): just under passes, over is 413', async () => {
    const exact = await writer.post('/api/artifacts', { name: 'big', type: 'skill', content: 'a'.repeat(CAP) });
    expect(exact.status, 'exactly 512 KB is allowed').to.equal(201);
    const under = await writer.post('/api/artifacts', { name: 'big', type: 'skill', content: 'a'.repeat(CAP - 1) });
    expect(under.status).to.equal(201);
    const over = await writer.post('/api/artifacts', { name: 'big', type: 'skill', content: 'a'.repeat(CAP + 1) });
    expect(over.status, JSON.stringify(over.body).slice(0, 200)).to.equal(413);
    const multibyte = await writer.post('/api/artifacts', { name: 'big', type: 'skill', content: 'é'.repeat(CAP / 2 + 1) });
    expect(multibyte.status, 'two-byte characters count twice').to.equal(413);
    const structured = await writer.post('/api/artifacts', { name: 'big_rules', type: 'guardrail', content: { regex_deny: ['b'.repeat(CAP)] } });
    expect(structured.status).to.equal(413);
    expect(((await reader.get('/api/artifacts/big')).body as any).version, 'refused uploads add no version').to.equal('2');
  });

  it('types are a closed set (422); prose types take a string and structured types an object (400)', async () => {
    const unknownType = await writer.post('/api/artifacts', { name: 'x1', type: 'script', content: 'rm -rf /' });
    expect(unknownType.status).to.equal(422);
    expect(unknownType.body.detail).to.be.an('array');
    for (const type of ['prompt', 'steering', 'skill']) {
      expect((await writer.post('/api/artifacts', { name: `x_${type}`, type, content: { text: 'an object' } })).status, type).to.equal(400);
    }
    for (const type of ['guardrail', 'hook', 'mcp']) {
      expect((await writer.post('/api/artifacts', { name: `x_${type}`, type, content: 'a string' })).status, type).to.equal(400);
    }
    expect((await writer.post('/api/artifacts', { name: 'x_mcp', type: 'mcp', content: ['an', 'array'] })).status).to.be.oneOf([400, 422]);
    expect((await writer.post('/api/artifacts', { name: '../etc/passwd', type: 'prompt', content: 'x' })).status).to.equal(400);
    expect((await writer.post('/api/artifacts', { type: 'prompt', content: 'x' })).status).to.equal(422);
    const list = (await reader.get('/api/artifacts')).body as any[];
    expect(
      list.filter((a) => a.name.startsWith('x_') || a.name === 'x1'),
      'nothing refused was stored',
    ).to.deep.equal([]);
  });

  it('an uploaded mcp server names a url: a stdio command (a program run on this server) is refused', async () => {
    const stdio = await writer.post('/api/artifacts', { name: 'x_stdio', type: 'mcp', content: { command: 'sh', args: ['-c', 'touch /tmp/pwned'] } });
    expect(stdio.status, JSON.stringify(stdio.body)).to.equal(400);
    expect(stdio.body.detail).to.match(/stdio command/);
    for (const content of [
      { url: 'file:///etc/passwd' },
      { url: 'https://mcp.example', headers: { n: 1 } },
      { url: 'https://mcp.example', env: { A: 'b' } },
      {},
    ]) {
      expect((await writer.post('/api/artifacts', { name: 'x_badmcp', type: 'mcp', content })).status, JSON.stringify(content)).to.equal(422);
    }
    const http = await writer.post('/api/artifacts', {
      name: 'uploaded_http_mcp',
      type: 'mcp',
      content: { url: 'https://mcp.example/mcp', headers: { authorization: 'Bearer t' } },
    });
    expect(http.status, JSON.stringify(http.body)).to.equal(201);
    const names = ((await reader.get('/api/artifacts')).body as any[]).map((a) => a.name);
    expect(names).to.include('uploaded_http_mcp').and.not.include.members(['x_stdio', 'x_badmcp']);
  });

  it('a project file owns its name: an upload for it is 409 naming the file, and reads and the listing show the file alone', async () => {
    const refused = await writer.post('/api/artifacts', { name: 'house_rules', type: 'steering', content: 'UPLOADED RULES' });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(409);
    expect(refused.body).to.include({ code: 'CONFLICT' });
    expect(refused.body.detail).to.include('artifacts/house_rules.md');
    const otherType = await admin.post('/api/artifacts', { name: 'house_rules', type: 'prompt', content: 'x' });
    expect(otherType.status, 'whatever the type, and for admins too').to.equal(409);
    const read = await reader.get('/api/artifacts/house_rules');
    expect(read.body).to.include({ source: 'project', version: '1' });
    expect(read.body.content.trim()).to.equal('HOUSE-RULE: never promise refunds.');
    const listed = ((await reader.get('/api/artifacts')).body as any[]).find((a) => a.name === 'house_rules');
    expect(listed).to.include({ source: 'project', latest_version: '1', shadowed_uploads: 0 });
    expect(listed.versions.map((v: any) => [v.version, v.source])).to.deep.equal([['1', 'project']]);
  });

  describe('a second process on the same database', () => {
    let second: Service;

    before(async function () {
      this.timeout(60_000);
      // The second process's workflow refers to uploads: they must exist when it boots (V017).
      for (const [name, type, content] of [
        ['greeting', 'prompt', 'PROMPT-V1 for {{ name }}'],
        ['greeting', 'prompt', 'SYSTEM-V2'],
        ['house_style', 'steering', 'STYLE-V1'],
        ['house_style', 'steering', 'STYLE-V2'],
        // The second process's project has a file of this name: these two uploads predate it.
        ['late_rules', 'steering', 'UPLOADED-LATE-V1'],
        ['late_rules', 'steering', 'UPLOADED-LATE-V2'],
      ] as const) {
        expect((await writer.post('/api/artifacts', { name, type, content })).status).to.equal(201);
      }
      second = await startTestService({
        databaseUrl,
        projectDir: path.join(FIXTURES, 'versioned'),
        env: { SVC_SIGNING_KEY: SIGNING_KEY, SVC_LLM_BASE_URL: fake.baseUrl },
      });
    });
    after(async () => {
      await second?.close();
    });

    it('uploads stored before a project file of their name are hidden by it: every listed version reads back, and no new upload is taken', async () => {
      const otherReader = client(second.url, readerToken);
      const listed = ((await otherReader.get('/api/artifacts')).body as any[]).find((a) => a.name === 'late_rules');
      expect(listed).to.include({ source: 'project', type: 'steering', latest_version: '1', shadowed_uploads: 2 });
      expect(listed.versions.map((v: any) => [v.version, v.source])).to.deep.equal([['1', 'project']]);
      for (const version of listed.versions) {
        const read = await otherReader.get(`/api/artifacts/late_rules?version=${version.version}`);
        expect(read.status, `listed version ${version.version} reads back`).to.equal(200);
        expect(read.body).to.include({ source: version.source, hash: version.hash });
      }
      expect((await otherReader.get('/api/artifacts/late_rules?version=1')).body.content.trim()).to.equal('LATE-RULE: from the project file.');
      expect((await otherReader.get('/api/artifacts/late_rules?version=2')).status, 'a hidden upload is not readable').to.equal(404);
      const refused = await client(second.url, adminToken).post('/api/artifacts', { name: 'late_rules', type: 'steering', content: 'UPLOADED-LATE-V3' });
      expect(refused.status, JSON.stringify(refused.body)).to.equal(409);
      expect(refused.body.detail).to.include('artifacts/late_rules.md');
      // The first process has no such file: there the uploads are the artifact.
      expect((await reader.get('/api/artifacts/late_rules')).body).to.include({ source: 'upload', version: '2', content: 'UPLOADED-LATE-V2' });
    });

    it('sees an upload at once, and agents there resolve artifact://name@version and the latest for unpinned refs', async () => {
      const otherReader = client(second.url, readerToken);
      const uploaded = await writer.post('/api/artifacts', { name: 'fresh', type: 'skill', content: 'just uploaded' });
      expect(uploaded.status).to.equal(201);
      const seen = await otherReader.get('/api/artifacts/fresh');
      expect(seen.status, 'visible on the other process without a restart').to.equal(200);
      expect(seen.body).to.include({ content: 'just uploaded', hash: sha256('just uploaded'), version: '1' });

      const api = client(second.url, adminToken);
      fake.script('Ada', [{ content: 'Hello Ada' }, { content: 'Hello again Ada' }]);
      const first = await api.post('/api/agents/greet', { name: 'Ada' });
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      expect(first.body).to.deep.equal({ greeting: 'Hello Ada' });
      const sent = fake.requestsFor('Ada')[0]!;
      expect(sent.messages).to.deep.equal([
        { role: 'system', content: 'SYSTEM-V2\n\nSTYLE-V2' },
        { role: 'user', content: 'PROMPT-V1 for Ada' },
      ]);

      // A newer upload (made on the first process) is what an unpinned ref means from now on; pins hold.
      expect((await writer.post('/api/artifacts', { name: 'greeting', type: 'prompt', content: 'SYSTEM-V3' })).body.version).to.equal('3');
      const again = await api.post('/api/agents/greet', { name: 'Ada' });
      expect(again.status, JSON.stringify(again.body)).to.equal(201);
      expect(fake.requestsFor('Ada')[1]!.messages).to.deep.equal([
        { role: 'system', content: 'SYSTEM-V3\n\nSTYLE-V2' },
        { role: 'user', content: 'PROMPT-V1 for Ada' },
      ]);
    });
  });
});
