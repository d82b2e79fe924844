// Keeping an in-memory view current from the log: load, then this process's commits at once,
// other processes' via the gated tail (and, for some event types, an ungated read as well), and a
// reload after the LISTEN connection came back.
import type { Subscription } from 'rxjs';
import type { Logger } from '../kernel/logger.js';
import type { LogFollower } from './follow.js';
import { RecentEvents } from './recentEvents.js';
import { selectGlobalHead } from './sql.js';
import type { EventStore } from './store.js';
import type { RecordedEvent } from './types.js';
import type { WakeUps } from './wakeUps.js';

export interface LiveViewSpec {
  name: string;
  streamTypes: readonly string[];
  /**
   * Event types also read without the snapshot gate on every wake-up, so a long transaction
   * elsewhere does not delay them. Only for views whose `apply` of them is order-free: they may
   * arrive twice and out of order (the gated feed still brings each one, in order).
   */
  ungatedEventTypes?: readonly string[];
  /**
   * The view keeps the last event of each stream (last write wins): an event older than one already
   * applied to its stream is dropped. This process's own commits reach the view at once and the gated
   * feed brings them again later, so without this a stale event could undo a newer one.
   */
  inStreamOrder?: boolean;
  /** Fills the view from the read models; may run again after a reconnect. */
  load(): Promise<void>;
  /** Must be idempotent: an event can arrive both by load and by the feed. */
  apply(event: RecordedEvent): void;
}

export interface LiveView {
  stop(): void;
}

export async function startLiveView(
  deps: { store: EventStore; follower: LogFollower; wakeUps: WakeUps; logger: Logger },
  spec: LiveViewSpec,
): Promise<LiveView> {
  const { store, follower, wakeUps, logger } = deps;
  // The head first, then the load: whatever lands in between arrives twice, never zero times.
  const head = await selectGlobalHead(store.pool);
  const recent = spec.ungatedEventTypes
    ? await RecentEvents.startAtEnd(store, { streamTypes: spec.streamTypes, eventTypes: spec.ungatedEventTypes }, logger)
    : undefined;
  await spec.load();
  const apply = spec.inStreamOrder ? inStreamOrder(spec.apply) : spec.apply;
  const wanted = (event: RecordedEvent) => spec.streamTypes.includes(event.streamType);
  const subscriptions: Subscription[] = [
    follower.localCommits$.subscribe((event) => {
      if (wanted(event)) apply(event);
    }),
    follower.subscribeToAll(head, { streamTypes: spec.streamTypes }, { localCommitsTaken: true }).subscribe({
      next: (event) => apply(event),
      error: (error: unknown) => logger.error({ err: error, view: spec.name }, 'live view feed failed'),
    }),
    wakeUps.reconnected$.subscribe(() => {
      spec.load().catch((error: unknown) => logger.error({ err: error, view: spec.name }, 'live view reload failed'));
    }),
  ];
  if (recent) {
    // This process's own commits came through localCommits$ already.
    subscriptions.push(
      wakeUps.wakes$.subscribe((reason) => {
        if (reason !== 'local') void recent.catchUp((event) => apply(event));
      }),
    );
  }
  return { stop: () => subscriptions.splice(0).forEach((s) => s.unsubscribe()) };
}

/** `apply` for events newer than the last one applied to their stream only. */
function inStreamOrder(apply: (event: RecordedEvent) => void): (event: RecordedEvent) => void {
  const applied = new Map<string, number>();
  return (event) => {
    if ((applied.get(event.streamId) ?? 0) >= event.streamPosition) return;
    applied.set(event.streamId, event.streamPosition);
    apply(event);
  };
}
