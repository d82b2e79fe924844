// An Agent or MCP step whose artifacts (prompt, guardrails, MCP server) cannot be read because the
// database is away did not fail: the error goes up to the executor (which leaves the run to be
// resumed), it is not journaled as the step's failure.
import { expect } from 'chai';
import { ArtifactCatalog } from '../../src/artifacts/catalog.js';
import { isConnectionLoss } from '../../src/db/connectionLoss.js';
import { createPool, type Pool } from '../../src/db/pool.js';
import { runAgent } from '../../src/runs/engine/agent.js';
import type { AgentHost } from '../../src/runs/engine/agentRun.js';
import { executeMcp } from '../../src/runs/engine/steps/mcp.js';
import { createOutbound } from '../../src/outbound/fetch.js';
import type { StepDeps } from '../../src/runs/engine/steps/types.js';
import type { StepDefinition, WorkflowDefinition } from '../../src/workflows/definition.js';
import { freePort } from '../support/db.js';

describe('agents: artifacts unreadable for a lost database connection', () => {
  let pool: Pool;

  before(async () => {
    // Nothing listens there: every connection is refused, as while PostgreSQL is stopped.
    pool = createPool({ connectionString: `postgres://svc@127.0.0.1:${await freePort()}/svc`, max: 1 });
  });
  after(async () => {
    await pool?.end();
  });

  it('rejects with the connection loss instead of answering a failed step', async () => {
    const step = {
      id: 'think',
      kind: 'Agent',
      config: { mode: 'single', agent: { model: 'local', prompt: 'artifact://prompt_text', guardrails: { input: 'artifact://polite' } } },
    } as unknown as StepDefinition;
    const host = {
      runId: '00000000-0000-0000-0000-000000000000',
      workflow: { name: 'w', steps: [step] } as unknown as WorkflowDefinition,
      step,
      context: {},
      principal: null,
      prior: [],
      aborted: new AbortController().signal,
    } as unknown as AgentHost;
    const model = {
      name: 'local',
      provider: 'openai',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: 'unused',
      model: 'm',
      timeoutSeconds: 1,
      maxRetries: 0,
      file: 'x',
    } as const;
    const outcome = await runAgent(host, {
      models: new Map([['local', model]]),
      artifacts: new ArtifactCatalog(pool, []),
      fetch: createOutbound({ enforced: false, allow: [] }).fetch,
    }).then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
    expect(outcome, JSON.stringify(outcome)).to.have.property('error');
    expect(isConnectionLoss((outcome as { error: unknown }).error)).to.equal(true);
  });

  it('an MCP step rejects with the connection loss instead of answering a failed step', async () => {
    const step = { id: 'ask', kind: 'MCP', config: { mcp: { server: 'artifact://tools', tool: 'echo', arguments: {} } } } as unknown as StepDefinition;
    const deps = { pool, artifacts: new ArtifactCatalog(pool, []) } as unknown as StepDeps;
    const outcome = await executeMcp(
      { runId: 'r', workflow: { name: 'w', steps: [step] } as unknown as WorkflowDefinition, step, context: {}, principal: null, at: '' },
      deps,
    ).then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
    expect(outcome, JSON.stringify(outcome)).to.have.property('error');
    expect(isConnectionLoss((outcome as { error: unknown }).error)).to.equal(true);
  });
});
