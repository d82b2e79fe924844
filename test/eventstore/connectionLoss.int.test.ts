// A connection lost while a transaction holds it: the transaction fails (never the process), the
// store goes on with fresh connections, and a COMMIT cut off in flight is reported as an unknown outcome.
import { once } from 'node:events';
import { expect } from 'chai';
import pg from 'pg';
import { CommitOutcomeUnknown, isConnectionLoss } from '../../src/db/connectionLoss.js';
import type { Kernel } from '../../src/main.js';
import { startTestKernel } from '../support/service.js';

describe('event store: a connection lost under a transaction', () => {
  let kernel: Kernel;
  let admin: pg.Client;

  before(async () => {
    kernel = await startTestKernel();
    admin = new pg.Client({ connectionString: kernel.database.url });
    await admin.connect();
    // A deferred constraint trigger runs inside COMMIT: ending its own backend there cuts the COMMIT
    // off in flight (and, being before the commit record, rolls the transaction back).
    await admin.query(`
      CREATE TABLE doomed (id int);
      CREATE FUNCTION end_own_backend() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$;
      CREATE CONSTRAINT TRIGGER doomed_at_commit AFTER INSERT ON doomed DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW EXECUTE FUNCTION end_own_backend();`);
  });
  after(async () => {
    await admin?.end();
    await kernel?.close();
  });

  it('fails the transaction whose connection is terminated, and the next one commits', async () => {
    const failure = await kernel.store
      .transact(async (tx) => {
        const { rows } = await tx.client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        // With a timeout, pg_terminate_backend waits until the backend has really exited.
        await admin.query('SELECT pg_terminate_backend($1, 5000)', [rows[0]!.pid]);
        await tx.append({ streamId: 'cut-1', expectedVersion: 0, events: [{ type: 'Cut', data: {} }] });
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure, 'the transaction failed').to.be.instanceOf(Error);
    expect(isConnectionLoss(failure), String(failure)).to.equal(true);
    expect(failure).to.not.be.instanceOf(CommitOutcomeUnknown);
    expect(await kernel.store.streamVersion('cut-1')).to.equal(0);

    await kernel.store.transact((tx) => tx.append({ streamId: 'cut-1', expectedVersion: 0, events: [{ type: 'Kept', data: {} }] }));
    expect(await kernel.store.streamVersion('cut-1')).to.equal(1);
  });

  it('a connection that dies while the transaction waits between statements does not take the process down', async () => {
    let pid = 0;
    const failure = await kernel.store
      .transact(async (tx) => {
        pid = (await tx.client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        // 'end' follows the 'error' event; waiting for 'error' itself would add the very listener under test.
        const ended = once(tx.client, 'end');
        await admin.query('SELECT pg_terminate_backend($1, 5000)', [pid]);
        // No query is in flight when the termination arrives: the client reports it as an 'error' event.
        await ended;
        await tx.client.query('SELECT 1');
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(pid).to.be.greaterThan(0);
    expect(isConnectionLoss(failure), String(failure)).to.equal(true);
    const { rows } = await kernel.pool.query<{ one: number }>('SELECT 1 AS one');
    expect(rows[0]!.one).to.equal(1);
  });

  it('reports a COMMIT cut off in flight as an unknown outcome, still a connection loss', async () => {
    const failure = await kernel.store
      .transact(async (tx) => {
        await tx.append({ streamId: 'cut-2', expectedVersion: 0, events: [{ type: 'Cut', data: {} }] });
        await tx.client.query('INSERT INTO doomed VALUES (1)');
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).to.be.instanceOf(CommitOutcomeUnknown);
    expect(isConnectionLoss(failure)).to.equal(true);
    // Here the trigger ran before the commit record, so nothing was stored; the caller could not know that.
    expect(await kernel.store.streamVersion('cut-2')).to.equal(0);
  });
});
