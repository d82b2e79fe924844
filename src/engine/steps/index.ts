// Step executors by kind. HumanInTheLoop is the executor's own (it waits); Agent and MCP fail the step until they land.
import type { StepKind } from '../../workflows/definition.js';
import { executeApiCall } from './apiCall.js';
import { executeFunctional } from './functional.js';
import { executeMcp } from './mcp.js';
import { executeModelOp } from './modelOp.js';
import { executeResponse } from './response.js';
import { executeRouter } from './router.js';
import { errorOutcome, type StepExecutor } from './types.js';

const notYetSupported =
  (kind: StepKind): StepExecutor =>
  async ({ step }) =>
    errorOutcome(`step kind ${kind} is not supported by this version of svc`, { step: step.id });

export const STEP_EXECUTORS: Record<StepKind, StepExecutor> = {
  Functional: executeFunctional,
  Router: executeRouter,
  Response: executeResponse,
  ModelOp: executeModelOp,
  APICall: executeApiCall,
  Agent: notYetSupported('Agent'),
  MCP: executeMcp,
  HumanInTheLoop: async ({ step }) => errorOutcome('HumanInTheLoop steps are run by the executor', { step: step.id }),
};
