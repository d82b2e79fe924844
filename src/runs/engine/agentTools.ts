// An Agent's tool calls: each is another step of the workflow, run with the model's arguments once
// its guardrails (and, when the tool asks for one, a person's approval) let it. Every call and result
// is journaled, so a resume never journals a call twice nor runs a tool whose result is recorded.
import { checkGuardrails } from '../../agents/guardrails.js';
import type { ChatAnswer, ToolCall } from '../../agents/llm.js';
import { newId } from '../../kernel/ids.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../kernel/json.js';
import type { Approval, RunEvent } from '../events.js';
import type { StepDefinition } from '../../workflows/definition.js';
import { agentEvent, failure, progressEvent, STOPPED, type AgentResult, type AgentRun, type ToolConfig } from './agentRun.js';
import { callKey, evolveAgent } from './agentState.js';
import type { StepOutcome } from './steps/types.js';
import { publicView } from '../../workflows/template.js';

/** How a tool call went: answered (the loop goes on), stopped (paused, ended, waiting for approval), or the step's end. */
type CallEnd = 'done' | 'stop' | AgentResult;

/** Runs the last answer's tool calls that have no result yet; undefined when the loop goes on. */
export async function callTools(run: AgentRun, answer: ChatAnswer): Promise<AgentResult | undefined> {
  for (const call of answer.tool_calls) {
    if (run.state.results.has(callKey(run.state.iteration, call.id))) continue;
    const end = await callTool(run, call);
    if (end === 'stop') return STOPPED;
    if (end !== 'done') return end;
  }
  return undefined;
}

async function callTool(run: AgentRun, call: ToolCall): Promise<CallEnd> {
  const tool = run.tools.find((t) => t.ref === call.name);
  const target = tool ? run.host.workflow.steps.find((s) => s.id === tool.ref) : undefined;
  const parsed = parseArguments(call.arguments);
  if (typeof parsed === 'string') return answerWithError(run, call, { error: `malformed arguments: ${parsed}` });
  if (!tool || !target) return answerWithError(run, call, { error: `unknown tool ${call.name}` });
  const violation = checkGuardrails(JSON.stringify(parsed), run.guards.tools, true);
  if (violation) return failure(run.host.step, `tool guardrail: ${violation}`, 'guardrail_violation');
  const approved = tool.approval ? await approvedArguments(run, call, tool, target, parsed) : { args: parsed };
  if ('end' in approved) return approved.end;
  return runToolStep(run, call, tool, target, approved.args);
}

/** The arguments as a JSON object, or what is wrong with them. */
function parseArguments(text: string): JsonObject | string {
  try {
    const parsed = JSON.parse(text || '{}') as JsonValue;
    return isJsonObject(parsed) ? parsed : 'arguments must be a JSON object';
  } catch (error) {
    return (error as Error).message;
  }
}

/** A tool that needs approval: asked for once, then run with the decision's arguments (a person may edit them). */
async function approvedArguments(
  run: AgentRun,
  call: ToolCall,
  tool: ToolConfig,
  target: StepDefinition,
  args: JsonObject,
): Promise<{ args: JsonObject } | { end: CallEnd }> {
  const key = callKey(run.state.iteration, call.id);
  const decided = run.state.decisions.get(key);
  if (!decided) {
    if (!run.state.requested.has(key))
      await run.host.append([agentEvent(run, 'approval_requested', { approval: toolApproval(run, call, tool, target, args) })]);
    return { end: 'stop' };
  }
  if (decided.decision === 'reject') return { end: await answerWithError(run, call, { rejected: true, error: 'a human rejected this tool call' }) };
  if (decided.decision !== 'edit' || !decided.edited_args) return { args };
  // What a person typed in is checked like what the model asked for.
  const violation = checkGuardrails(JSON.stringify(decided.edited_args), run.guards.tools, true);
  if (violation) return { end: failure(run.host.step, `tool guardrail (edited arguments): ${violation}`, 'guardrail_violation') };
  return { args: decided.edited_args };
}

function toolApproval(run: AgentRun, call: ToolCall, tool: ToolConfig, target: StepDefinition, args: JsonObject): Approval {
  const { host } = run;
  return {
    approval_id: newId(),
    kind: 'tool',
    step_id: host.step.id,
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
}

/** Journals the call (once), runs the tool's step and takes its result into the conversation. */
async function runToolStep(run: AgentRun, call: ToolCall, tool: ToolConfig, target: StepDefinition, args: JsonObject): Promise<CallEnd> {
  if (!run.state.calls.has(callKey(run.state.iteration, call.id))) {
    const called = agentEvent(run, 'tool_call', { iteration: run.state.iteration, call_id: call.id, tool: tool.ref, args });
    const progress = progressEvent(run, { type: 'tool_call', tool: tool.ref, tool_calls: run.state.lastAnswer?.tool_calls.length ?? 1 });
    if (!(await run.host.append([called, progress]))) return 'stop';
    run.state = evolveAgent(run.state, called);
  }
  let result: RunEvent | undefined;
  const outcome = await run.host.runTool(target, args, (done) => [(result = toolResult(run, call, tool.ref, done))]);
  if (!outcome || !result) return 'stop';
  run.state = evolveAgent(run.state, result);
  return 'done';
}

function toolResult(run: AgentRun, call: ToolCall, tool: string, outcome: StepOutcome): RunEvent {
  const { set } = outcome.changes;
  return agentEvent(run, 'tool_result', {
    iteration: run.state.iteration,
    call_id: call.id,
    tool,
    signal: outcome.signal,
    result: publicView(set),
    changes: set,
  });
}

/** The call is answered with an error the model sees (it may try again); nothing runs. */
async function answerWithError(run: AgentRun, call: ToolCall, result: JsonObject): Promise<'done' | 'stop'> {
  const answered = agentEvent(run, 'tool_result', { iteration: run.state.iteration, call_id: call.id, tool: call.name, signal: 'error', result, changes: {} });
  run.state = evolveAgent(run.state, answered);
  return (await run.host.append([answered])) ? 'done' : 'stop';
}
