// Router: a condition gives `true`/`false`; a match gives the field's value when routed, else `default`.
import type { JsonValue } from '../../../kernel/json.js';
import { runEvent } from '../../events.js';
import { readPath, render } from '../../../workflows/template.js';
import { NO_CHANGES, type StepExecutor } from './types.js';

export const executeRouter: StepExecutor = async ({ step, context }) => {
  const condition = step.config.condition as { field: string; operator: string; value?: unknown } | undefined;
  const match = step.config.match as { field: string } | undefined;
  let signal = 'default';
  if (condition) {
    signal = String(compare(readPath(context, condition.field), condition.operator, render(condition.value ?? null, context)));
  } else if (match) {
    const value = readPath(context, match.field);
    const candidate = value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);
    signal = candidate in step.routes ? candidate : 'default';
  }
  return { signal, changes: NO_CHANGES, events: [runEvent('decision', { decision: signal, source: 'router' }, step)] };
};

function isEmpty(value: JsonValue | undefined): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

export function compare(left: JsonValue | undefined, operator: string, right: JsonValue): boolean {
  switch (operator) {
    case 'eq':
      return JSON.stringify(left ?? null) === JSON.stringify(right);
    case 'neq':
      return JSON.stringify(left ?? null) !== JSON.stringify(right);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      if (left === undefined || left === null || right === null || typeof left === 'object' || typeof right === 'object') return false;
      const [a, b] = typeof left === 'number' || typeof right === 'number' ? [Number(left), Number(right)] : [String(left), String(right)];
      return operator === 'gt' ? a > b : operator === 'gte' ? a >= b : operator === 'lt' ? a < b : a <= b;
    }
    case 'in':
      return Array.isArray(right) && right.some((item) => JSON.stringify(item) === JSON.stringify(left ?? null));
    case 'contains':
      if (typeof left === 'string') return typeof right === 'string' && left.includes(right);
      return Array.isArray(left) && left.some((item) => JSON.stringify(item) === JSON.stringify(right));
    case 'is_empty':
      return isEmpty(left);
    case 'is_not_empty':
      return !isEmpty(left);
    default:
      return false;
  }
}
