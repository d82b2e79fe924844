// Fault injection by contention: two `svc serve` processes on one database race on the same approval
// decision, the same schedule tick (the ticker and a backfill), the same Idempotency-Key and the same
// concurrency slot. Each race keeps its own promise (one decision event, one run per tick, one run per
// key with identical answers, never more runs executing than the limit) and ends with the invariants.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type pg from 'pg';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, eventually, type Admin, type HttpResult } from '../support/http.js';
import { copyProject } from '../support/projects.js';
import { killAllServices, ServiceProcess } from '../support/serviceProcess.js';
import { createUser, type SignedInUser } from '../support/users.js';
import { FINANCE_ROLES, HITL_PROJECT, requestRefund } from '../approvals/helpers.js';
import { concurrencyWorkflow, logOf, mostHolding, SLOW } from '../runs/concurrencyLog.js';
import { gapsIn, PROJECT as SCHEDULE_PROJECT, runStartsByTick, scheduledRuns } from '../schedules/helpers.js';
import { journalOf, openPool } from '../durability/helpers.js';
import { ENGINE_PROJECT } from '../workflows/helpers.js';
import { Acknowledged, checkInvariants } from './invariants.js';
import { PROFILE } from './profile.js';

/** The engine fixture (`route`, the `slow` runner) with the approval fixture's `refund`, the schedule fixture's `ticks`, and `limited`. */
function raceProject(): string {
  const from = (project: string, file: string) => readFileSync(path.join(project, file), 'utf8');
  return copyProject(ENGINE_PROJECT, {
    'workflows/refund.yaml': from(HITL_PROJECT, 'workflows/refund.yaml'),
    'workflows/ticks.yaml': from(SCHEDULE_PROJECT, 'workflows/ticks.yaml'),
    'nodes/note.ts': from(SCHEDULE_PROJECT, 'nodes/note.ts'),
    'workflows/limited.yaml': concurrencyWorkflow('limited', '{limit: 2}', [SLOW('a'), SLOW('b')].join('\n')),
  });
}

const TICKS = '/admin/schedules/ticks/each_second';

describe(`faults (${PROFILE.name}): two workers racing`, function () {
  this.timeout(PROFILE.settleMs + 120_000);
  let db: pg.Pool;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let admin: Admin;
  let fin: SignedInUser;
  const acked = new Acknowledged();
  const diagnostics = () => [a, b].map((s) => s.output.slice(-2000)).join('\n---\n');
  /** Each of `count` requests to A and B in turn, all at once. */
  const onBoth = (count: number, send: (url: string, i: number) => Promise<HttpResult>) =>
    Promise.all(Array.from({ length: count }, (_, i) => send(i % 2 === 0 ? a.url : b.url, i)));

  before(async () => {
    const databaseUrl = await createTestDatabase();
    db = openPool(databaseUrl);
    const project = raceProject();
    const env = { SVC_SCHEDULE_CLAIM_INTERVAL_MS: '200' };
    [a, b] = await Promise.all([ServiceProcess.start(databaseUrl, project, env), ServiceProcess.start(databaseUrl, project, env)]);
    admin = await bootstrapAdmin(a.url);
    fin = await createUser(a.url, admin.token, 'fin@example.com', FINANCE_ROLES);
  });
  after(async () => {
    await killAllServices();
    await db?.end();
  });

  const asAdmin = (url: string, method: string, route: string, json?: unknown) => call(url, method, route, { token: admin.token, ...(json ? { json } : {}) });

  it(`the same schedule ticks on both for ${PROFILE.raceTicks} s, then one backfill sent to both: one run per tick`, async () => {
    const bothUp = new Date().toISOString();
    const ticked = await eventually(
      async () => (await scheduledRuns(db, 'ticks')).filter((r) => r.scheduled_at > bothUp).length >= PROFILE.raceTicks,
      PROFILE.raceTicks * 1000 + 30_000,
      200,
    );
    expect(ticked.ok, diagnostics()).to.equal(true);
    // A gap to backfill: paused for a while, resumed until a tick ran, paused for good.
    expect((await asAdmin(a.url, 'PATCH', TICKS, { paused: true })).status).to.equal(200);
    const pausedAt = new Date().toISOString();
    await sleep(2500);
    expect((await asAdmin(b.url, 'PATCH', TICKS, { paused: false })).status).to.equal(200);
    const resumed = await eventually(async () => (await scheduledRuns(db, 'ticks')).some((r) => r.scheduled_at > pausedAt), 20_000, 100);
    expect(resumed.ok, diagnostics()).to.equal(true);
    expect((await asAdmin(a.url, 'PATCH', TICKS, { paused: true })).status).to.equal(200);

    const ticks = (await scheduledRuns(db, 'ticks')).map((r) => r.scheduled_at).filter((t) => t > bothUp);
    const missing = gapsIn(ticks);
    expect(missing.length, 'the pause left ticks without a run').to.be.at.least(1);
    const window = { from: ticks[0]!, to: ticks.at(-1)! };
    const answers = await onBoth(2, (url) => asAdmin(url, 'POST', `${TICKS}/backfill`, window));
    for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    const backfilled: string[] = answers.flatMap((answer) => answer.body.runs);
    for (const id of backfilled) acked.runIds.add(id);
    const byId = new Map((await scheduledRuns(db, 'ticks')).map((r) => [r.id, r.scheduled_at]));
    expect(backfilled.map((id) => byId.get(id)).sort(), 'the two backfills started each missing tick once between them').to.deep.equal(missing);

    const runs = await checkInvariants(db, acked, { settleMs: PROFILE.settleMs, diagnostics });
    const after = (await scheduledRuns(db, 'ticks')).map((r) => r.scheduled_at);
    expect(new Set(after).size, 'one run per tick').to.equal(after.length);
    const starts = [...(await runStartsByTick(db, 'ticks')).entries()].filter(([, n]) => n !== 1);
    expect(starts, 'ticks with more than one run_started').to.deep.equal([]);
    expect(gapsIn(after.filter((t) => t > bothUp)), 'no tick without its run').to.deep.equal([]);
    console.log(`      ${ticks.length} ticks on two workers, ${missing.length} backfilled by two requests; ${runs} runs, all ended`);
  });

  it(`${PROFILE.raceRounds} approvals, each decided through A and B at once: one 200 and one 409, one approval_decided`, async () => {
    const rounds = await Promise.all(
      Array.from({ length: PROFILE.raceRounds }, async (_, round) => {
        const run = await requestRefund(round % 2 === 0 ? a.url : b.url, admin.token, `RACE${round}`);
        acked.runIds.add(run.id);
        const bodies = [{ decision: 'approve', values: { refunded: round } }, { decision: 'reject' }];
        const decided = await onBoth(2, (url, i) => call(url, 'POST', `/api/approvals/${run.approval.approval_id}`, { token: fin.token, json: bodies[i] }));
        return { run, decided };
      }),
    );
    await checkInvariants(db, acked, { settleMs: PROFILE.settleMs, diagnostics });
    for (const { run, decided } of rounds) {
      const what = JSON.stringify(decided.map((r) => [r.status, r.body?.code ?? r.body?.decision]));
      expect(decided.map((r) => r.status).sort(), what).to.deep.equal([200, 409]);
      const winner = decided.find((r) => r.status === 200)!.body.decision as string;
      const journal = await journalOf(db, run.id);
      const decisions = journal.filter((e) => e.type === 'approval_decided');
      expect(
        decisions.map((e) => e.payload.decision),
        `${run.id}: the one decision event is the winner's`,
      ).to.deep.equal([winner]);
      const routed = journal.filter((e) => e.type === 'step_completed' && (e.step === 'approved' || e.step === 'rejected')).map((e) => e.step);
      expect(routed, 'the run took the winner’s route once').to.deep.equal([winner === 'approve' ? 'approved' : 'rejected']);
    }
  });

  it(`${PROFILE.raceRounds} Idempotency-Keys, each sent 20 times at once to A and B: one run per key, 20 identical answers`, async () => {
    const keys = Array.from({ length: PROFILE.raceRounds }, (_, k) => `race-${k}`);
    const byKey = await Promise.all(
      keys.map((key) =>
        onBoth(20, (url) => call(url, 'POST', '/api/wf/route', { token: admin.token, json: { want: 'jump' }, headers: { 'idempotency-key': key } })),
      ),
    );
    const runIds = new Set<string>();
    for (const [k, answers] of byKey.entries()) {
      const first = answers[0]!;
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      for (const answer of answers) {
        expect([answer.status, answer.body, answer.headers.get('x-svc-run-id')], keys[k]).to.deep.equal([201, first.body, first.headers.get('x-svc-run-id')]);
      }
      expect(
        answers.filter((r) => r.headers.get('idempotent-replayed') === 'true'),
        'replays',
      ).to.have.length(19);
      runIds.add(first.headers.get('x-svc-run-id')!);
      acked.runIds.add(first.headers.get('x-svc-run-id')!);
    }
    expect(runIds.size, 'a run per key').to.equal(keys.length);
    await checkInvariants(db, acked, { settleMs: PROFILE.settleMs, diagnostics });
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events WHERE type = 'run_started' AND data->'payload'->>'workflow' = 'route'`,
    );
    expect(rows[0]!.n, 'run_started of the keyed workflow').to.equal(keys.length);
  });

  it(`limit 2, ${PROFILE.raceRuns} runs started at once on A and B: never more than 2 executing, all complete`, async () => {
    const started = await onBoth(PROFILE.raceRuns, (url) => call(url, 'POST', '/api/cc/limited?wait=false', { token: admin.token, json: { ms: 150 } }));
    const ids = started.map((answer) => {
      expect(answer.status, JSON.stringify(answer.body)).to.equal(202);
      return answer.headers.get('x-svc-run-id')!;
    });
    for (const id of ids) acked.runIds.add(id);
    await checkInvariants(db, acked, { settleMs: PROFILE.settleMs, diagnostics });
    const log = await logOf(db, ids);
    expect(mostHolding(log), 'most runs holding a slot at once').to.be.at.most(2);
    expect(log.filter((e) => e.type === 'run_queued').length, 'some runs waited for a slot').to.be.greaterThan(0);
    console.log(`      ${log.filter((e) => e.type === 'run_queued').length} of ${ids.length} runs waited for a slot`);
  });
});
