// Model records are event-sourced: every write is an event on record-<model>-<id>; the table rebuilds byte-identical.
import path from 'node:path';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { rebuildProjection } from '../../src/projections/rebuild.js';
import { bootstrapAdmin, client, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { FIXTURES } from './helpers.js';

describe('model records as events', () => {
  let service: Service;
  let admin: Admin;
  const as = () => client(service.url, admin.token);

  before(async function () {
    this.timeout(60_000);
    service = await startTestService({ projectDir: path.join(FIXTURES, 'shop') });
    admin = await bootstrapAdmin(service.url);
  });
  after(async () => {
    await service?.close();
  });

  const eventsOf = async (streamId: string) =>
    (await service.kernel.pool.query('SELECT stream_position, type, data, metadata FROM events WHERE stream_id = $1 ORDER BY stream_position', [streamId]))
      .rows;

  it('appends RecordCreated, RecordUpdated and RecordDeleted to record-<model>-<id>, with the actor', async () => {
    const created = await as().post('/models/ticket/', { subject: 'evented', priority: 1 });
    const id = created.body.id as string;
    await as().patch(`/models/ticket/${id}`, { priority: 2, status: 'pending' });
    await as().delete(`/models/ticket/${id}`);
    const events = await eventsOf(`record-ticket-${id}`);
    expect(events.map((e) => [e.stream_position, e.type])).to.deep.equal([
      [1, 'RecordCreated'],
      [2, 'RecordUpdated'],
      [3, 'RecordDeleted'],
    ]);
    expect(events[0].data).to.deep.include({ model: 'ticket', table: 'tickets', id, tenant: null });
    expect(events[0].data.values).to.deep.include({ id, subject: 'evented', priority: 1, created_at: created.body.created_at });
    expect(events[1].data.changes).to.deep.include({ priority: 2, status: 'pending' });
    expect(events[2].data).to.deep.include({ table: 'tickets', id });
    for (const event of events) expect(event.metadata.actor).to.deep.equal({ type: 'user', id: admin.userId });
    const { rows } = await service.kernel.pool.query('SELECT count(*)::int AS n FROM tickets WHERE id = $1', [id]);
    expect(rows[0].n).to.equal(0);
  });

  it('a failed write (422, 404) appends nothing', async () => {
    const before = (await service.kernel.pool.query('SELECT count(*)::int AS n FROM events')).rows[0].n;
    expect((await as().post('/models/ticket/', { subject: 1 })).status).to.equal(422);
    expect((await as().patch('/models/ticket/00000000-0000-4000-8000-000000000000', { subject: 'x' })).status).to.equal(404);
    expect((await as().delete('/models/ticket/00000000-0000-4000-8000-000000000000')).status).to.equal(404);
    expect((await service.kernel.pool.query('SELECT count(*)::int AS n FROM events')).rows[0].n).to.equal(before);
  });

  it('rebuilding the table from the log gives the same bytes after creates, updates and deletes', async function () {
    this.timeout(30_000);
    const customer = (await as().post('/models/customer/', { name: 'Rebuild Inc', tier: 'pro' })).body;
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const created = await as().post('/models/ticket/', {
        subject: `ticket ${i} ‘quoted’ "and" \\ escaped`,
        body: i % 3 === 0 ? null : `body ${i}\nline two`,
        priority: i,
        score: i / 7,
        urgent: i % 2 === 0,
        status: ['open', 'pending', 'closed'][i % 3],
        due: `2024-0${(i % 9) + 1}-1${i % 10}`,
        customer_id: i % 4 === 0 ? customer.id : null,
        labels: { n: i, tags: ['a', `b${i}`], nested: { deep: i % 2 === 0 } },
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      ids.push(created.body.id);
    }
    for (const id of ids.slice(0, 10))
      expect((await as().patch(`/models/ticket/${id}`, { status: 'closed', labels: { changed: true }, body: null })).status).to.equal(200);
    for (const id of ids.slice(5, 8)) expect((await as().patch(`/models/ticket/${id}`, { priority: -1 })).status).to.equal(200);
    for (const id of ids.slice(20, 26)) expect((await as().delete(`/models/ticket/${id}`)).status).to.equal(204);

    const fingerprint = async () =>
      (await service.kernel.pool.query(`SELECT count(*)::int AS n, md5(string_agg(t::text, '|' ORDER BY id)) AS h FROM tickets t`)).rows[0] as {
        n: number;
        h: string;
      };
    const before = await fingerprint();
    expect(before.n).to.equal(24);

    // Damage the table behind the service's back: only a replay of the events can restore it.
    await service.kernel.pool.query(`UPDATE tickets SET subject = 'tampered', labels = '{}' WHERE id = $1`, [ids[0]]);
    await service.kernel.pool.query('DELETE FROM tickets WHERE id = $1', [ids[1]]);
    await service.kernel.pool.query(`INSERT INTO tickets (id, subject) VALUES ('00000000-0000-4000-8000-0000000000aa', 'stray')`);
    expect((await fingerprint()).h).to.not.equal(before.h);

    const projection = service.kernel.registry.get('records:tickets');
    expect(projection, 'the service registers one projection per model table').to.not.equal(undefined);
    const result = await rebuildProjection(service.kernel.pool, service.kernel.registry, projection!);
    expect(result).to.include({ projection: 'records:tickets', rows: 24 });
    expect(await fingerprint()).to.deep.equal(before);

    // The rebuilt table takes inline writes as before.
    const after = await as().patch(`/models/ticket/${ids[2]}`, { subject: 'after rebuild' });
    expect(after.status).to.equal(200);
    expect((await as().get(`/models/ticket/${ids[2]}`)).body.subject).to.equal('after rebuild');
  });
});
