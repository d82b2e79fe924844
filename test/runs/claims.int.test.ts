// The claim query on a large svc_runs: due retries and timers are found through the wake_at index,
// never by scanning the table, and only when due and not leased.
import { expect } from 'chai';
import pg from 'pg';
import { CLAIM_RUNS_SQL, claimRuns } from '../../src/runs/engine/leases.js';
import { createTestDatabase } from '../support/db.js';
import { planNodes } from '../support/plans.js';

describe('run claims: waiting runs by their wake time', function () {
  this.timeout(60_000);
  let db: pg.Pool;

  before(async () => {
    db = new pg.Pool({ connectionString: await createTestDatabase(), max: 2 });
    // 50,000 ended runs, 1,000 waiting in the future, 3 due (one of them leased elsewhere), 2 paused past their time.
    await db.query(`
      INSERT INTO svc_runs (id, workflow, schema_version, status, input, last_seq, created_at, updated_at, wake_at, wake_status)
      SELECT gen_random_uuid(), 'w', 'v1', s.status, '{}', 1, now(), now(), s.wake_at, s.wake_status
      FROM (
        SELECT 'completed' AS status, NULL::timestamptz AS wake_at, NULL AS wake_status FROM generate_series(1, 50000)
        UNION ALL SELECT 'waiting_timer', now() + interval '1 hour', 'waiting_timer' FROM generate_series(1, 1000)
        UNION ALL SELECT 'waiting_retry', now() - interval '1 second', 'waiting_retry' FROM generate_series(1, 2)
        UNION ALL SELECT 'waiting_timer', now() - interval '2 seconds', 'waiting_timer'
        UNION ALL SELECT 'paused', now() - interval '1 minute', 'waiting_timer' FROM generate_series(1, 2)
      ) s`);
    await db.query(`INSERT INTO svc_run_leases (run_id, owner, expires_at)
      SELECT id, 'elsewhere', now() + interval '1 minute' FROM svc_runs WHERE status = 'waiting_retry' LIMIT 1`);
    await db.query('ANALYZE svc_runs');
  });
  after(() => db.end());

  it('plans no sequential scan of svc_runs', async () => {
    const nodes = await planNodes(db, CLAIM_RUNS_SQL, ['owner', 1000, 100]);
    const scans = nodes.filter((n) => n['Relation Name'] === 'svc_runs').map((n) => `${String(n['Node Type'])} ${String(n['Index Name'] ?? '')}`);
    expect(scans.length, JSON.stringify(nodes.map((n) => n['Node Type']))).to.be.greaterThan(0);
    expect(
      scans.filter((s) => s.startsWith('Seq Scan')),
      scans.join(', '),
    ).to.deep.equal([]);
    expect(
      scans.some((s) => s.includes('svc_runs_wake_at')),
      scans.join(', '),
    ).to.equal(true);
  });

  it('claims the due, unleased waiting runs (oldest wake first), not future, paused or leased ones', async () => {
    const { rows: due } = await db.query<{ id: string }>(
      `SELECT r.id FROM svc_runs r WHERE r.status IN ('waiting_retry', 'waiting_timer') AND r.wake_at <= now()
         AND NOT EXISTS (SELECT 1 FROM svc_run_leases l WHERE l.run_id = r.id) ORDER BY r.wake_at`,
    );
    expect(due).to.have.length(2);
    expect(await claimRuns(db, 'me', 1000, 100)).to.have.members(due.map((r) => r.id));
    expect(await claimRuns(db, 'other', 1000, 100), 'claimed runs are leased').to.deep.equal([]);
  });
});
