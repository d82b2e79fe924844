// spec.personal_data in a run's journal: the listed top-level input and context keys sealed on append
// (one data key per run, erased with the run's principal, destroyed when the run expires), opened on read.
import { ConflictError } from '../kernel/errors.js';
import type { JsonObject, JsonValue } from '../kernel/json.js';
import { isJsonObject } from '../kernel/json.js';
import type { DataKeys, Subject } from '../privacy/dataKeys.js';
import type { NewKey } from '../privacy/keyStore.js';
import { isEnvelope } from '../privacy/envelope.js';
import type { WorkflowDefinition } from '../workflows/definition.js';
import type { RunPrincipal } from './events.js';

/** What a run with personal data seals its events' listed keys with (no key look-up per event). */
export interface RunSealer {
  keys: ReadonlySet<string>;
  /** null: the run's key was destroyed (its principal erased while it ran): what it produces is journaled as null. */
  seal: (plaintext: string) => string | null;
  /** The run's key, made in memory and not stored yet: the run's first append stores it in its commit. */
  unstoredKey?: NewKey | undefined;
}

/**
 * Where a run's key comes from: made and stored before anything is sealed (`new`), made and stored by
 * the commit of the run's first append (`new-with-first-append`: the executor's own runs, one
 * commit fewer), or the run's stored key (`resumed`).
 */
export type RunKeyOrigin = 'new' | 'new-with-first-append' | 'resumed';

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
  origin: RunKeyOrigin = 'new',
): Promise<RunSealer | undefined> {
  const keys = new Set(workflow.personalData ?? []);
  if (keys.size === 0 || !dataKeys) return undefined;
  const subject = runSubject(principal?.user_id, runId);
  const owner = principal ? { type: 'user', id: principal.user_id } : undefined;
  if (origin === 'new') return { keys, seal: await dataKeys.sealerFor(subject, owner) };
  if (origin === 'new-with-first-append') {
    const { seal, newKey } = await dataKeys.newSubjectSealer(subject, owner);
    return { keys, seal, unstoredKey: newKey };
  }
  try {
    return { keys, seal: await dataKeys.sealerFor(subject) };
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    return { keys, seal: () => null };
  }
}

/**
 * Where a run event's payload holds input or context keys (or the run's output), as paths from the payload.
 * A Response step keeps the run's output in the context (`_response`) until the run ends; a Response
 * whose mapping names its output keys like the personal context keys (mapping {email: email}) puts
 * them in run_completed's output.
 */
const SLOT_PATHS: Readonly<Record<string, readonly (readonly string[])[]>> = {
  run_started: [['input']],
  step_completed: [
    ['changes', 'set'],
    ['changes', 'set', '_response'],
  ],
  step_failed: [
    ['changes', 'set'],
    ['changes', 'set', '_response'],
  ],
  approval_requested: [['approval', 'display']],
  tool_result: [['changes']],
  run_completed: [['output']],
};

/** The objects of a run event's payload whose top-level keys are input or context keys (or the run's output). */
function personalSlots(type: string, payload: JsonObject): JsonObject[] {
  const slots: JsonObject[] = [];
  for (const path of SLOT_PATHS[type] ?? []) {
    let node: JsonValue | undefined = payload;
    for (const key of path) node = isJsonObject(node) ? node[key] : undefined;
    if (isJsonObject(node)) slots.push(node);
  }
  return slots;
}

/**
 * The event with each slot replaced by what `update` answers for it (undefined: unchanged). Only the
 * objects on the way to a changed slot are copied: the rest is shared with the given event, which is
 * not changed (a deep copy of every payload cost more than the sealing).
 */
function withSlots<E extends Eventish>(event: E, update: (slot: JsonObject) => JsonObject | undefined): E {
  const payload = payloadOf(event);
  if (!payload) return event;
  let next = payload;
  for (const path of SLOT_PATHS[event.type] ?? []) next = updatedAt(next, path, update);
  return next === payload ? event : { ...event, data: { ...(event.data as JsonObject), payload: next } };
}

function updatedAt(node: JsonObject, path: readonly string[], update: (slot: JsonObject) => JsonObject | undefined): JsonObject {
  const [head, ...rest] = path as [string, ...string[]];
  const child = node[head];
  if (!isJsonObject(child)) return node;
  const replaced = rest.length === 0 ? update(child) : updatedAt(child, rest, update);
  return replaced === undefined || replaced === child ? node : { ...node, [head]: replaced };
}

type Eventish = { type: string; data: unknown };

function payloadOf(event: Eventish): JsonObject | undefined {
  const data = event.data;
  return isJsonObject(data as JsonValue) && isJsonObject((data as JsonObject).payload) ? ((data as JsonObject).payload as JsonObject) : undefined;
}

/** The event with its listed keys sealed (each value as JSON text); the event itself is not changed. */
export function sealRunEvent<E extends Eventish>(sealer: RunSealer, event: E): E {
  return withSlots(event, (slot) => {
    let sealed: JsonObject | undefined;
    for (const key of Object.keys(slot)) {
      const value = slot[key];
      if (!sealer.keys.has(key) || value === undefined || isEnvelope(value)) continue;
      sealed ??= { ...slot };
      sealed[key] = sealer.seal(JSON.stringify(value));
    }
    return sealed;
  });
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
  return events.map((event) => withSlots(event, (slot) => openedSlot(slot, opened)));
}

/** A read-model object (a run's input) with its sealed top-level values opened. */
export async function openPersonalObject<T extends JsonValue | undefined>(dataKeys: DataKeys, value: T): Promise<T> {
  if (!isJsonObject(value as JsonValue) || !hasEnvelope(value as JsonObject)) return value;
  const sealed = new Set<string>();
  collectTopLevel(value as JsonObject, sealed);
  return openedSlot(value as JsonObject, await dataKeys.openAll([...sealed])) as T;
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

/** A copy of the slot with its sealed top-level values opened; undefined when it holds none. */
function openedSlot(slot: JsonObject, opened: ReadonlyMap<string, string | null>): JsonObject | undefined {
  let copy: JsonObject | undefined;
  for (const [key, value] of Object.entries(slot)) {
    if (!isEnvelope(value)) continue;
    const text = opened.get(value) ?? null;
    copy ??= { ...slot };
    copy[key] = text === null ? null : parseSealed(text);
  }
  return copy;
}

/** Sealed run values are JSON text; a value sealed elsewhere (a record's field copied in) is plain text. */
function parseSealed(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}
