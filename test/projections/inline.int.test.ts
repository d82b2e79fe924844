// Inline projections: rows change inside the append transaction, and only when the append commits.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { VersionConflictError } from '../../src/kernel/errors.js';
import type { Kernel } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { startTestKernel } from '../support/service.js';
import { ACCOUNTS_DDL, accountEvents as e, accountsProjection, accountStream, appendTo, tableChecksum } from './sampleProjection.js';

describe('inline projections', () => {
  let kernel: Kernel;

  before(async () => {
    const databaseUrl = await createTestDatabase();
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(ACCOUNTS_DDL);
    await client.end();
    kernel = await startTestKernel({ databaseUrl, projections: [accountsProjection()] });
  });
  after(async () => {
    await kernel?.close();
  });

  async function account(id: string) {
    const { rows } = await kernel.pool.query('SELECT * FROM accounts WHERE id = $1', [id]);
    return rows[0];
  }

  it('updates the table as the append returns, with timestamps, jsonb and the stream version', async () => {
    const id = randomUUID();
    const result = await kernel.store.append(appendTo(id, 0, e.opened(id, 'Ada', '2024-02-29T23:59:59.123456Z', 1000, ['vip', 'eur'])));
    expect(await account(id)).to.deep.equal({
      id,
      owner: 'Ada',
      balance_cents: 1000,
      tags: ['eur', 'vip'],
      opened_at: '2024-02-29T23:59:59.123456Z',
      updated_at: result.events[0]!.recordedAt,
      version: 1,
    });

    await kernel.store.append(appendTo(id, 1, e.deposited(id, 250), e.tagged(id, 'new'), e.withdrawn(id, 50), e.ownerChanged(id, 'Ada L.')));
    expect(await account(id)).to.include({ owner: 'Ada L.', balance_cents: 1200, version: 5 });
    expect((await account(id)).tags).to.deep.equal(['eur', 'new', 'vip']);
  });

  it('writes the row inside the append transaction: visible to it at once, to others only after commit', async () => {
    const id = randomUUID();
    let seenOutside: unknown;
    await kernel.store.transact(async (tx) => {
      await tx.append(appendTo(id, 0, e.opened(id, 'Grace', '2024-01-01T00:00:00Z', 10)));
      const inside = await tx.client.query('SELECT owner, balance_cents FROM accounts WHERE id = $1', [id]);
      expect(inside.rows).to.deep.equal([{ owner: 'Grace', balance_cents: 10 }]);
      seenOutside = (await kernel.pool.query('SELECT 1 FROM accounts WHERE id = $1', [id])).rowCount;
    });
    expect(seenOutside).to.equal(0);
    expect(await account(id)).to.include({ owner: 'Grace', balance_cents: 10 });
  });

  it('removes the row when an event folds it to null', async () => {
    const id = randomUUID();
    await kernel.store.append(appendTo(id, 0, e.opened(id, 'Linus', '2024-01-01T00:00:00Z')));
    expect(await account(id)).to.exist;
    await kernel.store.append(appendTo(id, 1, e.closed(id)));
    expect(await account(id)).to.equal(undefined);
    // Opened and closed in one append: no row at all.
    const other = randomUUID();
    await kernel.store.append(appendTo(other, 0, e.opened(other, 'Ken', '2024-01-01T00:00:00Z'), e.deposited(other, 5), e.closed(other)));
    expect(await account(other)).to.equal(undefined);
  });

  it('leaves the table and the log untouched when one stream of the append is at the wrong version', async () => {
    const a = randomUUID();
    const b = randomUUID();
    await kernel.store.append([
      appendTo(a, 0, e.opened(a, 'Alan', '2024-01-01T00:00:00Z', 100)),
      appendTo(b, 0, e.opened(b, 'Barbara', '2024-01-01T00:00:00Z', 100)),
    ]);
    const before = await tableChecksum(kernel.pool);

    // a's events are written and projected first, then b conflicts: everything must roll back.
    const error = await kernel.store
      .append([appendTo(a, 1, e.withdrawn(a, 100), e.closed(a)), appendTo(b, 0, e.deposited(b, 1))])
      .catch((caught: unknown) => caught);
    expect(error).to.be.instanceOf(VersionConflictError);
    expect(await tableChecksum(kernel.pool)).to.deep.equal(before);
    expect(await kernel.store.streamVersion(accountStream(a))).to.equal(1);

    // A single-stream conflict on an event type the projection handles.
    const single = await kernel.store.append(appendTo(b, 5, e.deposited(b, 1))).catch((caught: unknown) => caught);
    expect(single).to.be.instanceOf(VersionConflictError);
    expect(await tableChecksum(kernel.pool)).to.deep.equal(before);
  });

  /**
   * Opens an account with 10, then lets `withdraw` take 11 from it: balance_cents >= 0 is a CHECK on
   * the table, so the projection's write fails inside the append. Neither the event nor the row stays.
   */
  async function expectRowRefused(owner: string, withdraw: (event: ReturnType<typeof appendTo>) => Promise<unknown>): Promise<void> {
    const id = randomUUID();
    await kernel.store.append(appendTo(id, 0, e.opened(id, owner, '2024-01-01T00:00:00Z', 10)));
    const before = await tableChecksum(kernel.pool);
    const error = await withdraw(appendTo(id, 1, e.withdrawn(id, 11))).catch((caught: unknown) => caught);
    expect((error as { code?: string }).code).to.equal('23514');
    expect(await kernel.store.streamVersion(accountStream(id))).to.equal(1);
    expect(await tableChecksum(kernel.pool)).to.deep.equal(before);
  }

  it('refuses the append when the read model refuses the row (the event is not stored either)', async () => {
    await expectRowRefused('Edsger', (withdrawal) => kernel.store.append(withdrawal));
  });

  it('reports the write the read model refused, not the aborted statements the pipeline sent after it', async () => {
    // The row's write is sent, not awaited: the statement behind it fails with 25P02 (transaction aborted).
    await expectRowRefused('Niklaus', (withdrawal) =>
      kernel.store.transact(async (tx) => {
        await tx.appendEach([withdrawal]);
        await tx.client.query('SELECT 1');
      }),
    );
  });

  it('reads the rows ahead of the INSERT: a later statement of the transaction sees the written row', async () => {
    const id = randomUUID();
    await kernel.store.append(appendTo(id, 0, e.opened(id, 'Frances', '2024-01-01T00:00:00Z', 10)));
    const seen = await kernel.store.transact(async (tx) => {
      await tx.appendEach([appendTo(id, 1, e.deposited(id, 5))]);
      const { rows } = await tx.client.query<{ balance_cents: number }>('SELECT balance_cents FROM accounts WHERE id = $1', [id]);
      return rows[0]!.balance_cents;
    });
    expect(seen).to.equal(15);
    expect(await account(id)).to.include({ balance_cents: 15, version: 2 });
  });

  it('serialises concurrent appends to one row: no lost update', async () => {
    const id = randomUUID();
    await kernel.store.append(appendTo(id, 0, e.opened(id, 'Barbara', '2024-01-01T00:00:00Z')));
    // `any` appends retry on a lost race; the row lock taken by the projection orders the folds.
    // Eight writers at once: the unluckiest loses at most seven races, within the store's ten retries.
    await Promise.all(Array.from({ length: 8 }, () => kernel.store.append(appendTo(id, 'any', e.deposited(id, 1)))));
    expect(await account(id)).to.include({ balance_cents: 8, version: 9 });
  });

  describe('appends to one stream each, arriving together (group commit)', () => {
    /** Opens `count` accounts at once; answers their append results in order. */
    const openAtOnce = (ids: string[]) =>
      Promise.allSettled(ids.map((id) => kernel.store.append(appendTo(id, 0, e.opened(id, 'Grace', '2024-01-01T00:00:00Z', 10)))));

    it('share commits: twenty appends fired together take at most four transactions (three go at once, the rest wait for one)', async () => {
      const ids = Array.from({ length: 20 }, () => randomUUID());
      const results = await openAtOnce(ids);
      const transactions = new Set(results.map((r) => (r as PromiseFulfilledResult<{ events: { transactionId: string }[] }>).value.events[0]!.transactionId));
      expect(results.every((r) => r.status === 'fulfilled')).to.equal(true);
      expect(transactions.size).to.be.within(2, 4);
      for (const id of ids) expect(await account(id)).to.include({ owner: 'Grace', balance_cents: 10, version: 1 });
    });

    it('a stale version and a row the read model refuses fail their own calls; the rest of the commit lands', async () => {
      const [stale, refused, good] = [randomUUID(), randomUUID(), randomUUID()];
      await kernel.store.append(appendTo(stale, 0, e.opened(stale, 'Stale', '2024-01-01T00:00:00Z')));
      await kernel.store.append(appendTo(refused, 0, e.opened(refused, 'Refused', '2024-01-01T00:00:00Z', 5)));
      // Three fillers take the three commits that start at once: the next three calls wait together.
      const fillers = openAtOnce([randomUUID(), randomUUID(), randomUUID()]);
      const together = await Promise.allSettled([
        kernel.store.append(appendTo(stale, 0, e.deposited(stale, 1))),
        kernel.store.append(appendTo(refused, 1, e.withdrawn(refused, 6))),
        kernel.store.append(appendTo(good, 0, e.opened(good, 'Good', '2024-01-01T00:00:00Z', 7))),
      ]);
      await fillers;
      expect(together.map((r) => r.status)).to.deep.equal(['rejected', 'rejected', 'fulfilled']);
      const conflict = (together[0] as PromiseRejectedResult).reason as VersionConflictError;
      expect(conflict).to.be.instanceOf(VersionConflictError);
      expect(conflict.actualVersion).to.equal(1);
      expect(((together[1] as PromiseRejectedResult).reason as { code?: string }).code).to.equal('23514');
      expect(await kernel.store.streamVersion(accountStream(refused))).to.equal(1);
      expect(await account(refused)).to.include({ balance_cents: 5 });
      expect(await account(good)).to.include({ owner: 'Good', balance_cents: 7 });
    });
  });
});
