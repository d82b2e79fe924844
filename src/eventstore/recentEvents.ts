// Recent events of some types read without the snapshot gate, for views whose merge is idempotent
// and order-free: a long transaction anywhere on the cluster cannot hold back what they must know.
import { coalesced } from '../kernel/coalesced.js';
import type { Logger } from '../kernel/logger.js';
import { selectEventsByPosition, selectLastPosition, type LogFilter } from './sql.js';
import type { EventStore } from './store.js';
import type { RecordedEvent } from './types.js';

const PAGE_SIZE = 1000;
/**
 * Each read looks this far back again. A global position is taken at insert, not at commit, so an
 * event inserted early by a transaction that commits late lands below positions already read; one
 * from a transaction shorter than this is still seen. Longer ones come through the gated feed.
 */
const OVERLAP_MS = 30_000;

/** The highest position seen by a read that started at `atMs`. */
interface Mark {
  atMs: number;
  highest: number;
}

/**
 * An ungated reader that may deliver an event more than once, and out of order; never the
 * correctness path (the gated feed is), only the fast one.
 */
export class RecentEvents {
  private marks: Mark[];

  private constructor(
    private readonly store: EventStore,
    private readonly filter: LogFilter,
    private readonly logger: Logger,
    start: number,
  ) {
    this.marks = [{ atMs: -Infinity, highest: start }];
  }

  /** Starts at the end of the log: what came before is the view's load. */
  static async startAtEnd(store: EventStore, filter: LogFilter, logger: Logger): Promise<RecentEvents> {
    return new RecentEvents(store, filter, logger, await selectLastPosition(store.pool));
  }

  /** Reads what committed since the overlap window and hands it to `apply`; calls made meanwhile read once more after. */
  async catchUp(apply: (event: RecordedEvent) => void): Promise<void> {
    await this.readCoalesced(apply).catch((error: unknown) =>
      this.logger.warn({ err: error, filter: this.filter }, 'reading recent events failed; retrying on the next wake-up'),
    );
  }

  private readonly readCoalesced = coalesced((apply: (event: RecordedEvent) => void) => this.readOnce(apply));

  private async readOnce(apply: (event: RecordedEvent) => void): Promise<void> {
    const startedAt = performance.now();
    const floor = this.floorAt(startedAt);
    let highest = floor;
    for (;;) {
      const page = await selectEventsByPosition(this.store.pool, highest, PAGE_SIZE, this.filter);
      page.forEach(apply);
      highest = page.at(-1)?.globalPosition ?? highest;
      if (page.length < PAGE_SIZE) break;
    }
    this.marks.push({ atMs: startedAt, highest: Math.max(highest, this.marks.at(-1)!.highest) });
  }

  /** The highest position of the newest read that started at least OVERLAP_MS before `nowMs`; forgets older marks. */
  private floorAt(nowMs: number): number {
    const settled = this.marks.findLastIndex((mark) => mark.atMs <= nowMs - OVERLAP_MS);
    this.marks = this.marks.slice(settled);
    return this.marks[0]!.highest;
  }
}
