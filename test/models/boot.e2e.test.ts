// Boot against an existing model table: additive changes apply and keep rows; destructive ones stop startup untouched.
import path from 'node:path';
import { expect } from 'chai';
import { createPool, type Pool } from '../../src/db/pool.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, client } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { FIXTURES } from './helpers.js';

const SIGNING_KEY = '3c'.repeat(32);
const project = (name: string) => path.join(FIXTURES, 'boot', name);

describe('model tables at boot', () => {
  let databaseUrl: string;
  let pool: Pool;
  let adminToken: string;

  const columns = async () =>
    (await pool.query(`SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_name = 'gadgets' ORDER BY ordinal_position`))
      .rows;
  const rows = async () => (await pool.query('SELECT label, weight FROM gadgets ORDER BY label')).rows;

  before(async function () {
    this.timeout(60_000);
    databaseUrl = await createTestDatabase();
    pool = createPool({ connectionString: databaseUrl, max: 2 });
    const service = await startTestService({ databaseUrl, projectDir: project('base'), env: { SVC_SIGNING_KEY: SIGNING_KEY } });
    try {
      adminToken = (await bootstrapAdmin(service.url)).token;
      for (const body of [
        { label: 'anvil', weight: 50 },
        { label: 'feather', weight: 0 },
      ]) {
        expect((await client(service.url, adminToken).post('/models/gadget/', body)).status).to.equal(201);
      }
    } finally {
      await service.close();
    }
  });
  after(async () => {
    await pool?.end();
  });

  async function bootFailure(name: string): Promise<Error> {
    try {
      const service = await startTestService({ databaseUrl, projectDir: project(name), env: { SVC_SIGNING_KEY: SIGNING_KEY } });
      await service.close();
    } catch (error) {
      return error as Error;
    }
    throw new Error(`the ${name} project started`);
  }

  it('refuses a removed field with a message naming table and column, and touches nothing (not even the additive part)', async () => {
    const before = await columns();
    const error = await bootFailure('removed');
    expect(error.message)
      .to.include('gadgets.weight')
      .and.to.match(/removing a field is destructive/);
    expect(await columns()).to.deep.equal(before);
    expect(before.map((c) => c.name)).to.not.include('colour');
    expect(await rows()).to.deep.equal([
      { label: 'anvil', weight: 50 },
      { label: 'feather', weight: 0 },
    ]);
  });

  it('refuses a retyped field with a message naming table, column and both types', async () => {
    const before = await columns();
    const error = await bootFailure('retyped');
    expect(error.message).to.include('gadgets.weight is bigint in the database but double precision in the model');
    expect(await columns()).to.deep.equal(before);
  });

  it('adds the column of a new field and keeps the rows, which the API serves with the new field', async () => {
    const service = await startTestService({ databaseUrl, projectDir: project('added'), env: { SVC_SIGNING_KEY: SIGNING_KEY } });
    try {
      expect((await columns()).map((c) => [c.name, c.type])).to.deep.equal([
        ['id', 'uuid'],
        ['label', 'text'],
        ['weight', 'bigint'],
        ['svc_tenant', 'text'],
        ['colour', 'text'],
      ]);
      const as = client(service.url, adminToken);
      const listed = await as.get('/models/gadget/?limit=10');
      expect(listed.body.map((g: Record<string, unknown>) => [g.label, g.weight, g.colour]).sort()).to.deep.equal([
        ['anvil', 50, null],
        ['feather', 0, null],
      ]);
      const created = await as.post('/models/gadget/', { label: 'paint', colour: 'red' });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect(created.body).to.deep.include({ label: 'paint', colour: 'red', weight: null });
    } finally {
      await service.close();
    }
  });
});
