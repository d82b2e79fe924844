import pg from 'pg';
import { randomUUID } from 'node:crypto';
const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:5432/perf', max: 10 });
const OLD = `WITH current_version AS (
       SELECT coalesce(max(stream_position), 0) AS version FROM events WHERE stream_id = $1
     )
     INSERT INTO events (stream_id, stream_type, stream_position, type, data, metadata, recorded_at)
     SELECT $1, $2, v.version + e.ordinality, e.value->>'type', e.value->'data', e.value->'metadata',
            coalesce((e.value->>'recorded_at')::timestamptz, now())
     FROM current_version v, jsonb_array_elements($3::jsonb) WITH ORDINALITY AS e(value, ordinality)
     WHERE $4::bigint IS NULL OR v.version = $4::bigint
     ORDER BY e.ordinality
     RETURNING global_position`;
const NEW = process.env.NEWSQL!;
const ev = [{ type: 'X', data: { a: 1 }, metadata: {} }];
async function run(kind: string, n: number) {
  const t = performance.now();
  let i = 0;
  await Promise.all(Array.from({ length: 10 }, async () => {
    while (i++ < n) {
      const id = 'run-' + randomUUID();
      if (kind === 'old') await pool.query({ name: 'o', text: OLD, values: [id, 'run', JSON.stringify(ev), 0] });
      else await pool.query({ name: 'n', text: NEW, values: [JSON.stringify([{ stream_id: id, stream_type: 'run', expected: 0, events: ev }])] });
    }
  }));
  return Math.round(n / ((performance.now() - t) / 1000));
}
for (let r = 0; r < 3; r++) console.log('old', await run('old', 5000), 'new', await run('new', 5000));
await pool.end();
