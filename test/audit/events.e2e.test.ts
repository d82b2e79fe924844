// GET /admin/events and /admin/events/stream over HTTP: the gated order under concurrent writers and a
// held transaction (nothing skipped, nothing repeated, by pages of one and by SSE resumed with
// Last-Event-ID), filters that combine, the scope, and 400s for bad filters and cursors.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import pg from 'pg';
import { connectionConfig, createPool, type Pool } from '../../src/db/pool.js';
import { EventStore, eventHash, ZERO_HASH } from '../../src/eventstore/index.js';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, client, eventually, expectError, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { SseReader, type SseFrame } from '../support/sse.js';
import { createUser } from '../support/users.js';
import { SvcClient, SvcRequestError, type LogEvent } from '../../src/client/index.js';

async function expectRejected(promise: Promise<unknown>, status: number): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (rejected: unknown) => rejected,
  );
  expect(error).to.be.instanceOf(SvcRequestError);
  expect((error as SvcRequestError).status).to.equal(status);
}

const WRITERS = 10;
const EVENTS_PER_WRITER = 15;
const DEADLINE_MS = 60_000;

type ShownEvent = LogEvent;

describe('audit API: reading the log', function () {
  this.timeout(3 * DEADLINE_MS);
  let service: Service;
  let admin: Admin;
  let auditorToken: string;

  before(async () => {
    service = await startTestService();
    admin = await bootstrapAdmin(service.url);
    auditorToken = (await createUser(service.url, admin.token, 'auditor@example.com', { auditors: ['audit:read'] })).token;
  });
  after(async () => {
    await service?.close();
  });

  const auditor = () => client(service.url, auditorToken);

  async function page(query: string): Promise<{ events: ShownEvent[]; next_cursor: string | null }> {
    const answer = await auditor().get(`/admin/events?${query}`);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    return answer.body;
  }

  /** Writers on pools of their own: each append is its own transaction, interleaved with the others'. */
  async function writeConcurrently(streamType: string): Promise<void> {
    const pools: Pool[] = [];
    try {
      await Promise.all(
        Array.from({ length: WRITERS }, async (_, writer) => {
          const pool = createPool({ connectionString: service.kernel.database.url, max: 1 });
          pools.push(pool);
          const store = new EventStore({ pool });
          for (let n = 1; n <= EVENTS_PER_WRITER; n++) {
            await store.append({ streamId: `${streamType}-w${writer}`, expectedVersion: n - 1, events: [{ type: 'Written', data: { writer, n } }] });
          }
        }),
      );
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  }

  /** A transaction that took its place in the log first and stays open: the gate must hold every later one back. */
  async function holdTransaction(streamType: string): Promise<{ commit: () => Promise<void> }> {
    const held = new pg.Client(connectionConfig(service.kernel.database.url, 'held-writer'));
    await held.connect();
    await held.query('BEGIN');
    await held.query(`INSERT INTO events (stream_id, stream_type, stream_position, type, data) VALUES ($1, $2, 1, 'HeldWritten', '{}')`, [
      `${streamType}-held`,
      streamType,
    ]);
    return {
      commit: async () => {
        await held.query('COMMIT');
        await held.end();
      },
    };
  }

  function expectEachOnceInOrder(events: readonly { stream_id: string; stream_position: number; cursor: string }[], streamType: string): void {
    const keys = events.map((e) => `${e.stream_id}#${e.stream_position}`);
    expect(new Set(keys).size, 'an event repeated').to.equal(keys.length);
    const expected = [`${streamType}-held#1`];
    for (let w = 0; w < WRITERS; w++) for (let n = 1; n <= EVENTS_PER_WRITER; n++) expected.push(`${streamType}-w${w}#${n}`);
    expect([...keys].sort(), 'an event skipped').to.deep.equal(expected.sort());
    // The held transaction's event comes first: it took the lowest transaction id.
    expect(keys[0]).to.equal(`${streamType}-held#1`);
    // Within each stream, positions in order (the gated order keeps each stream's order).
    for (let w = 0; w < WRITERS; w++) {
      const positions = events.filter((e) => e.stream_id === `${streamType}-w${w}`).map((e) => e.stream_position);
      expect(positions).to.deep.equal([...positions].sort((a, b) => a - b));
    }
  }

  it('pages of one follow the gated order while 10 writers append and a transaction holds a lower position open', async () => {
    const held = await holdTransaction('ledger');
    const seen: ShownEvent[] = [];
    let cursor: string | undefined;
    let isDone = false;
    const pager = (async () => {
      const deadline = Date.now() + DEADLINE_MS;
      while (Date.now() < deadline) {
        const { events, next_cursor } = await page(`stream_type=ledger&limit=1${cursor ? `&after=${cursor}` : ''}`);
        expect(events.length).to.be.at.most(1);
        if (events[0]) {
          seen.push(events[0]);
          cursor = events[0].cursor;
          expect(next_cursor).to.equal(cursor);
        } else if (isDone) return;
        else await sleep(5);
      }
      throw new Error(`paging did not reach the end in time (${seen.length} events)`);
    })();
    await writeConcurrently('ledger');
    // Every writer committed, the held transaction has not: the gate shows none of theirs yet.
    await sleep(200);
    expect(seen, 'an event behind the gate was shown').to.have.length(0);
    await held.commit();
    const total = 1 + WRITERS * EVENTS_PER_WRITER;
    const deadline = Date.now() + DEADLINE_MS;
    while (seen.length < total && Date.now() < deadline) await sleep(20);
    isDone = true;
    await pager;
    expectEachOnceInOrder(seen, 'ledger');
    // At the head: an empty page with no next cursor.
    expect(await page(`stream_type=ledger&after=${cursor!}`)).to.deep.equal({ events: [], next_cursor: null });
  });

  it('streams the same order over SSE, and a reconnect with Last-Event-ID resumes exactly after that event', async () => {
    const held = await holdTransaction('tally');
    const url = `${service.url}/admin/events/stream?stream_type=tally`;
    const frames: SseFrame[] = [];
    let reader = await SseReader.open(url, { token: auditorToken });
    expect(reader.status).to.equal(200);
    const writing = writeConcurrently('tally');
    await sleep(100);
    await held.commit();
    // Part of the log, then a disconnect mid-way.
    for (let n = 0; n < 40; n++) frames.push((await reader.next(DEADLINE_MS))!);
    reader.close();
    reader = await SseReader.open(url, { token: auditorToken, headers: { 'last-event-id': frames.at(-1)!.id! } });
    await writing;
    const total = 1 + WRITERS * EVENTS_PER_WRITER;
    while (frames.length < total) frames.push((await reader.next(DEADLINE_MS))!);
    // Nothing more comes: no event twice.
    await expectNoFrame(reader, 500);
    reader.close();
    for (const frame of frames) {
      expect(frame.event).to.equal(frame.data.type);
      expect(frame.id).to.equal(frame.data.cursor);
    }
    expectEachOnceInOrder(
      frames.map((f) => f.data),
      'tally',
    );
    // A page and the stream agree on cursors.
    const { events } = await page('stream_type=tally&limit=1000');
    expect(events.map((e) => e.cursor)).to.deep.equal(frames.map((f) => f.id));
  });

  async function expectNoFrame(reader: SseReader, forMs: number): Promise<void> {
    const extra = await reader.next(forMs).catch(() => undefined);
    expect(extra, 'an extra frame').to.equal(undefined);
  }

  it('combines filters: stream, stream type, types, actor, since and until', async () => {
    const store = service.kernel.store;
    const appendAs = (actor: string, streamId: string, type: string) =>
      store.append({ streamId, expectedVersion: 'any', events: [{ type, data: {} }] }, { metadata: { actor: { type: 'user', id: actor } } });
    await appendAs('ann', 'combo-1', 'Opened');
    await appendAs('bob', 'combo-1', 'Changed');
    await sleep(20);
    const middle = new Date().toISOString();
    await sleep(20);
    await appendAs('ann', 'combo-2', 'Changed');
    await appendAs('ann', 'combo-2', 'Closed');
    await appendAs('bob', 'other-1', 'Changed');
    // The gate is the whole cluster's: a transaction open anywhere on it (another suite's) holds these back a while.
    const isVisible = async () => (await page('type=Opened,Changed,Closed&limit=1000')).events.filter((e) => /^(combo|other)-/.test(e.stream_id)).length === 5;
    expect((await eventually(isVisible, DEADLINE_MS, 50)).ok, 'the appends past the gate').to.equal(true);
    const keys = async (query: string) => (await page(`${query}&limit=1000`)).events.map((e) => `${e.stream_id}#${e.stream_position}`);

    expect(await keys('stream_type=combo')).to.deep.equal(['combo-1#1', 'combo-1#2', 'combo-2#1', 'combo-2#2']);
    expect(await keys('stream_type=combo&actor=ann')).to.deep.equal(['combo-1#1', 'combo-2#1', 'combo-2#2']);
    expect(await keys('stream_type=combo&actor=ann&type=Changed,Closed')).to.deep.equal(['combo-2#1', 'combo-2#2']);
    expect(await keys('type=Changed&actor=bob')).to.deep.equal(['combo-1#2', 'other-1#1']);
    expect(await keys('stream_id=combo-2&type=Closed')).to.deep.equal(['combo-2#2']);
    expect(await keys(`stream_type=combo&since=${middle}`)).to.deep.equal(['combo-2#1', 'combo-2#2']);
    expect(await keys(`stream_type=combo&until=${middle}`)).to.deep.equal(['combo-1#1', 'combo-1#2']);
    expect(await keys(`actor=ann&since=${middle}&until=${new Date(Date.now() + 60_000).toISOString()}&type=Closed`)).to.deep.equal(['combo-2#2']);
    // Pages of a filtered read go on from next_cursor.
    const first = await page('stream_type=combo&limit=3');
    expect(first.events).to.have.length(3);
    const rest = await page(`stream_type=combo&limit=3&after=${first.next_cursor!}`);
    expect(rest.events.map((e) => `${e.stream_id}#${e.stream_position}`)).to.deep.equal(['combo-2#2']);
    expect(rest.next_cursor).to.equal(null);
    // What a page shows: the fields of BEYOND 3.2, the hashed time shape, the actor.
    const [shown] = (await page('stream_id=other-1')).events;
    expect(shown).to.have.keys(['cursor', 'global_position', 'stream_id', 'stream_type', 'stream_position', 'type', 'data', 'metadata', 'recorded_at', 'hash']);
    expect(shown!.recorded_at).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    expect(shown!.hash).to.match(/^[0-9a-f]{64}$/);
    expect(shown!.metadata.actor).to.deep.equal({ type: 'user', id: 'bob' });
    // What a page shows is enough to recompute the hash chain (docs/audit.md, "a third party checks").
    let previous = ZERO_HASH;
    for (const event of (await page('stream_id=combo-1')).events) {
      const { stream_id: streamId, stream_position: streamPosition, type, data, metadata, recorded_at: recordedAt } = event;
      previous = eventHash(previous, { streamId, streamPosition, type, data, metadata, recordedAt });
      expect(event.hash, `${streamId}#${streamPosition}`).to.equal(previous);
    }
  });

  it('reads the same through the client: one page, every page to the head, and the live stream', async () => {
    const svc = new SvcClient({ baseUrl: service.url, token: auditorToken });
    const { events } = await page('stream_type=ledger&limit=1000');
    const firstPage = await svc.audit.events({ streamType: 'ledger', limit: 7 });
    expect(firstPage.events.map((e) => e.cursor)).to.deep.equal(events.slice(0, 7).map((e) => e.cursor));
    const iterated: LogEvent[] = [];
    for await (const event of svc.audit.iterate({ streamType: 'ledger', limit: 13 })) iterated.push(event);
    expect(iterated.map((e) => e.cursor)).to.deep.equal(events.map((e) => e.cursor));

    const abort = new AbortController();
    const streamed: LogEvent[] = [];
    const following = (async () => {
      for await (const event of svc.audit.stream({ streamType: 'ledger', after: events.at(-3)!.cursor }, { signal: abort.signal })) {
        streamed.push(event);
        if (event.stream_id === 'ledger-late') abort.abort();
      }
    })().catch((error: unknown) => {
      if (!abort.signal.aborted) throw error;
    });
    await service.kernel.store.append({ streamId: 'ledger-late', expectedVersion: 0, events: [{ type: 'Written', data: {} }] });
    await following;
    expect(streamed.map((e) => e.cursor).slice(0, 2)).to.deep.equal(events.slice(-2).map((e) => e.cursor));
    expect(streamed.map((e) => e.stream_id).at(-1)).to.equal('ledger-late');
    await expectRejected(svc.audit.events({ after: 'nonsense' }), 400);
  });

  it('answers 403 without audit:read (or iam:admin), and lets iam:admin in', async () => {
    const reader = await createUser(service.url, admin.token, 'reader@example.com', { readers: ['runs:read'] });
    expectError(await client(service.url, reader.token).get('/admin/events'), 403);
    expectError(await client(service.url, reader.token).get('/admin/events/stream'), 403);
    expectError(await client(service.url).get('/admin/events'), 401);
    expect((await client(service.url, admin.token).get('/admin/events?limit=1')).status).to.equal(200);
  });

  it('answers 400 for a bad cursor, filter or limit, on the page and on the stream', async () => {
    const forged = Buffer.from('not-a-cursor').toString('base64url');
    for (const query of [
      `after=${forged}`,
      'after=%%%',
      `after=${Buffer.from('1.99999999999999999999').toString('base64url')}`,
      `after=${Buffer.from('999999999999999999999.1').toString('base64url')}`,
      'since=yesterday',
      'until=2026-13-45',
      'limit=0',
      'limit=1001',
      'limit=ten',
      'type=,',
      'actor=',
      'stream_id=a&stream_id=b',
      'colour=red',
    ]) {
      const answer = await auditor().get(`/admin/events?${query}`);
      expect(answer.status, query).to.equal(400);
      expect(answer.body).to.include({ code: 'BAD_REQUEST' });
    }
    expectError(await auditor().get('/admin/events/stream', { headers: { 'last-event-id': forged } }), 400);
    expectError(await auditor().get('/admin/events/stream?limit=5'), 400);
  });
});
