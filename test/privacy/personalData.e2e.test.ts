// spec.personal_data: a run's listed input and context keys are sealed in its journal with a key of its
// principal's, opened for readers and for the worker that resumes the run, null once the principal is erased.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import type { Clock } from '../../src/kernel/clock.js';
import type { Service } from '../../src/main.js';
import { rebuildProjection } from '../../src/projections/index.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, eventually, expectError, type Admin } from '../support/http.js';
import { copyProject } from '../support/projects.js';
import { emptyProjectDir, startTestKernel, startTestService } from '../support/service.js';
import { openDataKeys } from '../../src/privacy/boot.js';
import { openRunEvents, runSealerOf } from '../../src/runs/personal.js';
import type { RunState } from '../../src/runs/state.js';
import { importRun } from '../../src/runs/transfer.js';
import type { WorkflowDefinition } from '../../src/workflows/definition.js';
import { PROCESS_SIGNING_KEY } from '../support/serviceProcess.js';
import { readSse } from '../support/sse.js';
import { createUser, type SignedInUser } from '../support/users.js';

const SIGNUP = `kind: Workflow
metadata: {name: signup, schema_version: v1}
spec:
  personal_data: [email, contact]
  retention: {runs: 1m}
  trigger:
    http: {path: /api/signup, method: POST}
    input_schema: [{name: email, type: string}, {name: plan, type: string}]
  steps:
    - {id: copy, kind: Functional, runner: contact}
    - {id: nap, kind: Wait, duration: 1500ms}
    - {id: done, kind: Response, mapping: {email: contact.email, plan: plan}}
`;
const REVIEW = `kind: Workflow
metadata: {name: review, schema_version: v1}
spec:
  personal_data: [email]
  trigger:
    http: {path: /api/review, method: POST}
    input_schema: [{name: email, type: string}, {name: plan, type: string}]
  steps:
    - id: check
      kind: HumanInTheLoop
      ui: {title: Check, display_context: [email, plan]}
      routes: {approve: END, reject: END}
`;
const RUNNER = `export default function contact(ctx) { return { contact: { email: ctx.email, kind: 'primary' } }; }\n`;
const ENV = { SVC_RUN_LEASE_MS: '1500', SVC_RUN_CLAIM_INTERVAL_MS: '200', SVC_SIGNING_KEY: PROCESS_SIGNING_KEY };
const EMAIL = 'ada.personal@example.com';

describe('privacy: spec.personal_data of runs', function () {
  this.timeout(60_000);
  let first: Service;
  let second: Service;
  let admin: Admin;
  let user: SignedInUser;
  let offsetMs = 0;
  const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
  const as = (token: string, method: string, urlPath: string, json?: unknown) => call(second.url, method, urlPath, { token, ...(json ? { json } : {}) });

  /** Every table of the database (events included) whose rows' text holds `needle`. */
  async function tablesHolding(needle: string): Promise<string[]> {
    const { rows: tables } = await second.kernel.pool.query<{ name: string }>(
      "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'",
    );
    const holding: string[] = [];
    for (const { name } of tables) {
      const { rows } = await second.kernel.pool.query(`SELECT 1 FROM ${name} t WHERE t::text ILIKE $1 LIMIT 1`, [`%${needle}%`]);
      if (rows.length > 0) holding.push(name);
    }
    return holding;
  }

  async function journal(token: string, runId: string): Promise<{ event?: string; data?: { payload: Record<string, any> } }[]> {
    const answer = await readSse(`${second.url}/api/runs/${runId}/events?follow=false`, { token });
    expect(answer.status).to.equal(200);
    return answer.frames as { event?: string; data?: { payload: Record<string, any> } }[];
  }

  const payloadOf = (frames: Awaited<ReturnType<typeof journal>>, type: string) => frames.find((f) => f.event === type)?.data?.payload;

  before(async () => {
    const databaseUrl = await createTestDatabase();
    const base = copyProject(emptyProjectDir());
    mkdirSync(path.join(base, 'workflows'), { recursive: true });
    mkdirSync(path.join(base, 'nodes'), { recursive: true });
    const projectDir = copyProject(base, { 'workflows/signup.yaml': SIGNUP, 'workflows/review.yaml': REVIEW, 'nodes/contact.js': RUNNER });
    first = await startTestService({ databaseUrl, projectDir, clock, env: ENV });
    second = await startTestService({ databaseUrl, projectDir, clock, env: ENV });
    admin = await bootstrapAdmin(first.url);
    user = await createUser(first.url, admin.token, 'runner.person@example.com', { signup_runner: ['runs:read'] });
  });
  let firstClosed = false;
  after(async () => {
    if (!firstClosed) await first?.close();
    await second?.close();
  });

  it('seals, resumes on another worker, shows readers the values, and reads null after the principal is erased', async () => {
    const started = await call(first.url, 'POST', '/api/signup', { token: user.token, json: { email: EMAIL, plan: 'pro' } });
    expect(started.status, JSON.stringify(started.body)).to.be.oneOf([201, 202]);
    const runId = (started.body.run_id ?? started.body.id) as string;
    expect(runId, JSON.stringify(started.body)).to.be.a('string');
    // The first worker goes away while the run waits: the second resumes it from the sealed journal.
    await eventually(async () => (await as(user.token, 'GET', `/api/runs/${runId}`)).body.status === 'waiting_timer', 10_000);
    // Followed live (not replayed): frames are opened as they arrive, in order.
    const followed = readSse(`${second.url}/api/runs/${runId}/events`, { token: user.token, timeoutMs: 30_000 });
    await first.close();
    firstClosed = true;
    const done = await eventually(async () => (await as(user.token, 'GET', `/api/runs/${runId}`)).body.status === 'completed', 20_000);
    expect(done.ok, 'the second worker completed the run').to.equal(true);

    const { rows } = await second.kernel.pool.query<{ type: string }>('SELECT type, data FROM events WHERE (data::text || metadata::text) ILIKE $1', [
      '%ada.personal%',
    ]);
    expect(rows, 'no clear-text email in the events table').to.deep.equal([]);
    expect(await tablesHolding('ada.personal')).to.deep.equal([]);
    const sealed = await second.kernel.pool.query<{ data: any }>("SELECT data FROM events WHERE stream_id = $1 AND type = 'run_started'", [`run-${runId}`]);
    expect(sealed.rows[0]!.data.payload.input.email).to.match(/^enc:v1:/);
    expect(sealed.rows[0]!.data.payload.input.plan, 'keys not listed stay clear').to.equal('pro');
    // The run's key is a row of the commit that stored run_started (not a commit of its own before it).
    const key = await second.kernel.pool.query<{ key_xid: string; started_xid: string }>(
      `SELECT k.xmin::text AS key_xid, (e.transaction_id::text::bigint % 4294967296)::text AS started_xid
         FROM svc_data_keys k, events e WHERE k.subject_type = 'run' AND k.subject_id = $1 AND e.stream_id = $2 AND e.type = 'run_started'`,
      [`${user.id}:${runId}`, `run-${runId}`],
    );
    expect(key.rows).to.have.length(1);
    expect(key.rows[0]!.key_xid).to.equal(key.rows[0]!.started_xid);

    const live = (await followed).frames as Awaited<ReturnType<typeof journal>>;
    expect(live.map((f) => f.event).at(-1)).to.equal('run_completed');
    expect(payloadOf(live, 'run_started')!.input.email).to.equal(EMAIL);
    expect(payloadOf(live, 'run_completed')!.output).to.deep.equal({ email: EMAIL, plan: 'pro' });
    const detail = (await as(user.token, 'GET', `/api/runs/${runId}`)).body;
    expect(detail.input).to.deep.equal({ email: EMAIL, plan: 'pro' });
    expect(detail.output, 'the resumed worker saw the clear context').to.deep.equal({ email: EMAIL, plan: 'pro' });
    const frames = await journal(user.token, runId);
    expect(payloadOf(frames, 'run_started')!.input.email).to.equal(EMAIL);
    const copied = frames.find((f) => f.event === 'step_completed' && f.data?.payload.changes?.set?.contact);
    expect(copied?.data?.payload.changes.set.contact).to.deep.equal({ email: EMAIL, kind: 'primary' });
    const exported = (await as(user.token, 'GET', `/api/runs/${runId}/export`)).body;
    expect(exported.run.input.email).to.equal(EMAIL);
    expect(exported.events[0].payload.input.email).to.equal(EMAIL);
    expect(exported.events[0].redacted, 'an opened event is not what is stored: its hash is taken from the export').to.equal(true);

    expect((await as(admin.token, 'POST', '/admin/erasure', { subject_type: 'user', id: user.id })).status).to.equal(200);
    const erased = (await as(admin.token, 'GET', `/api/runs/${runId}`)).body;
    expect(erased.input).to.deep.equal({ email: null, plan: 'pro' });
    expect(erased.output).to.deep.equal({ email: null, plan: 'pro' });
    const erasedFrames = await journal(admin.token, runId);
    expect(payloadOf(erasedFrames, 'run_started')!.input).to.deep.equal({ email: null, plan: 'pro' });
    expect(
      erasedFrames.find((f) => f.event === 'step_completed' && f.data?.payload.changes?.set?.contact !== undefined)?.data?.payload.changes.set.contact,
    ).to.equal(null);
    const erasedExport = (await as(admin.token, 'GET', `/api/runs/${runId}/export`)).body;
    expect(erasedExport.run.input.email).to.equal(null);
    expect(erasedExport.events[0].payload.input.email).to.equal(null);

    const refused = await as(user.token, 'POST', '/api/signup', { email: 'again@example.com', plan: 'pro' });
    expect(refused.status, 'an erased principal takes no new personal data').to.equal(409);

    await rebuildProjection(second.kernel.pool, second.kernel.registry, second.kernel.registry.get('svc_runs')!);
    expect((await as(admin.token, 'GET', `/api/runs/${runId}`)).body.input).to.deep.equal({ email: null, plan: 'pro' });
    expect((await as(admin.token, 'GET', '/admin/audit/verify')).body).to.include({ ok: true });
  });

  it("opens an approval's displayed values for whoever decides, and shows null once the principal is erased", async () => {
    const person = await createUser(second.url, admin.token, 'reviewed.person@example.com', { review_runner: ['runs:read'] });
    const started = await call(second.url, 'POST', '/api/review', { token: person.token, json: { email: 'lin.review@example.com', plan: 'pro' } });
    expect(started.status, JSON.stringify(started.body)).to.be.oneOf([201, 202]);
    const runId = (started.body.run_id ?? started.body.id) as string;
    const pending = async () =>
      ((await as(admin.token, 'GET', '/api/approvals')).body as { run_id: string; display: Record<string, unknown> }[]).find((a) => a.run_id === runId);
    expect((await eventually(async () => (await pending()) !== undefined, 10_000)).ok).to.equal(true);
    expect((await pending())!.display).to.deep.equal({ email: 'lin.review@example.com', plan: 'pro' });
    expect(await tablesHolding('lin.review')).to.deep.equal([]);
    expect((await as(admin.token, 'POST', '/admin/erasure', { subject_type: 'user', id: person.id })).status).to.equal(200);
    expect((await pending())!.display).to.deep.equal({ email: null, plan: 'pro' });
  });

  it('a fork and an imported run store their personal data sealed again (an export shows it opened)', async () => {
    const person = await createUser(second.url, admin.token, 'imported.person@example.com', { signup_runner: ['runs:read'] });
    const started = await call(second.url, 'POST', '/api/signup', { token: person.token, json: { email: 'kay.import@example.com', plan: 'pro' } });
    const runId = (started.body.run_id ?? started.body.id) as string;
    expect((await eventually(async () => (await as(person.token, 'GET', `/api/runs/${runId}`)).body.status === 'completed', 20_000)).ok).to.equal(true);
    // A fork is the forking caller's run: the copied values are sealed again with the fork's own key.
    const forked = await as(admin.token, 'POST', `/api/runs/${runId}/fork`, { from_step: 'done' });
    expect(forked.status, JSON.stringify(forked.body)).to.equal(202);
    expect(forked.body.input).to.deep.equal({ email: 'kay.import@example.com', plan: 'pro' });
    expect((await eventually(async () => (await as(admin.token, 'GET', `/api/runs/${forked.body.id}`)).body.status === 'completed', 20_000)).ok).to.equal(true);
    expect((await as(admin.token, 'GET', `/api/runs/${forked.body.id}`)).body.output).to.deep.equal({ email: 'kay.import@example.com', plan: 'pro' });
    expect(await tablesHolding('kay.import')).to.deep.equal([]);
    const exported = (await as(person.token, 'GET', `/api/runs/${runId}/export`)).body;
    expect(exported.events[0].payload.input.email).to.equal('kay.import@example.com');
    const kernel = await startTestKernel({ databaseUrl: await createTestDatabase() });
    try {
      const dataKeys = await openDataKeys(kernel.pool, kernel.settings, false);
      // What the importing instance's signup workflow declares (the sealer reads only this).
      const workflow = { personalData: ['email', 'contact'] } as WorkflowDefinition;
      const sealerOf = (state: RunState) => runSealerOf(dataKeys, workflow, state.runId, state.principal);
      expect((await importRun(kernel.store, exported, { unverified: true, sealerOf })).status).to.equal('completed');
      const { rows } = await kernel.pool.query<{ type: string }>('SELECT type FROM events WHERE data::text ILIKE $1', ['%kay.import%']);
      expect(rows, 'no clear text in the importing database').to.deep.equal([]);
      const back = await openRunEvents(dataKeys, await kernel.store.readWholeStream(`run-${runId}`));
      expect((back[0]!.data as { payload: { input: unknown } }).payload.input).to.deep.equal({ email: 'kay.import@example.com', plan: 'pro' });
    } finally {
      await kernel.close();
    }
  });

  it('a run whose principal is erased while it waits goes on, journaling its personal values as null', async () => {
    const person = await createUser(second.url, admin.token, 'waiting.person@example.com', { signup_runner: ['runs:read'] });
    const started = await call(second.url, 'POST', '/api/signup', { token: person.token, json: { email: 'mo.wait@example.com', plan: 'pro' } });
    const runId = (started.body.run_id ?? started.body.id) as string;
    expect((await eventually(async () => (await as(admin.token, 'GET', `/api/runs/${runId}`)).body.status === 'waiting_timer', 10_000)).ok).to.equal(true);
    expect((await as(admin.token, 'POST', '/admin/erasure', { subject_type: 'user', id: person.id })).status).to.equal(200);
    expect((await eventually(async () => (await as(admin.token, 'GET', `/api/runs/${runId}`)).body.status === 'completed', 20_000)).ok).to.equal(true);
    expect((await as(admin.token, 'GET', `/api/runs/${runId}`)).body.output).to.deep.equal({ email: null, plan: 'pro' });
    expect(await tablesHolding('mo.wait')).to.deep.equal([]);
  });

  it('shreds an expired run: its key is destroyed, another run of the same user keeps its values', async () => {
    const other = await createUser(second.url, admin.token, 'second.runner@example.com', { signup_runner: ['runs:read'] });
    const start = async () => {
      const started = await call(second.url, 'POST', '/api/signup', { token: other.token, json: { email: 'grace.personal@example.com', plan: 'basic' } });
      expect(started.status, JSON.stringify(started.body)).to.be.oneOf([201, 202]);
      return (started.body.run_id ?? started.body.id) as string;
    };
    const old = await start();
    expect((await eventually(async () => (await as(other.token, 'GET', `/api/runs/${old}`)).body.status === 'completed', 20_000)).ok).to.equal(true);
    offsetMs = 5 * 60_000;
    // Started on the moved clock, it has not ended (its timer is minutes away for the database): it does not expire.
    const fresh = await start();
    expect(await second.retention.sweep()).to.be.greaterThan(0);
    expectError(await as(other.token, 'GET', `/api/runs/${old}`), 404);
    const keys = await second.kernel.pool.query<{ subject_id: string; destroyed: boolean }>(
      "SELECT subject_id, wrapped_key IS NULL AS destroyed FROM svc_data_keys WHERE subject_type = 'run' AND subject_id LIKE $1",
      [`${other.id}:%`],
    );
    expect(keys.rows.find((k) => k.subject_id.endsWith(old))?.destroyed, "the expired run's key is destroyed").to.equal(true);
    expect(keys.rows.find((k) => k.subject_id.endsWith(fresh))?.destroyed).to.equal(false);
    expect((await as(other.token, 'GET', `/api/runs/${fresh}`)).body.input.email).to.equal('grace.personal@example.com');
    expect((await as(admin.token, 'GET', '/admin/audit/verify')).body).to.include({ ok: true });
  });
});
