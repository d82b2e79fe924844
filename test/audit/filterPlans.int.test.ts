// GET /admin/events' filters are served by indexes (db/0018 and the events table's own): on a log of
// 50,000 events, the page statement of each selective filter is planned on that filter's index,
// never as a scan of the whole table.
import { expect } from 'chai';
import pg from 'pg';
import { globalEventsQuery } from '../../src/eventstore/sql.js';
import { LOG_START } from '../../src/eventstore/types.js';
import type { LogFilter } from '../../src/eventstore/logFilter.js';
import { createTestDatabase } from '../support/db.js';
import { planNodes } from '../support/plans.js';

/** Each filter with a value few events have, and the index that should find them. */
const CASES: { filter: LogFilter; index: string }[] = [
  { filter: { eventTypes: ['rare_type'] }, index: 'events_type_order_idx' },
  { filter: { actorId: 'rare-actor' }, index: 'events_actor_order_idx' },
  { filter: { streamId: 'bulk-7-7' }, index: 'events_stream_position_key' },
  { filter: { streamTypes: ['rare'] }, index: 'events_stream_type_idx' },
  { filter: { since: '2020-01-01T00:00:00Z', until: '2020-01-02T00:00:00Z' }, index: 'events_recorded_at_idx' },
];

describe('audit log filters: each served by an index', function () {
  this.timeout(60_000);
  let db: pg.Pool;

  before(async () => {
    db = new pg.Pool({ connectionString: await createTestDatabase(), max: 2 });
    // 1,000 transactions of 50 events by ten actors, as a log is written; a few events of a rare
    // type, actor, stream type and day.
    await db.query(`DO $$ BEGIN
      FOR t IN 1..1000 LOOP
        INSERT INTO events (stream_id, stream_type, stream_position, type, data, metadata)
          SELECT 'bulk-' || t || '-' || g, 'bulk', 1, 'noted', '{}', jsonb_build_object('actor', jsonb_build_object('type', 'user', 'id', 'actor-' || (g % 10)))
          FROM generate_series(1, 50) g;
        COMMIT;
      END LOOP;
    END $$`);
    await db.query(`INSERT INTO events (stream_id, stream_type, stream_position, type, data, metadata, recorded_at)
      SELECT 'rare-' || g, 'rare', 1, 'rare_type', '{}', '{"actor": {"type": "user", "id": "rare-actor"}}', '2020-01-01T12:00:00Z'
      FROM generate_series(1, 5) g`);
    await db.query('ANALYZE events');
  });
  after(() => db?.end());

  for (const { filter, index } of CASES) {
    it(`plans ${JSON.stringify(filter)} on ${index}, with no scan of the whole table`, async () => {
      const { text, values } = globalEventsQuery(LOG_START, 100, filter);
      const nodes = await planNodes(db, text, values);
      const shown = nodes.map((n) => `${String(n['Node Type'])} ${String(n['Index Name'] ?? n['Relation Name'] ?? '')}`).join('; ');
      expect(
        nodes.some((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'events'),
        shown,
      ).to.equal(false);
      // A bitmap scan names its index on its child node, not on the node that reads the table.
      expect(
        nodes.some((n) => n['Index Name'] === index),
        shown,
      ).to.equal(true);
      // And the statement finds exactly the rare events.
      const found = await db.query(text, values);
      expect(found.rows.length, JSON.stringify(filter)).to.equal(filter.streamId ? 1 : 5);
    });
  }
});
