// /admin/schedules over real HTTP: who may call it, its 4xx answers, pausing, running now, backfilling, and a
// workflow version toggled off and on; every admin action is an event naming who and when.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import pg from 'pg';
import type { Service } from '../../src/main.js';
import { rebuildProjection } from '../../src/projections/index.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, eventually, expectError, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser, type SignedInUser } from '../support/users.js';
import { gapsIn, projectWith, runStartsByTick, scheduledRuns, scheduledWorkflow, scheduleEvents } from './helpers.js';

const DEPLOYMENT_ONLY = /deployment/;

describe('schedule administration', function () {
  this.timeout(90_000);
  let service: Service;
  let db: pg.Pool;
  let root: Admin;
  let tenantAdmin: SignedInUser;
  let user: SignedInUser;

  before(async () => {
    const databaseUrl = await createTestDatabase();
    db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    const project = projectWith({ paris_daily: scheduledWorkflow('paris_daily', 'timezone: Europe/Paris, input: {note: daily}', undefined, '0 3 * * *') });
    service = await startTestService({ databaseUrl, projectDir: project, env: { SVC_TENANT_IDS: 't1,t2', SVC_SCHEDULE_CLAIM_INTERVAL_MS: '200' } });
    root = await bootstrapAdmin(service.url);
    tenantAdmin = await createUser(service.url, root.token, 'ta@t1.example', { tenant_admin: ['iam:admin'] }, { tenant: 't1' });
    user = await createUser(service.url, root.token, 'una@t1.example', { runner: ['runs:read'] }, { tenant: 't1' });
  });
  after(async () => {
    await service?.close();
    await db?.end();
  });

  const asRoot = (method: string, path: string, json?: unknown) =>
    call(service.url, method, path, { token: root.token, ...(json !== undefined ? { json } : {}) });
  const ticksBase = '/admin/schedules/ticks/each_second';
  async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
    expect((await eventually(probe, timeoutMs, 100)).ok, what).to.equal(true);
  }

  it('is for deployment admins: 401 without a token, 403 for a user and for a tenant admin', async () => {
    const routes: [string, string, unknown?][] = [
      ['GET', '/admin/schedules'],
      ['PATCH', ticksBase, { paused: true }],
      ['POST', `${ticksBase}/run`],
      ['POST', `${ticksBase}/backfill`, { from: '2025-01-01T00:00:00Z', to: '2025-01-01T00:00:05Z' }],
    ];
    for (const [method, path, json] of routes) {
      const body = json !== undefined ? { json } : {};
      expect((await call(service.url, method, path, body)).status, `${method} ${path}`).to.equal(401);
      expectError(await call(service.url, method, path, { token: user.token, ...body }), 403, 'PERMISSION_DENIED');
      const refused = await call(service.url, method, path, { token: tenantAdmin.token, ...body });
      expectError(refused, 403, 'PERMISSION_DENIED');
      expect(refused.body.detail).to.match(DEPLOYMENT_ONLY);
    }
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM events WHERE type IN ('schedule_paused', 'schedule_run_requested', 'schedule_backfilled')`);
    expect(rows[0].n, 'a refused call changes nothing').to.equal(0);
  });

  it('lists every schedule with its definition and ticks', async () => {
    await waitFor('a fired tick', async () => (await asRoot('GET', '/admin/schedules')).body.some((s: any) => s.last_run_id !== null));
    const listed = (await asRoot('GET', '/admin/schedules')).body;
    const paris = listed.find((s: any) => s.workflow === 'paris_daily');
    expect(paris).to.include({ schema_version: 'v1', id: 'each_second', cron: '0 3 * * *', timezone: 'Europe/Paris', paused: false, last_run_id: null });
    expect(new Date(paris.next_fire_at).getUTCHours(), '03:00 in Paris is 01:00 or 02:00 UTC').to.be.oneOf([1, 2]);
    const ticks = listed.find((s: any) => s.workflow === 'ticks');
    expect(ticks).to.include({ cron: '* * * * * *', timezone: 'UTC', paused: false });
    expect(ticks.last_fired_at).to.be.a('string');
  });

  it('answers 404 for an unknown schedule and 422 or 400 for bad bodies; a backfill over 1000 ticks is refused', async () => {
    expectError(await asRoot('PATCH', '/admin/schedules/ticks/nope', { paused: true }), 404, 'NOT_FOUND');
    expectError(await asRoot('PATCH', '/admin/schedules/nope/each_second', { paused: true }), 404, 'NOT_FOUND');
    expectError(await asRoot('POST', '/admin/schedules/ticks/nope/run'), 404, 'NOT_FOUND');
    expectError(await asRoot('POST', '/admin/schedules/ticks/nope/backfill', { from: '2025-01-01T00:00:00Z', to: '2025-01-01T00:00:05Z' }), 404, 'NOT_FOUND');
    expect((await asRoot('PATCH', ticksBase, { paused: 'yes' })).status).to.equal(422);
    expect((await asRoot('PATCH', ticksBase, {})).status).to.equal(422);
    expect((await asRoot('PATCH', ticksBase, { paused: true, extra: 1 })).status).to.equal(422);
    expect((await asRoot('POST', `${ticksBase}/backfill`, { from: 'yesterday', to: '2025-01-01T00:00:05Z' })).status).to.equal(422);
    expectError(await asRoot('POST', `${ticksBase}/backfill`, { from: '2025-01-02T00:00:00Z', to: '2025-01-01T00:00:00Z' }), 400);
    const tooMany = await asRoot('POST', `${ticksBase}/backfill`, { from: '2025-01-01T00:00:00Z', to: '2025-01-01T00:16:40Z' });
    expectError(tooMany, 400);
    expect(tooMany.body.detail).to.match(/1000 ticks/);
    expect((await asRoot('POST', `${ticksBase}/backfill`, { from: '2025-01-01T00:00:00Z', to: '2025-01-01T00:16:39Z' })).body.runs).to.have.length(1000);
  });

  it('a paused schedule fires nothing; backfill then starts exactly the ticks without a run, once', async () => {
    await waitFor('three ticks ran', async () => (await scheduledRuns(db, 'ticks')).length >= 3);
    const paused = await asRoot('PATCH', ticksBase, { paused: true });
    expect(paused.status).to.equal(200);
    expect(paused.body).to.include({ paused: true, next_fire_at: null });
    const pausedAt = new Date().toISOString();
    await sleep(2500);
    expect((await scheduledRuns(db, 'ticks')).filter((r) => r.scheduled_at > pausedAt)).to.deep.equal([]);
    expect((await asRoot('PATCH', ticksBase, { paused: false })).body.paused).to.equal(false);
    await waitFor('ticks after the resume', async () => (await scheduledRuns(db, 'ticks')).some((r) => r.scheduled_at > pausedAt));

    const runs = await scheduledRuns(db, 'ticks');
    const recent = runs.filter((r) => r.scheduled_at > '2026-01-01');
    const missing = gapsIn(recent.map((r) => r.scheduled_at));
    expect(missing.length, 'the pause left ticks without a run').to.be.at.least(2);
    const window = { from: recent[0]!.scheduled_at, to: recent.at(-1)!.scheduled_at };
    const backfilled = await asRoot('POST', `${ticksBase}/backfill`, window);
    expect(backfilled.status, JSON.stringify(backfilled.body)).to.equal(200);
    const after = await scheduledRuns(db, 'ticks');
    const byId = new Map(after.map((r) => [r.id, r.scheduled_at]));
    expect(backfilled.body.runs.map((id: string) => byId.get(id)).sort()).to.deep.equal(missing);
    expect(
      [...(await runStartsByTick(db, 'ticks')).values()].every((n) => n === 1),
      'one run per tick',
    ).to.equal(true);
    expect((await asRoot('POST', `${ticksBase}/backfill`, window)).body.runs, 'nothing left to backfill').to.deep.equal([]);

    const events = await scheduleEvents(db, 'ticks');
    for (const type of ['schedule_paused', 'schedule_resumed', 'schedule_backfilled']) {
      const event = events.find((e) => e.type === type);
      expect(event?.data.by, type).to.equal(root.userId);
      expect(Date.parse(event!.data.at), type).to.be.closeTo(Date.now(), 60_000);
    }
    expect(events.findLast((e) => e.type === 'schedule_backfilled')!.data).to.include({ from: window.from, to: window.to });
  });

  it('backfills a daily Europe/Paris schedule across the March change at 03:00 local', async () => {
    const answer = await asRoot('POST', '/admin/schedules/paris_daily/each_second/backfill', { from: '2025-03-28T00:00:00Z', to: '2025-04-01T00:00:00Z' });
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    const ticks = (await scheduledRuns(db, 'paris_daily')).map((r) => r.scheduled_at);
    expect(ticks).to.deep.equal(['2025-03-28T02:00:00.000Z', '2025-03-29T02:00:00.000Z', '2025-03-30T01:00:00.000Z', '2025-03-31T01:00:00.000Z']);
  });

  it('runs a schedule now: 201 with the run, which names the schedule; the request is an event', async () => {
    const answer = await asRoot('POST', '/admin/schedules/paris_daily/each_second/run');
    expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
    expect(answer.body.status).to.equal('completed');
    expect(answer.body.trigger).to.include({ type: 'schedule', schedule_id: 'each_second' });
    expect(answer.headers.get('x-svc-run-id')).to.equal(answer.body.id);
    const requested = (await scheduleEvents(db, 'paris_daily')).find((e) => e.type === 'schedule_run_requested');
    expect(requested?.data).to.include({ by: root.userId, run_id: answer.body.id });
    const listed = (await asRoot('GET', '/admin/schedules')).body.find((s: any) => s.workflow === 'paris_daily');
    expect(listed.last_run_id).to.equal(answer.body.id);
  });

  it('a disabled workflow version fires nothing; enabled again, it fires from the next tick without catching up', async () => {
    expect((await asRoot('PATCH', '/admin/workflows/ticks/v1/toggle')).body.enabled).to.equal(false);
    await waitFor(
      'the schedule is disabled',
      async () => (await asRoot('GET', '/admin/schedules')).body.find((s: any) => s.workflow === 'ticks').enabled === false,
    );
    const disabledAt = new Date(Date.now() + 1000).toISOString();
    expectError(await asRoot('POST', `${ticksBase}/run`), 409, 'CONFLICT');
    await sleep(2500);
    expect((await asRoot('PATCH', '/admin/workflows/ticks/v1/toggle')).body.enabled).to.equal(true);
    const enabledAt = new Date().toISOString();
    await waitFor('ticks after enabling', async () => (await scheduledRuns(db, 'ticks')).some((r) => r.scheduled_at > enabledAt));
    const between = (await scheduledRuns(db, 'ticks')).filter((r) => r.scheduled_at > disabledAt && r.scheduled_at <= enabledAt);
    expect(between, 'no run for the ticks while disabled').to.deep.equal([]);
  });

  it("rebuilds svc_schedules and svc_runs (with each run's trigger) into byte-identical rows", async () => {
    for (const workflow of ['ticks', 'paris_daily'])
      expect((await asRoot('PATCH', `/admin/schedules/${workflow}/each_second`, { paused: true })).status).to.equal(200);
    const { pool, registry } = service.kernel;
    await waitFor(
      'no run going',
      async () => (await pool.query(`SELECT 1 FROM svc_runs WHERE status NOT IN ('completed', 'failed', 'aborted')`)).rows.length === 0,
    );
    const tableJson = async (table: string, order: string) =>
      (await pool.query<{ rows: string }>(`SELECT coalesce(json_agg(t ORDER BY ${order}), '[]'::json)::text AS rows FROM ${table} t`)).rows[0]!.rows;
    for (const [name, order] of [
      ['svc_schedules', 't.workflow, t.schedule_id'],
      ['svc_runs', 't.id'],
    ] as const) {
      const inline = await tableJson(name, order);
      await rebuildProjection(pool, registry, registry.get(name)!);
      expect(await tableJson(name, order), name).to.equal(inline);
    }
    expect((await pool.query(`SELECT count(*)::int AS n FROM svc_runs WHERE trigger->>'type' = 'schedule'`)).rows[0].n).to.be.above(1000);
  });
});
