// The client's schedule admin calls (`client.schedules`) against the real service over loopback.
import { expect } from 'chai';
import { SvcClient, SvcRequestError } from '../../src/client/index.js';
import type { Service } from '../../src/main.js';
import { projectWith, scheduledWorkflow } from '../schedules/helpers.js';
import { bootstrapAdmin, eventually } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser } from '../support/users.js';

/** What a promise rejects with, as the SvcRequestError it must be. */
async function refusal(promise: Promise<unknown>): Promise<SvcRequestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).to.be.instanceOf(SvcRequestError);
  return error as SvcRequestError;
}

describe('client library: schedule admin (client.schedules)', function () {
  this.timeout(30_000);
  let service: Service;
  let client: SvcClient;
  let plain: SvcClient;

  before(async () => {
    const project = projectWith({ daily: scheduledWorkflow('daily', 'timezone: Europe/Paris, input: {note: daily}', undefined, '0 3 * * *') });
    service = await startTestService({ projectDir: project });
    const admin = await bootstrapAdmin(service.url);
    client = new SvcClient({ baseUrl: service.url, token: admin.token });
    plain = new SvcClient({ baseUrl: service.url, token: (await createUser(service.url, admin.token, 'plain@example.com', {})).token });
    // The ticker's first pass declares the schedules.
    const declared = await eventually(async () => (await client.schedules.list()).some((s) => s.workflow === 'daily'), 20_000, 100);
    expect(declared.ok, 'the schedule is declared').to.equal(true);
  });
  after(async () => {
    await service?.close();
  });

  it('lists every schedule with its definition and ticks', async () => {
    const daily = (await client.schedules.list()).find((s) => s.workflow === 'daily');
    expect(daily).to.include({ schema_version: 'v1', id: 'each_second', cron: '0 3 * * *', timezone: 'Europe/Paris', enabled: true, paused: false });
    expect(daily!.next_fire_at).to.be.a('string');
  });

  it('pauses and resumes a schedule', async () => {
    expect(await client.schedules.pause('daily', 'each_second')).to.include({ paused: true, next_fire_at: null });
    expect((await client.schedules.list()).find((s) => s.workflow === 'daily')!.paused).to.equal(true);
    const resumed = await client.schedules.resume('daily', 'each_second');
    expect(resumed.paused).to.equal(false);
    expect(resumed.next_fire_at).to.be.a('string');
  });

  it('runs a schedule now: the run names the schedule and is its last run', async () => {
    const run = await client.schedules.run('daily', 'each_second');
    expect(run.status).to.equal('completed');
    expect(run.trigger).to.include({ type: 'schedule', schedule_id: 'each_second' });
    expect((await client.schedules.list()).find((s) => s.workflow === 'daily')!.last_run_id).to.equal(run.id);
  });

  it('backfills a window given as Dates or strings: one run per tick without one, none the second time', async () => {
    const window = { from: new Date('2025-03-28T00:00:00Z'), to: '2025-04-01T00:00:00Z' };
    const { runs } = await client.schedules.backfill('daily', 'each_second', window);
    expect(runs).to.have.length(4);
    const ticks = await Promise.all(runs.map(async (id) => (await client.runs.get(id)).trigger?.scheduled_at));
    expect(ticks.sort()).to.deep.equal(['2025-03-28T02:00:00.000Z', '2025-03-29T02:00:00.000Z', '2025-03-30T01:00:00.000Z', '2025-03-31T01:00:00.000Z']);
    expect((await client.schedules.backfill('daily', 'each_second', window)).runs).to.deep.equal([]);
  });

  it('throws SvcRequestError for a refused call: 404 unknown schedule, 400 reversed window, 403 not a deployment admin', async () => {
    expect((await refusal(client.schedules.pause('daily', 'nope'))).status).to.equal(404);
    expect((await refusal(client.schedules.run('nope', 'each_second'))).status).to.equal(404);
    const reversed = { from: '2025-01-02T00:00:00Z', to: '2025-01-01T00:00:00Z' };
    expect((await refusal(client.schedules.backfill('daily', 'each_second', reversed))).status).to.equal(400);
    expect((await refusal(plain.schedules.list())).status).to.equal(403);
    expect((await refusal(plain.schedules.run('daily', 'each_second'))).status).to.equal(403);
  });
});
