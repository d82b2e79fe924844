// Stream subscriptions, fed without the gate: this process's commits at once, other processes'
// from one read of every followed stream per wake-up.
import { Observable, type Subscriber } from 'rxjs';
import { coalesced } from '../kernel/coalesced.js';
import type { Logger } from '../kernel/logger.js';
import type { EventStore } from './store.js';
import type { RecordedEvent } from './types.js';

const PAGE_SIZE = 1000;
/** Per stream and round trip when other processes' events of every followed stream are read at once. */
const STREAM_PAGE_SIZE = 100;

export interface StreamSubscribeOptions {
  liveOnly?: boolean;
  caughtUp?: () => void;
}

/** A live stream subscription as the follower sees it. */
interface StreamListener {
  /** The last position it holds; undefined while it reads the table itself (it catches up alone). */
  position(): number | undefined;
  offer(event: RecordedEvent): void;
}

/** The live listeners of stream subscriptions by stream: an event costs its own stream's followers only. */
export class StreamFeeds {
  private readonly listeners = new Map<string, Set<StreamListener>>();

  constructor(
    private readonly store: EventStore,
    private readonly logger: Logger,
  ) {}

  clear(): void {
    this.listeners.clear();
  }

  /** Offers an event to its stream's listeners. */
  offer(event: RecordedEvent): void {
    const listeners = this.listeners.get(event.streamId);
    if (listeners) for (const listener of listeners) listener.offer(event);
  }

  /**
   * The stream's events after position `after`: replay from the table, then live; no gap, no
   * duplicate. `liveOnly` skips the first read of the table: the caller has read up to `after`.
   * `caughtUp` is called once the first read ended (delivered, failed or its subscriber gone).
   */
  subscribe(streamId: string, after = 0, { liveOnly = false, caughtUp }: StreamSubscribeOptions = {}): Observable<RecordedEvent> {
    return new Observable<RecordedEvent>((subscriber) => {
      const subscription = new StreamSubscription(this.store, this.logger, streamId, after, subscriber, liveOnly ? undefined : caughtUp);
      // No read per subscriber on wake-ups (a thousand SSE followers would be a thousand queries
      // every tick): pumpStreams reads every followed stream in one query, from the furthest-behind
      // subscriber on. Only a gap (a local commit whose callback overtook an earlier one's) makes a
      // subscriber read on its own.
      const listeners = this.listeners.get(streamId) ?? new Set();
      this.listeners.set(streamId, listeners.add(subscription));
      if (liveOnly) caughtUp?.();
      else void subscription.readFromTable();
      return () => {
        subscription.closed = true;
        listeners.delete(subscription);
        if (listeners.size === 0 && this.listeners.get(streamId) === listeners) this.listeners.delete(streamId);
      };
    });
  }

  /**
   * Other processes' events of every followed stream in one query per wake-up, each stream read
   * from its furthest-behind listener, without the gate: a stream's visible positions have no gap.
   */
  async pump(): Promise<void> {
    await this.readFollowed().catch((error: unknown) => this.logger.warn({ err: error }, 'reading the followed streams failed; retrying on the next wake-up'));
  }

  /** One pump's reads; a wake-up that comes meanwhile reads once more after. */
  private readonly readFollowed = coalesced(async () => {
    for (let isPageFull = true; isPageFull;) {
      const followed = this.followedPositions();
      if (followed.length === 0) break;
      const events = await this.store.readStreamsAfter(followed, STREAM_PAGE_SIZE);
      const perStream = new Map<string, number>();
      for (const event of events) {
        perStream.set(event.streamId, (perStream.get(event.streamId) ?? 0) + 1);
        this.offer(event);
      }
      isPageFull = [...perStream.values()].some((count) => count === STREAM_PAGE_SIZE);
    }
  });

  /** Each followed stream with the lowest position among its listeners that are not reading it themselves. */
  private followedPositions(): { streamId: string; after: number }[] {
    const followed: { streamId: string; after: number }[] = [];
    for (const [streamId, listeners] of this.listeners) {
      let after: number | undefined;
      for (const listener of listeners) {
        const position = listener.position();
        if (position !== undefined && (after === undefined || position < after)) after = position;
      }
      if (after !== undefined) followed.push({ streamId, after });
    }
    return followed;
  }
}

/**
 * One subscriber's place in its stream. State in fields, behaviour on the prototype: thousands of
 * idle SSE followers each hold one of these, not a set of closures.
 */
class StreamSubscription implements StreamListener {
  private reading = false;
  private dirty = false;
  closed = false;

  constructor(
    private readonly store: EventStore,
    private readonly logger: Logger,
    private readonly streamId: string,
    private last: number,
    private readonly subscriber: Subscriber<RecordedEvent>,
    private caughtUp: (() => void) | undefined,
  ) {}

  position(): number | undefined {
    return this.reading ? undefined : this.last;
  }

  offer(event: RecordedEvent): void {
    if (event.streamPosition <= this.last) return;
    if (!this.reading && event.streamPosition === this.last + 1) this.deliver(event);
    else void this.readFromTable();
  }

  async readFromTable(): Promise<void> {
    if (this.reading) {
      this.dirty = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.dirty = false;
        for (;;) {
          const page = await this.store.readStream(this.streamId, this.last, PAGE_SIZE);
          if (this.closed) return;
          for (const event of page) this.deliver(event);
          if (page.length < PAGE_SIZE) break;
        }
      } while (this.dirty && !this.closed);
    } catch (error) {
      this.logger.warn({ err: error, streamId: this.streamId }, 'stream read failed; retrying on the next wake-up');
    } finally {
      this.reading = false;
      const caughtUp = this.caughtUp;
      this.caughtUp = undefined;
      caughtUp?.();
    }
  }

  private deliver(event: RecordedEvent): void {
    if (event.streamPosition !== this.last + 1) return;
    this.last = event.streamPosition;
    this.subscriber.next(event);
  }
}
