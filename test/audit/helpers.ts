// Shared pieces of the audit tests: a store on a fresh database, sample streams, and tampering as a superuser.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { createPool, type Pool } from '../../src/db/pool.js';
import { EventStore } from '../../src/eventstore/index.js';
import { generateSigningKeyHex, loadSigningKeys, type SigningKeys } from '../../src/iam/keys.js';
import { createTestDatabase } from '../support/db.js';

export interface AuditFixture {
  url: string;
  pool: Pool;
  store: EventStore;
  keys: SigningKeys;
}

export async function openFixture(): Promise<AuditFixture> {
  const url = await createTestDatabase();
  const pool = createPool({ connectionString: url, max: 4 });
  return { url, pool, store: new EventStore({ pool }), keys: await loadSigningKeys(generateSigningKeyHex()) };
}

/** Values jsonb normalises (key order, number spelling) and JCS must still hash the same after the round trip. */
export const AWKWARD_DATA = {
  zeta: 1.0,
  hundred: 1e2,
  big: 12345678901234567890,
  small: 1.5e-7,
  sum: 0.1 + 0.2,
  text: 'é ü 𝄞 "quoted" \\ tab\t \u2028 😀',
  nested: { bb: [true, null, { y: 2, x: 1 }], a: 'a', é: 'key', '😀': 'emoji key' },
};

/** Three streams of five events each, with expected versions, `any` and an import-style recorded time. */
export async function appendSampleStreams(store: EventStore): Promise<void> {
  for (const stream of ['order-a', 'order-b', 'order-c']) {
    for (let n = 1; n <= 5; n++) {
      await store.append({
        streamId: stream,
        expectedVersion: n % 2 === 0 ? 'any' : n - 1,
        events: [{ type: 'OrderChanged', data: { ...AWKWARD_DATA, n }, metadata: { actor: { type: 'user', id: `u${n}` } } }],
      });
    }
  }
  await store.append({ streamId: 'import-1', expectedVersion: 0, events: [{ type: 'Imported', data: { at: 1 }, recordedAt: '2026-01-02T03:04:05.123Z' }] });
}

/** Runs statements as the superuser with the immutability trigger off, the way an attacker with database rights would. */
export async function tamper(url: string, ...statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query('ALTER TABLE events DISABLE TRIGGER USER');
    for (const statement of statements) await client.query(statement);
    await client.query('ALTER TABLE events ENABLE TRIGGER USER');
    await client.query('COMMIT');
  } finally {
    await client.end();
  }
}

export const bogusHash = (seed: string): string => createHash('sha256').update(seed).digest('hex');

/** What both processes of the concurrent test write: every round one `any` append per shared stream and one two-stream append. */
export async function appendRounds(target: EventStore, count: number, writer: string): Promise<void> {
  for (let round = 0; round < count; round++) {
    await Promise.all([
      ...['shared-1', 'shared-2', 'shared-3'].map((streamId) =>
        target.append({ streamId, expectedVersion: 'any', events: [{ type: 'Wrote', data: { writer, round } }] }),
      ),
      target.append([
        { streamId: 'shared-1', expectedVersion: 'any', events: [{ type: 'Both', data: { writer, round } }] },
        {
          streamId: 'shared-4',
          expectedVersion: 'any',
          events: [
            { type: 'Both', data: { writer, round, part: 2 } },
            { type: 'Both', data: { part: 3 } },
          ],
        },
      ]),
    ]);
  }
}
