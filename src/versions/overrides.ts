// Runtime toggles and forks of definition versions, kept current on every worker from the log.
import type { LogFollower } from '../eventstore/follow.js';
import { startLiveView, type LiveView } from '../eventstore/liveView.js';
import type { EventStore } from '../eventstore/store.js';
import type { RecordedEvent } from '../eventstore/types.js';
import type { WakeUps } from '../eventstore/wakeUps.js';
import type { Logger } from '../kernel/logger.js';
import type { DefinitionKind } from './events.js';

export interface VersionOverride {
  enabled: boolean | null;
  /** A forked document (JSON), when the version came from a fork. */
  definition: Record<string, unknown> | null;
  file: string | null;
  forkedFrom: string | null;
}

type Listener = (kind: DefinitionKind, name: string, version: string) => void;

/** Whether a definition version is enabled: a runtime toggle, else the document's own flag. */
export interface EnabledFlags {
  isEnabled(kind: DefinitionKind, name: string, version: string, byDefault: boolean): boolean;
}

/** Only the documents' own flags (no database): `svc validate`. */
export const DOCUMENT_FLAGS: EnabledFlags = { isEnabled: (_kind, _name, _version, byDefault) => byDefault };

const keyOf = (kind: string, name: string, version: string) => JSON.stringify([kind, name, version]);

export class VersionOverrides implements EnabledFlags {
  private readonly overrides = new Map<string, VersionOverride & { kind: DefinitionKind; name: string; version: string }>();
  private readonly listeners: Listener[] = [];
  private view: LiveView | undefined;

  constructor(private readonly deps: { store: EventStore; follower: LogFollower; wakeUps: WakeUps; logger: Logger }) {}

  async start(): Promise<void> {
    this.view = await startLiveView(this.deps, {
      inStreamOrder: true,
      name: 'definition-versions',
      streamTypes: ['model', 'workflow'],
      load: () => this.load(),
      apply: (event) => this.apply(event),
    });
  }

  stop(): void {
    this.view?.stop();
  }

  /** Called after a toggle or fork was applied (to rebuild routes, register a forked version...). */
  onChange(listener: Listener): void {
    this.listeners.push(listener);
  }

  get(kind: DefinitionKind, name: string, version: string): VersionOverride | undefined {
    return this.overrides.get(keyOf(kind, name, version));
  }

  isEnabled(kind: DefinitionKind, name: string, version: string, byDefault: boolean): boolean {
    return this.get(kind, name, version)?.enabled ?? byDefault;
  }

  forks(kind: DefinitionKind): (VersionOverride & { name: string; version: string })[] {
    return [...this.overrides.values()].filter((o) => o.kind === kind && o.definition !== null);
  }

  private async load(): Promise<void> {
    const { rows } = await this.deps.store.pool.query<{
      kind: DefinitionKind;
      name: string;
      version: string;
      enabled: boolean | null;
      definition: Record<string, unknown> | null;
      file: string | null;
      forked_from: string | null;
    }>('SELECT kind, name, version, enabled, definition, file, forked_from FROM svc_definition_versions');
    for (const row of rows) {
      this.set(row.kind, row.name, row.version, {
        enabled: row.enabled,
        definition: row.definition,
        file: row.file,
        forkedFrom: row.forked_from,
      });
    }
  }

  private apply(event: RecordedEvent): void {
    const d = event.data as Record<string, unknown>;
    const kind = d.kind as DefinitionKind;
    const name = String(d.name);
    if (event.type === 'DefinitionVersionToggled') {
      const version = String(d.version);
      const current = this.get(kind, name, version);
      this.set(kind, name, version, {
        enabled: Boolean(d.enabled),
        definition: current?.definition ?? null,
        file: current?.file ?? null,
        forkedFrom: current?.forkedFrom ?? null,
      });
    } else if (event.type === 'DefinitionVersionForked') {
      const version = String(d.newVersion);
      const current = this.get(kind, name, version);
      this.set(kind, name, version, {
        enabled: current?.enabled ?? null,
        definition: d.definition as Record<string, unknown>,
        file: String(d.file),
        forkedFrom: String(d.sourceVersion),
      });
    }
  }

  private set(kind: DefinitionKind, name: string, version: string, value: VersionOverride): void {
    const key = keyOf(kind, name, version);
    const before = this.overrides.get(key);
    this.overrides.set(key, { ...value, kind, name, version });
    const changed = !before || before.enabled !== value.enabled || (before.definition === null) !== (value.definition === null);
    if (changed) for (const listener of this.listeners) listener(kind, name, version);
  }
}
