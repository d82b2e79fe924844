// The schedule ticker over real processes on one database: one run per tick across two workers, catchup
// after a worker was down, a tick held by a worker that died, overlap: skip, and a failing schedule beside a good one.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import pg from 'pg';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, eventually } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { killAllServices, ServiceProcess } from '../support/serviceProcess.js';
import { gapsIn, projectWith, PROJECT, runStartsByTick, scheduledRuns, scheduledWorkflow, scheduleEvents, type ScheduledRun } from './helpers.js';

describe('schedule ticker', function () {
  this.timeout(120_000);
  const pools: pg.Pool[] = [];
  const poolOf = (databaseUrl: string) => {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    pools.push(pool);
    return pool;
  };
  after(async () => {
    await killAllServices();
    await Promise.all(pools.map((p) => p.end()));
  });

  async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
    expect((await eventually(probe, timeoutMs, 100)).ok, what).to.equal(true);
  }

  it('an every-second schedule on two processes for 10 s starts exactly one run per tick, with the tick in run detail', async () => {
    const databaseUrl = await createTestDatabase();
    const db = poolOf(databaseUrl);
    const [a, b] = await Promise.all([ServiceProcess.start(databaseUrl, PROJECT), ServiceProcess.start(databaseUrl, PROJECT)]);
    const bothUp = Date.now();
    await waitFor(
      'ten ticks after both workers came up',
      async () => (await scheduledRuns(db, 'ticks')).filter((r) => Date.parse(r.scheduled_at) > bothUp).length >= 10,
    );
    await Promise.all([a.stop(), b.stop()]);

    const runs = await scheduledRuns(db, 'ticks');
    const ticks = runs.map((r) => r.scheduled_at);
    expect(new Set(ticks).size, 'one run per tick').to.equal(ticks.length);
    expect(
      [...(await runStartsByTick(db, 'ticks')).values()].every((n) => n === 1),
      'one run_started per tick',
    ).to.equal(true);
    expect(gapsIn(ticks), 'no tick without its run').to.deep.equal([]);
    const { rows: owners } = await db.query('SELECT DISTINCT owner FROM svc_schedule_ticks');
    expect(owners.length, 'tick rows name their worker').to.be.within(1, 2);

    const c = await ServiceProcess.start(databaseUrl, PROJECT);
    const { token } = await bootstrapAdmin(c.url);
    const detail = await call(c.url, 'GET', `/api/runs/${runs[0]!.id}`, { token });
    expect(detail.body.trigger).to.deep.equal({ type: 'schedule', schedule_id: 'each_second', scheduled_at: runs[0]!.scheduled_at });
    const exported = await call(c.url, 'GET', `/api/runs/${runs[0]!.id}/export`, { token });
    expect(exported.body.run.trigger).to.deep.equal(detail.body.trigger);
    expect(exported.body.events[0].payload.schedule).to.deep.equal(detail.body.trigger);
    await c.stop();
  });

  it('after a worker was down, catchup none starts nothing for the missed ticks, latest one run, all one per tick', async () => {
    const databaseUrl = await createTestDatabase();
    const db = poolOf(databaseUrl);
    const project = projectWith({
      catch_none: scheduledWorkflow('catch_none', 'catchup: none, overlap: allow'),
      catch_latest: scheduledWorkflow('catch_latest', 'catchup: latest, overlap: allow'),
      catch_all: scheduledWorkflow('catch_all', 'catchup: all, overlap: allow'),
    });
    // Ticks count as missed 5 intervals (2 s) after their time: the 6 s down time leaves several.
    const fast = { SVC_SCHEDULE_CLAIM_INTERVAL_MS: '400' };
    const names = ['catch_none', 'catch_latest', 'catch_all'];
    const first = await ServiceProcess.start(databaseUrl, project, fast);
    await waitFor('two runs each', async () => (await Promise.all(names.map((n) => scheduledRuns(db, n)))).every((runs) => runs.length >= 2));
    await first.kill();
    const downAt = Date.now();
    await sleep(6000);
    const second = await ServiceProcess.start(databaseUrl, project, fast);
    const upAt = Date.now();
    await waitFor('runs after the restart', async () =>
      (await Promise.all(names.map((n) => scheduledRuns(db, n)))).every((runs) => runs.some((r) => Date.parse(r.scheduled_at) > upAt + 1000)),
    );
    await second.stop();

    // Runs for missed ticks started after the restart (a tick fired just before the kill may miss its schedule_fired, not its run).
    const missed = (runs: ScheduledRun[], from: string, to: string) =>
      runs.filter((r) => r.scheduled_at >= from && r.scheduled_at < to && Date.parse(r.created_at) > downAt);
    // The skips over the down time: the first catchup skip past it and those right after it (on a loaded
    // machine time moves on between two steps, so `latest` may skip again to a newer latest tick).
    const skippedOf = async (name: string) => {
      const events = await scheduleEvents(db, name);
      const isCatchup = (e: (typeof events)[number] | undefined) => e?.type === 'schedule_skipped' && e.data.reason === 'catchup';
      const first = events.findIndex((e) => isCatchup(e) && Date.parse(e.data.next_fire_at) > downAt + 2000);
      if (first < 0) return [];
      let last = first;
      while (isCatchup(events[last + 1])) last++;
      return [{ data: { from: events[first]!.data.from, next_fire_at: events[last]!.data.next_fire_at } }];
    };
    const [noneSkip] = await skippedOf('catch_none');
    expect(noneSkip, 'none skipped the missed ticks').to.not.equal(undefined);
    expect(Date.parse(noneSkip!.data.next_fire_at) - Date.parse(noneSkip!.data.from)).to.be.at.least(3000);
    expect(Date.parse(noneSkip!.data.from)).to.be.at.most(downAt + 1000);
    expect(missed(await scheduledRuns(db, 'catch_none'), noneSkip!.data.from, noneSkip!.data.next_fire_at)).to.deep.equal([]);

    const [latestSkip] = await skippedOf('catch_latest');
    expect(latestSkip, 'latest skipped to the latest missed tick').to.not.equal(undefined);
    const latestRuns = await scheduledRuns(db, 'catch_latest');
    expect(missed(latestRuns, latestSkip!.data.from, latestSkip!.data.next_fire_at)).to.deep.equal([]);
    const latest = latestRuns.find((r) => r.scheduled_at === latestSkip!.data.next_fire_at);
    expect(latest, 'the latest missed tick ran').to.not.equal(undefined);
    expect(Date.parse(latest!.created_at), 'it ran after the restart').to.be.at.least(upAt - 1000);

    expect(
      (await scheduleEvents(db, 'catch_all')).filter((e) => e.type === 'schedule_skipped'),
      'all skips nothing under 100 missed ticks',
    ).to.deep.equal([]);
    const allRuns = await scheduledRuns(db, 'catch_all');
    expect(gapsIn(allRuns.map((r) => r.scheduled_at)), 'every missed tick ran').to.deep.equal([]);
    const late = allRuns.filter((r) => Date.parse(r.scheduled_at) > downAt + 1000 && Date.parse(r.scheduled_at) < upAt - 1000);
    expect(late.length, 'the ticks of the down time').to.be.at.least(3);
    for (const run of late) expect(Date.parse(run.created_at), 'started after the restart').to.be.greaterThan(Date.parse(run.scheduled_at) + 1000);
    for (const name of names)
      expect(
        [...(await runStartsByTick(db, name)).values()].every((n) => n === 1),
        name,
      ).to.equal(true);
  });

  it('a tick a dead worker claimed is started after its lease by another worker, under the run id it reserved', async () => {
    const databaseUrl = await createTestDatabase();
    const db = poolOf(databaseUrl);
    const service = await startTestService({ databaseUrl, projectDir: PROJECT, env: { SVC_SCHEDULE_CLAIM_INTERVAL_MS: '200', SVC_RUN_LEASE_MS: '1500' } });
    try {
      await waitFor('the schedule is defined', async () => (await scheduledRuns(db, 'ticks')).length > 0);
      // What a worker that died right after claiming leaves: the tick's row, its run never started.
      const tick = new Date(Math.ceil(Date.now() / 1000) * 1000 + 2000).toISOString();
      const reserved = '0190a0a0-0000-7000-8000-000000000001';
      await db.query(`INSERT INTO svc_schedule_ticks VALUES ('ticks', 'each_second', $1, $2, 'dead-worker', now() + interval '2 seconds', NULL)`, [
        tick,
        reserved,
      ]);
      await waitFor('the reserved run', async () => (await scheduledRuns(db, 'ticks')).some((r) => r.id === reserved), 20_000);
      const runs = await scheduledRuns(db, 'ticks');
      expect(runs.filter((r) => r.scheduled_at === tick).map((r) => r.id)).to.deep.equal([reserved]);
      await waitFor('later ticks go on', async () => (await scheduledRuns(db, 'ticks')).some((r) => r.scheduled_at > tick));
      expect(gapsIn((await scheduledRuns(db, 'ticks')).map((r) => r.scheduled_at))).to.deep.equal([]);
    } finally {
      await service.close();
    }
  });

  it('overlap: skip starts no tick while the previous run of the schedule still runs', async () => {
    const databaseUrl = await createTestDatabase();
    const db = poolOf(databaseUrl);
    const project = projectWith({
      lingering: scheduledWorkflow('lingering', 'overlap: skip', '{id: linger, kind: Functional, runner: linger, params: {ms: 2500}}'),
    });
    const service = await startTestService({ databaseUrl, projectDir: project, env: { SVC_SCHEDULE_CLAIM_INTERVAL_MS: '200' } });
    try {
      await waitFor('three lingering runs ended', async () => (await scheduledRuns(db, 'lingering')).filter((r) => r.status === 'completed').length >= 3);
    } finally {
      await service.close();
    }
    const runs = (await scheduledRuns(db, 'lingering')).filter((r) => r.status === 'completed');
    for (let i = 1; i < runs.length; i++) {
      expect(Date.parse(runs[i]!.created_at), `run ${i} started after run ${i - 1} ended`).to.be.at.least(Date.parse(runs[i - 1]!.updated_at));
    }
    const overlaps = (await scheduleEvents(db, 'lingering')).filter((e) => e.type === 'schedule_skipped' && e.data.reason === 'overlap');
    expect(overlaps.length, 'ticks passed over while a run lingered').to.be.at.least(2);
  });

  it('a schedule whose tick fails holds up no other schedule in a pass, and fires again once the failure ends', async () => {
    const databaseUrl = await createTestDatabase();
    const db = poolOf(databaseUrl);
    // The database refuses every tick of `broken`: its claim throws in each pass, ahead of `ticks` (its due tick is older).
    await db.query(`ALTER TABLE svc_schedule_ticks ADD CONSTRAINT refuse_broken CHECK (workflow <> 'broken')`);
    const project = projectWith({ broken: scheduledWorkflow('broken', 'overlap: allow, catchup: all') });
    const service = await startTestService({ databaseUrl, projectDir: project, env: { SVC_SCHEDULE_CLAIM_INTERVAL_MS: '200' } });
    try {
      await waitFor('three ticks of the good schedule', async () => (await scheduledRuns(db, 'ticks')).length >= 3);
      expect(await scheduledRuns(db, 'broken'), 'the refused schedule started nothing').to.deep.equal([]);
      expect((await scheduleEvents(db, 'broken')).map((e) => e.type)).to.not.include('schedule_fired');
      const { rows } = await db.query(`SELECT next_fire_at FROM svc_schedules WHERE workflow = 'broken'`);
      const held = new Date(rows[0].next_fire_at).toISOString();

      await db.query('ALTER TABLE svc_schedule_ticks DROP CONSTRAINT refuse_broken');
      await waitFor('the held tick ran', async () => (await scheduledRuns(db, 'broken')).some((r) => r.scheduled_at === held));
    } finally {
      await service.close();
    }
  });
});
