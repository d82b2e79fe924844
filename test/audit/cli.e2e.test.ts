// `svc audit verify` as a child process: exit 0 and the report on an intact log, exit 1 naming the event after tampering.
import { expect } from 'chai';
import { runCli } from '../support/serviceProcess.js';
import { appendSampleStreams, openFixture, tamper, type AuditFixture } from './helpers.js';

describe('svc audit verify', () => {
  let fixture: AuditFixture;

  before(async () => {
    fixture = await openFixture();
    await appendSampleStreams(fixture.store);
  });
  after(async () => {
    await fixture?.pool.end();
  });

  it('prints the report and exits 0 on an intact log, 1 once an event was edited', async function () {
    this.timeout(120_000);
    const intact = await runCli(['audit', 'verify'], { DATABASE_URL: fixture.url }, 60_000);
    expect(intact.code, intact.stderr).to.equal(0);
    expect(JSON.parse(intact.stdout)).to.deep.equal({ ok: true, events_checked: 16, checkpoints_checked: 0, first_broken: null });

    await tamper(fixture.url, `UPDATE events SET type = 'OrderDeleted' WHERE stream_id = 'order-c' AND stream_position = 2`);
    const broken = await runCli(['audit', 'verify'], { DATABASE_URL: fixture.url }, 60_000);
    expect(broken.code).to.equal(1);
    expect(JSON.parse(broken.stdout).first_broken).to.deep.include({ stream_id: 'order-c', stream_position: 2 });
  });
});
