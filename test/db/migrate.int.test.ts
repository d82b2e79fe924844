// Migrations: concurrent migrators, databases newer than the build, failing files.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { createPool, withDatabase, type Pool } from '../../src/db/pool.js';
import { createTestDatabase, testServerUrl } from '../support/db.js';

/** A database created empty (not from the migrated template), dropped by `dropAll`. */
const created: string[] = [];
async function createEmptyDatabase(): Promise<string> {
  const name = `svc_migrate_${process.pid}_${created.length + 1}`;
  const admin = new pg.Client({ connectionString: testServerUrl() });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  created.push(name);
  return withDatabase(testServerUrl(), name);
}

async function dropAll(): Promise<void> {
  const admin = new pg.Client({ connectionString: testServerUrl() });
  await admin.connect();
  try {
    for (const name of created.splice(0)) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

describe('migrate', () => {
  const pools: Pool[] = [];
  const openPool = (url: string) => {
    const pool = createPool({ connectionString: url, max: 2 });
    pools.push(pool);
    return pool;
  };
  let tempDir: string | undefined;

  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.end()));
    if (tempDir) await rm(tempDir, { recursive: true, force: true });
    tempDir = undefined;
  });
  after(dropAll);

  it('applies every migration exactly once when two processes migrate a fresh database at once', async () => {
    const url = await createEmptyDatabase();
    const [first, second] = await Promise.all([migrate(openPool(url)), migrate(openPool(url))]);

    const all = (await listMigrations()).map((m) => m.name);
    expect(all.length).to.be.greaterThan(0);
    // One of them did all the work, in order; the other waited for the lock and found nothing to do.
    expect([...first, ...second]).to.deep.equal(all);
    expect([first.length, second.length]).to.have.members([all.length, 0]);

    const check = openPool(url);
    const { rows } = await check.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY id');
    expect(rows.map((r) => r.name)).to.deep.equal(all);
    const events = await check.query(`SELECT to_regclass('public.events') AS events, to_regclass('public.projection_state') AS state`);
    expect(events.rows[0]).to.deep.equal({ events: 'events', state: 'projection_state' });
    // And a third run, later, has nothing left either.
    expect(await migrate(check)).to.deep.equal([]);
  });

  it('refuses a database migrated by a newer build, without touching it', async () => {
    const pool = openPool(await createTestDatabase());
    const known = Math.max(...(await listMigrations()).map((m) => m.id));
    await pool.query('INSERT INTO schema_migrations (id, name) VALUES ($1, $2)', [known + 1, `${known + 1}_from_the_future.sql`]);
    const before = await pool.query('SELECT id, name FROM schema_migrations ORDER BY id');

    const error = await migrate(pool).catch((caught: unknown) => caught);
    expect(error).to.be.instanceOf(Error);
    expect((error as Error).message).to.match(new RegExp(`at migration ${known + 1}, newer than this build knows \\(${known}\\)`));
    expect((await pool.query('SELECT id, name FROM schema_migrations ORDER BY id')).rows).to.deep.equal(before.rows);
    // The migration lock was released (the pool keeps the session that took it).
    const locks = await pool.query(
      `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    expect(locks.rowCount).to.equal(0);
  });

  it('rolls a failing migration back whole and stops there; the fixed file applies on the next run', async () => {
    tempDir = await mkdtemp(path.join(tmpdir(), 'svc-migrations-'));
    await writeFile(path.join(tempDir, '0001_first.sql'), 'CREATE TABLE first_table (id int PRIMARY KEY);');
    await writeFile(path.join(tempDir, '0002_broken.sql'), 'CREATE TABLE half_done (id int); INSERT INTO nowhere VALUES (1);');
    await writeFile(path.join(tempDir, '0003_later.sql'), 'CREATE TABLE later_table (id int);');
    const pool = openPool(await createEmptyDatabase());

    const error = await migrate(pool, tempDir).catch((caught: unknown) => caught);
    expect((error as Error).message).to.match(/^Migration 0002_broken\.sql failed: relation "nowhere" does not exist/);
    const tables = async () =>
      (await pool.query<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`)).rows.map((r) => r.t);
    expect(await tables()).to.deep.equal(['first_table', 'schema_migrations']);
    expect((await pool.query('SELECT id FROM schema_migrations')).rows).to.deep.equal([{ id: 1 }]);

    await writeFile(path.join(tempDir, '0002_broken.sql'), 'CREATE TABLE half_done (id int);');
    expect(await migrate(pool, tempDir)).to.deep.equal(['0002_broken.sql', '0003_later.sql']);
    expect(await tables()).to.deep.equal(['first_table', 'half_done', 'later_table', 'schema_migrations']);
  });

  it('refuses two migration files with the same number', async () => {
    tempDir = await mkdtemp(path.join(tmpdir(), 'svc-migrations-'));
    await writeFile(path.join(tempDir, '0001_a.sql'), 'SELECT 1;');
    await writeFile(path.join(tempDir, '0001_b.sql'), 'SELECT 1;');
    const error = await listMigrations(tempDir).catch((caught: unknown) => caught);
    expect((error as Error).message).to.equal('Two migrations are numbered 1');
  });
});
