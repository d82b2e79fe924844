// Child workflows on real processes: the Workflow step waits for its child (waiting_child, child_started /
// child_finished) or fires and forgets; a failed or aborted child takes the parent's error route; an
// aborted parent aborts its children; a process killed while a parent waits loses nothing and starts
// no second child; nesting stops at depth 10; run detail and search show the family.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type pg from 'pg';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call } from '../support/http.js';
import { startRun, waitForStatus } from '../support/runs.js';
import { createUser } from '../support/users.js';
import { killAllServices, LEASE_MS, runCli, ServiceProcess } from '../support/serviceProcess.js';
import { journalOf, journalProblems, openPool } from '../durability/helpers.js';

const PROJECT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'children');

describe('child workflows: the Workflow step', function () {
  this.timeout(90_000);
  let databaseUrl: string;
  let db: pg.Pool;
  let a: ServiceProcess;
  let token: string;

  before(async function () {
    this.timeout(60_000);
    databaseUrl = await createTestDatabase();
    db = openPool(databaseUrl);
    await db.query(`CREATE TABLE child_effects (id bigserial PRIMARY KEY, run_id text NOT NULL, step_id text NOT NULL, pid integer NOT NULL)`);
    a = await ServiceProcess.start(databaseUrl, PROJECT);
    token = (await bootstrapAdmin(a.url)).token;
  });
  after(async () => {
    await killAllServices();
    await db.end();
  });

  const fire = (service: ServiceProcess, workflow: string, input: Record<string, unknown>) => startRun(service.url, token, workflow, input);
  const detail = async (service: ServiceProcess, runId: string) => {
    const answer = await call(service.url, 'GET', `/api/runs/${runId}`, { token });
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    return answer.body;
  };
  const childrenOf = async (runId: string): Promise<string[]> =>
    (await db.query<{ id: string }>('SELECT id::text FROM svc_runs WHERE parent_run_id = $1 ORDER BY created_at', [runId])).rows.map((r) => r.id);
  const effectsOf = async (runId: string) => (await db.query<{ pid: number }>('SELECT pid FROM child_effects WHERE run_id = $1', [runId])).rows;

  it('waits for its child (waiting_child), puts the output at output_key; detail and search show the family', async () => {
    const parent = await fire(a, 'parent_wait', { value: 21 });
    const done = await waitForStatus(a.url, token, parent, ['completed', 'failed'], 20_000);
    expect(done.status, JSON.stringify(done)).to.equal('completed');
    expect(done.output).to.deep.equal({ result: 42 });
    const journal = await journalOf(db, parent);
    expect(journalProblems(journal)).to.deep.equal([]);
    const started = journal.filter((e) => e.type === 'child_started');
    expect(started).to.have.length(1);
    expect(started[0]!.step).to.equal('call');
    const childId = String(started[0]!.payload.run_id);
    expect(started[0]!.payload).to.include({ workflow: 'child_ok', schema_version: 'v1', wait: true });
    const finished = journal.filter((e) => e.type === 'child_finished');
    expect(finished.map((e) => e.payload)).to.deep.equal([{ run_id: childId, status: 'completed', output: 42, error: null }]);
    expect(journal.map((e) => e.type).indexOf('child_finished')).to.be.above(journal.map((e) => e.type).indexOf('child_started'));

    const child = await detail(a, childId);
    expect(child).to.include({ status: 'completed', workflow: 'child_ok', parent_run_id: parent });
    expect(child.trigger).to.deep.equal({ type: 'workflow' });
    expect(child.input).to.deep.equal({ n: 21 });
    expect(child.children).to.deep.equal([]);
    const shown = await detail(a, parent);
    expect(shown.parent_run_id).to.equal(null);
    expect(shown.children).to.deep.equal([{ run_id: childId, workflow: 'child_ok', status: 'completed' }]);
    const { rows } = await db.query('SELECT principal_id, tenant FROM svc_runs WHERE id = ANY($1::uuid[]) ORDER BY created_at', [[parent, childId]]);
    expect(rows[1], 'the child runs as the parent principal').to.deep.equal(rows[0]);

    const listed = await call(a.url, 'GET', `/api/runs?parent_run_id=${parent}`, { token });
    expect(listed.status).to.equal(200);
    expect(listed.body.map((r: { id: string }) => r.id)).to.deep.equal([childId]);
  });

  it('fire and forget (wait: false): the parent completes while its child still runs; the child ends on its own', async () => {
    const parent = await fire(a, 'parent_forget', { value: 5 });
    const done = await waitForStatus(a.url, token, parent, ['completed', 'failed'], 20_000);
    expect(done.status, JSON.stringify(done)).to.equal('completed');
    expect(done.output).to.deep.equal({ value: 5 });
    const [childId] = await childrenOf(parent);
    expect(childId).to.be.a('string');
    expect((await detail(a, childId!)).status, 'the child is still waiting for its timer').to.not.equal('completed');
    const child = await waitForStatus(a.url, token, childId!, ['completed', 'failed'], 20_000);
    expect(child.output).to.equal(10);
    const journal = await journalOf(db, parent);
    expect(journal.find((e) => e.type === 'child_started')!.payload.wait).to.equal(false);
    expect(
      journal.filter((e) => e.type === 'child_finished'),
      'nothing is appended to an ended parent',
    ).to.have.length(0);
  });

  it('a failed child takes the parent error route with the child error', async () => {
    const parent = await fire(a, 'parent_fail', {});
    const done = await waitForStatus(a.url, token, parent, ['completed', 'failed'], 20_000);
    expect(done.status, JSON.stringify(done)).to.equal('completed');
    expect(String(done.output.error)).to.match(/child run .* failed: .*failed on purpose/);
    const [childId] = await childrenOf(parent);
    expect((await detail(a, childId!)).status).to.equal('failed');
    const finished = (await journalOf(db, parent)).filter((e) => e.type === 'child_finished');
    expect(finished.map((e) => e.payload.status)).to.deep.equal(['failed']);
  });

  it('a child whose input its input_schema refuses is never started: the step takes its error route', async () => {
    const parent = await fire(a, 'parent_badinput', {});
    const done = await waitForStatus(a.url, token, parent, ['completed', 'failed'], 20_000);
    expect(done.output.name).to.equal('ChildInputInvalid');
    expect(String(done.output.error)).to.match(/the input for child_strict does not match its input_schema: n: /);
    expect(await childrenOf(parent)).to.deep.equal([]);
    expect((await journalOf(db, parent)).map((e) => e.type)).to.not.include('child_started');
  });

  it("the child runs as the parent's principal and passes its own gate: a caller without its scope gets the step's error", async () => {
    const plain = await createUser(a.url, token, 'plain@example.com', { runner: ['runs:read'] });
    const denied = await call(a.url, 'POST', '/api/workflows/parent_gated/runs?wait=false', { token: plain.token, json: { value: 3 } });
    expect(denied.status, JSON.stringify(denied.body)).to.equal(202);
    const done = await waitForStatus(a.url, plain.token, denied.body.id, ['completed', 'failed'], 20_000);
    expect(done.output).to.deep.include({ name: 'ChildPermissionDenied' });
    expect(String(done.output.error)).to.match(/may not run child_gated: it requires secret:run/);
    expect(await childrenOf(denied.body.id)).to.deep.equal([]);

    const trusted = await createUser(a.url, token, 'trusted@example.com', { secret_runner: ['runs:read', 'secret:run'] });
    const allowed = await call(a.url, 'POST', '/api/workflows/parent_gated/runs?wait=false', { token: trusted.token, json: { value: 3 } });
    const ok = await waitForStatus(a.url, trusted.token, allowed.body.id, ['completed', 'failed'], 20_000);
    expect(ok.output).to.deep.equal({ result: 6 });
    const [childId] = await childrenOf(allowed.body.id);
    const seen = await call(a.url, 'GET', `/api/runs/${childId}`, { token: trusted.token });
    expect(seen.status, 'the child is the caller own run').to.equal(200);
    expect(seen.body.parent_run_id).to.equal(allowed.body.id);
  });

  it('aborting the parent aborts its running child; aborting a child sends its waiting parent down the error route', async () => {
    const parent = await fire(a, 'parent_slow', { value: 1 });
    await waitForStatus(a.url, token, parent, ['waiting_child'], 20_000);
    const [childId] = await childrenOf(parent);
    expect((await call(a.url, 'POST', `/api/runs/${parent}/abort`, { token, json: { reason: 'no longer needed' } })).status).to.equal(200);
    await waitForStatus(a.url, token, parent, ['aborted']);
    await waitForStatus(a.url, token, childId!, ['aborted']);
    await sleep(4000);
    expect(await effectsOf(childId!), 'the aborted child never reached its step').to.have.length(0);
    expect((await journalOf(db, childId!)).at(-1)!.payload).to.include({ reason: `parent run ${parent} was aborted` });

    const other = await fire(a, 'parent_slow', { value: 1 });
    await waitForStatus(a.url, token, other, ['waiting_child'], 20_000);
    const [otherChild] = await childrenOf(other);
    expect((await call(a.url, 'POST', `/api/runs/${otherChild}/abort`, { token })).status).to.equal(200);
    const done = await waitForStatus(a.url, token, other, ['completed', 'failed'], 20_000);
    expect(String(done.output.error)).to.match(/aborted/);
    expect((await detail(a, other)).children).to.deep.equal([{ run_id: otherChild, workflow: 'child_slow', status: 'aborted' }]);
  });

  it('pausing a waiting parent holds it; its resume returns it to waiting_child until the child ends', async () => {
    const parent = await fire(a, 'parent_slow', { value: 2 });
    await waitForStatus(a.url, token, parent, ['waiting_child'], 20_000);
    expect((await call(a.url, 'POST', `/api/runs/${parent}/pause`, { token })).status).to.equal(200);
    await waitForStatus(a.url, token, parent, ['paused']);
    expect((await call(a.url, 'POST', `/api/runs/${parent}/resume`, { token })).status).to.equal(200);
    const resumed = await detail(a, parent);
    expect(['waiting_child', 'queued', 'running', 'completed']).to.include(resumed.status);
    const done = await waitForStatus(a.url, token, parent, ['completed', 'failed'], 20_000);
    expect(done.output).to.deep.equal({ result: 4 });
  });

  it('SIGKILL while the parent waits: a second process resumes both, with exactly one child', async () => {
    // Its claim interval (5 s) lets it hold the child's 3 s timer in memory, under its lease, when it dies.
    const doomed = await ServiceProcess.start(databaseUrl, PROJECT, { SVC_RUN_CLAIM_INTERVAL_MS: '5000' });
    const parent = await fire(doomed, 'parent_slow', { value: 7 });
    await waitForStatus(doomed.url, token, parent, ['waiting_child'], 20_000);
    const [childId] = await childrenOf(parent);
    await doomed.kill('SIGKILL');
    const b = await ServiceProcess.start(databaseUrl, PROJECT);
    const done = await waitForStatus(b.url, token, parent, ['completed', 'failed'], 5 * LEASE_MS + 30_000);
    expect(done.output).to.deep.equal({ result: 14 });
    expect(await childrenOf(parent)).to.deep.equal([childId]);
    const effects = await effectsOf(childId!);
    expect(effects, 'the child step ran once').to.have.length(1);
    for (const runId of [parent, childId!]) expect(journalProblems(await journalOf(db, runId)), runId).to.deep.equal([]);
    expect((await journalOf(db, parent)).filter((e) => e.type === 'child_started')).to.have.length(1);
    await b.kill();
  });

  it('under spec.concurrency limit 1, a parent waiting for a child of the same workflow frees its slot for it', async () => {
    const parent = await fire(a, 'one_slot', { leaf: false, is_leaf: true });
    const done = await waitForStatus(a.url, token, parent, ['completed', 'failed'], 30_000);
    expect(done.output).to.deep.equal({ inner: { leaf: true } });
    const types = (await journalOf(db, parent)).map((e) => e.type);
    expect(
      types.filter((t) => t === 'run_dequeued'),
      'the parent took a slot again after its child ended',
    ).to.have.length(2);
  });

  it('a workflow that calls itself fails at depth 10 with a clear message, on the step error route', async () => {
    const top = await fire(a, 'recurse', {});
    const done = await waitForStatus(a.url, token, top, ['completed', 'failed'], 60_000);
    expect(done.status, JSON.stringify(done)).to.equal('completed');
    let output = done.output;
    let levels = 0;
    while (output.inner !== undefined) {
      output = output.inner;
      levels++;
    }
    expect(levels).to.equal(10);
    expect(String(output.error)).to.match(/nest at most 10 levels deep/);
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM svc_runs WHERE workflow = 'recurse'`);
    expect(rows[0]!.n).to.equal(11);
  });

  it('a rebuild of svc_runs gives the same rows, parents, children and waits byte for byte', async () => {
    const { rows: open } = await db.query(`SELECT id FROM svc_runs WHERE status NOT IN ('completed', 'failed', 'aborted')`);
    expect(open, 'every run of this file has ended').to.deep.equal([]);
    const checksum = async () => (await db.query(`SELECT count(*) AS n, md5(string_agg(r::text, '|' ORDER BY id)) AS sum FROM svc_runs r`)).rows[0];
    const live = await checksum();
    const { rows } = await db.query('SELECT count(*)::int AS n FROM svc_runs WHERE parent_run_id IS NOT NULL');
    expect(rows[0].n).to.be.above(10);
    const rebuilt = await runCli(['projections', 'rebuild', 'svc_runs'], { DATABASE_URL: databaseUrl });
    expect(rebuilt.code, rebuilt.stderr).to.equal(0);
    expect(await checksum()).to.deep.equal(live);
  });
});
