// What every event written for a request records about it: who, for which tenant, in which request.
import type { Request } from 'express';
import type { EventMetadata } from '../eventstore/types.js';
import { isUuid } from '../kernel/ids.js';
import { NotFoundError } from '../kernel/errors.js';

export function requestMetadata(req: Request): EventMetadata {
  const metadata: EventMetadata = { requestId: String(req.id ?? '') };
  if (req.principal) metadata.actor = req.principal.userId;
  if (req.principal?.tenant) metadata.tenant = req.principal.tenant;
  return metadata;
}

/** A path id that is not a UUID names nothing: 404, like an unknown one. */
export function uuidParam(req: Request, name: string, what: string): string {
  const value = req.params[name];
  if (!isUuid(value)) throw new NotFoundError(`${what} ${String(value)} not found`);
  return value.toLowerCase();
}
