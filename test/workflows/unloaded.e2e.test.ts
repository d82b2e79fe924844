// A run whose workflow version this deployment does not load is parked out of claims, not retried at every tick.
import { expect } from 'chai';
import { newId } from '../../src/kernel/ids.js';
import type { Service } from '../../src/main.js';
import { runEvent, runStream } from '../../src/runs/events.js';
import { bootstrapAdmin, client, eventually } from '../support/http.js';
import { waitForStatus } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { ENGINE_PROJECT, SIGNING_KEY } from './helpers.js';

describe('runs of a workflow version that is not loaded', function () {
  this.timeout(30_000);
  let service: Service;

  before(async () => {
    service = await startTestService({ projectDir: ENGINE_PROJECT, env: { SVC_SIGNING_KEY: SIGNING_KEY, SVC_RUN_CLAIM_INTERVAL_MS: '100' } });
  });
  after(async () => {
    await service?.close();
  });

  it('are parked for a minute after one claim, and the runs that can go on still run', async () => {
    const runId = newId();
    // As a deployment that dropped workflow `ghost` v9 would find it: queued, journaled elsewhere.
    await service.kernel.store.append({
      streamId: runStream(runId),
      expectedVersion: 0,
      events: [
        runEvent('run_started', { run_id: runId, workflow: 'ghost', schema_version: 'v9', input: {}, principal: null, trigger: 'api', first_step: 'a' }),
      ],
    });
    const leaseOf = async () =>
      (
        await service.kernel.pool.query<{ parked_for_ms: number }>(
          `SELECT extract(epoch FROM expires_at - now()) * 1000 AS parked_for_ms FROM svc_run_leases WHERE run_id = $1`,
          [runId],
        )
      ).rows;
    // The claim loop (every 100 ms) takes it, finds no definition to run it with and parks it.
    await eventually(async () => Number((await leaseOf())[0]?.parked_for_ms ?? 0) > 50_000, 15_000);
    const rows = await leaseOf();
    expect(rows, 'the claim left a lease').to.have.length(1);
    expect(Number(rows[0]!.parked_for_ms)).to.be.above(50_000);
    const run = await service.kernel.pool.query<{ status: string }>('SELECT status FROM svc_runs WHERE id = $1', [runId]);
    expect(run.rows[0]!.status).to.equal('queued');

    const admin = (await bootstrapAdmin(service.url)).token;
    const started = await client(service.url, admin).post('/api/wf/slow?wait=false', { ms: 10 });
    expect(started.status).to.equal(202);
    expect((await waitForStatus(service.url, admin, started.body.id, ['completed', 'failed'])).status).to.equal('completed');
  });
});
