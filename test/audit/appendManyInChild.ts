// Child process of the concurrent chain test: appends to shared streams with `any`, single and multi-stream, then exits.
import { createPool } from '../../src/db/pool.js';
import { EventStore } from '../../src/eventstore/index.js';
import { appendRounds } from './helpers.js';

setTimeout(() => process.exit(3), 60_000).unref();
const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL is required');
const pool = createPool({ connectionString: url, max: 4 });
const store = new EventStore({ pool });
const rounds = Number(process.env.ROUNDS ?? 100);
try {
  await appendRounds(store, rounds, `child-${process.pid}`);
  process.stdout.write('done\n');
} finally {
  await pool.end();
}
