// Live reading: one gated tail of the global log per process for readers of the whole log, and
// stream subscriptions (replay, then live) fed without the gate.
import { Observable, Subject, type Subscription } from 'rxjs';
import type { Logger } from '../kernel/logger.js';
import { matchesLogFilter, type LogFilter } from './logFilter.js';
import { selectGate, selectGlobalHead } from './sql.js';
import type { EventStore } from './store.js';
import { StreamFeeds, type StreamSubscribeOptions } from './streamFeeds.js';
import { compareCursors, cursorOf, type GlobalCursor, type RecordedEvent } from './types.js';
import type { WakeReason } from './wakeUps.js';

const PAGE_SIZE = 1000;
/** This process's transactions the tail skips at most (it passes them at its next read that is not full). */
const MAX_SKIPPED_TRANSACTIONS = 10_000;
/** After a pump the tail looks at the gate this long later; while the gate holds events back, doubling up to the second. */
const HELD_RETRY_MS = { first: 25, max: 1000 };

/**
 * Reads the global log behind the snapshot gate whenever something may have been appended and
 * publishes what it finds, in (transaction_id, global_position) order, to `subscribeToAll`. Stream
 * subscriptions get this process's commits at once and other processes' from one ungated read of
 * every followed stream per wake-up, so a long transaction anywhere on the cluster delays neither.
 */
export class LogFollower {
  private readonly tail = new Subject<RecordedEvent>();
  private readonly localAppends = new Subject<RecordedEvent>();
  private readonly streams: StreamFeeds;
  private cursor: GlobalCursor = { transactionId: '0', globalPosition: 0 };
  private wakeSubscription: Subscription | undefined;
  private pumping = false;
  private dirty = false;
  private heldRetryMs = 0;
  private heldRetry: NodeJS.Timeout | undefined;
  private stopped = false;
  /** subscribeToAll subscribers that take this process's commits from the tail alone. */
  private tailReadersOfLocal = 0;
  /**
   * This process's commits (transaction ids) the tail has not passed yet: while no subscriber needs
   * them from the tail, its reads skip them rather than parse back what this process just wrote.
   */
  private readonly localTransactions = new Set<string>();

  /** Events this process committed, delivered synchronously before the append call returns. */
  readonly localCommits$: Observable<RecordedEvent> = this.localAppends.asObservable();

  constructor(
    private readonly store: EventStore,
    private readonly wakes$: Observable<WakeReason>,
    private readonly logger: Logger,
  ) {
    this.streams = new StreamFeeds(store, logger);
  }

  /** Starts at the current head: the tail carries what is appended from now on. */
  async start(): Promise<void> {
    this.cursor = await selectGlobalHead(this.store.pool);
    this.wakeSubscription = this.wakes$.subscribe((reason) => {
      // After a local commit only for subscribers that do not take it from localCommits$ already:
      // others read this process's events when another process's wake-up (or the poll) comes.
      if (reason !== 'local' || this.tailReadersOfLocal > 0) void this.pump();
      // This process's own commits reached the stream listeners before their append returned.
      if (reason !== 'local') void this.streams.pump();
    });
  }

  stop(): void {
    this.stopped = true;
    this.wakeSubscription?.unsubscribe();
    clearTimeout(this.heldRetry);
    this.tail.complete();
    this.localAppends.complete();
    this.streams.clear();
  }

  /**
   * Events this process just committed, offered to stream subscriptions at once (a stream's
   * positions commit in order, so no gate is needed within one stream).
   */
  publishLocal(events: readonly RecordedEvent[]): void {
    this.rememberLocal(events);
    for (const event of events) {
      this.localAppends.next(event);
      this.streams.offer(event);
    }
  }

  /** The stream's events after position `after`: replay from the table, then live (see StreamFeeds). */
  subscribeToStream(streamId: string, after = 0, options: StreamSubscribeOptions = {}): Observable<RecordedEvent> {
    return this.streams.subscribe(streamId, after, options);
  }

  /**
   * The global log after `after` (optionally only the events `filter` takes): replay, then live, in
   * order. `localCommitsTaken`: the subscriber also takes localCommits$ (and so sees this process's
   * events twice, the second time later than without it): the tail then reads no sooner for it.
   */
  subscribeToAll(after: GlobalCursor, filter: LogFilter = {}, { localCommitsTaken = false } = {}): Observable<RecordedEvent> {
    return new Observable<RecordedEvent>((subscriber) => {
      if (!localCommitsTaken) this.tailReadersOfLocal++;
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
        if (!localCommitsTaken) this.tailReadersOfLocal--;
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

  /**
   * Reads and delivers every event the gate lets through, again while wake-ups came meanwhile. After
   * a page that is not full everything older than its gate is behind the tail: the cursor moves up
   * to the gate, past this process's transactions it skipped.
   */
  private async readAll(): Promise<void> {
    do {
      this.dirty = false;
      for (let isPageFull = true; isPageFull;) {
        const skipped = this.tailReadersOfLocal === 0 ? [...this.localTransactions] : [];
        const { events, gate } = await this.store.readTail(this.cursor, PAGE_SIZE, skipped);
        for (const event of events) {
          this.cursor = cursorOf(event);
          this.tail.next(event);
        }
        isPageFull = events.length === PAGE_SIZE;
        const gateCursor = { transactionId: gate, globalPosition: 0 };
        if (!isPageFull && compareCursors(this.cursor, gateCursor) < 0) this.cursor = gateCursor;
        for (const transactionId of this.localTransactions) {
          if (compareCursors({ transactionId, globalPosition: Number.MAX_SAFE_INTEGER }, this.cursor) < 0) this.localTransactions.delete(transactionId);
        }
      }
    } while (this.dirty);
  }

  private rememberLocal(events: readonly RecordedEvent[]): void {
    for (const event of events) this.localTransactions.add(event.transactionId);
    // Bounded: a transaction forgotten early is read back, which the subscribers that skip it tolerate.
    for (const transactionId of this.localTransactions) {
      if (this.localTransactions.size <= MAX_SKIPPED_TRANSACTIONS) break;
      this.localTransactions.delete(transactionId);
    }
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
}
