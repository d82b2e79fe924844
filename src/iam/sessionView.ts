// Each worker's in-memory view of revoked tokens and session ends, fed by the log (no Redis needed).
import type { LogFollower } from '../eventstore/follow.js';
import { startLiveView, type LiveView } from '../eventstore/liveView.js';
import type { EventStore } from '../eventstore/store.js';
import type { RecordedEvent } from '../eventstore/types.js';
import type { WakeUps } from '../eventstore/wakeUps.js';
import type { Clock } from '../kernel/clock.js';
import type { Logger } from '../kernel/logger.js';
import { loadActiveRevocations, loadSessionEnds } from './queries.js';

const PRUNE_INTERVAL_MS = 60_000;

/** Why a watched token stopped being accepted. */
export type SessionEnding = 'revoked' | 'session_ended';

/** A token someone keeps a long-lived answer open for. */
export interface WatchedToken {
  jti: string;
  userId: string;
  /** The token's `iat` in ms, compared with session ends as the verification does. */
  issuedAtMs: number;
}

/** Told once, when its token is revoked or its user's sessions end after it was issued. */
export interface SessionWatcher extends WatchedToken {
  sessionEnded(ending: SessionEnding): void;
}

/**
 * Loaded from the projections at start, then kept current from the log: this process's commits
 * synchronously (a logout holds before its 204 is sent), other processes' via wake-ups (the gated
 * feed, and an ungated read of revocations and session ends so that a long transaction elsewhere
 * cannot hold them back), and a full reload after the LISTEN connection came back. Merges are
 * idempotent and order-free (set add, max), so overlap between the load and the feeds is harmless.
 */
export class SessionView {
  /** jti -> expiry in ms (null: never expires). */
  private readonly revoked = new Map<string, number | null>();
  /** user id -> session end in ms. */
  private readonly sessionEnds = new Map<string, number>();
  private readonly watchersByJti = new Map<string, Set<SessionWatcher>>();
  private readonly watchersByUser = new Map<string, Set<SessionWatcher>>();
  private view: LiveView | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: { store: EventStore; follower: LogFollower; wakeUps: WakeUps; logger: Logger; clock: Clock }) {}

  async start(): Promise<void> {
    this.view = await startLiveView(this.deps, {
      name: 'sessions',
      streamTypes: ['user', 'token'],
      ungatedEventTypes: ['TokenRevoked', 'UserSessionsEnded'],
      load: () => this.reload(),
      apply: (event) => this.apply(event),
    });
    this.pruneTimer = setInterval(() => this.prune(this.deps.clock.now().getTime()), PRUNE_INTERVAL_MS);
    this.pruneTimer.unref();
  }

  stop(): void {
    this.view?.stop();
    clearInterval(this.pruneTimer);
  }

  isRevoked(jti: string): boolean {
    return this.revoked.has(jti);
  }

  /** The user's latest session end in ms since the epoch, if any. */
  sessionEndOf(userId: string): number | undefined {
    return this.sessionEnds.get(userId);
  }

  /**
   * Tells `watcher` once when its token is revoked or its user's sessions end after it was issued
   * (soon after this call if that happened already), until `unwatch`. Fires for whichever feed brings
   * the news first, so within the same bound as a request's verification.
   */
  watch(watcher: SessionWatcher): void {
    addTo(this.watchersByJti, watcher.jti, watcher);
    addTo(this.watchersByUser, watcher.userId, watcher);
    const ending = this.endingOf(watcher);
    // Not from inside watch(): the caller may not have finished setting up what the news closes.
    if (ending) queueMicrotask(() => this.tell(watcher, ending));
  }

  unwatch(watcher: SessionWatcher): void {
    removeFrom(this.watchersByJti, watcher.jti, watcher);
    removeFrom(this.watchersByUser, watcher.userId, watcher);
  }

  async reload(): Promise<void> {
    const pool = this.deps.store.pool;
    const [revocations, ends] = await Promise.all([loadActiveRevocations(pool), loadSessionEnds(pool)]);
    for (const row of revocations) this.recordRevocation(row.jti, row.expires_at ? Date.parse(row.expires_at) : null);
    for (const row of ends) this.recordSessionEnd(row.user_id, Date.parse(row.ended_at));
  }

  private apply(event: RecordedEvent): void {
    const data = event.data as Record<string, unknown>;
    if (event.type === 'TokenRevoked') {
      this.recordRevocation(String(data.jti), typeof data.expiresAt === 'string' ? Date.parse(data.expiresAt) : null);
    } else if (event.type === 'UserSessionsEnded') {
      this.recordSessionEnd(String(data.userId), Date.parse(String(data.at)));
    }
  }

  private endingOf(token: WatchedToken): SessionEnding | undefined {
    if (this.revoked.has(token.jti)) return 'revoked';
    const sessionEnd = this.sessionEnds.get(token.userId);
    return sessionEnd !== undefined && token.issuedAtMs < sessionEnd ? 'session_ended' : undefined;
  }

  private recordRevocation(jti: string, expiresAtMs: number | null): void {
    this.revoked.set(jti, expiresAtMs);
    for (const watcher of this.watchersByJti.get(jti) ?? []) this.tell(watcher, 'revoked');
  }

  private recordSessionEnd(userId: string, atMs: number): void {
    if ((this.sessionEnds.get(userId) ?? -Infinity) >= atMs) return;
    this.sessionEnds.set(userId, atMs);
    for (const watcher of this.watchersByUser.get(userId) ?? []) if (watcher.issuedAtMs < atMs) this.tell(watcher, 'session_ended');
  }

  /** Once: the watcher is no longer watched when it hears the news. */
  private tell(watcher: SessionWatcher, ending: SessionEnding): void {
    if (!this.watchersByJti.get(watcher.jti)?.has(watcher)) return;
    this.unwatch(watcher);
    watcher.sessionEnded(ending);
  }

  /** Expired tokens fail verification anyway; forget their revocations. */
  private prune(nowMs: number): void {
    for (const [jti, expiresAt] of this.revoked) if (expiresAt !== null && expiresAt < nowMs) this.revoked.delete(jti);
  }
}

function addTo<K, V>(index: Map<K, Set<V>>, key: K, value: V): void {
  const values = index.get(key);
  if (values) values.add(value);
  else index.set(key, new Set([value]));
}

function removeFrom<K, V>(index: Map<K, Set<V>>, key: K, value: V): void {
  const values = index.get(key);
  if (values?.delete(value) && values.size === 0) index.delete(key);
}
