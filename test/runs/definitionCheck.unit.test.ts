// The check a resumed run passes first: every step its journal names is still defined, with the same kind.
import { expect } from 'chai';
import { definitionMismatch } from '../../src/runs/engine/definitionCheck.js';
import { runEvent, type RunEvent } from '../../src/runs/events.js';
import type { StepDefinition, WorkflowDefinition } from '../../src/workflows/definition.js';

const workflow = {
  name: 'orders',
  version: 'v2',
  steps: [
    { id: 'check', kind: 'Router' },
    { id: 'save', kind: 'ModelOp' },
  ] as StepDefinition[],
} as WorkflowDefinition;

const journal = (...steps: { id: string; kind: string }[]): RunEvent[] => [
  runEvent('run_started', { run_id: 'r', workflow: 'orders', schema_version: 'v2', input: {}, principal: null, trigger: 'api', first_step: 'check' }),
  ...steps.flatMap((step) => [
    runEvent('step_started', {}, step),
    runEvent('step_completed', { signal: 'default', duration_ms: 1, changes: { set: {}, unset: [] }, next: null }, step),
  ]),
  runEvent('pause_requested', { by: 'u' }),
];

describe('definitionMismatch', () => {
  it('passes a journal whose steps are all defined with their kinds, run-level events included', () => {
    expect(definitionMismatch(workflow, journal({ id: 'check', kind: 'Router' }, { id: 'save', kind: 'ModelOp' }))).to.equal(null);
    expect(definitionMismatch(workflow, [])).to.equal(null);
  });

  it('names a step journaled with another kind than the definition now gives it', () => {
    expect(definitionMismatch(workflow, journal({ id: 'check', kind: 'Router' }, { id: 'save', kind: 'APICall' }))).to.equal(
      "step save is in the run's journal as APICall, but workflow orders v2 defines it as ModelOp",
    );
  });

  it('names a journaled step the definition no longer has', () => {
    expect(definitionMismatch(workflow, journal({ id: 'lookup', kind: 'Functional' }))).to.equal(
      "step lookup is in the run's journal as Functional, but workflow orders v2 has no step lookup",
    );
  });
});
