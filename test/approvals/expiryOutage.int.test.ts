// The expiry sweep runs on a timer in every worker: with the database gone it logs and waits for the
// next tick; a rejection there would be unhandled and end the process.
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import { ApprovalExpiry } from '../../src/approvals/expiry.js';
import { createPool, type Pool } from '../../src/db/pool.js';
import type { RunExecutor } from '../../src/runs/engine/executor.js';
import { EventStore } from '../../src/eventstore/store.js';
import { systemClock } from '../../src/kernel/clock.js';
import { freePort } from '../support/db.js';

describe('approvals: the expiry sweep while the database is unreachable', () => {
  let pool: Pool;
  const lines: string[] = [];
  const logger = pino(
    { level: 'warn' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    }),
  );

  before(async () => {
    // Nothing listens there: every connection is refused, as while PostgreSQL is stopped.
    pool = createPool({ connectionString: `postgres://svc@127.0.0.1:${await freePort()}/svc`, max: 2 });
  });
  after(async () => {
    await pool?.end();
  });

  it('resolves with nothing expired and logs a warning, instead of rejecting', async () => {
    // The sweep fails before it would ever resume a run.
    const executor = {} as RunExecutor;
    const expiry = new ApprovalExpiry({ pool, store: new EventStore({ pool }), executor, logger, clock: systemClock, intervalMs: 60_000 });
    const outcome = await expiry.sweep().then(
      (expired) => ({ expired }),
      (error: unknown) => ({ error }),
    );
    expect(outcome).to.deep.equal({ expired: 0 });
    expect(lines.join('')).to.include('sweeping expired approvals failed');
    // The next tick is not blocked by the failed one.
    expect(await expiry.sweep()).to.equal(0);
  });
});
