// Agent steps: one completion, or an autonomous loop whose tools are other steps. Every LLM turn,
// tool call and tool result is journaled as it happens, so a resume continues the conversation from
// the journal without asking the model (or running a tool) again.
import type { AgentModelDefinition } from '../../agents/agentModel.js';
import { checkGuardrails, type Guardrail } from '../../agents/guardrails.js';
import { createLlmClient, type ChatAnswer, type ChatMessage, type LlmClient, type ToolCall, type ToolSpec } from '../../agents/llm.js';
import type { ArtifactCatalog } from '../../artifacts/catalog.js';
import { parseArtifactRef, type Artifact, type ArtifactType } from '../../artifacts/artifact.js';
import { isConnectionLoss } from '../../db/connectionLoss.js';
import type { NewEvent } from '../../eventstore/types.js';
import { newId } from '../../kernel/ids.js';
import type { JsonObject, JsonValue } from '../../kernel/json.js';
import { outboundRefusalIn, type OutboundFetch } from '../../outbound/fetch.js';
import { runEvent } from '../events.js';
import type { StepDefinition, WorkflowDefinition } from '../../workflows/definition.js';
import type { RunPrincipal } from '../state.js';
import type { StepOutcome } from './steps/types.js';
import { applyChanges, publicView, render } from '../../workflows/template.js';

export const RESERVED_EXITS = ['max_iterations', 'budget_exceeded', 'error', 'aborted', 'guardrail_violation'] as const;
const DEFAULT_MAX_ITERATIONS = 8;

export interface AgentDeps {
  models: ReadonlyMap<string, AgentModelDefinition>;
  artifacts: ArtifactCatalog;
  /** One client per AgentModel, made on first use. */
  clients?: Map<string, LlmClient>;
  /** Every model call goes through it (the destination policy). */
  fetch: OutboundFetch;
}

/** What the executor lends an agent step. */
export interface AgentHost {
  runId: string;
  workflow: WorkflowDefinition;
  step: StepDefinition;
  /** The run context when the step began (tool results are folded on top by the agent). */
  context: JsonObject;
  principal: RunPrincipal | null;
  /** Journal entries of this step so far (a resume finds its earlier turns here). */
  prior: { type: string; payload: JsonObject }[];
  /** Aborted when the run is: the model call in flight is cancelled. */
  aborted: AbortSignal;
  /** Appends and commits; false when the run must stop (aborted, fenced). */
  journal(events: NewEvent[]): Promise<boolean>;
  /** Merges control events; false when the run is paused or ended. */
  checkpoint(): Promise<boolean>;
  /** Steer messages not yet given to the model. */
  takeSteers(): string[];
  /** Runs another step of the workflow as a tool, journaling `tool_result` (with a ModelOp's write). */
  runTool(step: StepDefinition, args: JsonObject, result: (outcome: StepOutcome) => NewEvent[]): Promise<StepOutcome | undefined>;
}

export type AgentResult = { outcome: StepOutcome } | { stopped: true };

/** The artifacts one run may use (the catalog, bound to the run's tenant). */
interface ArtifactSource {
  resolve(ref: unknown, expectedType?: ArtifactType): Promise<Artifact | undefined>;
}

interface ToolConfig {
  ref: string;
  approval?: boolean;
  required_group?: string;
  parameters?: JsonObject;
}

interface AgentConfig {
  model?: string;
  system?: string;
  prompt?: string;
  steering?: string | string[];
  tools?: ToolConfig[];
  max_iterations?: number;
  token_budget?: number;
  guardrails?: { input?: string | string[]; output?: string | string[]; tools?: string | string[] };
  outcome?: { enum?: string[]; write?: string; format?: 'json' | 'text' };
}

/** A tool call's identity: the turn that asked for it and the id the model gave it. */
const callKey = (turn: number, callId: string): string => `${turn}:${callId}`;

const asList = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

export async function runAgent(host: AgentHost, deps: AgentDeps): Promise<AgentResult> {
  const { step } = host;
  const config = (step.config.agent ?? {}) as AgentConfig;
  const autonomous = step.config.mode === 'autonomous';
  const fail = (message: string, signal: string = 'error'): AgentResult => ({
    outcome: { signal, changes: { set: { _last_error: { message, step: step.id } }, unset: [] } },
  });
  const model = deps.models.get(String(config.model ?? ''));
  if (!model) return fail(`AgentModel ${String(config.model)} is not loaded`);
  // References resolve against the project files and the uploads of the run's tenant only.
  const tenant = host.principal?.tenant ?? null;
  const artifacts: ArtifactSource = { resolve: (ref, type) => deps.artifacts.resolve(tenant, ref, type) };
  const clients = (deps.clients ??= new Map());
  let client = clients.get(model.name);
  if (!client) clients.set(model.name, (client = createLlmClient(model, deps.fetch)));

  let guards: { input: Guardrail[]; output: Guardrail[]; tools: Guardrail[] };
  let conversation: ChatMessage[];
  try {
    guards = {
      input: await loadGuardrails(artifacts, asList(config.guardrails?.input)),
      output: await loadGuardrails(artifacts, asList(config.guardrails?.output)),
      tools: await loadGuardrails(artifacts, asList(config.guardrails?.tools)),
    };
    conversation = await openingMessages(config, host.context, artifacts);
  } catch (error) {
    // Artifacts come from the database: its going away is no fault of the step's configuration.
    if (isConnectionLoss(error)) throw error;
    return fail((error as Error).message);
  }
  const prompt = String(conversation.at(-1)?.content ?? '');
  const inputViolation = checkGuardrails(prompt, guards.input);
  if (inputViolation) return fail(`input guardrail: ${inputViolation}`, 'guardrail_violation');

  const tools = autonomous ? (config.tools ?? []) : [];
  const toolSpecs: ToolSpec[] = tools.map((tool) => {
    const target = host.workflow.steps.find((s) => s.id === tool.ref);
    return { name: tool.ref, description: target?.description ?? `Runs step ${tool.ref}`, parameters: tool.parameters ?? { type: 'object', additionalProperties: true } };
  });
  const maxIterations = autonomous ? Math.max(1, Number(config.max_iterations ?? DEFAULT_MAX_ITERATIONS)) : 1;
  const jsonOutput = config.outcome?.format === 'json';

  // Rebuild the loop's state from what this step already journaled. Tool calls are known by their
  // turn and id together: a model may use the same id again in a later turn (callKey).
  let context = host.context;
  let iteration = 0;
  let tokens = 0;
  let lastAnswer: ChatAnswer | undefined;
  const results = new Set<string>();
  const calls = new Set<string>();
  /** Approvals asked for, by call key -> approval id; and their decisions, by call key. */
  const requested = new Map<string, string>();
  const decisions = new Map<string, JsonObject>();
  for (const { type, payload } of host.prior) {
    // Older entries without `iteration` belong to the latest turn, which is where they are journaled.
    const key = () => callKey(typeof payload.iteration === 'number' ? payload.iteration : iteration, String(payload.call_id));
    if (type === 'llm_turn') {
      iteration = Number(payload.iteration);
      tokens = Number(payload.tokens_used ?? 0);
      for (const steer of (payload.steers as string[] | undefined) ?? []) conversation.push({ role: 'user', content: steer });
      lastAnswer = payload.response as unknown as ChatAnswer;
      conversation.push(assistantMessage(lastAnswer));
    } else if (type === 'tool_call') {
      calls.add(key());
    } else if (type === 'tool_result') {
      results.add(key());
      context = applyChanges(context, { set: (payload.changes as JsonObject | undefined) ?? {}, unset: [] });
      conversation.push(toolMessage(String(payload.call_id), payload));
    } else if (type === 'approval_requested') {
      const approval = payload.approval as JsonObject;
      if (approval.call_id !== undefined) requested.set(callKey(iteration, String(approval.call_id)), String(approval.approval_id));
    } else if (type === 'approval_decided' && payload.call_id !== undefined) {
      // A decision belongs to the approval this step asked for in the same turn.
      const asked = callKey(iteration, String(payload.call_id));
      if (requested.get(asked) === payload.approval_id) decisions.set(asked, payload);
    }
  }
  const progress = (payload: JsonObject) => runEvent('agent_progress', { ...payload, iteration, tokens_used: tokens }, { id: step.id, kind: 'Agent' });

  for (;;) {
    if (lastAnswer && lastAnswer.tool_calls.length > 0) {
      for (const call of lastAnswer.tool_calls) {
        if (results.has(callKey(iteration, call.id))) continue;
        const toolResult = await callTool(call);
        if (toolResult === 'stop') return { stopped: true };
        if (toolResult !== 'done') return toolResult;
      }
    } else if (lastAnswer) {
      return finalOutcome(lastAnswer);
    }
    if (iteration >= maxIterations) return fail(`no answer after ${maxIterations} iterations`, 'max_iterations');
    if (config.token_budget !== undefined && tokens >= config.token_budget) return fail(`token budget ${config.token_budget} used up`, 'budget_exceeded');
    // Between iterations: a pause or abort takes effect here.
    if (!(await host.checkpoint())) return { stopped: true };
    const steers = host.takeSteers();
    for (const steer of steers) conversation.push({ role: 'user', content: steer });
    let answer: ChatAnswer;
    try {
      answer = await client.chat(conversation, toolSpecs, jsonOutput, host.aborted);
    } catch (error) {
      // The run was aborted under the call: the run has ended, there is no step outcome to give.
      if (host.aborted.aborted) return { stopped: true };
      return fail(`the model call failed: ${(outboundRefusalIn(error) ?? (error as Error)).message}`);
    }
    iteration++;
    tokens += answer.usage.total_tokens;
    conversation.push(assistantMessage(answer));
    lastAnswer = answer;
    const turn = runEvent('llm_turn', { iteration, steers, response: answer, tokens_used: tokens, model: model.model }, { id: step.id, kind: 'Agent' });
    if (!(await host.journal(autonomous ? [turn, progress({ type: 'iteration', tool_calls: answer.tool_calls.length })] : [turn]))) return { stopped: true };
    if (config.token_budget !== undefined && tokens > config.token_budget) return fail(`token budget ${config.token_budget} exceeded (${tokens})`, 'budget_exceeded');
  }

  /** Runs one tool call: 'done', 'stop' (run paused/ended or waiting for an approval), or a final result. */
  async function callTool(call: ToolCall): Promise<'done' | 'stop' | AgentResult> {
    const tool = tools.find((t) => t.ref === call.name);
    const target = tool ? host.workflow.steps.find((s) => s.id === tool.ref) : undefined;
    let args: JsonObject;
    try {
      const parsed = JSON.parse(call.arguments || '{}') as JsonValue;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('arguments must be a JSON object');
      args = parsed;
    } catch (error) {
      return (await recordResult(call, { error: `malformed arguments: ${(error as Error).message}` })) ? 'done' : 'stop';
    }
    if (!tool || !target) return (await recordResult(call, { error: `unknown tool ${call.name}` })) ? 'done' : 'stop';
    const violation = checkGuardrails(JSON.stringify(args), guards.tools, true);
    if (violation) return fail(`tool guardrail: ${violation}`, 'guardrail_violation');
    const key = callKey(iteration, call.id);
    if (tool.approval) {
      const decided = decisions.get(key);
      if (!decided) {
        if (!requested.has(key)) {
          const approval = {
            approval_id: newId(),
            kind: 'tool',
            step_id: step.id,
            call_id: call.id,
            workflow: host.workflow.name,
            title: `Run the tool ${tool.ref}`,
            instruction: target.description ?? null,
            form: { tool: tool.ref, args },
            display: { tool: tool.ref, args },
            required_group: tool.required_group ?? null,
            requester_id: host.principal?.user_id ?? null,
            tenant: host.principal?.tenant ?? null,
            expires_at: null,
          };
          await host.journal([runEvent('approval_requested', { approval }, { id: step.id, kind: 'Agent' })]);
        }
        return 'stop';
      }
      if (decided.decision === 'reject') return (await recordResult(call, { rejected: true, error: 'a human rejected this tool call' })) ? 'done' : 'stop';
      if (decided.decision === 'edit' && decided.edited_args) {
        // What a person typed in is checked like what the model asked for.
        args = decided.edited_args as JsonObject;
        const editViolation = checkGuardrails(JSON.stringify(args), guards.tools, true);
        if (editViolation) return fail(`tool guardrail (edited arguments): ${editViolation}`, 'guardrail_violation');
      }
    }
    if (!calls.has(key)) {
      const callEvent = runEvent('tool_call', { iteration, call_id: call.id, tool: tool.ref, args }, { id: step.id, kind: 'Agent' });
      if (!(await host.journal([callEvent, progress({ type: 'tool_call', tool: tool.ref, tool_calls: lastAnswer?.tool_calls.length ?? 1 })]))) return 'stop';
      calls.add(key);
    }
    const outcome = await host.runTool(target, args, (done) => [resultEvent(call, tool.ref, done)]);
    if (!outcome) return 'stop';
    results.add(key);
    context = applyChanges(context, { set: done(outcome).changes, unset: [] });
    conversation.push(toolMessage(call.id, done(outcome)));
    return 'done';
  }

  function done(outcome: StepOutcome): JsonObject & { changes: JsonObject } {
    return { signal: outcome.signal, result: publicView(outcome.changes.set), changes: outcome.changes.set };
  }

  function resultEvent(call: ToolCall, tool: string, outcome: StepOutcome): NewEvent {
    return runEvent('tool_result', { iteration, call_id: call.id, tool, ...done(outcome) }, { id: step.id, kind: 'Agent' });
  }

  async function recordResult(call: ToolCall, payload: JsonObject): Promise<boolean> {
    const body: JsonObject = { iteration, call_id: call.id, tool: call.name, signal: 'error', result: payload, changes: {} };
    const event = runEvent('tool_result', body, { id: step.id, kind: 'Agent' });
    results.add(callKey(iteration, call.id));
    // The model is told what the journal says, so a resumed conversation is the same one.
    conversation.push(toolMessage(call.id, body));
    return host.journal([event]);
  }

  async function finalOutcome(answer: ChatAnswer): Promise<AgentResult> {
    const text = answer.content ?? '';
    const violation = checkGuardrails(text, guards.output, jsonOutput);
    if (violation) return fail(`output guardrail: ${violation}`, 'guardrail_violation');
    const outcome = config.outcome ?? {};
    let value: JsonValue = text;
    if (jsonOutput) {
      try {
        value = JSON.parse(text) as JsonValue;
      } catch {
        return fail('the model did not answer JSON');
      }
    }
    let signal = 'default';
    if (outcome.enum && outcome.enum.length > 0) {
      const chosen = jsonOutput ? (value as JsonObject | null)?.outcome : text.trim();
      if (typeof chosen !== 'string' || !outcome.enum.includes(chosen)) return fail(`the outcome ${JSON.stringify(chosen ?? null)} is not one of ${outcome.enum.join(', ')}`);
      signal = chosen;
      // A text outcome is written as the value it was matched as, without the model's whitespace.
      if (!jsonOutput) value = chosen;
    }
    const set: JsonObject = { ...changedKeys(host.context, context), [outcome.write ?? step.id]: value };
    if (autonomous) await host.journal([progress({ type: 'outcome', signal })]);
    // Like a Router's choice, the agent's outcome is journaled as a decision (SPEC: Router and Agent outcomes).
    const decision = runEvent('decision', { decision: signal, source: 'agent' }, { id: step.id, kind: 'Agent' });
    return { outcome: { signal, changes: { set, unset: [] }, journal: { iterations: iteration, tokens_used: tokens }, events: [decision] } };
  }
}

function changedKeys(before: JsonObject, after: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(after).filter(([key, value]) => JSON.stringify(before[key]) !== JSON.stringify(value)));
}

function assistantMessage(answer: ChatAnswer): ChatMessage {
  return {
    role: 'assistant',
    content: answer.content,
    ...(answer.tool_calls.length > 0
      ? { tool_calls: answer.tool_calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) }
      : {}),
  };
}

function toolMessage(callId: string, payload: JsonObject): ChatMessage {
  return { role: 'tool', tool_call_id: callId, content: JSON.stringify({ signal: payload.signal ?? null, result: payload.result ?? null }) };
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
