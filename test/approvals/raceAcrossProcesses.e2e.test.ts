// Two `svc serve` processes on one database decide the same approval at the same moment: one wins, the run completes once.
import { expect } from 'chai';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, type Admin, type HttpResult } from '../support/http.js';
import { journalOf, waitForStatus } from '../support/runs.js';
import { ServiceProcess } from '../support/serviceProcess.js';
import { createUser, type SignedInUser } from '../support/users.js';
import { FINANCE_ROLES, HITL_PROJECT, requestRefund } from './helpers.js';

const ROUNDS = 5;

describe('approvals: concurrent decisions across processes', function () {
  this.timeout(60_000);
  let processA: ServiceProcess | undefined;
  let processB: ServiceProcess | undefined;
  let admin: Admin;
  let fin: SignedInUser;

  before(async function () {
    this.timeout(90_000);
    const databaseUrl = await createTestDatabase();
    [processA, processB] = await Promise.all([ServiceProcess.start(databaseUrl, HITL_PROJECT), ServiceProcess.start(databaseUrl, HITL_PROJECT)]);
    admin = await bootstrapAdmin(processA.url);
    fin = await createUser(processA.url, admin.token, 'fin@example.com', FINANCE_ROLES);
  });
  after(async () => {
    await Promise.all([processA?.kill(), processB?.kill()]);
  });

  /** Decides on one process, by approval id or by run and step. */
  const decideOn = (baseUrl: string, run: any, body: unknown, byStep: boolean): Promise<HttpResult> =>
    byStep
      ? call(baseUrl, 'POST', `/api/runs/${run.id}/human/review`, { token: fin.token, json: body })
      : call(baseUrl, 'POST', `/api/approvals/${run.approval.approval_id}`, { token: fin.token, json: body });

  it(`${ROUNDS} approvals, each decided through A and B at once: one 200 and one 409 each, one approval_decided, the run completes once`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      // Requested on alternating processes; each waits, then both processes race to decide it.
      const requestedOn = round % 2 === 0 ? processA! : processB!;
      const run = await requestRefund(requestedOn.url, admin.token, `RACE${round}`, 200 + round);
      const onA = { decision: 'approve', values: { refunded: 100 + round }, comment: `A${round}` };
      const onB = { decision: 'reject', comment: `B${round}` };
      const results = await Promise.all([decideOn(processA!.url, run, onA, round % 2 === 1), decideOn(processB!.url, run, onB, round % 3 === 0)]);

      const statuses = results.map((r) => r.status).sort();
      expect(statuses, `round ${round}: ${JSON.stringify(results.map((r) => [r.status, r.body?.code ?? r.body?.decision]))}`).to.deep.equal([200, 409]);
      const loser = results.find((r) => r.status === 409)!;
      expect(loser.body.code).to.equal('CONFLICT');
      const winnerIsA = results[0]!.status === 200;
      const winner = winnerIsA ? onA : onB;
      expect(results[winnerIsA ? 0 : 1]!.body).to.include({ status: 'decided', decision: winner.decision, comment: winner.comment, decided_by: fin.id });

      // Both processes read the winner's outcome.
      const expected =
        winner.decision === 'approve'
          ? { order_id: `RACE${round}`, refunded: 100 + round, channel: null, approved_by: fin.id, comment: `A${round}` }
          : { order_id: `RACE${round}`, decision: 'reject', rejected_by: fin.id };
      for (const service of [processA!, processB!]) {
        const done = await waitForStatus(service.url, admin.token, run.id, ['completed']);
        expect(done.output, `round ${round} on ${service.url}`).to.deep.equal(expected);
      }
      const journal = await journalOf(processB!.url, admin.token, run.id);
      expect(
        journal.map((e) => e.seq),
        'no gaps or duplicates in the journal',
      ).to.deep.equal(journal.map((_, i) => i + 1));
      const decided = journal.filter((e) => e.type === 'approval_decided');
      expect(decided, `round ${round}: ${journal.map((e) => e.type).join(',')}`).to.have.length(1);
      expect(decided[0].payload).to.include({ decision: winner.decision, comment: winner.comment, decided_by: fin.id });
      expect(journal.filter((e) => e.type === 'decision' && e.agent_id === 'review')).to.have.length(1);
      expect(journal.filter((e) => e.type === 'step_completed' && e.agent_id === 'review')).to.have.length(1);
      expect(journal.filter((e) => e.type === 'step_completed' && e.agent_id === (winner.decision === 'approve' ? 'approved' : 'rejected'))).to.have.length(1);
      expect(
        journal.filter((e) => e.type === 'run_completed'),
        'the run completes once',
      ).to.have.length(1);
      expect(journal.at(-1).type).to.equal('run_completed');

      // The settled approval stays settled on both processes.
      for (const service of [processA!, processB!]) {
        const late = await decideOn(service.url, run, { decision: 'reject' }, false);
        expect(late.status, JSON.stringify(late.body)).to.equal(409);
      }
    }
  });
});
