// A trigger answered as the client step stream of SPEC "Events" (Accept: text/event-stream):
// step ... done | error, or suspended with the run descriptor.
import type { Request, Response } from 'express';
import type { Authenticator } from '../../http/authenticator.js';
import type { Pool } from '../../db/pool.js';
import type { LogFollower } from '../../eventstore/follow.js';
import { openEventStream } from '../../http/sse.js';
import { runStream } from '../events.js';
import { ClientFrameMapper, suspendedRun } from './clientFrames.js';
import type { RunStarter, RunStartRequest } from './startRun.js';

export interface SseDeps {
  pool: Pool;
  starter: RunStarter;
  follower: LogFollower;
  authenticator: Authenticator;
}

export async function answerAsEventStream(deps: SseDeps, req: Request, res: Response, request: RunStartRequest): Promise<void> {
  // Journaled before the stream opens: its frames come from the journal, and a run the database did
  // not record is a 503, not a stream that never speaks.
  // A replay (Idempotency-Key) streams the first run's frames from its journal's start, then live.
  const { runId, input, replayed } = await deps.starter.startJournaled(request);
  res.setHeader('X-Svc-Run-Id', runId);
  if (replayed) res.setHeader('Idempotent-Replayed', 'true');
  const stream = openEventStream(req, res, { credentials: deps.authenticator });
  const frames = new ClientFrameMapper(input);
  // Frames go out in journal order even when one needs a read (the descriptor of `suspended`).
  let sending = Promise.resolve();
  const subscription = deps.follower.subscribeToStream(runStream(runId), 0).subscribe((event) => {
    const frame = frames.map(event);
    if (!frame) return;
    sending = sending.then(async () => {
      if (frame.event === 'suspended') frame.data.run = await suspendedRun(deps.pool, runId);
      stream.send(frame.event, frame.data, frame.seq);
      if (frame.isLast) stream.close();
    });
  });
  stream.onClose(() => subscription.unsubscribe());
}
