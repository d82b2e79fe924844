// An Agent step on a drive: the agent loop's host (journal, checkpoints, steers, tools) over the run's journal.
import type { RecordedEvent } from '../../eventstore/types.js';
import type { JsonObject } from '../../kernel/json.js';
import { runEvent, type RunEventData } from '../events.js';
import type { StepDefinition } from '../../workflows/definition.js';
import { runAgent, type AgentDeps, type AgentHost } from './agent.js';
import { DriveStopped, timesRun, type Drive, type DriveWriter } from './drive.js';
import { stepEvents } from './outcome.js';
import { isTerminal } from '../state.js';
import { STEP_EXECUTORS } from './steps/index.js';
import type { StepDeps, StepOutcome } from './steps/types.js';

export interface AgentStepDeps {
  steps: StepDeps;
  /** AgentModels and artifacts; without them an Agent step fails with a clear error. */
  agents?: AgentDeps | undefined;
}

/** An agent step: journal as it goes; pauses, approvals and aborts stop the drive mid-step. */
export async function runAgentStep(drive: Drive, step: StepDefinition, writer: DriveWriter, deps: AgentStepDeps): Promise<void> {
  const started = performance.now();
  const resuming = isStepOpen(drive.journal, step.id);
  if (!resuming) {
    writer.push(drive, runEvent('step_started', {}, step));
    await writer.flush(drive);
  }
  const startIndex = lastStepStart(drive.journal, step.id) ?? drive.journal.length;
  const agentDeps = deps.agents;
  if (!agentDeps) {
    for (const event of stepEvents(drive.workflow, step, { signal: 'error', changes: { set: { _last_error: { message: 'no AgentModel is configured', step: step.id } }, unset: [] } }, 0)) writer.push(drive, event);
    await writer.flush(drive);
    return;
  }
  const consumedSteers = drive.journal.filter((e) => e.type === 'llm_turn').reduce((n, e) => n + (((e.data as RunEventData).payload.steers as string[] | undefined)?.length ?? 0), 0);
  let steersTaken = 0;
  const host: AgentHost = {
    runId: drive.runId,
    workflow: drive.workflow,
    step,
    context: drive.state.context,
    principal: drive.state.principal,
    prior: drive.journal.slice(startIndex + 1).map((e) => ({ type: e.type, payload: (e.data as RunEventData).payload })),
    aborted: drive.aborted.signal,
    journal: async (events) => {
      for (const event of events) writer.push(drive, event);
      try {
        await writer.flush(drive);
      } catch (error) {
        if (error instanceof DriveStopped) return false;
        throw error;
      }
      // A pause that came in with this append stops the agent here too; it resumes from its journal.
      return isRunnable(drive, writer);
    },
    checkpoint: async () => {
      if (drive.interrupted) {
        drive.interrupted = false;
        await writer.catchUp(drive);
      }
      return isRunnable(drive, writer);
    },
    takeSteers: () => {
      const fresh = drive.state.steers.slice(consumedSteers + steersTaken);
      steersTaken += fresh.length;
      return fresh;
    },
    runTool: async (target, args, resultEvents) => {
      const execute = STEP_EXECUTORS[target.kind];
      const toolStep = { ...target, config: { ...target.config, params: { ...((target.config.params as JsonObject | undefined) ?? {}), ...args } } };
      const input = { runId: drive.runId, workflow: drive.workflow, step: toolStep, context: { ...drive.state.context, ...args }, principal: drive.state.principal, at: writer.now(), visit: timesRun(drive, target.id) };
      let outcome: StepOutcome | undefined;
      try {
        if (target.kind === 'ModelOp') {
          await writer.flush(drive, async (tx) => resultEvents((outcome = await execute(input, deps.steps, tx))));
        } else {
          outcome = await execute(input, deps.steps);
          for (const event of resultEvents(outcome)) writer.push(drive, event);
          await writer.flush(drive);
        }
      } catch (error) {
        if (error instanceof DriveStopped) return undefined;
        throw error;
      }
      return drive.fenced || isTerminal(drive.state.status) ? undefined : outcome;
    },
  };
  const result = await runAgent(host, agentDeps);
  if ('stopped' in result || drive.fenced || isTerminal(drive.state.status)) return;
  for (const event of stepEvents(drive.workflow, step, result.outcome, Math.round(performance.now() - started))) writer.push(drive, event);
  await writer.flush(drive);
}

/** Whether the agent may go on: a requested pause takes effect first (nothing of the run runs now). */
async function isRunnable(drive: Drive, writer: DriveWriter): Promise<boolean> {
  try {
    await writer.pauseIfRequested(drive);
  } catch (error) {
    if (error instanceof DriveStopped) return false;
    throw error;
  }
  return !drive.fenced && !isTerminal(drive.state.status) && drive.state.status !== 'paused';
}

/** Whether the step's latest step_started has no step_completed/step_failed after it (a resume mid-step). */
function isStepOpen(journal: readonly RecordedEvent[], stepId: string): boolean {
  for (let i = journal.length - 1; i >= 0; i--) {
    const event = journal[i]!;
    if ((event.data as RunEventData).agent_id !== stepId) continue;
    if (event.type === 'step_completed' || event.type === 'step_failed') return false;
    if (event.type === 'step_started') return true;
  }
  return false;
}

/** Index in the journal of the step's latest step_started. */
function lastStepStart(journal: readonly RecordedEvent[], stepId: string): number | undefined {
  for (let i = journal.length - 1; i >= 0; i--) {
    const event = journal[i]!;
    if (event.type === 'step_started' && (event.data as RunEventData).agent_id === stepId) return i;
  }
  return undefined;
}
