// Response: names the run's output (`_response`) and its HTTP status (`_response_status`, default 201).
import { mapPaths, readPath } from '../../../workflows/template.js';
import type { StepExecutor } from './types.js';

export const executeResponse: StepExecutor = async ({ step, context }) => {
  const source = step.config.source;
  const mapping = step.config.mapping as Record<string, string> | undefined;
  const response = mapping ? mapPaths(mapping, context) : typeof source === 'string' ? (readPath(context, source) ?? null) : null;
  const status = typeof step.config.status_code === 'number' ? step.config.status_code : 201;
  return { signal: 'default', changes: { set: { _response: response, _response_status: status }, unset: [] } };
};
