// The versions of one kind of definition (models, workflows) this process knows, from files and forks,
// and which one serves each name.
import type { DefinitionKind } from './events.js';
import type { EnabledFlags, VersionOverrides } from './overrides.js';

/** What a registry and version administration need of a definition, whatever its kind. */
export interface VersionedDefinition {
  readonly name: string;
  readonly version: string;
  /** The document's own `enabled` flag; a runtime toggle wins over it. */
  readonly enabledByDefault: boolean;
  readonly file: string;
  /** The document as written: what a fork copies. */
  readonly source: Record<string, unknown>;
}

/** v2 < v10: versions compare by their digit runs as numbers. */
export function compareVersions(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true, sensitivity: 'base' });
}

export abstract class VersionRegistry<D extends VersionedDefinition> {
  private readonly byName = new Map<string, D[]>();

  constructor(
    readonly kind: DefinitionKind,
    definitions: readonly D[],
    private readonly flags: EnabledFlags,
  ) {
    for (const definition of definitions) this.add(definition);
  }

  /** A version as version administration lists it, besides its schema_version and enabled flag. */
  abstract describe(definition: D): Record<string, unknown>;

  /** A fork of `definition` is written to `<kind>s/<stem>_<new version>.yaml`. */
  abstract forkFileStem(definition: D): string;

  /** Adds a version, replacing one of the same name and version. */
  add(definition: D): void {
    const versions = this.versions(definition.name).filter((d) => d.version !== definition.version);
    versions.push(definition);
    versions.sort((a, b) => compareVersions(a.version, b.version));
    this.byName.set(definition.name, versions);
  }

  /**
   * Adds each version known only from a fork event (forked on another worker, or before this process
   * started) as the overrides learn of it; `parseFork` answers undefined for a document it cannot use.
   */
  followForks(overrides: VersionOverrides, parseFork: (document: Record<string, unknown>) => D | undefined): void {
    overrides.onChange((kind, name, version) => {
      if (kind !== this.kind || this.find(name, version)) return;
      const fork = overrides.get(kind, name, version)?.definition;
      const definition = fork ? parseFork(fork) : undefined;
      if (definition) this.add(definition);
    });
  }

  names(): string[] {
    return [...this.byName.keys()].sort();
  }

  /** Every version of `name`, oldest first. */
  versions(name: string): D[] {
    return this.byName.get(name) ?? [];
  }

  find(name: string, version: string): D | undefined {
    return this.versions(name).find((d) => d.version === version);
  }

  isEnabled(definition: D): boolean {
    return this.flags.isEnabled(this.kind, definition.name, definition.version, definition.enabledByDefault);
  }

  /** The newest enabled version of `name`: the one that serves it. */
  active(name: string): D | undefined {
    return [...this.versions(name)].reverse().find((d) => this.isEnabled(d));
  }

  /** The serving version of every name that has one. */
  activeAll(): D[] {
    return this.names().flatMap((name) => this.active(name) ?? []);
  }
}
