// Idempotency-Key on triggers: the first request with a key claims it for a new run (an event, so the
// database decides a race between workers); a later one with the same key answers with that run.
import { createHash } from 'node:crypto';
import type { Pool } from '../../db/pool.js';
import type { EventStore } from '../../eventstore/store.js';
import type { Clock } from '../../kernel/clock.js';
import { BadRequestError, IdempotencyKeyReusedError, UnavailableError, VersionConflictError } from '../../kernel/errors.js';
import { newId } from '../../kernel/ids.js';
import { jcs } from '../../kernel/jcs.js';
import type { JsonObject } from '../../kernel/json.js';
import type { Logger } from '../../kernel/logger.js';
import { asRunEvent, runStream } from '../events.js';
import { foldRun, isTerminal, type RunState } from '../state.js';
import { KEY_CLAIMED, KEY_RELEASED, keyStream, type IdempotencyKeyClaimed, type IdempotencyKeyReleased } from './projection.js';
import { deleteExpiredKeys, findKey, type KeyRow } from './queries.js';

/** What a key is scoped to: the workflow, who calls (a user, or an anonymous caller's address) and the key. */
export interface KeyScope {
  workflow: string;
  caller: string;
  key: string;
}

export type KeyClaim = { kind: 'claimed'; runId: string } | { kind: 'replay'; runId: string };

export interface IdempotencyKeysDeps {
  pool: Pool;
  store: EventStore;
  clock: Clock;
  logger: Logger;
  ttlSeconds: number;
}

const CLAIM_ATTEMPTS = 5;
/** A claimer journals its run within milliseconds of the claim; a minute without it means it never will. */
const ABANDONED_AFTER_MS = 60_000;
const SWEEP_BATCH = 1000;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The `Idempotency-Key` header: undefined when absent, else 1 to 255 printable ASCII characters (400 otherwise). */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !/^[\x20-\x7e]{1,255}$/.test(header)) {
    throw new BadRequestError('Idempotency-Key must be 1 to 255 printable ASCII characters', { header: 'Idempotency-Key' });
  }
  return header;
}

/** The stream key of a scope: sha256 of workflow, caller and key (none of them is kept in clear). */
export function keyHashOf(scope: KeyScope): string {
  return sha256(JSON.stringify([scope.workflow, scope.caller, scope.key]));
}

export class IdempotencyKeys {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: IdempotencyKeysDeps) {}

  /**
   * The run this request is for: a new run id the key is now claimed for, or the run of an unexpired
   * claim with the same input (another input: IDEMPOTENCY_KEY_REUSED). Claims of one key append to
   * one stream at the version read, so of concurrent claims exactly one commits; the others read it.
   */
  async claim(scope: KeyScope, input: JsonObject): Promise<KeyClaim> {
    const { pool, store, clock, ttlSeconds } = this.deps;
    const keyHash = keyHashOf(scope);
    const requestHash = sha256(jcs(input));
    const stream = keyStream(keyHash);
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const now = clock.now();
      // The version first, then the row: a claim committed in between shows in the row; one after
      // both reads makes the append at this version conflict.
      const version = await store.streamVersion(stream);
      const current = await findKey(pool, keyHash);
      if (current && Date.parse(current.expires_at) > now.getTime() && !(await this.isAbandoned(current, now))) {
        if (current.request_hash !== requestHash) {
          throw new IdempotencyKeyReusedError();
        }
        return { kind: 'replay', runId: current.run_id };
      }
      const runId = newId();
      const claim: IdempotencyKeyClaimed = {
        key_hash: keyHash,
        workflow: scope.workflow,
        run_id: runId,
        request_hash: requestHash,
        expires_at: new Date(now.getTime() + ttlSeconds * 1000).toISOString(),
      };
      try {
        await store.append({ streamId: stream, expectedVersion: version, events: [{ type: KEY_CLAIMED, data: claim }] });
        return { kind: 'claimed', runId };
      } catch (error) {
        if (!(error instanceof VersionConflictError)) throw error;
      }
    }
    throw new UnavailableError('This Idempotency-Key is contended; retry');
  }

  /** Gives the claim for `runId` back when its run was refused before it started: a retry with the key starts a run then. */
  async release(scope: KeyScope, runId: string, reason: string): Promise<void> {
    const keyHash = keyHashOf(scope);
    const released: IdempotencyKeyReleased = { key_hash: keyHash, run_id: runId, reason };
    await this.deps.store.append({ streamId: keyStream(keyHash), expectedVersion: 'any', events: [{ type: KEY_RELEASED, data: released }] });
  }

  /**
   * A claim whose run was never journaled long after it was made: its claimer died (or lost the
   * database) between the claim and the run's start. The next request takes the key over.
   */
  private async isAbandoned(claim: KeyRow, now: Date): Promise<boolean> {
    if (now.getTime() - Date.parse(claim.claimed_at) < ABANDONED_AFTER_MS) return false;
    return (await this.deps.store.streamVersion(runStream(claim.run_id))) === 0;
  }

  /**
   * The claimed run as its journal has it, once it exists (`untilEnd`: once it ended) or when `waitMs`
   * passed; undefined when it is not journaled by then (its claimer has not started it, or died first).
   */
  async runState(runId: string, waitMs: number, untilEnd: boolean): Promise<RunState | undefined> {
    const deadline = Date.now() + waitMs;
    for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
      const state = foldRun((await this.deps.store.readStream(runStream(runId), 0, 100_000)).map((event) => asRunEvent(event)));
      const isSettled = state.exists && (!untilEnd || isTerminal(state.status));
      if (isSettled || Date.now() >= deadline) return state.exists ? state : undefined;
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, Math.max(0, deadline - Date.now()))));
    }
  }

  /** Deletes expired rows now and then (never more than a batch per pass); the claim events stay. */
  startSweeping(): void {
    const intervalMs = Math.min(60_000, Math.max(1000, (this.deps.ttlSeconds * 1000) / 2));
    this.timer = setInterval(() => void this.sweep(), intervalMs);
    this.timer.unref();
  }

  stopSweeping(): void {
    clearInterval(this.timer);
  }

  private async sweep(): Promise<void> {
    try {
      await deleteExpiredKeys(this.deps.pool, this.deps.clock.now(), SWEEP_BATCH);
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'idempotency key sweep failed; the next pass retries');
    }
  }
}
