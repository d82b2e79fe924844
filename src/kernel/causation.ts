// Who caused an event and through which door (BEYOND 3.1): the one place event metadata is built.
// The context travels with the async call chain (AsyncLocalStorage), so every append made while a
// request, a drive of a run, a schedule tick or a CLI command is handled names its cause without
// each handler threading it through.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Principal } from './access.js';
import type { JsonObject } from './json.js';

export type ActorType = 'user' | 'dev' | 'system' | 'schedule';
export type EventSource = 'http' | 'grpc' | 'mcp' | 'cli' | 'executor' | 'scheduler';

export interface Actor extends JsonObject {
  type: ActorType;
  id: string;
}

/** What every event's metadata says about its cause. */
export interface Causation {
  actor: Actor;
  source: EventSource;
  /** The X-Request-Id of the request that caused it, when one did. */
  requestId?: string | undefined;
  tenant?: string | undefined;
}

/** A caller without credentials (a public workflow, a login): nobody known yet. */
export const ANONYMOUS: Actor = Object.freeze({ type: 'system', id: 'anonymous' });
/** Work nobody asked for in this process (timers, start-up): the service itself. */
export const SERVICE_CAUSATION: Causation = Object.freeze({ actor: Object.freeze({ type: 'system', id: 'svc' }), source: 'executor' });

/**
 * Read lazily: a request's principal is only known once its route authenticated it, after the
 * context was entered.
 */
type CausationOf = () => Causation;

const storage = new AsyncLocalStorage<CausationOf>();

/** Runs `work` with `causation` as the cause of whatever it appends (nested calls override). */
export function withCausation<T>(causation: Causation | CausationOf, work: () => T): T {
  return storage.run(typeof causation === 'function' ? causation : () => causation, work);
}

/** The cause in effect here (the service itself outside any request, drive, tick or command). */
export function currentCausation(): Causation {
  return storage.getStore()?.() ?? SERVICE_CAUSATION;
}

/** The dev key's principal (src/iam): its user id is no user's (those are UUIDs). */
export const DEV_USER_ID = 'dev';

export function actorOf(principal: Principal | undefined | null): Actor {
  if (!principal) return ANONYMOUS;
  return { type: principal.isDev ? 'dev' : 'user', id: principal.userId };
}

/** A principal kept only by its user id (a run's): the dev key's id names the dev actor. */
export function actorOfUserId(userId: string): Actor {
  return { type: userId === DEV_USER_ID ? 'dev' : 'user', id: userId };
}

/** The cause of work done for `principal` through `source`, in the request (if any) already in effect. */
export function causationOf(principal: Principal | undefined | null, source: EventSource): Causation {
  return { actor: actorOf(principal), source, requestId: currentCausation().requestId, tenant: principal?.tenant };
}

/** `{actor, source, request_id?, tenant?}`: the stored shape of a cause. */
export function causationMetadata(causation: Causation): JsonObject {
  const metadata: JsonObject = { actor: { type: causation.actor.type, id: causation.actor.id }, source: causation.source };
  if (causation.requestId) metadata.request_id = causation.requestId;
  if (causation.tenant) metadata.tenant = causation.tenant;
  return metadata;
}

/**
 * An event's metadata with its cause: metadata that names its actor and source already is complete
 * and kept as it is (an event prepared in one context and written in another, say by a group commit,
 * must not pick up the writer's request id); otherwise the cause in effect fills the rest in.
 */
export function withCause<M extends JsonObject>(metadata: M | undefined): JsonObject {
  if (metadata && isActor(metadata.actor) && typeof metadata.source === 'string') return metadata;
  return { ...causationMetadata(currentCausation()), ...metadata };
}

function isActor(value: unknown): value is Actor {
  return typeof value === 'object' && value !== null && typeof (value as Actor).type === 'string' && typeof (value as Actor).id === 'string';
}
