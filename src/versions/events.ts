// Version administration events, on `model-<name>` and `workflow-<name>` streams.
import type { JsonObject } from '../kernel/json.js';

export type DefinitionKind = 'model' | 'workflow';

export type DefinitionVersionToggled = {
  type: 'DefinitionVersionToggled';
  data: { kind: DefinitionKind; name: string; version: string; enabled: boolean; at: string };
};

/** Carries the whole new document, so every worker (and a rebuild) knows the fork without the file. */
export type DefinitionVersionForked = {
  type: 'DefinitionVersionForked';
  data: { kind: DefinitionKind; name: string; sourceVersion: string; newVersion: string; file: string; definition: JsonObject; at: string };
};

export type VersionEvent = DefinitionVersionToggled | DefinitionVersionForked;

export const definitionStream = (kind: DefinitionKind, name: string) => `${kind}-${name}`;
