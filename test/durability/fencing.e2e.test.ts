// Fencing: two service processes on one database, and one of them stalls (its event loop blocked past
// the lease, as a long GC pause would) so the other takes its runs over. Whoever wrote, every journal
// stays one clean story, and a process that lost a run never advances it again.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type pg from 'pg';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, eventually } from '../support/http.js';
import { CLAIM_INTERVAL_MS, killAllServices, LEASE_MS, ServiceProcess } from '../support/serviceProcess.js';
import { attemptsOf, createSideEffectTables, DURABLE_PROJECT, fireRun, journalOf, journalProblems, openPool, waitForStatus } from './helpers.js';

describe('durability: two executors never both advance a run', function () {
  this.timeout(60_000);
  let db: pg.Pool;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let token: string;

  before(async () => {
    const databaseUrl = await createTestDatabase();
    db = openPool(databaseUrl);
    await createSideEffectTables(db);
    a = await ServiceProcess.start(databaseUrl, DURABLE_PROJECT);
    token = (await bootstrapAdmin(a.url)).token;
    b = await ServiceProcess.start(databaseUrl, DURABLE_PROJECT);
  });

  after(async () => {
    await killAllServices();
    await db?.end();
  });

  it('keeps every journal contiguous with one start, one end and no step twice, and hands a run over only once', async () => {
    const fire = (url: string, i: number) => fireRun(url, token, { sleep_ms: 120 + ((i * 53) % 120), tag: `fence-${i}` });
    const runIds = await Promise.all(Array.from({ length: 40 }, (_, i) => fire(i % 2 === 0 ? a.url : b.url, i)));
    // One run blocks A's event loop on its first attempt of step `two` (no heartbeats, as in a long GC
    // pause) until B has claimed every run A held; then A wakes up in the middle of B's work.
    const releaseFile = path.join(mkdtempSync(path.join(tmpdir(), 'svc-fence-')), 'release');
    const stallRun = await fireRun(a.url, token, { sleep_ms: 50, tag: 'stall', stall_at: 'two', stall_ms: 15_000, release_file: releaseFile });
    runIds.push(stallRun);
    // Leases of unfinished runs (a run journaled as finished just before the stall keeps its row until A wakes).
    const ownedBy = async (service: ServiceProcess) =>
      (
        await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM svc_run_leases l JOIN svc_runs r ON r.id = l.run_id WHERE l.owner LIKE $1 AND r.status IN ('queued', 'running')`,
          [`${service.pid}-%`],
        )
      ).rows[0]!.n;
    const stalled = await eventually(async () => (await attemptsOf(db, stallRun)).some((x) => x.step_id === 'two'), 10_000, 10);
    expect(stalled.ok, 'the stalling step started').to.equal(true);
    // A run whose append A had begun stays locked (claims skip it) until A wakes: do not wait for those.
    await eventually(async () => (await ownedBy(a)) === 0, LEASE_MS + 4 * CLAIM_INTERVAL_MS, 10);
    writeFileSync(releaseFile, '');
    await waitForStatus(db, runIds, ['completed'], 30_000, () => `A:\n${a.output}\nB:\n${b.output}`);

    const attempts = await attemptsOf(db);
    for (const runId of runIds) {
      const journal = await journalOf(db, runId);
      expect(journalProblems(journal), `run ${runId}`).to.deep.equal([]);
      expect(
        journal.filter((e) => e.type === 'step_completed').map((e) => e.step),
        `run ${runId}`,
      ).to.deep.equal(['one', 'two', 'save', 'three', 'four', 'respond']);
      // In the order the runners were entered: a step started before a stall may reach the database after it.
      const mine = attempts.filter((x) => x.run_id === runId).sort((x, y) => x.started_at.getTime() - y.started_at.getTime() || x.id - y.id);
      const journaledAt = new Map(journal.filter((e) => e.type === 'step_completed').map((e) => [e.step, e.recordedAt.getTime()]));
      const late = mine.filter((x) => x.started_at.getTime() > (journaledAt.get(x.step_id) ?? Infinity));
      // Owners in attempt order: a run may move from one process to the other once (the stall), never back.
      const owners = mine.map((x) => (x.pid === a.pid ? 'A' : 'B'));
      const story = `run ${runId}: attempts ${mine.map((x, i) => `${x.step_id}@${owners[i]}${late.includes(x) ? '(already journaled)' : ''}`).join(', ')}`;
      expect(late, `a step started after it was journaled; ${story}`).to.deep.equal([]);
      const switches = owners.filter((owner, i) => i > 0 && owner !== owners[i - 1]).length;
      expect(switches, story).to.be.at.most(1);
    }
    const { rows } = await db.query<{ run_id: string; n: number }>('SELECT run_id, count(*)::int AS n FROM durable_entries GROUP BY run_id');
    expect(
      rows.filter((r) => r.n !== 1),
      'ModelOp records written twice',
    ).to.deep.equal([]);
    expect(rows.length).to.equal(runIds.length);
    // The stall did happen and B did take runs over from A.
    const movedRuns = runIds.filter((id) => {
      const owners = attempts.filter((x) => x.run_id === id).map((x) => x.pid);
      return owners[0] === a.pid && owners.includes(b.pid);
    });
    expect(movedRuns.length, 'runs B took over from the stalled A').to.be.greaterThan(1);
    expect(a.isRunning && b.isRunning, 'both processes are still up').to.equal(true);
    console.log(`      ${movedRuns.length} of ${runIds.length} runs were taken over by B while A stalled`);
  });
});
