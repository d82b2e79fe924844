// Signed checkpoints: every SVC_AUDIT_CHECKPOINT_SECONDS while events arrive (and on demand), a JWS committing to the log up to a gated horizon.
import { CompactSign } from 'jose';
import type { EventStore } from '../eventstore/store.js';
import { selectGlobalHead } from '../eventstore/sql.js';
import type { RecordedEvent } from '../eventstore/types.js';
import type { SigningKeys } from '../iam/keys.js';
import type { Clock } from '../kernel/clock.js';
import { withCausation, type Causation } from '../kernel/causation.js';
import type { JsonObject } from '../kernel/json.js';
import type { Logger } from '../kernel/logger.js';
import { CHECKPOINT_EVENT, CHECKPOINT_STREAM, foldDigest, GENESIS, signedPayload, type Checkpoint, type CheckpointBody } from './digest.js';

/** Serialises checkpoint writers across processes (a transaction lock: released by commit or rollback). */
const CHECKPOINT_LOCK_KEY = 7_312_004_015;

export function checkpointOf(event: RecordedEvent): Checkpoint {
  return event.data as unknown as Checkpoint;
}

/**
 * Appends the next checkpoint when the log moved past the last one's horizon: with `force`, for any
 * new event; otherwise only for events other than checkpoints (an idle log gets no checkpoints of
 * checkpoints). Answers the checkpoint written, or null. Another process checkpointing now wins.
 */
export async function writeCheckpoint(store: EventStore, keys: SigningKeys, clock: Clock, force = false): Promise<Checkpoint | null> {
  return store.transact(async (tx) => {
    const { rows } = await tx.client.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [CHECKPOINT_LOCK_KEY]);
    if (!rows[0]!.locked) return null;
    const { rows: last } = await tx.client.query<{ data: Checkpoint }>(`SELECT data FROM events WHERE stream_id = $1 ORDER BY stream_position DESC LIMIT 1`, [
      CHECKPOINT_STREAM,
    ]);
    const previous = last[0]?.data ?? { ...GENESIS, sequence: 0 };
    const head = await selectGlobalHead(tx.client);
    const horizon = { transaction_id: head.transactionId, global_position: head.globalPosition };
    const fold = await foldDigest(tx.client, previous.digest, previous.horizon, horizon);
    if (fold.count === 0 || (fold.others === 0 && !force)) return null;
    const body: CheckpointBody = {
      sequence: previous.sequence + 1,
      horizon,
      events: previous.events + fold.count,
      digest: fold.digest,
      previous_digest: previous.digest,
      signed_at: clock.now().toISOString(),
      kid: keys.kid,
    };
    const jws = await new CompactSign(new TextEncoder().encode(signedPayload(body))).setProtectedHeader({ alg: 'EdDSA', kid: keys.kid }).sign(keys.privateKey);
    const checkpoint: Checkpoint = { ...body, jws };
    // Its cause is the caller's: the timer's (the service), or the admin who asked for it.
    await tx.append({
      streamId: CHECKPOINT_STREAM,
      expectedVersion: previous.sequence,
      events: [{ type: CHECKPOINT_EVENT, data: checkpoint as unknown as JsonObject }],
    });
    return checkpoint;
  });
}

const CHECKPOINT_TIMER: Causation = { actor: { type: 'system', id: 'audit' }, source: 'executor' };

/** Checkpoints on a timer; a failed round is logged and the next one tries again. */
export class Checkpointer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: EventStore,
    private readonly keys: SigningKeys,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => {
      this.running = withCausation(CHECKPOINT_TIMER, () => writeCheckpoint(this.store, this.keys, this.clock)).catch((error: unknown) =>
        this.logger.warn({ err: error }, 'audit checkpoint failed'),
      );
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
