// Many deadlines on one timer: thousands of open streams each waiting for its token's expiry would
// otherwise each hold a Timeout and its closures.
import type { Clock } from './clock.js';

/** Something that happens at a time: `due` is called once, within one tick after it. */
export interface Deadline {
  due(): void;
}

/**
 * Deadlines grouped by tick: one interval runs while any is pending, and each tick calls those whose
 * time has come by the clock (so a clock that disagrees with timers only delays them to a later tick).
 */
export class Deadlines<T extends Deadline> {
  private readonly byTick = new Map<number, Set<T>>();
  private readonly tickOf = new Map<T, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly tickMs = 1000,
  ) {}

  get size(): number {
    return this.tickOf.size;
  }

  add(item: T, atMs: number): void {
    this.delete(item);
    const tick = Math.ceil(atMs / this.tickMs);
    const items = this.byTick.get(tick);
    if (items) items.add(item);
    else this.byTick.set(tick, new Set([item]));
    this.tickOf.set(item, tick);
    if (this.timer) return;
    this.timer = setInterval(() => this.fire(), this.tickMs);
    this.timer.unref();
  }

  delete(item: T): void {
    const tick = this.tickOf.get(item);
    if (tick === undefined) return;
    this.tickOf.delete(item);
    const items = this.byTick.get(tick)!;
    items.delete(item);
    if (items.size === 0) this.byTick.delete(tick);
    if (this.tickOf.size === 0) this.stop();
  }

  private fire(): void {
    const nowTick = this.clock.now().getTime() / this.tickMs;
    for (const [tick, items] of this.byTick) {
      if (tick > nowTick) continue;
      for (const item of items) {
        this.delete(item);
        item.due();
      }
    }
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
