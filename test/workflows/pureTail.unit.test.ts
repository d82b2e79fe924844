// Which steps end the run without touching the outside world (their predecessor's journal entry can wait for the end).
import { expect } from 'chai';
import { endsPurely, type StepDefinition, type WorkflowDefinition } from '../../src/workflows/definition.js';

function workflow(steps: Pick<StepDefinition, 'id' | 'kind' | 'routes'>[]): WorkflowDefinition {
  return {
    name: 'w',
    version: 'v1',
    description: null,
    enabledByDefault: true,
    requiredScope: null,
    requiredGroup: null,
    contextModels: [],
    trigger: { path: null, method: 'POST', isPublic: false, inputSchema: null, responseSchema: null, mcpEnabled: false, schedules: [] },
    concurrency: null,
    output: null,
    steps: steps.map((s) => ({ ...s, config: {} })),
    file: 'w.yaml',
    source: {},
  };
}

describe('endsPurely', () => {
  it('is true for a Response at the end and for Routers whose every branch ends purely', () => {
    const w = workflow([
      { id: 'work', kind: 'Functional', routes: {} },
      { id: 'pick', kind: 'Router', routes: { a: 'say', b: 'END' } },
      { id: 'say', kind: 'Response', routes: {} },
    ]);
    expect(endsPurely(w, 'say')).to.equal(true);
    expect(endsPurely(w, 'pick')).to.equal(true);
    expect(endsPurely(w, 'END')).to.equal(true);
    expect(endsPurely(w, 'work')).to.equal(false);
  });

  it('is false when any branch, or the default next step, reaches a step with effects', () => {
    const w = workflow([
      { id: 'pick', kind: 'Router', routes: { a: 'say', b: 'call' } },
      { id: 'say', kind: 'Response', routes: {} },
      { id: 'call', kind: 'APICall', routes: {} },
    ]);
    expect(endsPurely(w, 'pick')).to.equal(false);
    // `say` has no routes: its default goes on to `call`.
    expect(endsPurely(w, 'say')).to.equal(false);
  });

  it('is false for a loop of Routers (it never ends) and for an unknown step', () => {
    const w = workflow([
      { id: 'ping', kind: 'Router', routes: { x: 'pong' } },
      { id: 'pong', kind: 'Router', routes: { x: 'ping' } },
    ]);
    expect(endsPurely(w, 'ping')).to.equal(false);
    expect(endsPurely(w, 'nope')).to.equal(false);
  });
});
