// The providers in effect on this worker: project files and environment fallbacks, overridden by
// providers saved through the admin API (events, so every worker follows at once).
import type { Settings } from '../config/settings.js';
import type { LogFollower } from '../eventstore/follow.js';
import { startLiveView, type LiveView } from '../eventstore/liveView.js';
import type { EventStore } from '../eventstore/store.js';
import type { RecordedEvent } from '../eventstore/types.js';
import type { WakeUps } from '../eventstore/wakeUps.js';
import type { JsonObject } from '../kernel/json.js';
import type { Logger } from '../kernel/logger.js';
import { defineProjection } from '../projections/types.js';
import { resolveProvider } from './providers.js';
import { type Provider, type ProviderDocument } from './providerDocument.js';

export const federationStream = (name: string) => `federation-${name}`;

export const federationProjection = defineProjection({
  name: 'svc_federation_providers',
  version: 1,
  table: 'svc_federation_providers',
  key: ['name'],
  eventTypes: ['FederationProviderSaved', 'FederationProviderDeleted'],
  keysOf: (event: RecordedEvent) => [{ name: String((event.data as JsonObject).name) }],
  evolve: (_row, key, event) =>
    event.type === 'FederationProviderSaved'
      ? { ...key, document: (event.data as JsonObject).document!, updated_at: String((event.data as JsonObject).at) }
      : null,
});

export class FederationProviders {
  private readonly saved = new Map<string, ProviderDocument>();
  private view: LiveView | undefined;

  constructor(
    private readonly project: Provider[],
    private readonly settings: Settings,
    private readonly deps: { store: EventStore; follower: LogFollower; wakeUps: WakeUps; logger: Logger },
  ) {}

  async start(): Promise<void> {
    this.view = await startLiveView(this.deps, {
      inStreamOrder: true,
      name: 'federation-providers',
      streamTypes: ['federation'],
      load: async () => {
        const { rows } = await this.deps.store.pool.query<{ name: string; document: ProviderDocument }>('SELECT name, document FROM svc_federation_providers');
        this.saved.clear();
        for (const row of rows) this.save(row.name, row.document);
      },
      apply: (event) => {
        const data = event.data as JsonObject;
        if (event.type === 'FederationProviderSaved') this.save(String(data.name), data.document as unknown as ProviderDocument);
        else if (event.type === 'FederationProviderDeleted') this.saved.delete(String(data.name));
      },
    });
  }

  /** A document saved before today's rules may break them: it is skipped, and said so once. */
  private save(name: string, document: ProviderDocument): void {
    this.saved.set(name, document);
    const { problems } = resolveProvider(name, document, 'admin', this.settings);
    if (problems.length > 0)
      this.deps.logger.warn({ provider: name, problems }, 'a saved federation provider is skipped: save it again without these problems');
  }

  stop(): void {
    this.view?.stop();
  }

  /**
   * Every provider: admin-saved ones win over project files (and built-ins) of the same name; a saved one
   * whose variables are unset is skipped, as a project file would be.
   */
  list(): Provider[] {
    const byName = new Map(this.project.map((p) => [p.name, p]));
    for (const [name, document] of this.saved) {
      const resolved = resolveProvider(name, document, 'admin', this.settings);
      if (resolved.provider) byName.set(name, resolved.provider);
    }
    return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  get(name: string): Provider | undefined {
    return this.list().find((p) => p.name === name);
  }

  isSaved(name: string): boolean {
    return this.saved.has(name);
  }
}
