// The example project's scheduled workflow (docs/workflows.md, Schedules) serves as documented.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { EXAMPLE_PROJECT } from '../api/helpers.js';
import { bootstrapAdmin, call, eventually } from '../support/http.js';
import { startTestService } from '../support/service.js';

describe('the example project: heartbeat on a schedule', function () {
  this.timeout(60_000);
  let service: Service;

  before(async () => {
    service = await startTestService({ projectDir: EXAMPLE_PROJECT });
  });
  after(async () => {
    await service?.close();
  });

  it('lists heartbeat hourly in Paris and runs it now: 201 with the schedule as its trigger', async () => {
    const { token } = await bootstrapAdmin(service.url);
    let listed: any;
    const found = await eventually(async () => {
      listed = (await call(service.url, 'GET', '/admin/schedules', { token })).body.find((s: any) => s.workflow === 'heartbeat');
      return listed !== undefined;
    }, 10_000);
    expect(found.ok, 'the ticker defined the schedule').to.equal(true);
    expect(listed).to.include({ id: 'hourly', cron: '0 * * * *', timezone: 'Europe/Paris', enabled: true, paused: false });
    expect(new Date(listed.next_fire_at).getUTCMinutes()).to.equal(0);
    const run = await call(service.url, 'POST', '/admin/schedules/heartbeat/hourly/run', { token });
    expect(run.status, JSON.stringify(run.body)).to.equal(201);
    expect(run.body.output).to.deep.include({ length: 'heartbeat'.length, total: 0 });
    expect(run.body.trigger).to.include({ type: 'schedule', schedule_id: 'hourly' });
  });
});
