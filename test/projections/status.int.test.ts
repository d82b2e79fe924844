// Projection status (stale/current) and the rebuilds the kernel runs at start.
import { expect } from 'chai';
import pg from 'pg';
import { createPool, type Pool } from '../../src/db/pool.js';
import type { Kernel } from '../../src/main.js';
import { ProjectionRegistry, projectionStatus } from '../../src/projections/index.js';
import { createTestDatabase } from '../support/db.js';
import { startTestKernel } from '../support/service.js';
import { ACCOUNTS_DDL, accountsProjection, checksumOfRows, foldFromScratch, readAccountEvents, seededRandom, tableChecksum } from './sampleProjection.js';
import { AccountWorkload } from './workload.js';

function registryOf(version: 1 | 2): ProjectionRegistry {
  const registry = new ProjectionRegistry();
  registry.register(accountsProjection(version));
  return registry;
}

describe('projection status and rebuilds at start', () => {
  let databaseUrl: string;
  let pool: Pool;
  let kernel: Kernel | undefined;
  let eventCount: number;

  before(async function () {
    this.timeout(30_000);
    databaseUrl = await createTestDatabase();
    pool = createPool({ connectionString: databaseUrl, max: 2 });
    // A service that does not know the projection yet appends account events nobody projects.
    const unaware = await startTestKernel({ databaseUrl, projections: [] });
    try {
      const workload = new AccountWorkload(unaware.store, seededRandom(4));
      for (let round = 0; round < 20; round++) await workload.round(40);
      eventCount = workload.events;
    } finally {
      await unaware.close();
    }
    // Then a migration adds its table.
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(ACCOUNTS_DDL);
    await client.end();
  });
  afterEach(async () => {
    await kernel?.close();
    kernel = undefined;
  });
  after(async () => {
    await pool?.end();
  });

  async function rebuiltAt(): Promise<string | undefined> {
    const { rows } = await pool.query<{ rebuilt_at: string }>('SELECT rebuilt_at FROM projection_state WHERE name = $1', ['accounts']);
    return rows[0]?.rebuilt_at;
  }

  it('reports a projection never built as stale, with an empty table', async () => {
    const [status] = await projectionStatus(pool, registryOf(1));
    expect(status).to.deep.equal({ name: 'accounts', table: 'accounts', version: 1, storedVersion: null, isCurrent: false, rows: 0, rebuiltAt: null });
  });

  it('builds a projection registered for the first time from the events already in the log, at kernel start', async () => {
    expect(eventCount).to.be.greaterThan(500);
    kernel = await startTestKernel({ databaseUrl, projections: [accountsProjection(1)] });
    const expected = await checksumOfRows(pool, foldFromScratch(accountsProjection(1), await readAccountEvents(pool)));
    expect(expected.rows).to.be.greaterThan(0);
    expect(await tableChecksum(pool)).to.deep.equal(expected);

    const [status] = await projectionStatus(pool, kernel.registry);
    expect(status).to.include({ version: 1, storedVersion: 1, isCurrent: true, rows: expected.rows });
    expect(status!.rebuiltAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/);
    const { rows } = await pool.query('SELECT events_applied FROM projection_state WHERE name = $1', ['accounts']);
    expect(rows).to.deep.equal([{ events_applied: eventCount }]);
  });

  it('does not rebuild a current projection when the kernel starts again', async () => {
    const first = await rebuiltAt();
    expect(first).to.be.a('string');
    kernel = await startTestKernel({ databaseUrl, projections: [accountsProjection(1)] });
    expect(await rebuiltAt()).to.equal(first);
  });

  it('reports the stored version as stale once the code carries a new one, and rebuilds it at start', async () => {
    const [stale] = await projectionStatus(pool, registryOf(2));
    expect(stale).to.include({ version: 2, storedVersion: 1, isCurrent: false });
    const first = await rebuiltAt();

    kernel = await startTestKernel({ databaseUrl, projections: [accountsProjection(2)] });
    const [current] = await projectionStatus(pool, kernel.registry);
    expect(current).to.include({ version: 2, storedVersion: 2, isCurrent: true });
    expect(await rebuiltAt()).to.not.equal(first);
    expect(await tableChecksum(pool)).to.deep.equal(await checksumOfRows(pool, foldFromScratch(accountsProjection(2), await readAccountEvents(pool))));
  });
});
