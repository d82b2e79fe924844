// Run control from a second process: pause, resume, abort and steer sent to B reach the run A executes.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call } from '../support/http.js';
import { journalOf, waitForStatus } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { ServiceProcess } from '../support/serviceProcess.js';
import { ENGINE_PROJECT, SIGNING_KEY } from './helpers.js';

describe('run control across processes', function () {
  this.timeout(60_000);
  /** Executes the runs: `svc serve` in a child process. */
  let processA: ServiceProcess | undefined;
  /** Only takes control requests (it claims nothing A holds). */
  let serviceB: Service;
  let admin: string;

  before(async function () {
    this.timeout(90_000);
    const databaseUrl = await createTestDatabase();
    processA = await ServiceProcess.start(databaseUrl, ENGINE_PROJECT, { SVC_SIGNING_KEY: SIGNING_KEY });
    serviceB = await startTestService({ databaseUrl, projectDir: ENGINE_PROJECT, env: { SVC_SIGNING_KEY: SIGNING_KEY } });
    admin = (await bootstrapAdmin(processA.url)).token;
  });
  after(async () => {
    await processA?.kill();
    await serviceB?.close();
  });

  const onB = (runId: string, action: string, json?: unknown) =>
    call(serviceB.url, 'POST', `/api/runs/${runId}/${action}`, { token: admin, ...(json !== undefined ? { json } : {}) });
  const typesOf = async (runId: string) => (await journalOf(processA!.url, admin, runId)).map((e) => `${e.type}:${e.agent_id}`);

  it('pause on B holds the run A executes before its next step; resume on B lets A finish it', async () => {
    const started = await call(processA!.url, 'POST', '/api/wf/slow?wait=false', { token: admin, json: { ms: 300 } });
    expect(started.status).to.equal(202);
    const runId = started.body.id as string;
    await waitForStatus(processA!.url, admin, runId, ['running']);
    expect((await onB(runId, 'pause')).status).to.equal(200);
    await waitForStatus(processA!.url, admin, runId, ['paused']);
    // The step A was running when the pause came is journaled before `paused`; nothing follows it.
    await sleep(500);
    const held = await typesOf(runId);
    expect(held.slice(held.indexOf('paused:run') + 1), held.join(',')).to.deep.equal([]);
    expect(held.indexOf('pause_requested:run'), held.join(',')).to.be.lessThan(held.indexOf('paused:run'));
    await sleep(900);
    expect(await typesOf(runId), 'nothing runs while paused').to.deep.equal(held);
    expect(held.filter((t) => t.startsWith('step_completed')).length).to.be.below(5);

    expect((await onB(runId, 'resume')).status).to.equal(200);
    const done = await waitForStatus(processA!.url, admin, runId, ['completed', 'failed'], 15_000);
    expect(done.status).to.equal('completed');
    expect(done.output.ticks).to.equal(5);
    const types = await typesOf(runId);
    expect(
      types.filter((t) => t.startsWith('step_completed')),
      'no step ran twice',
    ).to.have.length(5);
  });

  it('abort on B ends the run A executes; A starts no step after it', async () => {
    const started = await call(processA!.url, 'POST', '/api/wf/slow?wait=false', { token: admin, json: { ms: 300 } });
    const runId = started.body.id as string;
    await waitForStatus(processA!.url, admin, runId, ['running']);
    const aborted = await onB(runId, 'abort', { reason: 'from B' });
    expect(aborted.status, JSON.stringify(aborted.body)).to.equal(200);
    await waitForStatus(processA!.url, admin, runId, ['aborted']);
    await sleep(700);
    const types = await typesOf(runId);
    expect(types.at(-1)).to.equal('run_aborted:run');
    expect(types.slice(types.indexOf('run_aborted:run') + 1)).to.deep.equal([]);
    expect((await onB(runId, 'resume')).status, 'an aborted run takes no more control').to.equal(409);
  });
});
