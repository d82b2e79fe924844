// What workflow validation reports (V-codes with a severity, file and step) and what it reads.
import type { ModelRegistry } from '../models/registry.js';
import type { WorkflowDefinition } from './definition.js';

export type Severity = 'error' | 'warning';

export interface Finding {
  code: string;
  severity: Severity;
  file: string;
  workflow: string;
  step?: string;
  message: string;
}

/** Scope and group names (V021). */
export const NAME_PATTERN = /^[\w:.\-/]+$/;

export interface ValidationInput {
  workflows: WorkflowDefinition[];
  models: ModelRegistry;
  runners: ReadonlySet<string>;
  isEnabled: (workflow: WorkflowDefinition) => boolean;
  /** The types a reference resolves to (one per tenant that uploaded it, at most); empty when it resolves nowhere. */
  artifactTypes: (name: string, version?: string) => string[];
  agentModels: ReadonlySet<string>;
}

export type Add = (code: string, severity: Severity, message: string, step?: string) => void;

export function formatFinding(finding: Finding): string {
  return `${finding.severity.toUpperCase()} ${finding.code} ${finding.file} ${finding.workflow}${finding.step ? ` step ${finding.step}` : ''}: ${finding.message}`;
}
