// What every event written for a request records about it: who, for which tenant, in which request.
import type { Request, RequestHandler } from 'express';
import { actorOf, causationMetadata, withCausation, type Causation, type EventSource } from '../kernel/causation.js';
import type { EventMetadata } from '../eventstore/types.js';
import { isUuid } from '../kernel/ids.js';
import { NotFoundError } from '../kernel/errors.js';

/** The cause of a request's events: its principal (once authenticated) over HTTP, in its X-Request-Id. */
export function requestCausation(req: Request, source: EventSource = 'http'): Causation {
  return { actor: actorOf(req.principal), source, requestId: req.id === undefined ? undefined : String(req.id), tenant: req.principal?.tenant };
}

/** Every later handler appends with the request as the cause (read when it appends: the principal comes later). */
export const enterRequestCausation: RequestHandler = (req, _res, next) => withCausation(() => requestCausation(req), next);

export function requestMetadata(req: Request): EventMetadata {
  return causationMetadata(requestCausation(req));
}

/** A path id that is not a UUID names nothing: 404, like an unknown one. */
export function uuidParam(req: Request, name: string, what: string): string {
  const value = req.params[name];
  if (!isUuid(value)) throw new NotFoundError(`${what} ${String(value)} not found`);
  return value.toLowerCase();
}
