// Watching the snapshot horizon: a transaction left open anywhere on the PostgreSQL cluster holds
// back every gated reader of the log. Said in /health and, once per episode, in the log.
import type { Queryable } from '../db/pool.js';
import type { Logger } from '../kernel/logger.js';
import { selectGate } from './sql.js';

export type HorizonStatus = { status: 'ok' } | { status: 'held'; held_for_s: number; detail: string };

const SAMPLE_INTERVAL_MS = 1000;
export const HORIZON_HELD_MESSAGE = 'the snapshot horizon is held back';

/**
 * Samples the gate every second (which needs no privilege). The horizon counts as held when its
 * xmin (the oldest transaction still running) has not moved for longer than `stallMs` while
 * committed events wait behind it: gated readers of the log are late by that much.
 */
export class HorizonWatch {
  private xmin: string | undefined;
  /** When this process first saw xmin at its current value: the blocker is at least this old. */
  private xminSinceMs = 0;
  private isHeld = false;
  /** Whether, at the last sample, committed events waited behind xmin. */
  private isHoldingEvents = false;
  private isSampling = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly logger: Logger,
    private readonly stallMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.sample(), SAMPLE_INTERVAL_MS);
    this.timer.unref();
    void this.sample();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  status(): HorizonStatus {
    return this.isHeld ? { status: 'held', held_for_s: this.heldForS(), detail: this.describeHold() } : { status: 'ok' };
  }

  private async sample(): Promise<void> {
    if (this.isSampling) return;
    this.isSampling = true;
    try {
      this.observe(await selectGate(this.db), Date.now());
    } catch {
      // The database not answering is the other half of /health, and the pool's to report.
    } finally {
      this.isSampling = false;
    }
  }

  /**
   * How long (at least) the oldest open transaction has held committed events back from gated
   * readers, in seconds; 0 while nothing waits behind it. Unlike status(), no stall threshold.
   */
  heldBackSeconds(nowMs = Date.now()): number {
    return this.isHoldingEvents ? (nowMs - this.xminSinceMs) / 1000 : 0;
  }

  private observe(gate: { xmin: string; isHoldingEvents: boolean }, nowMs: number): void {
    this.isHoldingEvents = gate.isHoldingEvents;
    if (gate.xmin !== this.xmin) {
      this.xmin = gate.xmin;
      this.xminSinceMs = nowMs;
    }
    const isHeld = gate.isHoldingEvents && nowMs - this.xminSinceMs > this.stallMs;
    if (isHeld === this.isHeld) return;
    // Once per episode, not per sample.
    if (isHeld) this.logger.warn({ xmin: gate.xmin, held_for_s: this.heldForS() }, `${HORIZON_HELD_MESSAGE}: ${this.describeHold()}`);
    else this.logger.info({ xmin: gate.xmin }, 'the snapshot horizon moved on');
    this.isHeld = isHeld;
  }

  private heldForS(): number {
    return Math.round((Date.now() - this.xminSinceMs) / 1000);
  }

  private describeHold(): string {
    return (
      `transaction ${this.xmin} has been open for at least ${this.heldForS()} s somewhere on the PostgreSQL cluster, and ` +
      'events committed since wait behind it for readers of the whole log (live views, run control from other instances); ' +
      'stream followers, revocations and session ends do not wait'
    );
  }
}
