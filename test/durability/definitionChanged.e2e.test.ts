// A run goes on only with the definition it was journaled against: when the workflow file changed
// under the same version while the run waited, the run resumed by another process fails with an
// error naming the step, and no step runs again.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, eventually } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { ENGINE_PROJECT, SIGNING_KEY } from '../workflows/helpers.js';

/** `note` (a Functional step, or a Router in the changed file), then a person's decision, then `finish`. */
function workflowFile(noteStep: string): string {
  return [
    'kind: Workflow',
    'metadata: {name: changing, schema_version: v1}',
    'spec:',
    '  trigger:',
    '    http: {path: /api/wf/changing, method: POST}',
    '  steps:',
    `    - ${noteStep}`,
    '    - {id: ask, kind: HumanInTheLoop, ui: {title: Go on?}, routes: {approve: finish, reject: END}}',
    '    - {id: finish, kind: Functional, runner: act, params: {set: {finished: true}}, routes: {default: END}}',
    '',
  ].join('\n');
}

const FUNCTIONAL_NOTE = '{id: note, kind: Functional, runner: act, params: {set: {noted: true}}, routes: {default: ask}}';
const ROUTER_NOTE = '{id: note, kind: Router, condition: {field: noted, operator: is_empty}, routes: {"true": ask, "false": ask}}';

describe('durability: a workflow file changed under the same version while a run waited', function () {
  this.timeout(60_000);
  let databaseUrl: string;
  let projectDir: string;
  const services: Service[] = [];
  const start = async () => {
    const service = await startTestService({ databaseUrl, projectDir, env: { SVC_SIGNING_KEY: SIGNING_KEY } });
    services.push(service);
    return service;
  };

  /** The run once its status is one of `statuses` (GET /api/runs/{id}). */
  const runWhen = async (url: string, token: string, runId: string, statuses: string[]) => {
    const read = async () => (await call(url, 'GET', `/api/runs/${runId}`, { token })).body;
    expect((await eventually(async () => statuses.includes((await read()).status), 10_000)).ok, `run ${runId} never ${statuses.join('|')}`).to.equal(true);
    return read();
  };

  before(async () => {
    databaseUrl = await createTestDatabase();
    // A project of its own: the workflow file is rewritten between the two services.
    projectDir = mkdtempSync(path.join(tmpdir(), 'svc-changed-definition-'));
    mkdirSync(path.join(projectDir, 'workflows'));
    mkdirSync(path.join(projectDir, 'nodes'));
    copyFileSync(path.join(ENGINE_PROJECT, 'nodes', 'act.ts'), path.join(projectDir, 'nodes', 'act.ts'));
  });
  after(async () => {
    for (const service of services) await service.close().catch(() => undefined);
    rmSync(projectDir, { recursive: true, force: true });
  });

  it('fails the run on resume, naming the step, its journaled kind and the one defined now; no step runs', async () => {
    writeFileSync(path.join(projectDir, 'workflows', 'changing.yaml'), workflowFile(FUNCTIONAL_NOTE));
    const first = await start();
    const admin = (await bootstrapAdmin(first.url)).token;
    const started = await call(first.url, 'POST', '/api/wf/changing', { token: admin, json: {} });
    expect(started.status, JSON.stringify(started.body)).to.equal(202);
    const runId = started.body.id as string;
    const waiting = await runWhen(first.url, admin, runId, ['waiting_human']);
    await first.close();

    // Same name, same version, `note` now a Router: a second process loads it and is asked to go on.
    writeFileSync(path.join(projectDir, 'workflows', 'changing.yaml'), workflowFile(ROUTER_NOTE));
    const second = await start();
    const decided = await call(second.url, 'POST', `/api/approvals/${waiting.approval.approval_id}`, { token: admin, json: { decision: 'approve' } });
    expect(decided.status, JSON.stringify(decided.body)).to.equal(200);

    const failed = await runWhen(second.url, admin, runId, ['failed', 'completed']);
    expect(failed.status).to.equal('failed');
    expect(failed.error).to.deep.equal({
      message: "step note is in the run's journal as Functional, but workflow changing v1 defines it as Router",
      details: 'the workflow definition changed under the same version: the steps a run has journaled must keep their ids and kinds',
    });
    const journal: { type: string; agent_id: string }[] = (await call(second.url, 'GET', `/api/runs/${runId}/export`, { token: admin })).body.events;
    const afterDecision = journal.slice(journal.findIndex((e) => e.type === 'approval_decided') + 1).map((e) => `${e.type}:${e.agent_id}`);
    expect(afterDecision, 'nothing ran after the decision').to.deep.equal(['decision:ask', 'run_failed:run']);
  });
});
