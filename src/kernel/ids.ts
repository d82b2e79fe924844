// Identifiers: time-ordered UUIDs (v7) keep b-tree inserts local.
import { v7 as uuidv7, validate, version } from 'uuid';

export function newId(): string {
  return uuidv7();
}

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && validate(value) && version(value) !== 0;
}
