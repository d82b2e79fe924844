// A database written before artifacts had tenants: the next start migrates it and rebuilds
// svc_artifacts from the same, unchanged log.
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { listMigrations, migrate, MIGRATIONS_DIR } from '../../src/db/migrate.js';
import { createPool, withDatabase } from '../../src/db/pool.js';
import type { Service } from '../../src/main.js';
import { testServerUrl } from '../support/db.js';
import { bootstrapAdmin, client } from '../support/http.js';
import { startTestService } from '../support/service.js';

/** The last migration before uploads had a tenant. */
const BEFORE_TENANTS = 7;
const OLD_EVENT = { name: 'legacy', version: '1', type: 'prompt', content: 'LEGACY PROMPT', hash: 'h', description: null, at: '2026-01-02T03:04:05.000Z' };

async function adminQuery(sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: testServerUrl() });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

describe('artifacts: upgrading a database from before tenants', function () {
  this.timeout(60_000);
  const name = `svc_artifacts_upgrade_${process.pid}`;
  let databaseUrl: string;
  let service: Service | undefined;

  before(async () => {
    await adminQuery(`DROP DATABASE IF EXISTS ${name}`);
    await adminQuery(`CREATE DATABASE ${name}`);
    databaseUrl = withDatabase(testServerUrl(), name);
    const dir = await mkdtemp(path.join(tmpdir(), 'svc-migrations-'));
    const pool = createPool({ connectionString: databaseUrl, max: 1 });
    try {
      for (const migration of (await listMigrations()).filter((m) => m.id <= BEFORE_TENANTS)) {
        await copyFile(path.join(MIGRATIONS_DIR, migration.name), path.join(dir, migration.name));
      }
      await migrate(pool, dir);
      // What the old build wrote: the event, its row, and the projection at version 1.
      await pool.query(
        `INSERT INTO events (stream_id, stream_type, stream_position, type, data, metadata) VALUES ('artifact-legacy', 'artifact', 1, 'ArtifactUploaded', $1, '{}')`,
        [JSON.stringify(OLD_EVENT)],
      );
      await pool.query(
        `INSERT INTO svc_artifacts (name, version, type, content, hash, description, created_at) VALUES ('legacy', '1', 'prompt', '"LEGACY PROMPT"', 'h', NULL, $1)`,
        [OLD_EVENT.at],
      );
      await pool.query(`INSERT INTO projection_state (name, version) VALUES ('svc_artifacts', 1)`);
    } finally {
      await pool.end();
      await rm(dir, { recursive: true, force: true });
    }
  });
  after(async () => {
    await service?.close();
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  it('serves the old uploads as before, from a rebuilt table, and leaves the log untouched', async () => {
    service = await startTestService({ databaseUrl });
    const admin = await bootstrapAdmin(service.url);
    const read = await client(service.url, admin.token).get('/api/artifacts/legacy');
    expect(read.status, JSON.stringify(read.body)).to.equal(200);
    expect(read.body).to.include({ version: '1', content: 'LEGACY PROMPT', source: 'upload' });
    const next = await client(service.url, admin.token).post('/api/artifacts', { name: 'legacy', type: 'prompt', content: 'NEW' });
    expect(next.body.version, 'numbering goes on in the same stream').to.equal('2');
    const { rows } = await service.kernel.pool.query(`SELECT stream_id, data FROM events WHERE type = 'ArtifactUploaded' ORDER BY global_position`);
    expect(rows[0]).to.deep.equal({ stream_id: 'artifact-legacy', data: OLD_EVENT });
    expect(rows[1].stream_id).to.equal('artifact-legacy');
    const state = await service.kernel.pool.query(`SELECT version FROM projection_state WHERE name = 'svc_artifacts'`);
    expect(state.rows[0].version).to.equal(2);
    const tenants = await service.kernel.pool.query(`SELECT DISTINCT tenant FROM svc_artifacts`);
    expect(tenants.rows, 'single-tenant rows carry the empty tenant key').to.deep.equal([{ tenant: '' }]);
  });
});
