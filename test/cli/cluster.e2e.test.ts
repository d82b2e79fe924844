// `svc serve` with SVC_WORKERS=2 over the example project: each request on a connection of its own
// goes to the workers in turn, so runs, their control, approvals and a revocation all cross workers.
import { expect } from 'chai';
import { EXAMPLE_PROJECT } from '../api/helpers.js';
import { createTestDatabase } from '../support/db.js';
import { eventually, onNewConnection } from '../support/http.js';
import { killAllServices, ServiceProcess } from '../support/serviceProcess.js';
import { createUser } from '../support/users.js';

/** Generous: what one worker commits reaches the other through the log. */
const DEADLINE_MS = 30_000;

describe('svc serve with SVC_WORKERS=2', function () {
  this.timeout(120_000);
  let cluster: ServiceProcess;
  let adminToken: string;
  let financeToken: string;

  const send = async (method: string, path: string, body?: unknown, token = adminToken) => {
    const answer = await onNewConnection(`${cluster.url}${path}`, method, body, token);
    return { status: answer.status, body: answer.text ? JSON.parse(answer.text) : null };
  };
  const statusOf = async (runId: string) => (await send('GET', `/api/runs/${runId}`)).body.status as string;
  const waitForStatus = async (runId: string, wanted: string) => {
    const reached = await eventually(async () => (await statusOf(runId)) === wanted, DEADLINE_MS, 100);
    expect(reached.ok, `run ${runId} ${wanted} (is ${await statusOf(runId)})`).to.equal(true);
  };

  before(async () => {
    cluster = await ServiceProcess.start(await createTestDatabase(), EXAMPLE_PROJECT, { SVC_WORKERS: '2' });
    const bootstrap = await send('POST', '/auth/bootstrap', { email: 'root@example.com', password: 'root-password-1' }, '');
    expect(bootstrap.status, JSON.stringify(bootstrap.body)).to.equal(200);
    adminToken = bootstrap.body.access_token;
    financeToken = (await createUser(cluster.url, adminToken, 'fin@example.com', { finance: ['refunds:request', 'approvals:decide'] })).token;
  });
  after(killAllServices);

  it('answers runs on both workers', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => send('POST', '/api/hello', { name: `n${i}` })));
    for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
    // Both workers know the admin the first request bootstrapped.
    for (let i = 0; i < 4; i++) expect((await send('GET', '/auth/me')).status).to.equal(200);
  });

  it('pauses, resumes and aborts runs from whichever worker takes the request', async () => {
    const started = await Promise.all(Array.from({ length: 4 }, (_, i) => send('POST', '/api/cool-off?wait=false', { name: `c${i}` })));
    const ids = started.map((answer) => answer.body.id as string);
    for (const id of ids.slice(0, 3)) expect((await send('POST', `/api/runs/${id}/pause`)).status).to.be.oneOf([200, 202]);
    expect((await send('POST', `/api/runs/${ids[3]}/abort`, { reason: 'not needed' })).status).to.be.oneOf([200, 202]);
    for (const id of ids.slice(0, 3)) await waitForStatus(id, 'paused');
    await waitForStatus(ids[3]!, 'aborted');
    for (const id of ids.slice(0, 3)) expect((await send('POST', `/api/runs/${id}/resume`)).status).to.be.oneOf([200, 202]);
    for (const id of ids.slice(0, 3)) await waitForStatus(id, 'completed');
  });

  it('lets a decision on one worker resume a run another worker started', async () => {
    // Requested by the admin: whoever asks for a refund may not approve it.
    const refunds = await Promise.all(['R1', 'R2', 'R3'].map((order) => send('POST', '/api/refunds?wait=false', { order_id: order, amount: 500 })));
    const ids = refunds.map((answer) => answer.body.id as string);
    for (const id of ids) await waitForStatus(id, 'waiting_human');
    for (const id of ids) {
      const { approval } = (await send('GET', `/api/runs/${id}`)).body as { approval: { decide_url: string } | null };
      expect(approval, `the approval of run ${id}`).to.not.equal(null);
      const decided = await send('POST', approval!.decide_url, { decision: 'approve', values: { refunded: 500 } }, financeToken);
      expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
    }
    for (const id of ids) await waitForStatus(id, 'completed');
  });

  it('refuses a logged-out token on both workers', async () => {
    expect((await send('GET', '/auth/me', undefined, financeToken)).status).to.equal(200);
    expect((await send('POST', '/auth/logout', undefined, financeToken)).status).to.equal(204);
    const refused = await eventually(async () => {
      const answers = await Promise.all(Array.from({ length: 6 }, () => send('GET', '/auth/me', undefined, financeToken)));
      return answers.every((answer) => answer.status === 401);
    }, DEADLINE_MS);
    expect(refused.ok, 'every worker refuses the token').to.equal(true);
  });
});
