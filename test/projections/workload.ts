// A random but reproducible stream of account commands appended through the store, many streams per round.
import { randomUUID } from 'node:crypto';
import type { AppendToStream } from '../../src/eventstore/types.js';
import type { EventStore } from '../../src/eventstore/store.js';
import { accountEvents as e, appendTo } from './sampleProjection.js';

interface AccountState {
  version: number;
  balance: number;
}

const OWNERS = ['Ada Lovelace', 'ALAN Turing', 'grace hopper', 'Édith Piaf', 'O\'Brien "Quote"', 'Zoë\tTab'];
const TAGS = ['eur', 'usd', 'vip', 'frozen', 'joint', 'ünïcode', 'a"b'];

/** Appends opens, deposits, withdrawals, tags, renames, transfers (two streams, one append) and closes. */
export class AccountWorkload {
  readonly open = new Map<string, AccountState>();
  events = 0;

  constructor(
    private readonly store: EventStore,
    private readonly random: () => number,
  ) {}

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  private openedAt(): string {
    const ms = Date.UTC(2020, 0, 1) + Math.floor(this.random() * 5 * 365 * 86_400_000);
    // Microseconds the JavaScript Date cannot hold must survive both paths.
    return new Date(ms).toISOString().replace(
      'Z',
      `${Math.floor(this.random() * 1000)
        .toString()
        .padStart(3, '0')}Z`,
    );
  }

  /** One command's appends (one or two streams), updating the expected state. */
  private command(busy: Set<string>): AppendToStream[] {
    const ids = [...this.open.keys()].filter((id) => !busy.has(id));
    const roll = this.random();
    if (ids.length < 2 || roll < 0.12) {
      const id = randomUUID();
      const amount = Math.floor(this.random() * 10_000);
      this.open.set(id, { version: 1, balance: amount });
      busy.add(id);
      return [appendTo(id, 0, e.opened(id, this.pick(OWNERS), this.openedAt(), amount, [this.pick(TAGS)]))];
    }
    const id = this.pick(ids);
    const state = this.open.get(id)!;
    busy.add(id);
    const at = state.version;
    if (roll < 0.22) {
      // A transfer: both accounts change in one transaction, the debit written first.
      const to = this.pick(ids.filter((other) => other !== id));
      const target = this.open.get(to)!;
      busy.add(to);
      const amount = Math.floor(state.balance / 2);
      state.balance -= amount;
      target.balance += amount;
      state.version += 1;
      target.version += 1;
      return [appendTo(id, at, e.withdrawn(id, amount)), appendTo(to, target.version - 1, e.deposited(to, amount))];
    }
    if (roll < 0.27) {
      this.open.delete(id);
      return [appendTo(id, at, e.closed(id))];
    }
    const events =
      roll < 0.5
        ? [e.deposited(id, Math.floor(this.random() * 500))]
        : roll < 0.65
          ? [e.withdrawn(id, Math.floor(state.balance * this.random()))]
          : roll < 0.8
            ? [e.tagged(id, this.pick(TAGS)), e.tagged(id, this.pick(TAGS))]
            : [e.ownerChanged(id, this.pick(OWNERS))];
    for (const event of events) {
      const amount = event.data.amountCents as number | undefined;
      if (event.type === 'MoneyDeposited') state.balance += amount!;
      if (event.type === 'MoneyWithdrawn') state.balance -= amount!;
    }
    state.version += events.length;
    return [appendTo(id, at, ...events)];
  }

  /** `commands` commands over distinct accounts, appended as `writers` concurrent transactions. */
  async round(commands: number, writers = 4): Promise<void> {
    const busy = new Set<string>();
    const batches: AppendToStream[][] = Array.from({ length: writers }, () => []);
    for (let i = 0; i < commands; i++) batches[i % writers]!.push(...this.command(busy));
    await Promise.all(
      batches
        .filter((batch) => batch.length > 0)
        .map(async (batch) => {
          const result = await this.store.append(batch);
          this.events += result.events.length;
        }),
    );
  }
}
