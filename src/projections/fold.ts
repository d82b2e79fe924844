// Folding events into the rows they touch, in memory; shared by inline application and rebuilds.
import type { RecordedEvent } from '../eventstore/types.js';
import type { Row, RowKey, RowProjection } from './types.js';

type KeyId = string | number;

interface Entry {
  key: RowKey;
  row: Row | null;
  /** Changed since seeded or last flushed. */
  dirty: boolean;
}

export class RowFold {
  private readonly entries = new Map<KeyId, Entry>();

  constructor(readonly projection: RowProjection) {}

  get size(): number {
    return this.entries.size;
  }

  /**
   * A one-column text or number key is its own id (the Map tells 1 from '1'); any other key is its
   * JSON behind a NUL, which no PostgreSQL text value contains, so the two kinds never meet.
   */
  keyId(key: RowKey): KeyId {
    const columns = this.projection.key;
    if (columns.length === 1) {
      const value = key[columns[0]!];
      if (typeof value === 'string' || typeof value === 'number') return value;
    }
    return `\u0000${JSON.stringify(columns.map((k) => key[k] ?? null))}`;
  }

  /** Keys the events touch that are not held yet, each once (less those whose row they start). */
  unknownKeys(events: readonly RecordedEvent[]): RowKey[] {
    const unknown = new Map<KeyId, RowKey | null>();
    const starts = this.projection.startsRow ?? [];
    for (const event of events) {
      for (const key of this.projection.keysOf(event)) {
        const id = this.keyId(key);
        if (this.entries.has(id) || unknown.has(id)) continue;
        unknown.set(id, starts.includes(event.type) ? null : key);
      }
    }
    return [...unknown.values()].filter((key): key is RowKey => key !== null);
  }

  /** Records what the table holds for these keys (rows found; every other key has no row). */
  seed(keys: readonly RowKey[], rows: readonly Row[]): void {
    for (const key of keys) this.entries.set(this.keyId(key), { key, row: null, dirty: false });
    for (const row of rows) {
      const key = Object.fromEntries(this.projection.key.map((k) => [k, row[k] ?? null])) as RowKey;
      this.entries.set(this.keyId(key), { key, row, dirty: false });
    }
  }

  apply(event: RecordedEvent): void {
    for (const key of this.projection.keysOf(event)) {
      const id = this.keyId(key);
      let entry = this.entries.get(id);
      if (!entry) {
        entry = { key, row: null, dirty: false };
        this.entries.set(id, entry);
      }
      entry.row = this.projection.evolve(entry.row, key, event);
      entry.dirty = true;
    }
  }

  /** The rows to write and the keys to delete since the last call; marks everything clean. */
  takeChanges(): { upserts: Row[]; deletes: RowKey[] } {
    const upserts: Row[] = [];
    const deletes: RowKey[] = [];
    for (const entry of this.entries.values()) {
      if (!entry.dirty) continue;
      if (entry.row) upserts.push(entry.row);
      else deletes.push(entry.key);
      entry.dirty = false;
    }
    return { upserts, deletes };
  }

  clear(): void {
    this.entries.clear();
  }
}
