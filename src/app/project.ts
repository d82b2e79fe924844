// Loading the whole project at boot: documents, models, workflows, runners, and their validation.
import { runRetentionProjection } from '../runs/retention/projection.js';
import { parseAgentModels, type AgentModelDefinition } from '../agents/agentModel.js';
import type { Artifact } from '../artifacts/artifact.js';
import { artifactsProjection } from '../artifacts/projection.js';
import { loadProjectArtifacts } from '../artifacts/projectFiles.js';
import type { Settings } from '../config/settings.js';
import { projectProviders } from '../federation/providers.js';
import { type Provider } from '../federation/providerDocument.js';
import { federationProjection } from '../federation/registry.js';
import { iamProjections } from '../iam/projection.js';
import { loadRunners, type Runner } from '../runs/engine/nodes.js';
import { modelProjections, parseModels } from '../models/boot.js';
import { parseModelDefinition, type ModelDefinition } from '../models/definition.js';
import { ModelRegistry } from '../models/registry.js';
import type { RowProjection } from '../projections/types.js';
import { runsProjection } from '../runs/projection.js';
import { idempotencyKeysProjection } from '../runs/idempotency/projection.js';
import { approvalsProjection } from '../approvals/projection.js';
import { definitionVersionsProjection } from '../versions/projection.js';
import { schedulesProjection } from '../schedules/projection.js';
import type { Logger } from '../kernel/logger.js';
import type { EnabledFlags } from '../versions/overrides.js';
import { toWorkflowDefinition, type WorkflowDefinition } from '../workflows/definition.js';
import { formatFinding, type Finding } from '../workflows/findings.js';
import { validateWorkflows } from '../workflows/validate.js';
import { loadProjectDocuments, type ProjectDocument } from '../project/documents.js';

export class ProjectError extends Error {
  constructor(readonly problems: string[]) {
    super(`The project is invalid:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ProjectError';
  }
}

/** The read models of every feature (model tables come on top, per project). */
export function featureProjections(): RowProjection[] {
  return [
    ...iamProjections,
    definitionVersionsProjection,
    runsProjection,
    runRetentionProjection,
    idempotencyKeysProjection,
    approvalsProjection,
    artifactsProjection,
    federationProjection,
    schedulesProjection,
  ];
}

export interface LoadedProject {
  models: ModelDefinition[];
  workflows: WorkflowDefinition[];
  runners: Map<string, Runner>;
  artifacts: Artifact[];
  agentModels: AgentModelDefinition[];
  federationProviders: Provider[];
  /** Things worth a log line (an AgentModel skipped for unset variables). */
  warnings: string[];
  /** Every read model: the features' and one per model table. */
  projections: RowProjection[];
}

/** Parses documents (no I/O beyond reading files); problems with any of them stop boot, listed together. */
export function loadDefinitions(projectDir: string, settings: ProjectSettings): Omit<LoadedProject, 'runners'> {
  const { environment } = settings;
  const { documents, problems } = loadProjectDocuments(projectDir);
  const parsedModels = parseModels(documents);
  const workflows = documents.filter((d) => d.kind === 'Workflow').map(toWorkflowDefinition);
  const duplicates = findDuplicates(documents.filter((d) => d.kind === 'Workflow'));
  const artifacts = loadProjectArtifacts(projectDir, documents);
  const agentModels = parseAgentModels(documents, environment);
  const federation = projectProviders(documents, settings);
  const all = [
    ...problems.map((p) => `${p.file}: ${p.message}`),
    ...parsedModels.problems,
    ...duplicates,
    ...artifacts.problems,
    ...agentModels.problems,
    ...federation.problems,
  ];
  if (all.length > 0) throw new ProjectError(all);
  return {
    models: parsedModels.models,
    workflows,
    artifacts: artifacts.artifacts,
    agentModels: agentModels.models,
    federationProviders: federation.providers,
    warnings: [...agentModels.warnings, ...federation.warnings],
    projections: [...featureProjections(), ...modelProjections(parsedModels.models)],
  };
}

/** What project loading reads of the settings: `${VAR}` values and OAuth credential fallbacks. */
export type ProjectSettings = Pick<Settings, 'environment' | 'oauth'>;

export async function loadProject(projectDir: string, settings: ProjectSettings): Promise<LoadedProject> {
  const definitions = loadDefinitions(projectDir, settings);
  return { ...definitions, runners: await loadRunners(projectDir) };
}

/**
 * V-code findings for the project's workflows, with the models, runners, AgentModels and artifacts it
 * has; `uploads` adds artifacts stored in the database, of every tenant. A reference counts when a
 * project file or any tenant's upload resolves it with a fitting type: a run of a tenant without
 * that upload fails at its step, naming the reference.
 */
export function validateProject(project: LoadedProject, overrides: EnabledFlags, uploads: { name: string; version: string; type: string }[] = []): Finding[] {
  const models = new ModelRegistry(project.models, overrides);
  return validateWorkflows({
    workflows: project.workflows,
    models,
    runners: new Set(project.runners.keys()),
    isEnabled: (w) => overrides.isEnabled('workflow', w.name, w.version, w.enabledByDefault),
    agentModels: new Set(project.agentModels.map((m) => m.name)),
    artifactTypes: (name, version) => {
      const file = project.artifacts.find((a) => a.name === name);
      if (file) return version === undefined || version === file.version ? [file.type] : [];
      return [...new Set(uploads.filter((u) => u.name === name && (version === undefined || u.version === version)).map((u) => u.type))];
    },
  });
}

/** Findings at boot: errors stop it, warnings are logged. */
export function checkProject(
  project: LoadedProject,
  overrides: EnabledFlags,
  uploads: { name: string; version: string; type: string }[],
  logger: Logger,
): void {
  const findings = validateProject(project, overrides, uploads);
  for (const finding of findings.filter((f) => f.severity === 'warning')) logger.warn({ code: finding.code }, formatFinding(finding));
  const errors = findings.filter((f) => f.severity === 'error');
  if (errors.length > 0) throw new ProjectError(errors.map(formatFinding));
}

/** A version known only from a fork event (forked on another worker): parsed from the event's document. */
export function forkedModel(definition: Record<string, unknown>): { model?: ModelDefinition; problems: string[] } {
  return parseModelDefinition(forkDocument('ModelDefinition', definition));
}

export function forkedWorkflow(definition: Record<string, unknown>): WorkflowDefinition {
  return toWorkflowDefinition(forkDocument('Workflow', definition));
}

function forkDocument(kind: string, definition: Record<string, unknown>): ProjectDocument {
  const metadata = (definition.metadata ?? {}) as Record<string, unknown>;
  return { kind, name: String(metadata.name), version: String(metadata.schema_version ?? 'v1'), file: '(fork)', body: definition };
}

function findDuplicates(documents: ProjectDocument[]): string[] {
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const document of documents) {
    const key = `${document.name} ${document.version}`;
    if (seen.has(key)) problems.push(`${document.file}: Workflow ${key} is defined twice`);
    seen.add(key);
  }
  return problems;
}
