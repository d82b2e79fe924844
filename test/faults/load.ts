// Triggers of the durable fixture workflow sent back to back by several clients to whichever services
// are up, keeping every answer; and the checks of what each answer may be while faults are injected.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type pg from 'pg';
import { call } from '../support/http.js';
import type { Acknowledged } from './invariants.js';

export interface Answer {
  tag: string;
  status: number;
  runId: string | null;
  retryAfter: string | null;
  body: any;
}

/** Text of the failures underneath that no answer may carry. */
const INTERNAL_TEXT = [
  'ECONNREFUSED',
  'ECONNRESET',
  'terminating connection',
  'Connection terminated',
  'does not allow connections',
  'INSERT INTO',
  'engine failure',
];

/** Tells the tags of loads in one database apart. */
let loads = 0;

export class TriggerLoad {
  readonly answers: Answer[] = [];
  /** Tags of requests that got no HTTP answer (their process was killed): their runs may or may not exist. */
  readonly unanswered: string[] = [];
  private stopped = false;
  private readonly prefix = `load${++loads}`;
  private readonly loops: Promise<void>[];

  /** `targets` is read before each request: the base URLs of the services up at that moment. */
  constructor(
    private readonly targets: () => string[],
    private readonly token: string,
    clients: number,
    private readonly sleepMs = 20,
  ) {
    this.loops = Array.from({ length: clients }, (_, client) => this.loop(client));
  }

  get acknowledged(): number {
    return this.answers.filter((a) => a.status === 201 || a.status === 202).length;
  }

  private async loop(client: number): Promise<void> {
    for (let n = 0; !this.stopped; n++) {
      const urls = this.targets();
      const url = urls[n % Math.max(1, urls.length)];
      if (!url) {
        await sleep(50);
        continue;
      }
      const tag = `${this.prefix}-c${client}-${n}`;
      const path = n % 2 === 0 ? '/api/durable' : '/api/durable?wait=false';
      try {
        const result = await call(url, 'POST', path, { token: this.token, json: { sleep_ms: this.sleepMs, tag } });
        this.answers.push({
          tag,
          status: result.status,
          runId: result.headers.get('x-svc-run-id'),
          retryAfter: result.headers.get('retry-after'),
          body: result.body,
        });
        if (result.status === 503) await sleep(50);
      } catch {
        this.unanswered.push(tag);
        await sleep(50);
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  /**
   * Every answer is 201/202 with a run id or 503 UNAVAILABLE with Retry-After and no internal text; a 503
   * without a run id recorded nothing. Adds the acknowledged runs to `acked`; answers the count by status.
   */
  async check(db: pg.Pool, acked: Acknowledged): Promise<Record<number, number>> {
    const byStatus: Record<number, number> = {};
    for (const answer of this.answers) {
      byStatus[answer.status] = (byStatus[answer.status] ?? 0) + 1;
      const text = JSON.stringify(answer.body);
      for (const secret of INTERNAL_TEXT) expect(text, `an answer carries "${secret}"`).to.not.include(secret);
      if (answer.status === 201 || answer.status === 202) {
        expect(answer.runId, `${answer.status} without a run id`).to.be.a('string');
        acked.runIds.add(answer.runId!);
        continue;
      }
      expect(answer.status, `${answer.tag}: ${JSON.stringify(answer.body)}`).to.equal(503);
      expect(answer.body.code).to.equal('UNAVAILABLE');
      expect(Number(answer.retryAfter), 'Retry-After').to.be.greaterThan(0);
      // A run id on a 503 only when a COMMIT was cut off in flight: the answer says it may exist.
      if (answer.runId) expect(answer.body.detail).to.include(`/api/runs/${answer.runId}`);
    }
    const refused = this.answers.filter((a) => a.status === 503 && !a.runId).map((a) => a.tag);
    const { rows } = await db.query(`SELECT stream_id FROM events WHERE type = 'run_started' AND data->'payload'->'input'->>'tag' = ANY($1::text[])`, [
      refused,
    ]);
    expect(rows, 'runs recorded for a 503 that said nothing was recorded').to.deep.equal([]);
    return byStatus;
  }
}
