// Small builders for OpenAPI 3.1 operations, so route descriptions stay one line each.
import type { OpenAPIV3_1 } from 'openapi-types';

export type Schema = OpenAPIV3_1.SchemaObject;
export type Operation = OpenAPIV3_1.OperationObject;
/**
 * openapi-types' 3.1 PathItemObject intersects the 3.0 operation type, which rejects 3.1 schemas;
 * paths are built with this type and cast once when the document is assembled.
 */
export type PathItem = Partial<Record<'get' | 'post' | 'put' | 'patch' | 'delete', Operation>>;

/** A response header, described by a 3.1 schema (see PathItem for why it is not openapi-types' HeaderObject). */
export interface Header {
  description: string;
  schema: Schema;
}

export const ref = (name: string): OpenAPIV3_1.ReferenceObject => ({ $ref: `#/components/schemas/${name}` });
const errorResponse = (description: string): OpenAPIV3_1.ResponseObject => ({
  description,
  content: { 'application/json': { schema: ref('Error') } },
});

export const ERRORS = {
  400: errorResponse('Bad request'),
  401: errorResponse('Missing, invalid, expired or revoked token (WWW-Authenticate: Bearer)'),
  403: errorResponse('Missing scope or group'),
  404: errorResponse('Not found'),
  409: errorResponse('Conflict or already exists'),
  413: errorResponse('Body too large'),
  422: { description: 'Request validation failed', content: { 'application/json': { schema: ref('ValidationError') } } },
  429: {
    ...errorResponse('Too many requests (code TOO_MANY_REQUESTS): the same request can succeed after Retry-After seconds'),
    headers: { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 1 } } },
  },
  501: errorResponse('Not configured (for example a federation provider without client credentials)'),
} satisfies Record<number, OpenAPIV3_1.ResponseObject>;

export interface OperationSpec {
  summary: string;
  tags: string[];
  /** A scope the caller needs (documented; enforcement is the route's). */
  scope?: string;
  /** With SVC_TENANT_IDS only a deployment admin may call it (docs/auth.md, "Who administers which tenant"). */
  deploymentAdmin?: boolean;
  isPublic?: boolean;
  body?: Schema | OpenAPIV3_1.ReferenceObject;
  bodyType?: string;
  query?: { name: string; schema: Schema; description?: string; required?: boolean }[];
  /** Request headers the operation reads. */
  headers?: { name: string; schema: Schema; description: string }[];
  path?: string[];
  ok: { status: number; description: string; schema?: Schema | OpenAPIV3_1.ReferenceObject; contentType?: string; headers?: Record<string, Header> };
  errors?: (keyof typeof ERRORS)[];
  extraResponses?: Record<string, OpenAPIV3_1.ResponseObject>;
  operationId: string;
  description?: string;
}

const DEPLOYMENT_ADMIN_ONLY = 'With `SVC_TENANT_IDS`: deployment admins only (`iam:admin` and the `superadmin` group); a tenant admin gets 403.';

export function operation(spec: OperationSpec): Operation {
  const responses: OpenAPIV3_1.ResponsesObject = {
    [String(spec.ok.status)]: {
      description: spec.ok.description,
      ...(spec.ok.headers ? { headers: spec.ok.headers as unknown as Record<string, OpenAPIV3_1.HeaderObject> } : {}),
      ...(spec.ok.schema ? { content: { [spec.ok.contentType ?? 'application/json']: { schema: spec.ok.schema } } } : {}),
    },
    ...(spec.extraResponses ?? {}),
  };
  const errors = new Set(spec.errors ?? []);
  if (!spec.isPublic) {
    errors.add(401);
  }
  if (spec.body) errors.add(422);
  for (const status of [...errors].sort()) responses[String(status)] = ERRORS[status];
  // openapi-types reuses the 3.0 ParameterObject (with a 3.0 schema) for 3.1: our schemas are 3.1.
  const parameters = [
    ...(spec.path ?? []).map((name) => ({ name, in: 'path' as const, required: true, schema: { type: 'string' as const } })),
    ...(spec.query ?? []).map((q) => ({
      name: q.name,
      in: 'query' as const,
      required: q.required ?? false,
      schema: q.schema,
      ...(q.description ? { description: q.description } : {}),
    })),
    ...(spec.headers ?? []).map((h) => ({ name: h.name, in: 'header' as const, required: false, schema: h.schema, description: h.description })),
  ] as unknown as OpenAPIV3_1.ParameterObject[];
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description || spec.scope
      ? {
          description: [
            spec.description,
            spec.scope ? `Requires scope \`${spec.scope}\` (or \`iam:admin\`).` : undefined,
            spec.deploymentAdmin ? DEPLOYMENT_ADMIN_ONLY : undefined,
          ]
            .filter(Boolean)
            .join('\n\n'),
        }
      : {}),
    tags: spec.tags,
    // The scope in a machine-readable form too: the console shows a write button only to its holders.
    ...(spec.scope ? { 'x-required-scope': spec.scope } : {}),
    ...(spec.isPublic ? { security: [] } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(spec.body ? { requestBody: { required: true, content: { [spec.bodyType ?? 'application/json']: { schema: spec.body } } } } : {}),
    responses,
  };
}

export const object = (properties: Record<string, Schema | OpenAPIV3_1.ReferenceObject>, required: string[] = []): Schema => ({
  type: 'object',
  properties,
  ...(required.length ? { required } : {}),
});
export const str: Schema = { type: 'string' };
export const bool: Schema = { type: 'boolean' };
export const int: Schema = { type: 'integer' };
export const uuid: Schema = { type: 'string', format: 'uuid' };
export const strings: Schema = { type: 'array', items: { type: 'string' } };
export const anyObject: Schema = { type: 'object', additionalProperties: true };
