// spec.personal_data in a run's journal: the listed top-level input and context keys sealed on append
// (one data key per run, erased with the run's principal, destroyed when the run expires), opened on read.
import { ConflictError } from '../kernel/errors.js';
import type { JsonObject, JsonValue } from '../kernel/json.js';
import { isJsonObject } from '../kernel/json.js';
import type { DataKeys, Subject } from '../privacy/dataKeys.js';
import { isEnvelope } from '../privacy/envelope.js';
import type { WorkflowDefinition } from '../workflows/definition.js';
import type { RunPrincipal } from './events.js';

/** What a run with personal data seals its events' listed keys with (no key look-up per event). */
export interface RunSealer {
  keys: ReadonlySet<string>;
  /** null: the run's key was destroyed (its principal erased while it ran): what it produces is journaled as null. */
  seal: (plaintext: string) => string | null;
}

/**
 * The data key of a run's personal data: the subject is the run's principal (`<user id>:<run id>`),
 * one key per run so that the run's expiry can destroy it and the principal's erasure destroys all of them.
 * A run without a principal (a public trigger, a schedule) has `-` for the user.
 */
export const runSubject = (principalId: string | null | undefined, runId: string): Subject => ({ type: 'run', id: `${principalId ?? '-'}:${runId}` });

/**
 * The sealer of a run of `workflow`; undefined (and no query) when the workflow declares no personal data.
 * A new run of an erased principal is refused (409); a run resumed after its principal was erased goes on,
 * and the personal values it produces from then on are journaled as null.
 */
export async function runSealerOf(
  dataKeys: DataKeys | undefined,
  workflow: WorkflowDefinition,
  runId: string,
  principal: RunPrincipal | null | undefined,
  isNew = true,
): Promise<RunSealer | undefined> {
  const keys = new Set(workflow.personalData ?? []);
  if (keys.size === 0 || !dataKeys) return undefined;
  const subject = runSubject(principal?.user_id, runId);
  if (isNew) return { keys, seal: await dataKeys.sealerFor(subject, principal ? { type: 'user', id: principal.user_id } : undefined) };
  try {
    return { keys, seal: await dataKeys.sealerFor(subject) };
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    return { keys, seal: () => null };
  }
}

/** The objects of a run event's payload whose top-level keys are input or context keys (or the run's output). */
function personalSlots(type: string, payload: JsonObject): JsonObject[] {
  const slots: unknown[] = [];
  if (type === 'run_started') slots.push(payload.input);
  else if (type === 'step_completed' || type === 'step_failed') {
    const set = isJsonObject(payload.changes) ? payload.changes.set : undefined;
    // A Response step keeps the run's output in the context (`_response`) until the run ends.
    slots.push(set, isJsonObject(set) ? set._response : undefined);
  } else if (type === 'approval_requested') slots.push(isJsonObject(payload.approval) ? payload.approval.display : undefined);
  else if (type === 'tool_result') slots.push(payload.changes);
  // A Response whose mapping names its output keys like the personal context keys (mapping {email: email}).
  else if (type === 'run_completed') slots.push(payload.output);
  return slots.filter((slot): slot is JsonObject => isJsonObject(slot));
}

type Eventish = { type: string; data: unknown };

function payloadOf(event: Eventish): JsonObject | undefined {
  const data = event.data;
  return isJsonObject(data as JsonValue) && isJsonObject((data as JsonObject).payload) ? ((data as JsonObject).payload as JsonObject) : undefined;
}

/** The event with its listed keys sealed (each value as JSON text); the event itself is not changed. */
export function sealRunEvent<E extends Eventish>(sealer: RunSealer, event: E): E {
  const payload = payloadOf(event);
  if (!payload || !personalSlots(event.type, payload).some((slot) => Object.keys(slot).some((key) => sealer.keys.has(key)))) return event;
  const copy = structuredClone(event);
  for (const slot of personalSlots(copy.type, payloadOf(copy)!)) {
    for (const key of Object.keys(slot)) {
      if (sealer.keys.has(key) && slot[key] !== undefined && !isEnvelope(slot[key])) slot[key] = sealer.seal(JSON.stringify(slot[key]));
    }
  }
  return copy;
}

/**
 * Events with their sealed values opened: null once the principal was erased or the run expired.
 * Only top-level values of the input and context slots are looked at; events with none are returned
 * as they are, with no query.
 */
export async function openRunEvents<E extends Eventish>(dataKeys: DataKeys, events: readonly E[]): Promise<E[]> {
  const sealed = new Set<string>();
  for (const event of events) {
    const payload = payloadOf(event);
    if (payload) for (const slot of personalSlots(event.type, payload)) collectTopLevel(slot, sealed);
  }
  if (sealed.size === 0) return [...events];
  const opened = await dataKeys.openAll([...sealed]);
  return events.map((event) => {
    const payload = payloadOf(event);
    if (!payload || !personalSlots(event.type, payload).some(hasEnvelope)) return event;
    const copy = structuredClone(event);
    for (const slot of personalSlots(copy.type, payloadOf(copy)!)) replaceTopLevel(slot, opened);
    return copy;
  });
}

/** A read-model object (a run's input) with its sealed top-level values opened. */
export async function openPersonalObject<T extends JsonValue | undefined>(dataKeys: DataKeys, value: T): Promise<T> {
  if (!isJsonObject(value as JsonValue) || !hasEnvelope(value as JsonObject)) return value;
  const sealed = new Set<string>();
  collectTopLevel(value as JsonObject, sealed);
  const copy = { ...(value as JsonObject) };
  replaceTopLevel(copy, await dataKeys.openAll([...sealed]));
  return copy as T;
}

/** Whether an event holds sealed input or context values (only those need a key look-up to show). */
export function holdsSealed(event: Eventish): boolean {
  const payload = payloadOf(event);
  return payload !== undefined && personalSlots(event.type, payload).some(hasEnvelope);
}

const hasEnvelope = (slot: JsonObject) => Object.values(slot).some(isEnvelope);

function collectTopLevel(slot: JsonObject, into: Set<string>): void {
  for (const value of Object.values(slot)) if (isEnvelope(value)) into.add(value);
}

function replaceTopLevel(slot: JsonObject, opened: ReadonlyMap<string, string | null>): void {
  for (const [key, value] of Object.entries(slot)) {
    if (!isEnvelope(value)) continue;
    const text = opened.get(value) ?? null;
    slot[key] = text === null ? null : parseSealed(text);
  }
}

/** Sealed run values are JSON text; a value sealed elsewhere (a record's field copied in) is plain text. */
function parseSealed(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}
