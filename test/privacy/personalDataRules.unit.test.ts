// spec.personal_data's shape (V047, V048) and what a run event's sealing touches: the listed top-level keys only.
import { expect } from 'chai';
import { ModelRegistry } from '../../src/models/registry.js';
import { sealRunEvent, type RunSealer } from '../../src/runs/personal.js';
import { DOCUMENT_FLAGS } from '../../src/versions/overrides.js';
import { toWorkflowDefinition } from '../../src/workflows/definition.js';
import { validateWorkflows } from '../../src/workflows/validate.js';

const workflow = (personalData: unknown) =>
  toWorkflowDefinition({
    kind: 'Workflow',
    name: 'w',
    version: 'v1',
    file: 'workflows/w.yaml',
    body: {
      kind: 'Workflow',
      metadata: { name: 'w' },
      spec: {
        ...(personalData === undefined ? {} : { personal_data: personalData }),
        trigger: { http: { path: '/w', method: 'POST' } },
        steps: [{ id: 'r', kind: 'Response', mapping: {} }],
      },
    },
  });
const errorsOf = (personalData: unknown) =>
  validateWorkflows({
    workflows: [workflow(personalData)],
    models: new ModelRegistry([], DOCUMENT_FLAGS),
    runners: new Set(),
    isEnabled: () => true,
    artifactTypes: () => [],
    agentModels: new Set(),
  })
    .filter((f) => f.severity === 'error')
    .map((f) => f.code);

/** Marks what it seals instead of encrypting: the shape is what is under test here. */
const sealer: RunSealer = { keys: new Set(['email', 'contact']), seal: (text) => `sealed(${text})` };

describe('spec.personal_data rules', () => {
  it('accepts a list of key names and reads it', () => {
    expect(errorsOf(undefined)).to.deep.equal([]);
    expect(errorsOf(['email', 'phone_number'])).to.deep.equal([]);
    expect(workflow(['email', 'phone_number']).personalData).to.deep.equal(['email', 'phone_number']);
    expect(workflow(undefined).personalData).to.deep.equal([]);
  });

  it('V047: not a list of strings; V048: not a top-level key name, or listed twice', () => {
    expect(errorsOf('email')).to.deep.equal(['V047']);
    expect(errorsOf([{ email: true }])).to.deep.equal(['V047']);
    expect(errorsOf(['contact.email'])).to.deep.equal(['V048']);
    expect(errorsOf(['email', 'email'])).to.deep.equal(['V048']);
  });

  it('seals the listed top-level keys of input, context changes, displays and output, as JSON text', () => {
    const started = { type: 'run_started', data: { agent_id: 'run', engine: 'Workflow', payload: { input: { email: 'a@b.c', plan: 'pro' } } } };
    expect(sealRunEvent(sealer, started).data.payload.input).to.deep.equal({ email: 'sealed("a@b.c")', plan: 'pro' });
    expect(started.data.payload.input.email, 'the event given is not changed').to.equal('a@b.c');
    const step = {
      type: 'step_completed',
      data: { agent_id: 's', engine: 'Functional', payload: { changes: { set: { contact: { email: 'a@b.c' }, _response: { email: 'a@b.c' } }, unset: [] } } },
    };
    expect(sealRunEvent(sealer, step).data.payload.changes.set).to.deep.equal({
      contact: 'sealed({"email":"a@b.c"})',
      _response: { email: 'sealed("a@b.c")' },
    });
    const other = { type: 'decision', data: { agent_id: 's', engine: 'Router', payload: { email: 'a@b.c' } } };
    expect(sealRunEvent(sealer, other), 'other events are not touched').to.equal(other);
  });
});
