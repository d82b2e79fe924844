// streamRows: rows one at a time, in order; a throwing callback or a failing statement rejects and leaves the connection usable.
import { expect } from 'chai';
import { createPool, type Pool, type PoolClient } from '../../src/db/pool.js';
import { streamRows } from '../../src/db/streamRows.js';
import { createTestDatabase } from '../support/db.js';

describe('streamRows', () => {
  let pool: Pool;
  let client: PoolClient;
  before(async () => {
    pool = createPool({ connectionString: await createTestDatabase(), max: 2 });
    client = await pool.connect();
  });
  after(async () => {
    client?.release();
    await pool?.end();
  });

  it('hands over every row in order, parsed with the pool types, and answers how many', async () => {
    const seen: { n: number; at: string; data: unknown }[] = [];
    const count = await streamRows<{ n: number; at: string; data: unknown }>(
      client,
      `SELECT n::int8 AS n, timestamptz '2026-01-02 03:04:05.5+00' AS at, jsonb_build_object('n', n) AS data
       FROM generate_series(1, $1::int) n ORDER BY n`,
      [3000],
      (row) => seen.push(row),
    );
    expect(count).to.equal(3000);
    expect(seen.map((r) => r.n)).to.deep.equal(Array.from({ length: 3000 }, (_, i) => i + 1));
    expect(seen[0]).to.deep.equal({ n: 1, at: '2026-01-02T03:04:05.500Z', data: { n: 1 } });
  });

  it('rejects with the error a callback threw, skips the later rows, and the connection goes on', async () => {
    const seen: number[] = [];
    const failure = new Error('evolve failed');
    const streamed = streamRows<{ n: number }>(client, 'SELECT n FROM generate_series(1, 1000) n ORDER BY n', [], (row) => {
      if (row.n === 10) throw failure;
      seen.push(row.n);
    });
    const error = await streamed.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.equal(failure);
    expect(seen).to.have.length(9);
    const { rows } = await client.query<{ ok: number }>('SELECT 1 AS ok');
    expect(rows).to.deep.equal([{ ok: 1 }]);
  });

  it('rejects when the statement fails, and the connection goes on', async () => {
    const error = await streamRows(client, 'SELECT 1 / (n - 5) FROM generate_series(1, 10) n', [], () => undefined).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(Error).with.property('code', '22012');
    const { rows } = await client.query<{ ok: number }>('SELECT 1 AS ok');
    expect(rows).to.deep.equal([{ ok: 1 }]);
  });
});
