// Each worker's in-memory view of revoked tokens and session ends, fed by the log (no Redis needed).
import type { LogFollower } from '../eventstore/follow.js';
import { startLiveView, type LiveView } from '../eventstore/liveView.js';
import type { EventStore } from '../eventstore/store.js';
import type { RecordedEvent } from '../eventstore/types.js';
import type { WakeUps } from '../eventstore/wakeUps.js';
import type { Clock } from '../kernel/clock.js';
import type { Logger } from '../kernel/logger.js';
import { loadActiveRevocations, loadSessionEnds } from '../iam/queries.js';

const PRUNE_INTERVAL_MS = 60_000;

/**
 * Loaded from the projections at start, then kept current from the log: this process's commits
 * synchronously (a logout holds before its 204 is sent), other processes' via wake-ups, and a full
 * reload after the LISTEN connection came back. Merges are idempotent (set add, max), so overlap
 * between the load and the live feed is harmless.
 */
export class SessionView {
  /** jti -> expiry in ms (null: never expires). */
  private readonly revoked = new Map<string, number | null>();
  /** user id -> session end in ms. */
  private readonly sessionEnds = new Map<string, number>();
  private view: LiveView | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: { store: EventStore; follower: LogFollower; wakeUps: WakeUps; logger: Logger; clock: Clock }) {}

  async start(): Promise<void> {
    this.view = await startLiveView(this.deps, {
      name: 'sessions',
      streamTypes: ['user', 'token'],
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

  async reload(): Promise<void> {
    const pool = this.deps.store.pool;
    const [revocations, ends] = await Promise.all([loadActiveRevocations(pool), loadSessionEnds(pool)]);
    for (const row of revocations) this.revoked.set(row.jti, row.expires_at ? Date.parse(row.expires_at) : null);
    for (const row of ends) this.recordSessionEnd(row.user_id, Date.parse(row.ended_at));
  }

  private apply(event: RecordedEvent): void {
    const data = event.data as Record<string, unknown>;
    if (event.type === 'TokenRevoked') {
      this.revoked.set(String(data.jti), typeof data.expiresAt === 'string' ? Date.parse(data.expiresAt) : null);
    } else if (event.type === 'UserSessionsEnded') {
      this.recordSessionEnd(String(data.userId), Date.parse(String(data.at)));
    }
  }

  private recordSessionEnd(userId: string, atMs: number): void {
    if ((this.sessionEnds.get(userId) ?? -Infinity) < atMs) this.sessionEnds.set(userId, atMs);
  }

  /** Expired tokens fail verification anyway; forget their revocations. */
  private prune(nowMs: number): void {
    for (const [jti, expiresAt] of this.revoked) if (expiresAt !== null && expiresAt < nowMs) this.revoked.delete(jti);
  }
}
