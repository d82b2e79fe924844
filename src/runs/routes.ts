// /api/runs: list, detail, journal over SSE, export, control (pause/resume/abort/steer) and fork; each answers or
// acts on a run only when the caller may read it (readableRun).
import { Router, type Request, type Response } from 'express';
import type { LimitFunction } from 'p-limit';
import type { SigningKeys } from '../iam/keys.js';
import type { Authenticator } from '../http/authenticator.js';
import { ADMIN_SCOPE, type Principal } from '../kernel/access.js';
import type { Pool, Queryable } from '../db/pool.js';
import type { LogFollower } from '../eventstore/follow.js';
import type { EventStore } from '../eventstore/store.js';
import type { RecordedEvent } from '../eventstore/types.js';
import type { JsonObject } from '../kernel/json.js';
import type { RunExecutor } from './engine/executor.js';
import { TERMINAL_STATUSES, type RunStatus } from './state.js';
import { requestMetadata, uuidParam } from '../http/context.js';
import { isReplicaFailure, type Reads } from '../http/reads.js';
import { openEventStream, sseFrame, type SseStream } from '../http/sse.js';
import { BadRequestError, NotFoundError } from '../kernel/errors.js';
import { compileValidator } from '../kernel/validation.js';
import type { WorkflowRegistry } from '../workflows/registry.js';
import { controlRun, type ControlAction } from './control.js';
import { forkRun } from './fork.js';
import { runStream, TERMINAL_EVENT_TYPES, type RunEventType } from './events.js';
import { presentRunEvent, runDescriptor, type RunRow } from './present.js';
import { findChildren, findRun, searchRuns } from './queries.js';
import { encodeCursor, parseRunSearch } from './search.js';
import { exportRun } from './transfer.js';
import type { DataKeys } from '../privacy/dataKeys.js';
import { holdsSealed, openPersonalObject, openRunEvents } from './personal.js';
import type { RunStarter } from './trigger/startRun.js';
import { withQueuePosition } from './concurrency/slots.js';

const steerBody = compileValidator<{ message: string }>({
  type: 'object',
  properties: { message: { type: 'string', minLength: 1, maxLength: 10_000 } },
  required: ['message'],
  additionalProperties: false,
});
const forkBody = compileValidator<{ from_step: string; input?: JsonObject }>({
  type: 'object',
  properties: { from_step: { type: 'string', minLength: 1, maxLength: 200 }, input: { type: 'object' } },
  required: ['from_step'],
  additionalProperties: false,
});
const abortBody = compileValidator<{ reason?: string }>({
  type: 'object',
  properties: { reason: { type: 'string', maxLength: 1000 } },
  additionalProperties: false,
});

export interface RunRoutesDeps {
  pool: Pool;
  /** Lists, details and the journal's catch-up read here (a read replica when one is set). */
  reads: Reads;
  store: EventStore;
  follower: LogFollower;
  executor: RunExecutor;
  workflows: WorkflowRegistry;
  authenticator: Authenticator;
  /** Signs run exports. */
  keys: SigningKeys;
  /** Checks a fork's input as a trigger checks its body. */
  starter: RunStarter;
  /** Opens the sealed spec.personal_data of runs (null once erased or expired). */
  dataKeys?: DataKeys;
  /** Event streams being opened at once (SVC_STREAM_OPEN_CONCURRENCY); the rest wait their turn in order. */
  streamOpens: LimitFunction;
}

const isAdmin = (principal: Principal) => principal.scopes.includes(ADMIN_SCOPE);

/** A run the caller may read: their own (in their tenant), or any for iam:admin; else 404. */
export async function readableRun(pool: Queryable, principal: Principal, id: string): Promise<RunRow> {
  const run = await findRun(pool, id);
  const sameTenant = run && (run.tenant ?? null) === (principal.tenant ?? null);
  if (!run || !sameTenant || (!isAdmin(principal) && run.principal_id !== principal.userId)) throw new NotFoundError(`Run ${id} not found`);
  return run;
}

/** `Last-Event-ID` header or `from_seq` query: the seq to resume after (0: from the start). */
function resumeAfter(req: Request): number {
  const raw = req.headers['last-event-id'] ?? req.query.from_seq;
  if (raw === undefined) return 0;
  if (typeof raw !== 'string' || !/^\d{1,15}$/.test(raw.trim())) throw new BadRequestError('Last-Event-ID / from_seq must be a non-negative integer');
  return Number(raw.trim());
}

/**
 * A live event's SSE frame, made once: every follower of the run gets the same event object, and a
 * thousand followers would otherwise each present and serialize it again.
 */
const liveFrames = new WeakMap<RecordedEvent, string>();
function liveFrame(event: RecordedEvent): string {
  let frame = liveFrames.get(event);
  if (frame === undefined) liveFrames.set(event, (frame = sseFrame(event.type, presentRunEvent(event), event.streamPosition)));
  return frame;
}

/** A run row as shown: its sealed input and output values opened (the row untouched when none are sealed). */
async function shownRow(deps: Pick<RunRoutesDeps, 'dataKeys'>, row: RunRow): Promise<RunRow> {
  const keys = deps.dataKeys;
  return keys ? { ...row, input: await openPersonalObject(keys, row.input), output: await openPersonalObject(keys, row.output) } : row;
}

export function runsRouter(deps: RunRoutesDeps): Router {
  const { pool, store, workflows, authenticator, reads } = deps;
  const describe = async (row: RunRow) => runDescriptor(await shownRow(deps, row));
  const router = Router();
  const readRule = { scope: 'runs:read' };

  router.get('/api/runs', authenticator.authenticate, async (req, res) => {
    const search = parseRunSearch(req.query, req.principal!);
    // One row past the page tells whether another page exists.
    const { value: rows } = await reads.read(req, (db) => searchRuns(db, { ...search, limit: search.limit + 1 }));
    const page = rows.slice(0, search.limit);
    if (rows.length > search.limit) res.setHeader('X-Next-Cursor', encodeCursor({ createdAt: page.at(-1)!.created_at, id: page.at(-1)!.id }));
    res.json(await Promise.all(page.map(describe)));
  });

  router.get('/api/runs/:id', authenticator.authenticate, async (req, res) => {
    const id = uuidParam(req, 'id', 'Run');
    const { value: run, db } = await reads.read(req, (db) => readableRun(db, req.principal!, id));
    res.json({ ...(await withQueuePosition(db, await describe(run))), children: await findChildren(db, run.id) });
  });

  router.get('/api/runs/:id/events', authenticator.require(readRule), (req, res) => streamRunEvents(deps, req, res));

  router.get('/api/runs/:id/export', authenticator.require(readRule), async (req, res) => {
    const run = await readableRun(pool, req.principal!, uuidParam(req, 'id', 'Run'));
    res.json(await exportRun(pool, store, workflows, run.id, deps.keys, deps.dataKeys));
  });

  // Control needs runs:control and read access: a run the caller cannot read is the same 404 as reading it.
  for (const action of ['pause', 'resume', 'abort', 'steer'] as ControlAction[]) {
    router.post(`/api/runs/:id/${action}`, authenticator.require({ scope: 'runs:control' }), async (req, res) => {
      const principal = req.principal!;
      const { id } = await readableRun(pool, principal, uuidParam(req, 'id', 'Run'));
      await controlRun(store, id, action, principal.userId, controlMessage(action, req), requestMetadata(req));
      if (action === 'resume') await deps.executor.resume(id);
      res.json(await describe((await findRun(pool, id))!));
    });
  }

  // A fork is a new run of the caller's: control of the source (runs:control, read access), and the workflow's gate.
  router.post('/api/runs/:id/fork', authenticator.require({ scope: 'runs:control' }), async (req, res) => {
    const principal = req.principal!;
    const { id } = await readableRun(pool, principal, uuidParam(req, 'id', 'Run'));
    const body = forkBody.parse(req.body ?? {});
    const forkDeps = { store, workflows, executor: deps.executor, checkInput: deps.starter.checkInput.bind(deps.starter), dataKeys: deps.dataKeys };
    const request = { sourceRunId: id, fromStep: body.from_step, input: body.input ?? {}, caller: principal, metadata: requestMetadata(req) };
    const runId = await forkRun(forkDeps, request);
    res
      .status(202)
      .location(`/api/runs/${runId}`)
      .json(await describe((await findRun(pool, runId))!));
  });

  return router;
}

/**
 * GET /api/runs/:id/events: the journal after Last-Event-ID (or from_seq), replayed, then live unless
 * follow=false. Opens take turns (`streamOpens`) from the run's look-up to the journal's catch-up:
 * thousands of clients reconnecting at once queue here instead of taking the whole pool.
 */
async function streamRunEvents(deps: RunRoutesDeps, req: Request, res: Response): Promise<void> {
  const id = uuidParam(req, 'id', 'Run');
  const after = resumeAfter(req);
  await deps.streamOpens(async () => {
    // A client that left while waiting its turn costs nothing more.
    if (req.socket.destroyed) return;
    const { value: run, db } = await deps.reads.read(req, (db) => readableRun(db, req.principal!, id));
    const stream = openEventStream(req, res, { credentials: deps.authenticator });
    if (req.query.follow === 'false') {
      await replayRunEvents(deps, run.id, after, stream, db);
      return;
    }
    // On a replica the catch-up reads there; the follower then reads the primary only past it.
    const caughtUp = db === deps.pool ? after : await replayRunEvents(deps, run.id, after, stream, db, { isLeftOpen: true });
    if (caughtUp !== undefined) await followRunEvents(deps, run, caughtUp, stream);
  });
}

/**
 * Replay: what the journal holds now after `after` (on `db`), then close; `isLeftOpen`: a catch-up
 * before following, which answers the last position sent (undefined once the run's end was sent).
 */
async function replayRunEvents(
  { store, reads, dataKeys }: { store: EventStore; reads: Reads; dataKeys?: DataKeys | undefined },
  runId: string,
  after: number,
  stream: SseStream,
  db: Queryable,
  { isLeftOpen = false } = {},
): Promise<number | undefined> {
  let position = after;
  let hasEnded = false;
  // A replica that fails mid-replay hands the rest to the primary, from the last position sent.
  const readPage = (from: number, source: Queryable) =>
    store.readStream(runStream(runId), from, 1000, source).catch((error: unknown) => {
      if (source === store.pool || !isReplicaFailure(error)) throw error;
      reads.reportFailure(error);
      db = store.pool;
      return store.readStream(runStream(runId), from, 1000);
    });
  for (;;) {
    const read = await readPage(position, db);
    const page = dataKeys ? await openRunEvents(dataKeys, read) : read;
    for (const event of page) {
      stream.send(event.type, presentRunEvent(event), event.streamPosition);
      position = event.streamPosition;
      if (TERMINAL_EVENT_TYPES.includes(event.type as RunEventType)) hasEnded = true;
    }
    if (read.length < 1000 || stream.closed) break;
  }
  if (!isLeftOpen || hasEnded || stream.closed) {
    stream.close();
    return undefined;
  }
  return position;
}

/** The journal after `after`, then live until the run's terminal event (or the client leaves); settles once caught up. */
function followRunEvents({ follower, dataKeys }: Pick<RunRoutesDeps, 'follower' | 'dataKeys'>, run: RunRow, after: number, stream: SseStream): Promise<void> {
  // A finished run whose terminal event the client already holds has nothing left to send.
  if (TERMINAL_STATUSES.includes(run.status as RunStatus) && after >= Number(run.last_seq)) {
    stream.close();
    return Promise.resolve();
  }
  return new Promise((caughtUp) => {
    const live = follower.subscribeToStream(runStream(run.id), after, { caughtUp }).subscribe(new LiveRunEvents(stream, dataKeys));
    stream.onClose(() => live.unsubscribe());
  });
}

/**
 * One stream's live events until the run's terminal event. Events with sealed values are opened
 * first (a key look-up); those after them wait their turn. An object, not closures: thousands of
 * idle followers hold one each.
 */
class LiveRunEvents {
  private opening: Promise<void> | null = null;

  constructor(
    private readonly stream: SseStream,
    private readonly dataKeys: DataKeys | undefined,
  ) {}

  next(event: RecordedEvent): void {
    const { dataKeys } = this;
    if (this.opening === null && !(dataKeys && holdsSealed(event))) return this.send(event, event);
    const turn: Promise<void> = (this.opening ?? Promise.resolve())
      .then(async () => this.send(event, dataKeys ? (await openRunEvents(dataKeys, [event]))[0]! : event))
      .catch(() => this.stream.close())
      .finally(() => {
        if (this.opening === turn) this.opening = null;
      });
    this.opening = turn;
  }

  error(): void {
    this.stream.close();
  }

  private send(event: RecordedEvent, shown: RecordedEvent): void {
    this.stream.sendFrame(shown === event ? liveFrame(event) : sseFrame(event.type, presentRunEvent(shown), event.streamPosition));
    if (TERMINAL_EVENT_TYPES.includes(event.type as RunEventType)) this.stream.close();
  }
}

/** What a control request carries: a steer's message, an abort's reason; nothing for pause and resume. */
function controlMessage(action: ControlAction, req: Request): string | undefined {
  if (action === 'steer') return steerBody.parse(req.body ?? {}).message;
  if (action === 'abort') return abortBody.parse(req.body ?? {}).reason;
  return undefined;
}
