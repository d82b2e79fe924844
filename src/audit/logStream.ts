// GET /admin/events/stream: the filtered log as Server-Sent Events, replayed at the client's pace, then live.
import type { Response } from 'express';
import type { Queryable } from '../db/pool.js';
import type { LogFollower } from '../eventstore/follow.js';
import type { EventStore } from '../eventstore/store.js';
import { cursorOf, type RecordedEvent } from '../eventstore/types.js';
import { isReplicaFailure } from '../http/reads.js';
import { sseFrame, type SseStream } from '../http/sse.js';
import type { Logger } from '../kernel/logger.js';
import type { JsonObject } from '../kernel/json.js';
import type { DataKeys } from '../privacy/dataKeys.js';
import { encodeCursor, presentLogEvent, type LogQuery } from './log.js';

const REPLAY_PAGE = 1000;

export interface LogStreamDeps {
  store: EventStore;
  follower: LogFollower;
  logger: Logger;
  dataKeys: DataKeys;
  /** Where the replay reads (a read replica's pool); the live feed after it is the primary's. */
  db?: Queryable;
  /** Told when `db` failed mid-replay (the rest then comes from the primary). */
  onReplicaFailure?: (error: unknown) => void;
}

/**
 * Replays the gated log after `query.after` page by page, waiting for the socket to drain (a slow
 * client of a long log must not make the server buffer the log), then hands over to the follower's
 * gated feed from the last event sent: same order, nothing skipped, nothing twice. A replica's gated
 * view is a prefix of the primary's, so the hand-over from a replica's replay skips nothing either.
 */
export async function streamLog(deps: LogStreamDeps, query: LogQuery, stream: SseStream, res: Response): Promise<void> {
  let last = query.after;
  let db = deps.db;
  const send = (event: RecordedEvent, presented: JsonObject = presentLogEvent(event)): boolean => {
    last = cursorOf(event);
    const cursor = encodeCursor(last);
    return stream.sendFrame(sseFrame(event.type, presented, cursor));
  };
  try {
    for (;;) {
      const page = await deps.store.readGlobal(last, REPLAY_PAGE, query.filter, db).catch((error: unknown) => {
        // A replica that fails mid-replay hands the rest to the primary, from the last cursor sent.
        if (db === undefined || !isReplicaFailure(error)) throw error;
        deps.onReplicaFailure?.(error);
        db = undefined;
        return deps.store.readGlobal(last, REPLAY_PAGE, query.filter);
      });
      // An erased subject's values replay as null (its key state is the primary's); live events are sent as appended.
      const presented = await deps.dataKeys.nullErased(page.map(presentLogEvent));
      for (const [index, event] of page.entries()) {
        if (!send(event, presented[index])) await drained(stream, res);
        if (stream.closed) return;
      }
      if (page.length < REPLAY_PAGE) break;
    }
  } catch (error) {
    deps.logger.warn({ err: error }, 'replaying the audit log failed; the stream closes (the client resumes by Last-Event-ID)');
    stream.close();
    return;
  }
  const live = deps.follower.subscribeToAll(last, query.filter).subscribe({ next: (event) => void send(event), error: () => stream.close() });
  stream.onClose(() => live.unsubscribe());
}

function drained(stream: SseStream, res: Response): Promise<void> {
  return new Promise((resolve) => {
    res.once('drain', resolve);
    stream.onClose(resolve);
  });
}
