// The service's /openapi.json as the console reads it: workflows' input schemas, model routes, their
// record schemas and the scope each operation requires (`x-required-scope`).
import type { JsonSchema } from './schemaForm.js';

export interface OpenApiOperation {
  summary?: string;
  'x-required-scope'?: string;
  requestBody?: { content?: Record<string, { schema?: { $ref?: string } }> };
}

export interface OpenApiDoc {
  paths: Record<string, Record<string, OpenApiOperation | undefined>>;
  components: { schemas: Record<string, JsonSchema> };
}

export async function loadOpenApi(): Promise<OpenApiDoc> {
  const response = await fetch('/openapi.json', { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`/openapi.json: ${response.status}`);
  return (await response.json()) as OpenApiDoc;
}

/** The JSON body schema an operation takes, resolved from its `#/components/schemas/...` reference. */
export function bodySchema(doc: OpenApiDoc, operation: OpenApiOperation | undefined): JsonSchema | undefined {
  const ref = operation?.requestBody?.content?.['application/json']?.schema?.$ref;
  const name = ref?.startsWith('#/components/schemas/') ? ref.slice('#/components/schemas/'.length) : undefined;
  return name === undefined ? undefined : doc.components.schemas[name];
}
