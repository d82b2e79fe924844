// The heads of the hash chains this process committed, so that its next append to a stream can be
// hashed here rather than in the database (the one resource every worker shares).
import { ZERO_HASH } from './canonical.js';
import type { RecordedEvent } from './types.js';

/** Streams remembered; past this the oldest are forgotten (a miss only costs the database path). */
const DEFAULT_CAPACITY = 10_000;

/**
 * Committed heads only: a head learnt inside a transaction that then rolled back would chain the
 * next append onto an event that does not exist. The append statement still checks the head it is
 * given against the table, so a head another process moved on costs a conflict, never a bad link.
 */
export class ChainHeads {
  private readonly heads = new Map<string, { version: number; hash: string }>();

  constructor(private readonly capacity = DEFAULT_CAPACITY) {}

  /** The hash an append at `expectedVersion` chains from, when this process knows it. */
  previousHash(streamId: string, expectedVersion: number | null): string | undefined {
    if (expectedVersion === 0) return ZERO_HASH;
    const head = this.heads.get(streamId);
    return head && head.version === expectedVersion ? head.hash : undefined;
  }

  /** After a commit: each stream's last event becomes its head (events in global order: a stream's run ends at its last). */
  remember(events: readonly RecordedEvent[]): void {
    for (let index = 0; index < events.length; index++) {
      const event = events[index]!;
      if (event.hash === null || events[index + 1]?.streamId === event.streamId) continue;
      const head = this.heads.get(event.streamId);
      if (head && head.version >= event.streamPosition) continue;
      this.heads.delete(event.streamId);
      this.heads.set(event.streamId, { version: event.streamPosition, hash: event.hash });
    }
    for (const streamId of this.heads.keys()) {
      if (this.heads.size <= this.capacity) break;
      this.heads.delete(streamId);
    }
  }

  forget(streamId: string): void {
    this.heads.delete(streamId);
  }
}
