// Shared OpenAPI components: the bearer scheme and the shapes every family answers with.
import type { OpenAPIV3_1 } from 'openapi-types';
import { anyObject, bool, int, object, ref, str, strings, uuid } from './builders.js';
import { RUN_EVENT_TYPES } from '../runs/events.js';
import { RUN_STATUSES } from '../runs/state.js';
import { ERROR_CODES } from '../kernel/errors.js';
import { workflowManifest } from './manifest.js';

const httpUrl: OpenAPIV3_1.SchemaObject = { type: 'string', pattern: '^https?://' };
const registryEntry = { name: str, version: str, enabled: bool };

export const components: OpenAPIV3_1.ComponentsObject = {
  securitySchemes: {
    bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An EdDSA JWT from /auth/token, /auth/bootstrap or /auth/refresh' },
  },
  schemas: {
    Error: object(
      {
        detail: str,
        code: {
          type: 'string',
          // VALIDATION_FAILED answers with the ValidationError shape instead.
          enum: ERROR_CODES.filter((code) => code !== 'VALIDATION_FAILED'),
        },
      },
      ['detail', 'code'],
    ),
    ValidationError: object(
      {
        detail: {
          type: 'array',
          items: object({ loc: { type: 'array', items: { type: ['string', 'integer'] } }, msg: str, type: str }, ['loc', 'msg', 'type']),
        },
      },
      ['detail'],
    ),
    WorkflowError: object(
      {
        success: { type: 'boolean', const: false },
        status_code: int,
        data: { type: ['object', 'null'] },
        error: object({ message: str, details: str }, ['message', 'details']),
      },
      ['success', 'status_code', 'data', 'error'],
    ),
    TokenResponse: object({ access_token: str, token_type: { type: 'string', const: 'bearer' }, expires_in: int }, [
      'access_token',
      'token_type',
      'expires_in',
    ]),
    Identity: object({ user_id: str, groups: strings, scopes: strings, tenant: str }, ['user_id', 'groups', 'scopes']),
    SignInProvider: object(
      {
        name: str,
        kind: { type: 'string', enum: ['google', 'github', 'microsoft', 'custom'] },
        start_url: { type: 'string', description: 'GET it in the browser to sign in' },
      },
      ['name', 'kind', 'start_url'],
    ),
    User: object(
      {
        id: uuid,
        // null once the user was erased (POST /admin/erasure).
        email: { type: ['string', 'null'] },
        phone_number: { type: ['string', 'null'] },
        is_active: bool,
        has_password: bool,
        tenant: { type: ['string', 'null'] },
        federated_provider: { type: ['string', 'null'] },
        federated_sub: { type: ['string', 'null'] },
        roles: { type: 'array', items: object({ id: uuid, name: str }) },
        created_at: { type: 'string', format: 'date-time' },
        updated_at: { type: 'string', format: 'date-time' },
      },
      ['id', 'email', 'is_active'],
    ),
    Role: object(
      {
        id: uuid,
        name: str,
        description: str,
        scopes: strings,
        created_at: { type: 'string', format: 'date-time' },
        updated_at: { type: 'string', format: 'date-time' },
      },
      ['id', 'name', 'scopes'],
    ),
    Run: object(
      {
        id: uuid,
        workflow: str,
        schema_version: str,
        status: { type: 'string', enum: [...RUN_STATUSES] },
        input: anyObject,
        output: {},
        error: { type: ['object', 'null'] },
        current_step: { type: ['string', 'null'] },
        pause_requested: { type: 'boolean', description: 'A pause was asked for while a step runs; the run becomes paused once that step is journaled.' },
        wake_at: {
          type: ['string', 'null'],
          format: 'date-time',
          description: 'When a run in waiting_retry or waiting_timer goes on (kept while it is paused); null otherwise.',
        },
        created_at: { type: 'string', format: 'date-time' },
        updated_at: { type: 'string', format: 'date-time' },
        status_url: str,
        events_url: str,
        approval: {
          oneOf: [{ type: 'null' }, object({ approval_id: uuid, kind: str, title: str, form: {}, decide_url: str }, ['approval_id', 'decide_url'])],
        },
        trigger: {
          description: 'How the run was started (`http`, `api`, `grpc`, `mcp`, `schedule`, `fork`); a schedule names its schedule and tick.',
          oneOf: [{ type: 'null' }, object({ type: str, schedule_id: str, scheduled_at: { type: 'string', format: 'date-time' } }, ['type'])],
        },
        parent_run_id: { type: ['string', 'null'], format: 'uuid', description: 'The run whose Workflow step started this one; null for a top-level run.' },
        children: {
          type: 'array',
          description: 'Run detail only: the runs this run started with Workflow steps, oldest first.',
          items: object({ run_id: uuid, workflow: str, status: str }, ['run_id', 'workflow', 'status']),
        },
        forked_from: {
          ...object({ run_id: uuid, step_id: str }, ['run_id', 'step_id']),
          description: 'Only on a forked run (POST /api/runs/{id}/fork): the run and step it was forked from.',
        },
        concurrency: {
          description:
            'Under spec.concurrency, while the run holds a slot or waits for one (status `queued`): the key value and which; run detail adds `queue_position` (1: next to start) for a waiting run. Absent otherwise.',
          ...object({ key: str, slot: { type: 'string', enum: ['held', 'waiting'] }, queue_position: int }, ['key', 'slot']),
        },
      },
      ['id', 'workflow', 'status', 'status_url', 'events_url'],
    ),
    RunEvent: object(
      {
        run_id: uuid,
        seq: int,
        ts: { type: 'string', format: 'date-time' },
        type: { type: 'string', enum: [...RUN_EVENT_TYPES] },
        agent_id: str,
        engine: str,
        payload: anyObject,
      },
      ['run_id', 'seq', 'ts', 'type', 'agent_id', 'engine', 'payload'],
    ),
    Approval: object(
      {
        approval_id: uuid,
        run_id: uuid,
        step_id: str,
        kind: { type: 'string', enum: ['human', 'tool'] },
        workflow: str,
        title: str,
        instruction: { type: ['string', 'null'] },
        form: {},
        display: anyObject,
        required_group: { type: ['string', 'null'] },
        status: { type: 'string', enum: ['pending', 'decided', 'expired', 'cancelled'] },
        decision: { type: ['string', 'null'] },
        decided_by: { type: ['string', 'null'] },
        decide_url: str,
      },
      ['approval_id', 'run_id', 'step_id', 'kind', 'status'],
    ),
    Decision: object(
      {
        decision: { type: 'string', enum: ['approve', 'reject', 'edit'] },
        values: anyObject,
        comment: str,
        edited_args: anyObject,
      },
      ['decision'],
    ),
    Artifact: object(
      {
        name: str,
        version: str,
        type: { type: 'string', enum: ['prompt', 'steering', 'skill', 'guardrail', 'hook', 'mcp'] },
        source: { type: 'string', enum: ['project', 'upload'] },
        description: { type: ['string', 'null'] },
        hash: str,
        created_at: { type: ['string', 'null'] },
        content: {},
      },
      ['name', 'version', 'type', 'hash', 'content'],
    ),
    VersionToggle: object({ name: str, schema_version: str, enabled: bool }, ['name', 'schema_version', 'enabled']),
    VersionFork: object({ name: str, source_version: str, new_version: str, file: str }, ['name', 'source_version', 'new_version', 'file']),
    WorkflowManifest: workflowManifest,
    // The document POST/PUT accepts and reads answer (src/federation/providers.ts providerDocumentSchema).
    FederationProviderSpec: {
      ...object(
        {
          provider: { type: 'string', enum: ['google', 'github', 'microsoft', 'custom'] },
          client_id: {
            type: 'string',
            description: 'Published in every sign-in redirect: `${SVC_OAUTH_*_ID}` names an environment variable (only names ending in `_ID`).',
          },
          client_secret: {
            type: 'string',
            description:
              'Reads answer `***` in its place; sending `***` back keeps the stored secret. `${SVC_OAUTH_*}` names an environment variable (no other field resolves one).',
          },
          auth_url: httpUrl,
          token_url: httpUrl,
          userinfo_url: httpUrl,
          issuer: str,
          jwks_url: httpUrl,
          emails_url: httpUrl,
          scope: str,
          tenant_id: { type: 'string', pattern: '^[A-Za-z0-9.-]{1,64}$' },
          allowed_domains: strings,
          default_role: str,
        },
        ['provider'],
      ),
      additionalProperties: false,
    },
    FederationProviderDocument: {
      ...object(
        {
          kind: { type: 'string', const: 'FederationProvider' },
          version: { type: 'string', const: 'v1' },
          metadata: { ...object({ name: { type: 'string', description: 'Must equal the name in the path when sent' } }), additionalProperties: false },
          enabled: { type: 'boolean', default: true },
          spec: ref('FederationProviderSpec'),
        },
        ['spec'],
      ),
      additionalProperties: false,
    },
    FederationProvider: object(
      {
        kind: { type: 'string', const: 'FederationProvider' },
        version: { type: 'string', const: 'v1' },
        metadata: object({ name: str }, ['name']),
        enabled: bool,
        source: {
          type: 'string',
          enum: ['project', 'admin', 'environment'],
          description:
            'project: a file under federation/; admin: saved through this API; environment: a built-in (google, github, microsoft) without a file, with SVC_OAUTH_<PROVIDER>_CLIENT_ID/_SECRET when set',
        },
        spec: ref('FederationProviderSpec'),
        has_credentials: { type: 'boolean', description: 'false: start and callback answer 501' },
      },
      ['kind', 'version', 'metadata', 'enabled', 'source', 'spec', 'has_credentials'],
    ),
    Registry: object(
      {
        workflows: { type: 'array', items: object({ ...registryEntry, file: str }, ['name', 'version', 'enabled', 'file']) },
        models: { type: 'array', items: object({ ...registryEntry, file: str }, ['name', 'version', 'enabled', 'file']) },
        artifacts: {
          type: 'array',
          items: object(
            {
              ...registryEntry,
              version: { type: ['string', 'null'] },
              type: { type: ['string', 'null'] },
              source: { type: 'string', enum: ['project', 'upload'] },
            },
            ['name', 'version', 'enabled', 'type', 'source'],
          ),
        },
        federation_providers: {
          type: 'array',
          items: object(
            {
              ...registryEntry,
              provider: { type: 'string', enum: ['google', 'github', 'microsoft', 'custom'] },
              source: { type: 'string', enum: ['project', 'admin', 'environment'] },
            },
            ['name', 'version', 'enabled', 'provider', 'source'],
          ),
        },
        agent_models: { type: 'array', items: object({ ...registryEntry, model: str, base_url: str }, ['name', 'version', 'enabled', 'model', 'base_url']) },
      },
      ['workflows', 'models', 'artifacts', 'federation_providers', 'agent_models'],
    ),
    Health: object({ status: { type: 'string', enum: ['ok', 'degraded'] }, database: str, uptime_s: int, version: str }, ['status', 'database']),
  },
};
