// The manifest of one workflow (GET /api/_system/workflows/{name}): what a client needs to call it, and
// its steps with their routes (the console draws the step graph from them). Never scopes or groups.
import type { OpenAPIV3_1 } from 'openapi-types';
import { bool, object, str, strings, int } from './builders.js';
import { STEP_KINDS } from '../workflows/definition.js';

export const workflowManifest: OpenAPIV3_1.SchemaObject = object(
  {
    name: str,
    trigger_path: str,
    trigger_method: str,
    public: bool,
    has_slow_steps: bool,
    slow_kinds_present: strings,
    steps: {
      description: 'In order. `routes` as written (signal to a step id or END); a `default` signal it does not map goes to the next step (END after the last).',
      type: 'array',
      items: object({ id: str, kind: { type: 'string', enum: [...STEP_KINDS] }, routes: { type: 'object', additionalProperties: str } }, [
        'id',
        'kind',
        'routes',
      ]),
    },
    concurrency: {
      description: 'spec.concurrency: runs executing at once (per value of the `key` template), and whether a start beyond it queues or is refused (429).',
      oneOf: [
        { type: 'null' },
        object({ limit: int, key: { type: ['string', 'null'] }, on_limit: { type: 'string', enum: ['queue', 'reject'] } }, ['limit', 'key', 'on_limit']),
      ],
    },
  },
  ['name', 'trigger_path', 'trigger_method', 'public', 'has_slow_steps', 'slow_kinds_present', 'steps'],
);
