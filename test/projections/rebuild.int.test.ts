// Rebuilds: replaying the log gives the table inline application built, byte for byte, at any size.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { createPool, type Pool } from '../../src/db/pool.js';
import type { Kernel } from '../../src/main.js';
import { ProjectionRegistry, rebuildProjection, type RowProjection } from '../../src/projections/index.js';
import { createTestDatabase } from '../support/db.js';
import { startTestKernel } from '../support/service.js';
import {
  ACCOUNTS_DDL,
  accountEvents as e,
  accountsProjection,
  appendTo,
  checksumOfRows,
  foldFromScratch,
  readAccountEvents,
  seededRandom,
  tableChecksum,
} from './sampleProjection.js';
import { AccountWorkload } from './workload.js';

async function startKernelWithAccounts(): Promise<Kernel> {
  const databaseUrl = await createTestDatabase();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(ACCOUNTS_DDL);
  await client.end();
  return startTestKernel({ databaseUrl, projections: [accountsProjection()] });
}

/** Columns, indexes and constraints of the live table, to prove the swapped-in copy has the same shape. */
async function tableShape(kernel: Kernel): Promise<unknown> {
  const { rows } = await kernel.pool.query(
    `SELECT
       (SELECT json_agg(json_build_object('name', attname, 'type', format_type(atttypid, atttypmod), 'notnull', attnotnull) ORDER BY attnum)
          FROM pg_attribute WHERE attrelid = 'public.accounts'::regclass AND attnum > 0 AND NOT attisdropped) AS columns,
       (SELECT json_agg(indexdef ORDER BY indexdef) FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'accounts') AS indexes,
       (SELECT json_agg(pg_get_constraintdef(oid) ORDER BY pg_get_constraintdef(oid)) FROM pg_constraint
          WHERE conrelid = 'public.accounts'::regclass) AS constraints`,
  );
  return rows[0];
}

describe('rebuildProjection', () => {
  describe('after thousands of appends across many streams', () => {
    let kernel: Kernel;
    let workload: AccountWorkload;

    before(async function () {
      this.timeout(60_000);
      kernel = await startKernelWithAccounts();
      workload = new AccountWorkload(kernel.store, seededRandom(20240229));
      for (let round = 0; round < 60; round++) await workload.round(60);
    });
    after(async () => {
      await kernel?.close();
    });

    it('replays into a table byte-identical to the one built inline, with the same shape', async () => {
      expect(workload.events).to.be.greaterThan(3000);
      const live = await tableChecksum(kernel.pool);
      const shape = await tableShape(kernel);
      expect(live.rows).to.equal(workload.open.size);

      const progress: number[] = [];
      const result = await rebuildProjection(kernel.pool, kernel.registry, accountsProjection(), {
        onProgress: (p) => progress.push(p.applied),
      });

      expect(await tableChecksum(kernel.pool)).to.deep.equal(live);
      expect(await tableShape(kernel)).to.deep.equal(shape);
      expect(result).to.include({ projection: 'accounts', version: 1, events: workload.events, rows: live.rows });
      expect(progress.at(-1)).to.equal(workload.events);
      const { rows } = await kernel.pool.query('SELECT version, events_applied FROM projection_state WHERE name = $1', ['accounts']);
      expect(rows).to.deep.equal([{ version: 1, events_applied: workload.events }]);
      // Nothing is left behind in the shadow schema.
      const shadows = await kernel.pool.query(`SELECT 1 FROM pg_tables WHERE schemaname = 'svc_rebuild'`);
      expect(shadows.rowCount).to.equal(0);
    });

    it('agrees with an independent fold of the log, and inline writes go on into the swapped-in table', async () => {
      const fromScratch = await checksumOfRows(kernel.pool, foldFromScratch(accountsProjection(), await readAccountEvents(kernel.pool)));
      expect(await tableChecksum(kernel.pool)).to.deep.equal(fromScratch);

      // The registry forgot the dropped table: appends land in the new one.
      await workload.round(30);
      const fromScratchAfter = await checksumOfRows(kernel.pool, foldFromScratch(accountsProjection(), await readAccountEvents(kernel.pool)));
      expect(await tableChecksum(kernel.pool)).to.deep.equal(fromScratchAfter);
      expect(fromScratchAfter).to.not.deep.equal(fromScratch);
    });

    it('fails with the error evolve threw mid-page, leaves the live table alone, and a later rebuild works', async () => {
      const live = await tableChecksum(kernel.pool);
      const projection = accountsProjection();
      let folded = 0;
      const failure = new Error('evolve failed');
      const failing: RowProjection = {
        ...projection,
        evolve: (row, key, event) => {
          if (++folded === 1234) throw failure;
          return projection.evolve(row, key, event);
        },
      };
      const error = await rebuildProjection(kernel.pool, kernel.registry, failing).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.equal(failure);
      expect(await tableChecksum(kernel.pool)).to.deep.equal(live);

      await rebuildProjection(kernel.pool, kernel.registry, projection);
      expect(await tableChecksum(kernel.pool)).to.deep.equal(live);
    });
  });

  describe('event order', () => {
    let kernel: Kernel;
    before(async () => {
      kernel = await startKernelWithAccounts();
    });
    after(async () => {
      await kernel?.close();
    });

    it('folds a stream in stream order even when a later event belongs to an older transaction', async () => {
      const from = randomUUID();
      const to = randomUUID();
      await kernel.store.append([
        appendTo(from, 0, e.opened(from, 'Ada', '2024-01-01T00:00:00Z', 1000)),
        appendTo(to, 0, e.opened(to, 'Alan', '2024-01-01T00:00:00Z', 0)),
      ]);
      // A transfer takes its transaction id when it writes the debit, then waits before writing the credit...
      let resume!: () => void;
      const paused = new Promise<void>((resolve) => (resume = resolve));
      let debited!: () => void;
      const hasDebited = new Promise<void>((resolve) => (debited = resolve));
      const transfer = kernel.store.transact(async (tx) => {
        await tx.append(appendTo(from, 1, e.withdrawn(from, 300)));
        debited();
        await paused;
        await tx.append(appendTo(to, 2, e.deposited(to, 300)));
      });
      await hasDebited;
      // ...while a younger transaction writes position 2 of the credited stream and commits first.
      await kernel.store.append(appendTo(to, 1, e.ownerChanged(to, 'Alan M. Turing')));
      resume();
      await transfer;

      const live = await tableChecksum(kernel.pool);
      const { rows } = await kernel.pool.query('SELECT owner, balance_cents, version FROM accounts WHERE id = $1', [to]);
      expect(rows).to.deep.equal([{ owner: 'Alan M. Turing', balance_cents: 300, version: 3 }]);

      await rebuildProjection(kernel.pool, kernel.registry, accountsProjection());
      expect(await tableChecksum(kernel.pool)).to.deep.equal(live);
    });
  });

  describe('with more rows than it holds in memory (MAX_HELD_ROWS = 200,000)', () => {
    const OPENED = 205_000;
    let testDatabaseUrl: string;
    let pool: Pool;
    before(async function () {
      this.timeout(60_000);
      testDatabaseUrl = await createTestDatabase();
      pool = createPool({ connectionString: testDatabaseUrl, max: 4 });
      await pool.query(ACCOUNTS_DDL);
      // Written straight into the log (no inline projection): 41 pages of opens, so the fold holds
      // more than 200,000 rows and flushes them to the shadow table before the later pages...
      await pool.query(
        `INSERT INTO events (stream_id, stream_type, stream_position, type, data)
         SELECT 'account-' || id, 'account', 1, 'AccountOpened', jsonb_build_object('accountId', id, 'owner', 'owner ' || (i % 97),
           'openedAt', to_char(timestamp '2020-01-01' + i * interval '1 minute 1.000001 second', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
           'amountCents', i % 1000, 'tags', jsonb_build_array('t' || (i % 5)))
         FROM (SELECT i, md5('account' || i)::uuid::text AS id FROM generate_series(1, $1::int) i) s ORDER BY i`,
        [OPENED],
      );
      // ...which change rows that are then only in the shadow table: deposits, tags, closes, reopens.
      await pool.query(
        `INSERT INTO events (stream_id, stream_type, stream_position, type, data)
         SELECT 'account-' || k.id, 'account', s.position, s.type, jsonb_build_object('accountId', k.id, 'amountCents', s.i,
           'tag', 'late', 'owner', 'again', 'openedAt', '2030-01-01T00:00:00Z', 'tags', '[]'::jsonb)
         FROM (
           SELECT i, 2 AS position, 'MoneyDeposited' AS type FROM generate_series(1, 3000) i
           UNION ALL SELECT i, 2, 'AccountClosed' FROM generate_series(3001, 5000) i
           UNION ALL SELECT i, 3, 'AccountTagged' FROM generate_series(1, 1000) i
           UNION ALL SELECT i, 3, 'AccountOpened' FROM generate_series(4001, 4100) i
         ) s, LATERAL (SELECT md5('account' || s.i)::uuid::text AS id) k
         ORDER BY s.position, s.i`,
      );
    });
    after(async () => {
      await pool?.end();
    });

    it('flushes, reloads flushed rows from the shadow table, and applies later events to them', async function () {
      this.timeout(60_000);
      const registry = new ProjectionRegistry();
      const projection = accountsProjection();
      registry.register(projection);
      const result = await rebuildProjection(pool, registry, projection);

      // What the fold must give, worked out from how the events were generated.
      let rows = 0;
      let balance = 0;
      let versions = 0;
      for (let i = 1; i <= OPENED; i++) {
        const reopened = i > 4000 && i <= 4100;
        if (i > 3000 && i <= 5000 && !reopened) continue;
        rows++;
        balance += reopened ? i : (i % 1000) + (i <= 3000 ? i : 0);
        versions += reopened || i <= 1000 ? 3 : i <= 3000 ? 2 : 1;
      }
      expect(result).to.include({ events: OPENED + 6100, rows });
      const totals = await pool.query(
        `SELECT count(*)::int AS rows, sum(balance_cents)::bigint AS balance, sum(version)::int AS versions,
           count(*) FILTER (WHERE tags ? 'late')::int AS late, count(*) FILTER (WHERE owner = 'again')::int AS again
         FROM accounts`,
      );
      expect(totals.rows).to.deep.equal([{ rows, balance, versions, late: 1000, again: 100 }]);

      const { rows: samples } = await pool.query(
        `SELECT owner, balance_cents, tags, opened_at, version FROM accounts
         WHERE id IN (md5('account1')::uuid, md5('account3500')::uuid, md5('account4050')::uuid, md5('account205000')::uuid)
         ORDER BY opened_at`,
      );
      expect(samples).to.deep.equal([
        { owner: 'owner 1', balance_cents: 2, tags: ['late', 't1'], opened_at: '2020-01-01T00:01:01.000001Z', version: 3 },
        { owner: 'owner 39', balance_cents: 0, tags: ['t0'], opened_at: '2020-05-24T17:36:40.205Z', version: 1 },
        { owner: 'again', balance_cents: 4050, tags: [], opened_at: '2030-01-01T00:00:00.000Z', version: 3 },
      ]);
    });

    it('writes with the two connections it holds when the pool has no third', async function () {
      this.timeout(60_000);
      const live = await tableChecksum(pool);
      const small = createPool({ connectionString: testDatabaseUrl, max: 2 });
      try {
        const registry = new ProjectionRegistry();
        registry.register(accountsProjection());
        await rebuildProjection(small, registry, accountsProjection());
      } finally {
        await small.end();
      }
      expect(await tableChecksum(pool)).to.deep.equal(live);
    });

    it('fails when a chunk of rows cannot be written, leaves the live table alone, and gives every connection back', async function () {
      this.timeout(60_000);
      const live = await tableChecksum(pool);
      const projection = accountsProjection();
      let folded = 0;
      const broken: RowProjection = {
        ...projection,
        // One row late in the log breaks NOT NULL: it is written with the last chunks, over two connections.
        evolve: (row, key, event) => {
          const next = projection.evolve(row, key, event);
          return ++folded >= 210_000 && next && folded < 210_010 ? { ...next, owner: null } : next;
        },
      };
      const registry = new ProjectionRegistry();
      registry.register(projection);
      const error = await rebuildProjection(pool, registry, broken).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.have.property('code', '23502');
      expect(await tableChecksum(pool)).to.deep.equal(live);
      expect(pool.idleCount).to.equal(pool.totalCount);
    });
  });
});
