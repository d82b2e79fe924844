// A rebuild at a new version swapped in under load: readers never see a gap, writers never lose an event.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import pg from 'pg';
import { EventStore } from '../../src/eventstore/store.js';
import { createLogger } from '../../src/kernel/logger.js';
import type { Kernel } from '../../src/main.js';
import { ProjectionRegistry, rebuildStaleProjections, type RebuildProgress } from '../../src/projections/index.js';
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

describe('rebuilding a projection at a new version while the service runs', () => {
  let kernel: Kernel;
  let baseAccounts: string[];

  before(async function () {
    this.timeout(30_000);
    const databaseUrl = await createTestDatabase();
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(ACCOUNTS_DDL);
    await client.end();
    kernel = await startTestKernel({ databaseUrl, projections: [accountsProjection(1)] });
    const workload = new AccountWorkload(kernel.store, seededRandom(7));
    for (let round = 0; round < 50; round++) await workload.round(60);
    baseAccounts = [...workload.open.keys()];
  });
  after(async () => {
    await kernel?.close();
  });

  it('swaps in version 2 atomically: reads never fail or shrink, appends during the rebuild are kept', async function () {
    this.timeout(30_000);
    const before = await kernel.pool.query<{ mixed: number }>('SELECT count(*)::int AS mixed FROM accounts WHERE owner <> lower(owner)');
    expect(before.rows[0]!.mixed, 'version 1 keeps upper-case owners').to.be.greaterThan(0);

    // The new code: version 2 registered, appending through its own registry, like a freshly deployed process.
    const registry = new ProjectionRegistry();
    registry.register(accountsProjection(2));
    const store = new EventStore({ pool: kernel.pool, projector: registry });
    const random = seededRandom(99);
    let stop = false;
    let rebuilding = false;

    // Readers: each read is one statement, so it sees at least what the previous one saw. The appenders
    // only add accounts and money, so the count and the sum can only grow; an empty, half or stale
    // table would show as a drop.
    const reads = { total: 0, duringRebuild: 0, errors: [] as unknown[], drops: [] as string[] };
    const reader = (async () => {
      let last = { n: 0, sum: 0 };
      while (!stop) {
        const during = rebuilding;
        try {
          const { rows } = await kernel.pool.query<{ n: number; sum: number }>(
            'SELECT count(*)::int AS n, coalesce(sum(balance_cents), 0)::bigint AS sum FROM accounts',
          );
          const now = rows[0]!;
          if (now.n < Math.max(last.n, baseAccounts.length) || now.sum < last.sum) reads.drops.push(`${JSON.stringify(last)} -> ${JSON.stringify(now)}`);
          last = now;
          reads.total++;
          if (during) reads.duringRebuild++;
        } catch (error) {
          reads.errors.push(error);
        }
      }
    })();

    const appends = { total: 0, duringRebuild: 0, errors: [] as unknown[] };
    const appender = (async () => {
      while (!stop) {
        const during = rebuilding;
        try {
          const roll = random();
          const id = roll < 0.3 ? randomUUID() : baseAccounts[Math.floor(random() * baseAccounts.length)]!;
          if (roll < 0.3) await store.append(appendTo(id, 0, e.opened(id, 'NEW Owner', '2025-06-01T12:00:00.5Z', 100, ['new'])));
          else if (roll < 0.8) await store.append(appendTo(id, 'any', e.deposited(id, 7)));
          else await store.append(appendTo(id, 'any', e.ownerChanged(id, `Renamed ${appends.total}`), e.tagged(id, 'renamed')));
          appends.total++;
          if (during) appends.duringRebuild++;
        } catch (error) {
          appends.errors.push(error);
        }
      }
    })();

    // A writer that holds its transaction open across the replay: its events can only reach the new
    // table through the catch-up under the swap's lock.
    const held = randomUUID();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let appended!: () => void;
    const hasAppended = new Promise<void>((resolve) => (appended = resolve));
    const holder = store.transact(async (tx) => {
      await tx.append(appendTo(held, 0, e.opened(held, 'Held OPEN', '2025-01-01T00:00:00Z', 5), e.deposited(held, 5), e.tagged(held, 'held')));
      appended();
      await released;
    });
    await hasAppended;

    await sleep(50);
    rebuilding = true;
    const progress: RebuildProgress[] = [];
    const rebuild = rebuildStaleProjections(kernel.pool, registry, createLogger('silent'), { onProgress: (p) => progress.push(p) });
    // Let the held writer go once the swap waits for it.
    for (let attempt = 0; ; attempt++) {
      if (attempt > 2000) {
        release();
        throw new Error('the swap never waited for the open writer');
      }
      const { rowCount } = await kernel.pool.query(
        `SELECT 1 FROM pg_locks WHERE locktype = 'relation' AND relation = 'public.accounts'::regclass
           AND mode = 'AccessExclusiveLock' AND NOT granted`,
      );
      if (rowCount) break;
      await sleep(5);
    }
    release();
    await holder;
    const results = await rebuild;
    rebuilding = false;
    await sleep(50);
    stop = true;
    await Promise.all([reader, appender]);

    expect(reads.errors).to.deep.equal([]);
    expect(appends.errors).to.deep.equal([]);
    expect(reads.drops).to.deep.equal([]);
    // Started while the rebuild ran (some waited for the swap's lock and landed in the new table).
    expect(reads.duringRebuild, 'reads during the rebuild').to.be.greaterThan(0);
    expect(appends.duringRebuild, 'appends during the rebuild').to.be.greaterThan(0);
    expect(reads.total - reads.duringRebuild, 'reads after the swap').to.be.greaterThan(0);

    expect(results).to.have.length(1);
    expect(results[0]).to.include({ projection: 'accounts', version: 2 });
    const caughtUp = progress.at(-1)!.applied - progress.at(-2)!.applied;
    expect(caughtUp, 'events applied under the swap lock').to.be.at.least(3);
    const state = await kernel.pool.query('SELECT version, events_applied FROM projection_state WHERE name = $1', ['accounts']);
    expect(state.rows).to.deep.equal([{ version: 2, events_applied: results[0]!.events }]);

    // The table is version 2 of every event, including the held ones and those appended meanwhile.
    const expected = await checksumOfRows(kernel.pool, foldFromScratch(accountsProjection(2), await readAccountEvents(kernel.pool)));
    expect(await tableChecksum(kernel.pool)).to.deep.equal(expected);
    const { rows } = await kernel.pool.query('SELECT owner, balance_cents, tags FROM accounts WHERE id = $1', [held]);
    expect(rows).to.deep.equal([{ owner: 'held open', balance_cents: 10, tags: ['held'] }]);
    const after = await kernel.pool.query<{ mixed: number }>('SELECT count(*)::int AS mixed FROM accounts WHERE owner <> lower(owner)');
    expect(after.rows[0]!.mixed).to.equal(0);
  });

  it('does nothing when the projection is already at its version', async () => {
    const registry = new ProjectionRegistry();
    registry.register(accountsProjection(2));
    const before = await kernel.pool.query('SELECT rebuilt_at FROM projection_state WHERE name = $1', ['accounts']);
    const sum = await tableChecksum(kernel.pool);
    expect(await rebuildStaleProjections(kernel.pool, registry, createLogger('silent'))).to.deep.equal([]);
    expect((await kernel.pool.query('SELECT rebuilt_at FROM projection_state WHERE name = $1', ['accounts'])).rows).to.deep.equal(before.rows);
    expect(await tableChecksum(kernel.pool)).to.deep.equal(sum);
  });

  it('lets only one of two concurrent rebuilds of a stale projection run', async () => {
    const registry = new ProjectionRegistry();
    registry.register(accountsProjection(1));
    const logger = createLogger('silent');
    const [first, second] = await Promise.all([rebuildStaleProjections(kernel.pool, registry, logger), rebuildStaleProjections(kernel.pool, registry, logger)]);
    expect(first.length + second.length).to.equal(1);
    expect(await tableChecksum(kernel.pool)).to.deep.equal(
      await checksumOfRows(kernel.pool, foldFromScratch(accountsProjection(1), await readAccountEvents(kernel.pool))),
    );
  });
});
