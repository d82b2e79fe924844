// The runs and approvals route families.
// shape: OpenAPI operation tables: one function per route family reads as the API does; splitting them would scatter it.
import type { OpenAPIV3_1 } from 'openapi-types';
import { anyObject, object, operation, ref, str, type PathItem } from '../builders.js';
import { list, sse } from './shared.js';

export function runPaths(): Record<string, PathItem> {
  const tags = ['Runs'];
  const control = (action: string, body?: OpenAPIV3_1.SchemaObject) =>
    operation({
      operationId: `${action}Run`,
      summary: `${action[0]!.toUpperCase()}${action.slice(1)} a run`,
      tags,
      scope: 'runs:control',
      path: ['id'],
      description:
        "Control needs read access too: a run the caller cannot read (another user's without `iam:admin`, another tenant's) is the 404 `GET /api/runs/{id}` answers, and nothing is done.",
      ...(body ? { body } : {}),
      ok: { status: 200, description: 'The run', schema: ref('Run') },
      errors: [403, 404, 409],
    });
  return {
    '/api/runs': {
      get: operation({
        operationId: 'listRuns',
        summary: "The caller's runs (every run of the tenant for iam:admin), searched and paged",
        description: 'Newest first (created_at, then id). Follow `X-Next-Cursor` with `cursor` for pages that never skip or repeat a run.',
        tags,
        query: [
          { name: 'limit', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
          { name: 'offset', schema: { type: 'integer', minimum: 0 } },
          { name: 'cursor', schema: str, description: "A previous page's X-Next-Cursor: the runs after that page" },
          { name: 'workflow', schema: str },
          { name: 'status', schema: str, description: 'One status or a comma list (any of them)' },
          { name: 'created_after', schema: { type: 'string', format: 'date-time' }, description: 'Runs created strictly after' },
          { name: 'created_before', schema: { type: 'string', format: 'date-time' }, description: 'Runs created strictly before' },
          { name: 'parent_run_id', schema: { type: 'string', format: 'uuid' }, description: 'Children of this run' },
        ],
        ok: {
          status: 200,
          description: 'Runs, newest first',
          schema: list('Run'),
          headers: { 'X-Next-Cursor': { description: 'Present when more runs follow: pass it as `cursor`', schema: str } },
        },
        errors: [400],
      }),
    },
    '/api/runs/{id}': {
      get: operation({
        operationId: 'getRun',
        summary: 'A run',
        tags,
        path: ['id'],
        ok: { status: 200, description: 'The run', schema: ref('Run') },
        errors: [404],
      }),
    },
    '/api/runs/{id}/events': {
      get: operation({
        operationId: 'runEvents',
        summary: 'The journal over SSE: replay, then live; resume with Last-Event-ID or from_seq',
        tags,
        scope: 'runs:read',
        path: ['id'],
        query: [
          { name: 'from_seq', schema: { type: 'integer', minimum: 0 } },
          { name: 'follow', schema: { type: 'boolean' }, description: 'false: end after the replay' },
        ],
        ok: sse,
        errors: [400, 403, 404],
      }),
    },
    '/api/runs/{id}/export': {
      get: operation({
        operationId: 'exportRun',
        summary: 'Export a run (svc.run/v1)',
        tags,
        scope: 'runs:read',
        path: ['id'],
        ok: {
          status: 200,
          description: 'The export',
          schema: object(
            {
              format: { type: 'string', const: 'svc.run/v1' },
              run: ref('Run'),
              workflow: anyObject,
              events: {
                type: 'array',
                items: { allOf: [ref('RunEvent'), object({ metadata: anyObject, hash: str, redacted: { type: 'boolean' } }, ['metadata', 'hash'])] },
              },
              signature: { ...str, description: 'Detached JWS (EdDSA, `kid` of /auth/jwks.json) over the JCS of the rest of the export; see docs/audit.md' },
            },
            ['format', 'run', 'workflow', 'events', 'signature'],
          ),
        },
        errors: [403, 404],
      }),
    },
    '/api/runs/{id}/pause': { post: control('pause') },
    '/api/runs/{id}/resume': { post: control('resume') },
    '/api/runs/{id}/abort': { post: control('abort', object({ reason: str })) },
    '/api/runs/{id}/steer': { post: control('steer', object({ message: str }, ['message'])) },
    '/api/runs/{id}/fork': {
      post: operation({
        operationId: 'forkRun',
        summary: 'Fork a run from a step: a new run that reuses what the run recorded before that step',
        tags,
        scope: 'runs:control',
        path: ['id'],
        description:
          "A new run of the same workflow version, the caller's (who must pass the workflow's gate), whose journal starts with the run's events before `from_step` (the start of its latest visit), copied: same type and data, metadata `copied_from {run_id, global_position}`. Nothing before `from_step` runs again; the new run goes on from it with `input` merged over the run's input (checked by the input schema; a context key a copied step set keeps that step's value). The run itself is untouched. 404: a run the caller cannot read, or a step the workflow does not have; 409: a step the run never reached, or a workflow version not loaded or disabled.",
        body: object({ from_step: str, input: anyObject }, ['from_step']),
        ok: {
          status: 202,
          description: 'The new run (it goes on in the background), with `forked_from`',
          schema: ref('Run'),
          headers: { Location: { description: 'The new run', schema: str } },
        },
        errors: [403, 404, 409, 422],
      }),
    },
  };
}

export function approvalPaths(): Record<string, PathItem> {
  const tags = ['Approvals'];
  const scope = 'approvals:decide';
  return {
    '/api/approvals': {
      get: operation({
        operationId: 'listApprovals',
        summary: 'Pending approvals the caller may decide',
        tags,
        scope,
        ok: { status: 200, description: 'Approvals', schema: list('Approval') },
        errors: [403],
      }),
    },
    '/api/approvals/{id}': {
      post: operation({
        operationId: 'decideApproval',
        summary: 'Decide an approval (exactly one decision wins)',
        tags,
        scope,
        path: ['id'],
        body: ref('Decision'),
        ok: { status: 200, description: 'The decided approval', schema: ref('Approval') },
        errors: [400, 403, 404, 409],
      }),
    },
    '/api/runs/{id}/human/{agent_id}': {
      post: operation({
        operationId: 'answerHuman',
        summary: "Decide a run's pending human step",
        tags,
        scope,
        description: "Another tenant's run answers 404 like an unknown run.",
        path: ['id', 'agent_id'],
        body: ref('Decision'),
        ok: { status: 200, description: 'The decided approval', schema: ref('Approval') },
        errors: [400, 403, 404, 409],
      }),
    },
  };
}
