// Step executors by kind. HumanInTheLoop, Agent, Wait and Workflow steps are the executor's own (they wait and journal
// as they go): their entries here only fail a step that reaches them some other way.
import type { StepKind } from '../../../workflows/definition.js';
import { executeApiCall } from './apiCall.js';
import { executeFunctional } from './functional.js';
import { executeMcp } from './mcp.js';
import { executeModelOp } from './modelOp.js';
import { executeResponse } from './response.js';
import { executeRouter } from './router.js';
import { errorOutcome, type StepExecutor } from './types.js';

const runByExecutor =
  (kind: StepKind): StepExecutor =>
  async ({ step }) =>
    errorOutcome(`${kind} steps are run by the executor`, { step: step.id });

export const STEP_EXECUTORS: Record<StepKind, StepExecutor> = {
  Functional: executeFunctional,
  Router: executeRouter,
  Response: executeResponse,
  ModelOp: executeModelOp,
  APICall: executeApiCall,
  Agent: runByExecutor('Agent'),
  MCP: executeMcp,
  HumanInTheLoop: runByExecutor('HumanInTheLoop'),
  Wait: runByExecutor('Wait'),
  Workflow: runByExecutor('Workflow'),
};
