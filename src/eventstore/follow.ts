// Live reading: one gated tail of the global log per process, and subscriptions that replay then go live.
import { Observable, Subject, type Subscription } from 'rxjs';
import type { Logger } from '../kernel/logger.js';
import { selectGlobalHead } from './sql.js';
import type { EventStore } from './store.js';
import { compareCursors, cursorOf, type GlobalCursor, type RecordedEvent } from './types.js';
import type { WakeReason } from './wakeUps.js';

const PAGE_SIZE = 1000;

/**
 * Reads the global log behind the snapshot gate whenever something may have been appended and
 * publishes what it finds, in (transaction_id, global_position) order, to every subscription.
 */
export class LogFollower {
  private readonly tail = new Subject<RecordedEvent>();
  private readonly localAppends = new Subject<RecordedEvent>();
  /** The live listeners of stream subscriptions by stream: an event costs its own stream's followers only. */
  private readonly streamListeners = new Map<string, Set<(event: RecordedEvent) => void>>();
  private cursor: GlobalCursor = { transactionId: '0', globalPosition: 0 };
  private wakeSubscription: Subscription | undefined;
  private pumping = false;
  private dirty = false;

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
    this.wakeSubscription = this.wakes$.subscribe(() => void this.pump());
  }

  stop(): void {
    this.wakeSubscription?.unsubscribe();
    this.tail.complete();
    this.localAppends.complete();
    this.streamListeners.clear();
  }

  /**
   * Events this process just committed, offered to stream subscriptions before the gated tail sees
   * them (a stream's positions commit in order, so no gate is needed within one stream).
   */
  publishLocal(events: readonly RecordedEvent[]): void {
    for (const event of events) {
      this.localAppends.next(event);
      this.notifyStream(event);
    }
  }

  private notifyStream(event: RecordedEvent): void {
    const listeners = this.streamListeners.get(event.streamId);
    if (listeners) for (const listener of listeners) listener(event);
  }

  /** The stream's events after position `after`: replay from the table, then live; no gap, no duplicate. */
  subscribeToStream(streamId: string, after = 0): Observable<RecordedEvent> {
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
      const onLive = (event: RecordedEvent): void => {
        if (event.streamPosition <= last) return;
        if (!reading && event.streamPosition === last + 1) deliver(event);
        else void readFromTable();
      };
      const listeners = this.streamListeners.get(streamId) ?? new Set();
      this.streamListeners.set(streamId, listeners.add(onLive));
      // A reconnect may mean missed wake-ups: look again. A poll needs no read per subscriber (a
      // thousand SSE followers would be a thousand queries every tick): it wakes the global tail,
      // which reads the log once and feeds every subscriber, and a gap it shows triggers a read.
      const wakes = this.wakes$.subscribe((reason) => {
        if (reason === 'reconnect') void readFromTable();
      });
      void readFromTable();
      return () => {
        closed = true;
        listeners.delete(onLive);
        if (listeners.size === 0 && this.streamListeners.get(streamId) === listeners) this.streamListeners.delete(streamId);
        wakes.unsubscribe();
      };
    });
  }

  /** The global log after `after` (optionally only some stream types): replay, then live, in order. */
  subscribeToAll(after: GlobalCursor, streamTypes?: readonly string[]): Observable<RecordedEvent> {
    return new Observable<RecordedEvent>((subscriber) => {
      let last = after;
      let replaying = true;
      let closed = false;
      const buffered: RecordedEvent[] = [];
      const wanted = (event: RecordedEvent) => !streamTypes || streamTypes.includes(event.streamType);
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
            const page = await this.store.readGlobal(last, PAGE_SIZE, { streamTypes });
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
    if (this.pumping) {
      this.dirty = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.dirty = false;
        for (;;) {
          const page = await this.store.readGlobal(this.cursor, PAGE_SIZE);
          for (const event of page) {
            this.cursor = cursorOf(event);
            this.tail.next(event);
            this.notifyStream(event);
          }
          if (page.length < PAGE_SIZE) break;
        }
      } while (this.dirty);
    } catch (error) {
      this.logger.warn({ err: error }, 'reading the global log failed; retrying on the next wake-up');
    } finally {
      this.pumping = false;
    }
  }
}
