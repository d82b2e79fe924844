// What a started service must stop on close, stopped in the reverse order it was started.
export type Stop = () => void | Promise<void>;

export class Stops {
  private readonly stops: Stop[] = [];

  add(stop: Stop): void {
    this.stops.push(stop);
  }

  /** Stops everything, newest first; the first failure stops the rest too. */
  async stopAll(): Promise<void> {
    for (const stop of this.stops.splice(0).reverse()) await stop();
  }

  /** Stops everything, newest first, past failures: after a failed start, whose own error matters more. */
  async stopAllQuietly(): Promise<void> {
    for (const stop of this.stops.splice(0).reverse())
      await Promise.resolve()
        .then(stop)
        .catch(() => undefined);
  }
}
