// Run control needs read access: pause, resume, abort and steer answer a run the caller cannot read
// with the 404 that reading it gets, act on nothing, and show nothing of it (multi-tenant too).
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call, type Admin } from '../support/http.js';
import { journalOf, waitForStatus } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { createUser, type SignedInUser } from '../support/users.js';
import { ENGINE_PROJECT, SIGNING_KEY } from './helpers.js';

const CONTROL = { run_operators: ['runs:control'] };
const ACTIONS = ['pause', 'resume', 'abort', 'steer'] as const;
const CONTROL_EVENTS = ['paused', 'resumed', 'run_aborted', 'steered'];

describe('run control: only on runs the caller may read', function () {
  this.timeout(60_000);
  let service: Service;
  let root: Admin;
  let owner: SignedInUser;
  let operator: SignedInUser;
  let t2Admin: SignedInUser;

  const control = (token: string, runId: string, action: string) =>
    call(service.url, 'POST', `/api/runs/${runId}/${action}`, {
      token,
      json: action === 'steer' ? { message: 'turn left' } : action === 'abort' ? { reason: 'mine now' } : {},
    });
  const startSlowRun = async (token: string) => {
    const started = await call(service.url, 'POST', '/api/wf/slow?wait=false', { token, json: { ms: 800 } });
    expect(started.status, JSON.stringify(started.body)).to.equal(202);
    return started.headers.get('x-svc-run-id')!;
  };

  before(async () => {
    service = await startTestService({ projectDir: ENGINE_PROJECT, env: { SVC_TENANT_IDS: 't1,t2', SVC_SIGNING_KEY: SIGNING_KEY } });
    root = await bootstrapAdmin(service.url);
    owner = await createUser(service.url, root.token, 'owner@t1.example', CONTROL, { tenant: 't1' });
    operator = await createUser(service.url, root.token, 'operator@t1.example', CONTROL, { tenant: 't1' });
    t2Admin = await createUser(service.url, root.token, 'admin@t2.example', { t2_admins: ['iam:admin'] }, { tenant: 't2' });
  });
  after(async () => {
    await service?.close();
  });

  it('a runs:control holder who does not own the run gets the 404 of reading it, for every action, and the run is untouched', async () => {
    const runId = await startSlowRun(owner.token);
    const read = await call(service.url, 'GET', `/api/runs/${runId}`, { token: operator.token });
    expect(read.status).to.equal(404);
    for (const action of ACTIONS) {
      const refused = await control(operator.token, runId, action);
      expect(refused.status, `${action}: ${JSON.stringify(refused.body)}`).to.equal(404);
      expect(refused.body, action).to.deep.equal(read.body);
    }
    const done = await waitForStatus(service.url, owner.token, runId, ['completed', 'failed', 'aborted', 'paused'], 20_000);
    expect(done.status).to.equal('completed');
    const types = (await journalOf(service.url, root.token, runId)).map((event) => event.type);
    expect(
      types.filter((type) => CONTROL_EVENTS.includes(type)),
      types.join(','),
    ).to.deep.equal([]);
  });

  it('another tenant’s run is 404 to control, for that tenant’s iam:admin too', async () => {
    const runId = await startSlowRun(owner.token);
    for (const action of ACTIONS) {
      const refused = await control(t2Admin.token, runId, action);
      expect(refused.status, action).to.equal(404);
      expect(refused.body).to.deep.equal({ detail: `Run ${runId} not found`, code: 'NOT_FOUND' });
    }
    expect((await control(root.token, runId, 'abort')).status).to.equal(200);
  });

  it('the owner (with runs:control) and an iam:admin of the run’s tenant control it', async () => {
    const runId = await startSlowRun(owner.token);
    const paused = await control(owner.token, runId, 'pause');
    expect(paused.status, JSON.stringify(paused.body)).to.equal(200);
    expect(paused.body.id).to.equal(runId);
    await waitForStatus(service.url, owner.token, runId, ['paused'], 20_000);
    expect((await control(root.token, runId, 'resume')).status).to.equal(200);
    expect((await control(owner.token, runId, 'abort')).status).to.equal(200);
    expect((await waitForStatus(service.url, owner.token, runId, ['aborted'])).status).to.equal('aborted');
  });
});
