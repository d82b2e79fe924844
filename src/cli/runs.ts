// `svc runs export|import|replay`: moving runs between instances and checking them against today's code.
import { openDataKeys } from '../privacy/boot.js';
import { openRunEvents, runSealerOf } from '../runs/personal.js';
import type { RunState } from '../runs/state.js';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Pool } from '../db/pool.js';
import { EventStore } from '../eventstore/store.js';
import { replayRun, type ReplayLine } from '../runs/engine/replay.js';
import { asRunEvent, runStream, type RunEvent } from '../runs/events.js';
import { exportedRunEvent, exportRun, importRun, type RunExport } from '../runs/transfer.js';
import { verifyExport } from '../runs/signedExport.js';
import { loadSigningKeys } from '../iam/keys.js';
import { trustedKeys } from './audit.js';
import { ProjectionRegistry } from '../projections/registry.js';
import { prepareModelTables } from '../models/boot.js';
import { RecordCommands } from '../models/records.js';
import { ModelRegistry } from '../models/registry.js';
import { forkedWorkflow, loadProject } from '../app/project.js';
import { DOCUMENT_FLAGS } from '../versions/overrides.js';
import { WorkflowRegistry } from '../workflows/registry.js';
import type { JsonObject } from '../kernel/json.js';
import { withCausation, type Causation } from '../kernel/causation.js';
import { loadSettings } from '../config/settings.js';
import { createOutbound } from '../outbound/fetch.js';

async function projectStore(pool: Pool, projectDir: string) {
  const settings = loadSettings();
  const project = await loadProject(projectDir, settings);
  await prepareModelTables(pool, project.models);
  const registry = new ProjectionRegistry();
  project.projections.forEach((p) => registry.register(p));
  const store = new EventStore({ pool, projector: registry });
  return {
    settings,
    project,
    store,
    workflows: new WorkflowRegistry(project.workflows, DOCUMENT_FLAGS),
    models: new ModelRegistry(project.models, DOCUMENT_FLAGS),
  };
}

/** Signed with SVC_SIGNING_KEY; with an ephemeral key nobody can verify the export later, so one is required. */
export async function exportCommand(pool: Pool, projectDir: string, runId: string): Promise<void> {
  const { settings, store, workflows } = await projectStore(pool, projectDir);
  if (!settings.signingKeyHex) throw new Error('SVC_SIGNING_KEY is not set: an export is signed with the service key');
  const keys = await loadSigningKeys(settings.signingKeyHex);
  const dataKeys = await openDataKeys(pool, settings, false);
  process.stdout.write(`${JSON.stringify(await exportRun(pool, store, workflows, runId, keys, dataKeys), null, 2)}\n`);
}

/** Whoever runs the CLI against the database; it has no user of svc's. */
const CLI_CAUSATION: Causation = { actor: { type: 'system', id: 'cli' }, source: 'cli' };

/** `resume`: an unfinished run is imported too, and a service on this database continues it. */
export async function importCommand(
  pool: Pool,
  projectDir: string,
  file: string,
  options: { resume: boolean; jwks?: string; unverified: boolean },
): Promise<void> {
  const { store, settings, workflows } = await projectStore(pool, projectDir);
  const document: unknown = JSON.parse(await readFile(file, 'utf8'));
  const dataKeys = await openDataKeys(pool, settings, false);
  // The run's spec.personal_data is sealed again as it is stored (the export shows it opened).
  const sealerOf = async (state: RunState) => {
    const workflow = workflows.find(state.workflow, state.schemaVersion);
    return workflow ? runSealerOf(dataKeys, workflow, state.runId, state.principal) : undefined;
  };
  const importOptions = { resume: options.resume, unverified: options.unverified, trustedKeys: await trustedKeys(options.jwks), sealerOf };
  const { runId, status } = await withCausation(CLI_CAUSATION, () => importRun(store, document, importOptions));
  process.stdout.write(`imported run ${runId} (${status})\n`);
}

/** Checks an export offline: its signature against the JWKS (and SVC_SIGNING_KEY's key), and its hash chain. */
export async function verifyExportCommand(file: string, jwks: string | undefined): Promise<number> {
  const check = await verifyExport(JSON.parse(await readFile(file, 'utf8')) as JsonObject, await trustedKeys(jwks));
  process.stdout.write(`${JSON.stringify(check, null, 2)}\n`);
  return check.ok ? 0 : 1;
}

/** Replays a run from this database (by id) or from an export file; exit code 1 when any step differs. */
export async function replayCommand(pool: Pool, projectDir: string, target: string): Promise<number> {
  const { settings, project, store, workflows, models } = await projectStore(pool, projectDir);
  let journal: RunEvent[];
  const dataKeys = await openDataKeys(pool, settings, false);
  let name: string;
  let version: string;
  let definition: JsonObject | null = null;
  if (existsSync(target)) {
    const exported = JSON.parse(await readFile(target, 'utf8')) as RunExport;
    journal = exported.events.map(exportedRunEvent);
    ({ name, schema_version: version, definition } = exported.workflow);
  } else {
    // Sealed spec.personal_data is opened, as the run saw it (null once erased or expired).
    journal = (await openRunEvents(dataKeys, await store.readWholeStream(runStream(target)))).map((e) => asRunEvent(e));
    const started = journal[0];
    if (started?.type !== 'run_started') throw new Error(`no run ${target} in this database (and no such file)`);
    ({ workflow: name, schema_version: version } = started.data.payload);
  }
  const workflow = workflows.find(name, version) ?? (definition ? forkedWorkflow(definition) : undefined);
  if (!workflow) throw new Error(`workflow ${name} ${version} is neither in this project nor in the export`);
  // Replay answers APICall and MCP steps from the journal; the guard stands for anything that still reaches out.
  const outbound = createOutbound(settings.outbound);
  const lines = await replayRun(workflow, journal, {
    pool,
    runners: project.runners,
    models,
    records: new RecordCommands(store, dataKeys),
    fetch: outbound.fetch,
  }).finally(() => outbound.close());
  for (const line of lines) process.stdout.write(`${line.verdict} ${line.step} (${line.kind})${line.detail ? `: ${line.detail}` : ''}\n`);
  const count = (verdict: ReplayLine['verdict']) => lines.filter((l) => l.verdict === verdict).length;
  const differing = count('DIFF');
  process.stdout.write(`${lines.length} steps: ${count('SAME')} same, ${differing} different, ${count('KEPT')} kept\n`);
  // KEPT steps were not compared, so they neither pass nor fail the replay.
  return differing > 0 ? 1 : 0;
}
