// Live reading: one gated tail of the global log per process for readers of the whole log, and
// stream subscriptions (replay, then live) fed without the gate.
import { Observable, Subject, type Subscription } from 'rxjs';
import type { Logger } from '../kernel/logger.js';
import { matchesLogFilter, type LogFilter } from './logFilter.js';
import { selectGate, selectGlobalHead } from './sql.js';
import type { EventStore } from './store.js';
import { compareCursors, cursorOf, type GlobalCursor, type RecordedEvent } from './types.js';
import type { WakeReason } from './wakeUps.js';

const PAGE_SIZE = 1000;
/** Per stream and round trip when other processes' events of every followed stream are read at once. */
const STREAM_PAGE_SIZE = 100;
/** After a pump the tail looks at the gate this long later; while the gate holds events back, doubling up to the second. */
const HELD_RETRY_MS = { first: 25, max: 1000 };

/** A live stream subscription as the follower sees it. */
interface StreamListener {
  /** The last position it holds; undefined while it reads the table itself (it catches up alone). */
  position(): number | undefined;
  offer(event: RecordedEvent): void;
}

/**
 * Reads the global log behind the snapshot gate whenever something may have been appended and
 * publishes what it finds, in (transaction_id, global_position) order, to `subscribeToAll`. Stream
 * subscriptions get this process's commits at once and other processes' from one ungated read of
 * every followed stream per wake-up, so a long transaction anywhere on the cluster delays neither.
 */
export class LogFollower {
  private readonly tail = new Subject<RecordedEvent>();
  private readonly localAppends = new Subject<RecordedEvent>();
  /** The live listeners of stream subscriptions by stream: an event costs its own stream's followers only. */
  private readonly streamListeners = new Map<string, Set<StreamListener>>();
  private cursor: GlobalCursor = { transactionId: '0', globalPosition: 0 };
  private wakeSubscription: Subscription | undefined;
  private pumping = false;
  private dirty = false;
  private streamsPumping = false;
  private streamsDirty = false;
  private heldRetryMs = 0;
  private heldRetry: NodeJS.Timeout | undefined;
  private stopped = false;

  /** Events this process committed, delivered synchronously before the append call returns. */
  readonly localCommits$: Observable<RecordedEvent> = this.localAppends.asObservable();

  constructor(
    private readonly store: EventStore,
    private readonly wakes$: Observable<WakeReason>,
    private readonly logger: Logger,
  ) {}

  /** Starts at the current head: the tail carries what is appended from now on. */
  async start(): Promise<void> {
    this.cursor = await selectGlobalHead(this.store.pool);
    this.wakeSubscription = this.wakes$.subscribe((reason) => {
      void this.pump();
      // This process's own commits reached the stream listeners before their append returned.
      if (reason !== 'local') void this.pumpStreams();
    });
  }

  stop(): void {
    this.stopped = true;
    this.wakeSubscription?.unsubscribe();
    clearTimeout(this.heldRetry);
    this.tail.complete();
    this.localAppends.complete();
    this.streamListeners.clear();
  }

  /**
   * Events this process just committed, offered to stream subscriptions at once (a stream's
   * positions commit in order, so no gate is needed within one stream).
   */
  publishLocal(events: readonly RecordedEvent[]): void {
    for (const event of events) {
      this.localAppends.next(event);
      this.notifyStream(event);
    }
  }

  private notifyStream(event: RecordedEvent): void {
    const listeners = this.streamListeners.get(event.streamId);
    if (listeners) for (const listener of listeners) listener.offer(event);
  }

  /**
   * The stream's events after position `after`: replay from the table, then live; no gap, no
   * duplicate. `liveOnly` skips the first read of the table: the caller has read up to `after`.
   */
  subscribeToStream(streamId: string, after = 0, { liveOnly = false } = {}): Observable<RecordedEvent> {
    return new Observable<RecordedEvent>((subscriber) => {
      let last = after;
      let reading = false;
      let dirty = false;
      let closed = false;
      const deliver = (event: RecordedEvent): void => {
        if (event.streamPosition !== last + 1) return;
        last = event.streamPosition;
        subscriber.next(event);
      };
      const readFromTable = async (): Promise<void> => {
        if (reading) {
          dirty = true;
          return;
        }
        reading = true;
        try {
          do {
            dirty = false;
            for (;;) {
              const page = await this.store.readStream(streamId, last, PAGE_SIZE);
              if (closed) return;
              page.forEach(deliver);
              if (page.length < PAGE_SIZE) break;
            }
          } while (dirty && !closed);
        } catch (error) {
          this.logger.warn({ err: error, streamId }, 'stream read failed; retrying on the next wake-up');
        } finally {
          reading = false;
        }
      };
      // No read per subscriber on wake-ups (a thousand SSE followers would be a thousand queries
      // every tick): pumpStreams reads every followed stream in one query, from the furthest-behind
      // subscriber on. Only a gap (a local commit whose callback overtook an earlier one's) makes a
      // subscriber read on its own.
      const listener: StreamListener = {
        position: () => (reading ? undefined : last),
        offer: (event) => {
          if (event.streamPosition <= last) return;
          if (!reading && event.streamPosition === last + 1) deliver(event);
          else void readFromTable();
        },
      };
      const listeners = this.streamListeners.get(streamId) ?? new Set();
      this.streamListeners.set(streamId, listeners.add(listener));
      if (!liveOnly) void readFromTable();
      return () => {
        closed = true;
        listeners.delete(listener);
        if (listeners.size === 0 && this.streamListeners.get(streamId) === listeners) this.streamListeners.delete(streamId);
      };
    });
  }

  /** The global log after `after` (optionally only the events `filter` takes): replay, then live, in order. */
  subscribeToAll(after: GlobalCursor, filter: LogFilter = {}): Observable<RecordedEvent> {
    return new Observable<RecordedEvent>((subscriber) => {
      let last = after;
      let replaying = true;
      let closed = false;
      const buffered: RecordedEvent[] = [];
      const wanted = (event: RecordedEvent) => matchesLogFilter(event, filter);
      const deliver = (event: RecordedEvent): void => {
        if (compareCursors(cursorOf(event), last) <= 0) return;
        last = cursorOf(event);
        if (wanted(event)) subscriber.next(event);
      };
      // Subscribe before reading the table so nothing published meanwhile is lost.
      const live = this.tail.subscribe((event) => (replaying ? buffered.push(event) : deliver(event)));
      let replayRunning = false;
      const replay = async (): Promise<void> => {
        if (!replaying || replayRunning) return;
        replayRunning = true;
        try {
          for (;;) {
            const page = await this.store.readGlobal(last, PAGE_SIZE, filter);
            if (closed) return;
            for (const event of page) deliver(event);
            if (page.length < PAGE_SIZE) break;
          }
          replaying = false;
          buffered.splice(0).forEach(deliver);
        } catch (error) {
          // A failed read must not end the feed for good (live views would go deaf): live events
          // stay buffered and the replay goes on from `last` at the next wake-up.
          this.logger.warn({ err: error }, 'replaying the global log failed; retrying on the next wake-up');
        } finally {
          replayRunning = false;
        }
      };
      const wakes = this.wakes$.subscribe(() => void replay());
      void replay();
      return () => {
        closed = true;
        live.unsubscribe();
        wakes.unsubscribe();
      };
    });
  }

  private async pump(): Promise<void> {
    // A pump in progress reads again before it ends.
    if (this.pumping) return void (this.dirty = true);
    this.pumping = true;
    try {
      await this.readAll();
      this.checkGateSoon();
    } catch (error) {
      this.logger.warn({ err: error }, 'reading the global log failed; retrying on the next wake-up');
    } finally {
      this.pumping = false;
    }
  }

  /** Reads and delivers every event the gate lets through, again while wake-ups came meanwhile. */
  private async readAll(): Promise<void> {
    do {
      this.dirty = false;
      for (let isPageFull = true; isPageFull;) {
        const page = await this.store.readGlobal(this.cursor, PAGE_SIZE);
        for (const event of page) {
          this.cursor = cursorOf(event);
          this.tail.next(event);
        }
        isPageFull = page.length === PAGE_SIZE;
      }
    } while (this.dirty);
  }

  /**
   * Events committed behind the gate wake nobody when the transaction holding it ends without a
   * NOTIFY (another database's, a lease renewal): a look at the gate after a pump finds them. One
   * look per interval, not one per pump (per commit, under load, when wake-ups come first anyway).
   */
  private checkGateSoon(): void {
    if (this.heldRetry || this.stopped) return;
    this.heldRetryMs = Math.min(Math.max(this.heldRetryMs * 2, HELD_RETRY_MS.first), HELD_RETRY_MS.max);
    this.heldRetry = setTimeout(() => {
      this.heldRetry = undefined;
      void this.lookAtGate();
    }, this.heldRetryMs);
    this.heldRetry.unref();
  }

  /** Reads what the gate let through since; looks again later only while it still holds events back. */
  private async lookAtGate(): Promise<void> {
    if (this.pumping) return this.checkGateSoon();
    this.pumping = true;
    try {
      const { isHoldingEvents } = await selectGate(this.store.pool);
      await this.readAll();
      if (isHoldingEvents) this.checkGateSoon();
      else this.heldRetryMs = 0;
    } catch (error) {
      this.logger.warn({ err: error }, 'looking at the gate failed; looking again on the next wake-up');
    } finally {
      this.pumping = false;
    }
  }

  /**
   * Other processes' events of every followed stream in one query per wake-up, each stream read
   * from its furthest-behind listener, without the gate: a stream's visible positions have no gap.
   */
  private async pumpStreams(): Promise<void> {
    if (this.streamsPumping) {
      this.streamsDirty = true;
      return;
    }
    this.streamsPumping = true;
    try {
      do {
        this.streamsDirty = false;
        for (let isPageFull = true; isPageFull;) {
          const followed = this.followedPositions();
          if (followed.length === 0) break;
          const events = await this.store.readStreamsAfter(followed, STREAM_PAGE_SIZE);
          const perStream = new Map<string, number>();
          for (const event of events) {
            perStream.set(event.streamId, (perStream.get(event.streamId) ?? 0) + 1);
            this.notifyStream(event);
          }
          isPageFull = [...perStream.values()].some((count) => count === STREAM_PAGE_SIZE);
        }
      } while (this.streamsDirty);
    } catch (error) {
      this.logger.warn({ err: error }, 'reading the followed streams failed; retrying on the next wake-up');
    } finally {
      this.streamsPumping = false;
    }
  }

  /** Each followed stream with the lowest position among its listeners that are not reading it themselves. */
  private followedPositions(): { streamId: string; after: number }[] {
    const followed: { streamId: string; after: number }[] = [];
    for (const [streamId, listeners] of this.streamListeners) {
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
