// What an Agent step sets up before its loop: the AgentModel's client, guardrails, the opening
// messages (templates rendered, artifacts resolved in the run's tenant) and the tools it offers.
import type { AgentModelDefinition } from '../../agents/agentModel.js';
import { checkGuardrails, type Guardrail } from '../../agents/guardrails.js';
import { createLlmClient, type ChatMessage, type LlmClient, type ToolSpec } from '../../agents/llm.js';
import type { ArtifactCatalog } from '../../artifacts/catalog.js';
import { parseArtifactRef, type Artifact, type ArtifactType } from '../../artifacts/artifact.js';
import { isConnectionLoss } from '../../db/connectionLoss.js';
import type { JsonObject } from '../../kernel/json.js';
import type { OutboundFetch } from '../../outbound/fetch.js';
import { render } from '../../workflows/template.js';
import { failure, type AgentConfig, type AgentHost, type AgentResult, type AgentRun, type Guards } from './agentRun.js';
import { foldAgentEvents, initialAgentState } from './agentState.js';

const DEFAULT_MAX_ITERATIONS = 8;

export interface AgentDeps {
  models: ReadonlyMap<string, AgentModelDefinition>;
  artifacts: ArtifactCatalog;
  /** One client per AgentModel, made on first use. */
  clients?: Map<string, LlmClient>;
  /** Every model call goes through it (the destination policy). */
  fetch: OutboundFetch;
}

/** The artifacts one run may use (the catalog, bound to the run's tenant). */
interface ArtifactSource {
  resolve(ref: unknown, expectedType?: ArtifactType): Promise<Artifact | undefined>;
}

const asList = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** The step ready to loop, its state folded from what it already journaled; or the step's failure. */
export async function setUpAgent(host: AgentHost, deps: AgentDeps): Promise<AgentRun | AgentResult> {
  const { step } = host;
  const config = (step.config.agent ?? {}) as AgentConfig;
  const autonomous = step.config.mode === 'autonomous';
  const model = deps.models.get(String(config.model ?? ''));
  if (!model) return failure(step, `AgentModel ${String(config.model)} is not loaded`);
  // References resolve against the project files and the uploads of the run's tenant only.
  const tenant = host.principal?.tenant ?? null;
  const artifacts: ArtifactSource = { resolve: (ref, type) => deps.artifacts.resolve(tenant, ref, type) };
  let guards: Guards;
  let opening: ChatMessage[];
  try {
    guards = await loadGuards(artifacts, config);
    opening = await openingMessages(config, host.context, artifacts);
  } catch (error) {
    // Artifacts come from the database: its going away is no fault of the step's configuration.
    if (isConnectionLoss(error)) throw error;
    return failure(step, (error as Error).message);
  }
  const inputViolation = checkGuardrails(String(opening.at(-1)?.content ?? ''), guards.input);
  if (inputViolation) return failure(step, `input guardrail: ${inputViolation}`, 'guardrail_violation');
  const tools = autonomous ? (config.tools ?? []) : [];
  return {
    host,
    config,
    autonomous,
    model,
    client: clientOf(model, deps),
    guards,
    tools,
    toolSpecs: tools.map((tool) => {
      const target = host.workflow.steps.find((s) => s.id === tool.ref);
      return {
        name: tool.ref,
        description: target?.description ?? `Runs step ${tool.ref}`,
        parameters: tool.parameters ?? { type: 'object', additionalProperties: true },
      };
    }) satisfies ToolSpec[],
    maxIterations: autonomous ? Math.max(1, Number(config.max_iterations ?? DEFAULT_MAX_ITERATIONS)) : 1,
    jsonOutput: config.outcome?.format === 'json',
    state: foldAgentEvents(host.prior, initialAgentState(host.context, opening)),
  };
}

function clientOf(model: AgentModelDefinition, deps: AgentDeps): LlmClient {
  const clients = (deps.clients ??= new Map());
  let client = clients.get(model.name);
  if (!client) clients.set(model.name, (client = createLlmClient(model, deps.fetch)));
  return client;
}

async function loadGuards(artifacts: ArtifactSource, config: AgentConfig): Promise<Guards> {
  return {
    input: await loadGuardrails(artifacts, asList(config.guardrails?.input)),
    output: await loadGuardrails(artifacts, asList(config.guardrails?.output)),
    tools: await loadGuardrails(artifacts, asList(config.guardrails?.tools)),
  };
}

/** System (with steering artifacts appended) and user prompt, templates rendered, artifact refs resolved. */
async function openingMessages(config: AgentConfig, context: JsonObject, artifacts: ArtifactSource): Promise<ChatMessage[]> {
  const text = async (value: string | undefined): Promise<string> => {
    if (value === undefined) return '';
    const artifact = parseArtifactRef(value) ? await artifacts.resolve(value) : undefined;
    const source = artifact ? String(artifact.content) : value;
    const rendered = render(source, context);
    return typeof rendered === 'string' ? rendered : JSON.stringify(rendered);
  };
  const steering = await Promise.all(asList(config.steering).map(async (ref) => String((await artifacts.resolve(ref, 'steering'))?.content ?? '')));
  const system = [await text(config.system), ...steering].filter((part) => part.length > 0).join('\n\n');
  return [...(system ? [{ role: 'system' as const, content: system }] : []), { role: 'user', content: await text(config.prompt) }];
}

async function loadGuardrails(artifacts: ArtifactSource, refs: string[]): Promise<Guardrail[]> {
  const loaded: Guardrail[] = [];
  for (const ref of refs) {
    const artifact = await artifacts.resolve(ref, 'guardrail');
    if (!artifact) throw new Error(`guardrail ${ref} must be an artifact:// reference`);
    loaded.push({ name: artifact.name, content: artifact.content as JsonObject });
  }
  return loaded;
}
