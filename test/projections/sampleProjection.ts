// A realistic row projection for the projection tests: bank accounts folded from `account-<uuid>` streams.
import type { Pool } from '../../src/db/pool.js';
import type { AppendToStream, NewEvent, RecordedEvent } from '../../src/eventstore/types.js';
import type { JsonObject } from '../../src/kernel/json.js';
import { defineProjection, type Row, type RowProjection } from '../../src/projections/types.js';

/** What a db/ migration would create; tests run it in their own database before starting a kernel. */
export const ACCOUNTS_DDL = `
  CREATE TABLE accounts (
    id            uuid PRIMARY KEY,
    owner         text NOT NULL,
    balance_cents bigint NOT NULL CHECK (balance_cents >= 0),
    tags          jsonb NOT NULL,
    opened_at     timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    version       integer NOT NULL
  );
  CREATE INDEX ON accounts (owner);
  CREATE INDEX ON accounts USING gin (tags);`;

export const ACCOUNT_EVENT_TYPES = ['AccountOpened', 'MoneyDeposited', 'MoneyWithdrawn', 'AccountTagged', 'OwnerChanged', 'AccountClosed'];

export interface AccountRow extends Row {
  id: string;
  owner: string;
  balance_cents: number;
  tags: string[];
  opened_at: string;
  updated_at: string;
  version: number;
}

const text = (event: RecordedEvent, field: string) => event.data[field] as string;
const cents = (event: RecordedEvent) => event.data.amountCents as number;

/**
 * Version 1 keeps owners as given; version 2 (a changed evolve, same table) lower-cases them, so a
 * table rebuilt at version 2 is recognisably different from one folded at version 1.
 */
export function accountsProjection(version: 1 | 2 = 1): RowProjection {
  const owner = (value: string) => (version === 2 ? value.toLowerCase() : value);
  const projection = defineProjection<AccountRow>({
    name: 'accounts',
    version,
    table: 'accounts',
    key: ['id'],
    eventTypes: ACCOUNT_EVENT_TYPES,
    keysOf: (event) => [{ id: text(event, 'accountId') }],
    evolve(row, _key, event) {
      const touched = { updated_at: event.recordedAt, version: event.streamPosition };
      if (event.type === 'AccountOpened') {
        return {
          id: text(event, 'accountId'),
          owner: owner(text(event, 'owner')),
          balance_cents: cents(event),
          tags: [...(event.data.tags as string[])].sort(),
          opened_at: text(event, 'openedAt'),
          ...touched,
        };
      }
      if (!row) return null;
      switch (event.type) {
        case 'MoneyDeposited':
          return { ...row, balance_cents: row.balance_cents + cents(event), ...touched };
        case 'MoneyWithdrawn':
          return { ...row, balance_cents: row.balance_cents - cents(event), ...touched };
        case 'AccountTagged':
          return { ...row, tags: [...new Set([...row.tags, text(event, 'tag')])].sort(), ...touched };
        case 'OwnerChanged':
          return { ...row, owner: owner(text(event, 'owner')), ...touched };
        case 'AccountClosed':
          return null;
        default:
          return row;
      }
    },
  });
  return projection as unknown as RowProjection;
}

export const accountStream = (accountId: string) => `account-${accountId}`;

export const accountEvents = {
  opened: (accountId: string, owner: string, openedAt: string, amountCents = 0, tags: string[] = []): NewEvent => ({
    type: 'AccountOpened',
    data: { accountId, owner, openedAt, amountCents, tags },
  }),
  deposited: (accountId: string, amountCents: number): NewEvent => ({ type: 'MoneyDeposited', data: { accountId, amountCents } }),
  withdrawn: (accountId: string, amountCents: number): NewEvent => ({ type: 'MoneyWithdrawn', data: { accountId, amountCents } }),
  tagged: (accountId: string, tag: string): NewEvent => ({ type: 'AccountTagged', data: { accountId, tag } }),
  ownerChanged: (accountId: string, owner: string): NewEvent => ({ type: 'OwnerChanged', data: { accountId, owner } }),
  closed: (accountId: string): NewEvent => ({ type: 'AccountClosed', data: { accountId } }),
};

export function appendTo(accountId: string, expectedVersion: AppendToStream['expectedVersion'], ...events: NewEvent[]): AppendToStream {
  return { streamId: accountStream(accountId), expectedVersion, events };
}

/** A deterministic pseudo-random source (mulberry32), so a failing run can be replayed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** md5 of every row's text, in key order (`key`: the table's key column), plus the row count: equal checksums mean byte-identical tables. */
export async function tableChecksum(db: Pick<Pool, 'query'>, table = 'accounts', key = 'id'): Promise<{ md5: string; rows: number }> {
  const { rows } = await db.query<{ md5: string; rows: number }>(
    `SELECT md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t.${key}), '')) AS md5, count(*)::int AS rows FROM ${table} t`,
  );
  return rows[0]!;
}

/** Every account event in the log, stream by stream in stream order (the order that defines an account). */
export async function readAccountEvents(pool: Pool): Promise<RecordedEvent[]> {
  const { rows } = await pool.query<{ event: JsonObject }>(
    `SELECT jsonb_build_object('globalPosition', global_position, 'streamId', stream_id, 'streamType', stream_type,
       'streamPosition', stream_position, 'type', type, 'data', data, 'metadata', metadata,
       'transactionId', transaction_id::text, 'recordedAt', recorded_at) AS event
     FROM events WHERE type = ANY($1::text[]) ORDER BY stream_id, stream_position`,
    [ACCOUNT_EVENT_TYPES],
  );
  // recorded_at through jsonb is `...+00:00`; the store hands evolve `...Z`.
  return rows.map(({ event }) => ({ ...event, recordedAt: (event.recordedAt as string).replace(/\+00:00$/, 'Z') }) as unknown as RecordedEvent);
}

/** Folds events from scratch in memory with the projection's own evolve: the table a rebuild must produce. */
export function foldFromScratch(projection: RowProjection, events: readonly RecordedEvent[]): Row[] {
  const rows = new Map<string, Row | null>();
  for (const event of events) {
    for (const key of projection.keysOf(event)) {
      const id = JSON.stringify(key);
      rows.set(id, projection.evolve(rows.get(id) ?? null, key, event));
    }
  }
  return [...rows.values()].filter((row): row is Row => row !== null);
}

/** The checksum the given rows would have as a table shaped like `table` (loaded into a temporary copy). */
export async function checksumOfRows(pool: Pool, rows: readonly Row[], table = 'accounts'): Promise<{ md5: string; rows: number }> {
  const client = await pool.connect();
  try {
    await client.query(`CREATE TEMP TABLE expected_rows (LIKE ${table}) ON COMMIT PRESERVE ROWS`);
    await client.query(`INSERT INTO expected_rows SELECT * FROM json_populate_recordset(NULL::expected_rows, $1::json)`, [JSON.stringify(rows)]);
    const sum = await tableChecksum(client, 'expected_rows');
    await client.query('DROP TABLE expected_rows');
    return sum;
  } finally {
    client.release();
  }
}
