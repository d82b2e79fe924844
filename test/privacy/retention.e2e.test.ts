// Retention: ended runs past spec.retention.runs expire in batches, held runs stay, the report lists both; two workers expire each run once.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import type { Clock } from '../../src/kernel/clock.js';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, expectError, type Admin } from '../support/http.js';
import { copyProject } from '../support/projects.js';
import { emptyProjectDir, startTestService } from '../support/service.js';

const BRIEF = `kind: Workflow
metadata: {name: brief, schema_version: v1}
spec:
  retention: {runs: 1m}
  trigger:
    http: {path: /api/brief, method: POST}
    input_schema: [{name: note, type: string}]
  steps:
    - {id: done, kind: Response, mapping: {note: note}}
`;

describe('privacy: run retention and legal hold', () => {
  let first: Service;
  let second: Service;
  let admin: Admin;
  let offsetMs = 0;
  const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
  const api = (method: string, urlPath: string, json?: unknown) => call(first.url, method, urlPath, { token: admin.token, ...(json ? { json } : {}) });

  before(async () => {
    const databaseUrl = await createTestDatabase();
    const base = copyProject(emptyProjectDir());
    mkdirSync(path.join(base, 'workflows'), { recursive: true });
    const projectDir = copyProject(base, { 'workflows/brief.yaml': BRIEF });
    first = await startTestService({ databaseUrl, projectDir, clock });
    second = await startTestService({ databaseUrl, projectDir, clock });
    admin = await bootstrapAdmin(first.url);
  });
  after(async () => {
    await first?.close();
    await second?.close();
  });

  it('expires ended runs past their retention, keeps held ones, and two workers expire each run once', async () => {
    for (let i = 0; i < 6; i++) {
      const started = await api('POST', '/api/brief', { note: `n${i}` });
      expect(started.status, JSON.stringify(started.body)).to.equal(201);
    }
    const runs = (await api('GET', '/api/runs?workflow=brief&limit=100')).body.map((r: { id: string }) => r.id) as string[];
    expect(runs).to.have.length(6);
    const [held, ...others] = runs as [string, ...string[]];
    expect((await api('POST', `/admin/runs/${held}/hold`, { reason: 'litigation' })).body).to.deep.equal({ run_id: held, held: true });

    expect(await first.retention.sweep(), 'nothing is past its retention yet').to.equal(0);
    offsetMs = 5 * 60_000;
    const [a, b] = await Promise.all([first.retention.sweep(), second.retention.sweep()]);
    expect(a + b).to.equal(5);
    const { rows } = await first.kernel.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE type = 'run_expired'");
    expect(rows[0]!.n, 'each run expired once').to.equal(5);

    for (const id of others) expectError(await api('GET', `/api/runs/${id}`), 404);
    expect((await api('GET', `/api/runs/${held}`)).status).to.equal(200);
    const report = (await api('GET', '/admin/retention')).body;
    expect(report.policies).to.deep.include({ workflow: 'brief', retention_seconds: 60 });
    expect(report.held.map((r: { run_id: string }) => r.run_id)).to.deep.equal([held]);
    expect(report.held[0]).to.include({ hold_reason: 'litigation', held_by: admin.userId });
    expect(report.expired.map((r: { run_id: string }) => r.run_id)).to.have.members(others);
    expect(report.expired[0].expired_at).to.be.a('string');
    const journal = await first.kernel.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE stream_id = $1', [`run-${others[0]}`]);
    expect(journal.rows[0]!.n, 'the journal stays').to.be.greaterThan(0);
    expect((await api('GET', '/admin/audit/verify')).body).to.include({ ok: true });

    expectError(await api('POST', `/admin/runs/${others[0]}/hold`), 404);
    expect((await api('DELETE', `/admin/runs/${held}/hold`)).body).to.deep.equal({ run_id: held, held: false });
    expectError(await api('DELETE', `/admin/runs/${held}/hold`), 409);
    expect(await second.retention.sweep()).to.equal(1);
    expectError(await api('GET', `/api/runs/${held}`), 404);
  });
});
