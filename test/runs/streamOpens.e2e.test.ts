// GET /api/runs/{id}/events opens take turns (SVC_STREAM_OPEN_CONCURRENCY): from the run's look-up
// to the journal's catch-up read, at most that many per process; the rest wait in order. A lock on
// the events table holds the catch-up reads; a stream whose head arrived has begun its open.
import { expect } from 'chai';
import pg from 'pg';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { followRun, Gates, startHeldRun, STREAMS_PROJECT } from '../support/heldRuns.js';
import { bootstrapAdmin, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { PROCESS_SIGNING_KEY } from '../support/serviceProcess.js';
import { SseReader } from '../support/sse.js';

describe('run event streams open a few at a time', function () {
  this.timeout(60_000);
  const gates = new Gates();
  let databaseUrl: string;
  let oneAtATime: Service;
  let twoAtATime: Service;
  let admin: Admin;
  let runId: string;
  let locker: pg.Client;

  const eventsUrl = (service: Service) => `${service.url}/api/runs/${runId}/events`;
  const open = (service: Service) => SseReader.open(eventsUrl(service), { token: admin.token });
  /** Whether `opening` answered within half a second. */
  const answersSoon = (opening: Promise<unknown>) =>
    Promise.race([opening.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 500))]);

  /** Runs `body` while every read of the events table waits; the lock ends even when `body` fails. */
  async function withEventsLocked(body: () => Promise<void>): Promise<void> {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
    try {
      await body();
    } finally {
      await locker.query('ROLLBACK');
    }
  }

  /** The replay reached the run's first step: the stream caught up. */
  async function expectCaughtUp(reader: SseReader): Promise<void> {
    expect(reader.status, reader.text).to.equal(200);
    const frame = await reader.until('step_completed', 15_000);
    expect(frame.data.agent_id).to.equal('first');
    reader.close();
  }

  before(async () => {
    databaseUrl = await createTestDatabase();
    oneAtATime = await startTestService({
      databaseUrl,
      projectDir: STREAMS_PROJECT,
      env: { SVC_STREAM_OPEN_CONCURRENCY: '1', SVC_SIGNING_KEY: PROCESS_SIGNING_KEY },
    });
    twoAtATime = await startTestService({
      databaseUrl,
      projectDir: STREAMS_PROJECT,
      env: { SVC_STREAM_OPEN_CONCURRENCY: '2', SVC_SIGNING_KEY: PROCESS_SIGNING_KEY },
    });
    admin = await bootstrapAdmin(oneAtATime.url);
    runId = await startHeldRun(oneAtATime.url, admin.token, gates.next());
    (await followRun(oneAtATime.url, admin.token, runId)).close();
    locker = new pg.Client({ connectionString: databaseUrl });
    await locker.connect();
  });
  after(async () => {
    gates.releaseAll();
    await locker?.end();
    await twoAtATime?.close();
    await oneAtATime?.close();
    gates.remove();
  });

  /** Opens a stream, then a second one while the first's catch-up read waits on the lock; whether the second answered meanwhile. Both then catch up. */
  async function secondAnswersWhileFirstReads(service: Service): Promise<boolean> {
    let first!: SseReader;
    let second!: Promise<SseReader>;
    let answered = false;
    await withEventsLocked(async () => {
      first = await open(service);
      second = open(service);
      answered = await answersSoon(second);
    });
    await expectCaughtUp(first);
    await expectCaughtUp(await second);
    return answered;
  }

  it('opens a second stream while the first reads the journal, with a concurrency of 2', async () => {
    expect(await secondAnswersWhileFirstReads(twoAtATime), 'the second stream answered while the first reads').to.equal(true);
  });

  it('opens the next stream only once the one before caught up, with a concurrency of 1', async () => {
    expect(await secondAnswersWhileFirstReads(oneAtATime), 'the second stream answered before the first caught up').to.equal(false);
  });

  it('goes on past a client that left while waiting its turn', async () => {
    let first!: SseReader;
    let third!: Promise<SseReader>;
    await withEventsLocked(async () => {
      first = await open(oneAtATime);
      const leaving = new AbortController();
      const left = fetch(eventsUrl(oneAtATime), { headers: { accept: 'text/event-stream', authorization: `Bearer ${admin.token}` }, signal: leaving.signal });
      expect(await answersSoon(left), 'the second stream answered before the first caught up').to.equal(false);
      leaving.abort();
      await left.catch(() => undefined);
      third = open(oneAtATime);
    });
    await expectCaughtUp(first);
    await expectCaughtUp(await third);
  });
});
