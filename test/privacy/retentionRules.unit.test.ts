// spec.retention's shape and V046, and the retention decisions (hold, release, expire) as pure functions.
import { expect } from 'chai';
import type { RecordedEvent } from '../../src/eventstore/types.js';
import { ModelRegistry } from '../../src/models/registry.js';
import { expireRun, foldRetention, placeHold, releaseHold } from '../../src/runs/retention/decide.js';
import { DOCUMENT_FLAGS } from '../../src/versions/overrides.js';
import { toWorkflowDefinition } from '../../src/workflows/definition.js';
import { validateWorkflows } from '../../src/workflows/validate.js';

const workflow = (retention: unknown) =>
  toWorkflowDefinition({
    kind: 'Workflow',
    name: 'w',
    version: 'v1',
    file: 'workflows/w.yaml',
    body: {
      kind: 'Workflow',
      metadata: { name: 'w' },
      spec: {
        ...(retention === undefined ? {} : { retention }),
        trigger: { http: { path: '/w', method: 'POST' } },
        steps: [{ id: 'r', kind: 'Response', mapping: {} }],
      },
    },
  });
const errorsOf = (retention: unknown) =>
  validateWorkflows({
    workflows: [workflow(retention)],
    models: new ModelRegistry([], DOCUMENT_FLAGS),
    runners: new Set(),
    isEnabled: () => true,
    artifactTypes: () => [],
    agentModels: new Set(),
  })
    .filter((f) => f.severity === 'error')
    .map((f) => `${f.code} ${f.message}`);

const recorded = (type: string): RecordedEvent => ({ type, data: {} }) as unknown as RecordedEvent;

describe('retention rules', () => {
  it('reads spec.retention.runs as milliseconds and reports V046 for anything else', () => {
    expect(workflow({ runs: '90d' }).runRetentionMs).to.equal(90 * 86_400_000);
    expect(workflow(undefined).runRetentionMs).to.equal(null);
    expect(errorsOf({ runs: '90d' })).to.deep.equal([]);
    expect(errorsOf(undefined)).to.deep.equal([]);
    for (const bad of ['90', { runs: 'forever' }, { runs: '10s' }, {}]) expect(errorsOf(bad).join()).to.match(/^V046 /);
    expect(errorsOf({ runs: '1d', events: '2d' })).to.deep.equal(['V001 unknown key spec.retention.events']);
  });

  it('holds, releases and expires: a held or expired run never expires (again)', () => {
    const run = { runId: 'r1', workflow: 'w' };
    const expiry = { ...run, endedAt: '2026-01-01T00:00:00.000Z', retentionMs: 60_000 };
    const at = '2026-02-01T00:00:00.000Z';
    expect(expireRun(foldRetention([]), expiry, at).map((e) => e.type)).to.deep.equal(['run_expired']);
    const held = foldRetention([recorded('run_hold_placed')]);
    expect(expireRun(held, expiry, at)).to.deep.equal([]);
    expect(placeHold(held, run, null, at)).to.deep.equal([]);
    expect(releaseHold(held, run, at).map((e) => e.type)).to.deep.equal(['run_hold_released']);
    const released = foldRetention([recorded('run_hold_placed'), recorded('run_hold_released')]);
    expect(expireRun(released, expiry, at)).to.have.length(1);
    expect(() => releaseHold(released, run, at)).to.throw(/not held/);
    const expired = foldRetention([recorded('run_expired')]);
    expect(expireRun(expired, expiry, at)).to.deep.equal([]);
    expect(() => placeHold(expired, run, 'x', at)).to.throw(/expired/);
  });
});
