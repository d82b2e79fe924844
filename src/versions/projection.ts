// svc_definition_versions: toggled flags and forked documents per (kind, name, version).
import type { RecordedEvent } from '../eventstore/types.js';
import { defineProjection, type Row } from '../projections/types.js';

export const definitionVersionsProjection = defineProjection({
  name: 'svc_definition_versions',
  version: 1,
  table: 'svc_definition_versions',
  key: ['kind', 'name', 'version'],
  eventTypes: ['DefinitionVersionToggled', 'DefinitionVersionForked'],
  keysOf(event: RecordedEvent) {
    const d = event.data as Record<string, string>;
    const version = event.type === 'DefinitionVersionForked' ? d.newVersion! : d.version!;
    return [{ kind: d.kind!, name: d.name!, version }];
  },
  evolve(row: Row | null, key, event): Row {
    const d = event.data as Record<string, unknown>;
    const base: Row = row ?? { ...key, enabled: null, forked_from: null, file: null, definition: null, updated_at: String(d.at) };
    if (event.type === 'DefinitionVersionToggled') return { ...base, enabled: Boolean(d.enabled), updated_at: String(d.at) };
    return {
      ...base,
      forked_from: String(d.sourceVersion),
      file: String(d.file),
      definition: d.definition as Row,
      updated_at: String(d.at),
    };
  },
});
