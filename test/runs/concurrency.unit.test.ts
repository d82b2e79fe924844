// spec.concurrency without I/O: the admission decision, the slot a run's journal folds to, the key of
// a run, and the V-codes svc validate gives a bad concurrency (V037 limit, V038 on_limit, V039 key).
import { expect } from 'chai';
import { decideAdmission, freeSlots, type AdmitRun } from '../../src/runs/concurrency/decide.js';
import { decideControl } from '../../src/runs/control.js';
import { runEvent, type RunEvent } from '../../src/runs/events.js';
import { evolveRun, initialRunState, type RunState } from '../../src/runs/state.js';
import { ConcurrencyLimitError } from '../../src/kernel/errors.js';
import { ModelRegistry } from '../../src/models/registry.js';
import { DOCUMENT_FLAGS } from '../../src/versions/overrides.js';
import { concurrencyKeyOf, toConcurrency } from '../../src/workflows/concurrency.js';
import { toWorkflowDefinition } from '../../src/workflows/definition.js';
import { workflowManifest } from '../../src/workflows/manifest.js';
import { validateWorkflows } from '../../src/workflows/validate.js';

const policy = { limit: 2, key: null, onLimit: 'queue' as const };
const admit = (run: Partial<AdmitRun>) =>
  decideAdmission({ workflow: 'w', policy, key: '', holders: 0, waitingAhead: 0, isNew: true, isWaiting: false, ...run }).map((e) => e.type);

function fold(events: RunEvent[]): RunState {
  return events.reduce((state, event, i) => evolveRun(state, event, `2026-01-01T00:00:0${i}.000000Z`, i + 1), initialRunState);
}
const started = runEvent('run_started', { run_id: 'r', workflow: 'w', schema_version: 'v1', input: {}, principal: null, trigger: 'api', first_step: 'a' });

describe('concurrency: admission', () => {
  it('takes a free slot when nobody who came earlier waits', () => {
    expect(admit({ holders: 1 })).to.deep.equal(['run_dequeued']);
    expect(admit({ holders: 0, isNew: false })).to.deep.equal(['run_dequeued']);
  });

  it('queues behind a full limit or behind earlier arrivals, and a queued run stays as it is', () => {
    expect(admit({ holders: 2 })).to.deep.equal(['run_queued']);
    expect(admit({ holders: 0, waitingAhead: 1 }), 'a new arrival never jumps the queue').to.deep.equal(['run_queued']);
    expect(admit({ holders: 2, isNew: false, isWaiting: true })).to.deep.equal([]);
    expect(admit({ holders: 1, isNew: false, isWaiting: true }), 'the head of the queue takes a free slot').to.deep.equal(['run_dequeued']);
  });

  it('refuses a new run of a rejecting workflow when full, but queues a run that already exists', () => {
    const rejecting = { ...policy, onLimit: 'reject' as const };
    expect(() => admit({ policy: rejecting, holders: 2, key: 'k' })).to.throw(ConcurrencyLimitError, /concurrency limit/);
    expect(admit({ policy: rejecting, holders: 2, isNew: false })).to.deep.equal(['run_queued']);
    expect(admit({ policy: rejecting, holders: 1 })).to.deep.equal(['run_dequeued']);
  });

  it('counts free slots, never below zero', () => {
    expect([freeSlots(2, 0), freeSlots(2, 2), freeSlots(2, 5)]).to.deep.equal([2, 0, 0]);
  });
});

describe('concurrency: the slot in run state', () => {
  it('a queued run is queued; dequeued it runs; a timer gives the slot up', () => {
    const queued = fold([started, runEvent('run_queued', { key: 'k', limit: 1 })]);
    expect([queued.status, queued.slot]).to.deep.equal(['queued', { key: 'k', state: 'waiting' }]);
    const running = fold([started, runEvent('run_queued', { key: 'k', limit: 1 }), runEvent('run_dequeued', { key: 'k' })]);
    expect([running.status, running.slot]).to.deep.equal(['running', { key: 'k', state: 'held' }]);
    const waiting = fold([started, runEvent('run_dequeued', { key: 'k' }), runEvent('timer_started', { fires_at: '2026-01-01T01:00:00Z' })]);
    expect([waiting.status, waiting.slot]).to.deep.equal(['waiting_timer', null]);
  });

  it('a woken run queued again keeps its due wake: dequeued, it goes back to it', () => {
    const wake = runEvent('timer_started', { fires_at: '2026-01-01T00:00:00Z' });
    const requeued = fold([started, runEvent('run_dequeued', { key: '' }), wake, runEvent('run_queued', { key: '', limit: 1 })]);
    expect([requeued.status, requeued.wake?.status]).to.deep.equal(['queued', 'waiting_timer']);
    const back = evolveRun(requeued, runEvent('run_dequeued', { key: '' }), '2026-01-01T00:00:09Z', 9);
    expect([back.status, back.slot?.state]).to.deep.equal(['waiting_timer', 'held']);
  });

  it('an end gives the slot up; an abort of a queued run ends it', () => {
    const aborted = fold([started, runEvent('run_queued', { key: '', limit: 1 }), runEvent('run_aborted', { by: 'u', reason: 'r' })]);
    expect([aborted.status, aborted.slot]).to.deep.equal(['aborted', null]);
    expect(fold([started, runEvent('run_dequeued', { key: '' }), runEvent('run_completed', { output: null })]).slot).to.equal(null);
  });

  it('a pause of a run waiting for a slot takes effect at once and gives its place up', () => {
    const queued = fold([started, runEvent('run_queued', { key: '', limit: 1 })]);
    const pause = decideControl(queued, 'pause', 'u')!;
    expect(pause.type).to.equal('paused');
    expect(evolveRun(queued, pause, '2026-01-01T00:00:09Z', 9).slot).to.equal(null);
  });
});

describe('concurrency: definition, key, validation, manifest', () => {
  const document = (concurrency: unknown) =>
    toWorkflowDefinition({
      kind: 'Workflow',
      name: 'w',
      version: 'v1',
      file: 'workflows/w.yaml',
      body: {
        kind: 'Workflow',
        metadata: { name: 'w' },
        spec: { concurrency, trigger: { http: { path: '/w', method: 'POST' } }, steps: [{ id: 'r', kind: 'Response', mapping: {} }] },
      },
    });
  const codesOf = (concurrency: unknown) =>
    validateWorkflows({
      workflows: [document(concurrency)],
      models: new ModelRegistry([], DOCUMENT_FLAGS),
      runners: new Set(),
      isEnabled: () => true,
      artifactTypes: () => [],
      agentModels: new Set(),
    })
      .filter((f) => f.severity === 'error')
      .map((f) => f.code);

  it('renders the key over the input (no key: one queue for the workflow)', () => {
    const keyed = toConcurrency({ limit: 1, key: '{{ input.customer_id }}' })!;
    expect(concurrencyKeyOf(keyed, { customer_id: 'c-1' })).to.equal('c-1');
    expect(concurrencyKeyOf(keyed, { customer_id: 42 })).to.equal('42');
    expect(concurrencyKeyOf(toConcurrency({ limit: 1, key: 'tenant-{{ input.t }}' })!, { t: 'x' })).to.equal('tenant-x');
    expect(concurrencyKeyOf(toConcurrency({ limit: 3 })!, { customer_id: 'c-1' })).to.equal('');
    expect(toConcurrency({ limit: 3 })).to.deep.equal({ limit: 3, key: null, onLimit: 'queue' });
  });

  it('a good concurrency has no error; bad ones have V037, V038, V039', () => {
    expect(codesOf(undefined)).to.deep.equal([]);
    expect(codesOf({ limit: 2, key: '{{ input.customer_id }}', on_limit: 'reject' })).to.deep.equal([]);
    expect(codesOf({ limit: 0 })).to.deep.equal(['V037']);
    expect(codesOf({ limit: 1.5 })).to.deep.equal(['V037']);
    expect(codesOf({ key: '{{ input.a }}' })).to.deep.equal(['V037']);
    expect(codesOf('two')).to.deep.equal(['V037']);
    expect(codesOf({ limit: 1, on_limit: 'drop' })).to.deep.equal(['V038']);
    expect(codesOf({ limit: 1, key: 'constant' })).to.deep.equal(['V039']);
    expect(codesOf({ limit: 1, key: '{{ secrets.x }}' })).to.deep.equal(['V039']);
    expect(codesOf({ limit: 1, key: 7 })).to.deep.equal(['V039']);
    expect(codesOf({ limit: 1, colour: 'red' })).to.deep.equal(['V001']);
  });

  it('the manifest shows the concurrency as written', () => {
    expect(workflowManifest(document({ limit: 2, key: '{{ input.c }}' })).concurrency).to.deep.equal({ limit: 2, key: '{{ input.c }}', on_limit: 'queue' });
    expect(workflowManifest(document(undefined)).concurrency).to.equal(null);
  });
});
