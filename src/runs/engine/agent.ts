// Agent steps: one completion, or an autonomous loop whose tools are other steps. Every LLM turn,
// tool call and tool result is journaled as it happens, so a resume continues the conversation from
// the journal without asking the model (or running a tool) again.
import { checkGuardrails } from '../../agents/guardrails.js';
import type { ChatAnswer } from '../../agents/llm.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../kernel/json.js';
import { describeFailure } from '../../outbound/failure.js';
import { outboundRefusalIn } from '../../outbound/fetch.js';
import { agentEvent, failure, progressEvent, STOPPED, type AgentHost, type AgentResult, type AgentRun } from './agentRun.js';
import { setUpAgent, type AgentDeps } from './agentSetup.js';
import { evolveAgent, userMessage } from './agentState.js';
import { callTools } from './agentTools.js';

export async function runAgent(host: AgentHost, deps: AgentDeps): Promise<AgentResult> {
  const run = await setUpAgent(host, deps);
  return 'host' in run ? loop(run) : run;
}

/** Tool calls of the last answer first, then the next turn, until an answer without tool calls (or a limit). */
async function loop(run: AgentRun): Promise<AgentResult> {
  const { host, config, maxIterations } = run;
  for (;;) {
    const { lastAnswer } = run.state;
    if (lastAnswer && lastAnswer.tool_calls.length > 0) {
      const ended = await callTools(run, lastAnswer);
      if (ended) return ended;
    } else if (lastAnswer) {
      return answerOutcome(run, lastAnswer);
    }
    const { iteration, tokens } = run.state;
    if (iteration >= maxIterations) return failure(host.step, `no answer after ${maxIterations} iterations`, 'max_iterations');
    if (config.token_budget !== undefined && tokens >= config.token_budget)
      return failure(host.step, `token budget ${config.token_budget} used up`, 'budget_exceeded');
    // Between iterations: a pause or abort takes effect here.
    if (!(await host.checkpoint())) return STOPPED;
    const ended = await askModel(run);
    if (ended) return ended;
  }
}

/** One turn: the model answers the conversation (with the steers that came in); undefined when the loop goes on. */
async function askModel(run: AgentRun): Promise<AgentResult | undefined> {
  const { host, config } = run;
  const steers = host.takeSteers();
  let answer: ChatAnswer;
  try {
    answer = await run.client.chat([...run.state.conversation, ...steers.map(userMessage)], run.toolSpecs, run.jsonOutput, host.aborted);
  } catch (error) {
    // The run was aborted under the call: the run has ended, there is no step outcome to give.
    if (host.aborted.aborted) return STOPPED;
    return failure(host.step, `the model call failed: ${outboundRefusalIn(error)?.message ?? describeFailure(error)}`);
  }
  const tokens = run.state.tokens + answer.usage.total_tokens;
  const turn = agentEvent(run, 'llm_turn', { iteration: run.state.iteration + 1, steers, response: answer, tokens_used: tokens, model: run.model.model });
  run.state = evolveAgent(run.state, turn);
  const events = run.autonomous ? [turn, progressEvent(run, { type: 'iteration', tool_calls: answer.tool_calls.length })] : [turn];
  if (!(await host.append(events))) return STOPPED;
  if (config.token_budget !== undefined && tokens > config.token_budget)
    return failure(host.step, `token budget ${config.token_budget} exceeded (${tokens})`, 'budget_exceeded');
  return undefined;
}

/** An answer without tool calls ends the step: its text (or JSON) is written, its outcome is the signal. */
async function answerOutcome(run: AgentRun, answer: ChatAnswer): Promise<AgentResult> {
  const { host, config, jsonOutput } = run;
  const text = answer.content ?? '';
  const violation = checkGuardrails(text, run.guards.output, jsonOutput);
  if (violation) return failure(host.step, `output guardrail: ${violation}`, 'guardrail_violation');
  let value: JsonValue = text;
  if (jsonOutput) {
    try {
      value = JSON.parse(text) as JsonValue;
    } catch {
      return failure(host.step, 'the model did not answer JSON');
    }
  }
  const outcome = config.outcome ?? {};
  let signal = 'default';
  if (outcome.enum && outcome.enum.length > 0) {
    const chosen = jsonOutput ? (isJsonObject(value) ? value.outcome : undefined) : text.trim();
    if (typeof chosen !== 'string' || !outcome.enum.includes(chosen))
      return failure(host.step, `the outcome ${JSON.stringify(chosen ?? null)} is not one of ${outcome.enum.join(', ')}`);
    signal = chosen;
    // A text outcome is written as the value it was matched as, without the model's whitespace.
    if (!jsonOutput) value = chosen;
  }
  const set: JsonObject = { ...changedKeys(host.context, run.state.context), [outcome.write ?? host.step.id]: value };
  if (run.autonomous) await host.append([progressEvent(run, { type: 'outcome', signal })]);
  // Like a Router's choice, the agent's outcome is journaled as a decision (SPEC: Router and Agent outcomes).
  const decision = agentEvent(run, 'decision', { decision: signal, source: 'agent' });
  return { outcome: { signal, changes: { set, unset: [] }, report: { iterations: run.state.iteration, tokens_used: run.state.tokens }, events: [decision] } };
}

function changedKeys(before: JsonObject, after: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(after).filter(([key, value]) => JSON.stringify(before[key]) !== JSON.stringify(value)));
}
