// An Agent step on a drive: the agent loop's host (appends, checkpoints, steers, tools) over the run's journal.
import { runEvent, type RecordedRunEvent, type RunEvent } from '../events.js';
import type { StepDefinition } from '../../workflows/definition.js';
import { runAgent } from './agent.js';
import type { AgentHost } from './agentRun.js';
import type { AgentDeps } from './agentSetup.js';
import { DriveStopped, type Drive } from './drive.js';
import type { DriveWriter } from './driveWriter.js';
import { isTerminal } from '../state.js';
import { callStep, stepInput } from './stepCall.js';
import { attemptEvents, attemptOf } from './timed.js';
import { errorOutcome, type StepDeps, type StepOutcome } from './steps/types.js';

export interface AgentStepDeps {
  steps: StepDeps;
  /** AgentModels and artifacts; without them an Agent step fails with a clear error. */
  agents?: AgentDeps | undefined;
}

/** An agent step: journal as it goes; pauses, approvals and aborts stop the drive mid-step. */
export async function runAgentStep(drive: Drive, step: StepDefinition, writer: DriveWriter, deps: AgentStepDeps): Promise<void> {
  const started = performance.now();
  const opened = lastStepStart(drive.recorded, step.id);
  // A resume mid-step finds the step open: its step_started is not journaled again.
  if (opened === undefined) {
    writer.push(drive, runEvent('step_started', {}, step));
    await writer.flush(drive);
  }
  if (!deps.agents) return finishStep(drive, step, writer, errorOutcome('no AgentModel is configured', { step: step.id }), 0);
  const prior = drive.recorded.slice((opened ?? drive.recorded.length - 1) + 1);
  const result = await runAgent(agentHost(drive, step, writer, deps.steps, prior), deps.agents);
  if ('stopped' in result || drive.fenced || isTerminal(drive.state.status)) return;
  await finishStep(drive, step, writer, result.outcome, Math.round(performance.now() - started));
}

async function finishStep(drive: Drive, step: StepDefinition, writer: DriveWriter, outcome: StepOutcome, durationMs: number): Promise<void> {
  const attempt = attemptOf(drive, step.id);
  for (const event of attemptEvents({ workflow: drive.workflow, step, outcome, durationMs, attempt, now: new Date(writer.now()) })) writer.push(drive, event);
  await writer.flush(drive);
}

function agentHost(drive: Drive, step: StepDefinition, writer: DriveWriter, steps: StepDeps, prior: RunEvent[]): AgentHost {
  // Steers earlier turns took (of any Agent step of the run) are not given to the model again.
  const consumedSteers = drive.recorded.reduce((n, e) => n + (e.type === 'llm_turn' ? (e.data.payload.steers?.length ?? 0) : 0), 0);
  let steersTaken = 0;
  return {
    runId: drive.runId,
    workflow: drive.workflow,
    step,
    context: drive.state.context,
    principal: drive.state.principal,
    prior,
    aborted: drive.aborted.signal,
    append: async (events) => {
      for (const event of events) writer.push(drive, event);
      if (!(await flushUnlessStopped(drive, writer))) return false;
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
      try {
        const outcome = await callStep(drive, writer, steps, stepInput(drive, target, writer.now(), args), resultEvents);
        if (drive.pending.length > 0) await writer.flush(drive);
        return drive.fenced || isTerminal(drive.state.status) ? undefined : outcome;
      } catch (error) {
        if (error instanceof DriveStopped) return undefined;
        throw error;
      }
    },
  };
}

/** Flushes what is pending; false when the drive was stopped (its lease lost, the run ended elsewhere). */
async function flushUnlessStopped(drive: Drive, writer: DriveWriter): Promise<boolean> {
  try {
    await writer.flush(drive);
    return true;
  } catch (error) {
    if (error instanceof DriveStopped) return false;
    throw error;
  }
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

/**
 * Index in the journal of the step's latest step_started when the step is open (no step_completed or
 * step_failed after it: a resume mid-step); undefined when it is not.
 */
function lastStepStart(journal: readonly RecordedRunEvent[], stepId: string): number | undefined {
  for (let i = journal.length - 1; i >= 0; i--) {
    const event = journal[i]!;
    if (event.data.agent_id !== stepId) continue;
    // A failed attempt closes it too: the next attempt starts afresh.
    if (event.type === 'step_completed' || event.type === 'step_failed' || event.type === 'step_attempt_failed') return undefined;
    if (event.type === 'step_started') return i;
  }
  return undefined;
}
