// Pieces several route families share: paging parameters, lists, the SSE answer.
import type { OpenAPIV3_1 } from 'openapi-types';
import { ref } from '../builders.js';

export const page = [
  { name: 'limit', schema: { type: 'integer' as const, minimum: 1, maximum: 1000 } },
  { name: 'offset', schema: { type: 'integer' as const, minimum: 0 } },
];
export const list = (item: string): OpenAPIV3_1.SchemaObject => ({ type: 'array', items: ref(item) });
export const sse = {
  status: 200,
  description: 'Server-Sent Events: `id: <seq>`, `event: <type>`, `data: <run event JSON>`',
  schema: { type: 'string' as const },
  contentType: 'text/event-stream',
};
