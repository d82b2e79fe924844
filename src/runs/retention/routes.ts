// /admin/runs/{id}/hold and /admin/retention (iam:admin; with SVC_TENANT_IDS a deployment admin): legal hold of runs and what retention did.
import { Router, type Request } from 'express';
import type { Pool } from '../../db/pool.js';
import { runCommand } from '../../eventstore/command.js';
import type { EventStore } from '../../eventstore/store.js';
import type { NewEvent, RecordedEvent } from '../../eventstore/types.js';
import type { Authenticator } from '../../http/authenticator.js';
import { requestMetadata, uuidParam } from '../../http/context.js';
import type { Clock } from '../../kernel/clock.js';
import { NotFoundError } from '../../kernel/errors.js';
import { compileValidator, integerParam } from '../../kernel/validation.js';
import { foldRetention, placeHold, releaseHold, retentionStream, type RetentionState, type RunRef } from './decide.js';
import { findRunRef, retentionReport } from './queries.js';
import type { RetentionSweeper } from './sweeper.js';

const holdBody = compileValidator<{ reason?: string }>({
  type: 'object',
  properties: { reason: { type: 'string', maxLength: 2000 } },
  additionalProperties: false,
});

export interface RetentionRouteDeps {
  pool: Pool;
  store: EventStore;
  authenticator: Authenticator;
  clock: Clock;
  sweeper: RetentionSweeper;
}

/**
 * @example
 * app.use(retentionRouter({ pool, store, authenticator, clock, sweeper }));
 */
export function retentionRouter(deps: RetentionRouteDeps): Router {
  const { pool, authenticator, clock } = deps;
  const router = Router();
  const admin = authenticator.requireDeploymentAdmin('holds and retention reach the runs of every tenant');
  const now = () => clock.now().toISOString();

  router.post('/admin/runs/:id/hold', admin, async (req, res) => {
    const body = holdBody.parse(req.body ?? {});
    const held = await decideOnRun(deps, req, (state, run) => placeHold(state, run, body.reason ?? null, now()));
    res.json({ run_id: held.runId, held: true });
  });

  router.delete('/admin/runs/:id/hold', admin, async (req, res) => {
    const released = await decideOnRun(deps, req, (state, run) => releaseHold(state, run, now()));
    res.json({ run_id: released.runId, held: false });
  });

  router.get('/admin/retention', admin, async (req, res) => {
    const limit = integerParam(req.query.limit, 'limit', 100, 1, 1000);
    const report = await retentionReport(pool, limit);
    const policies = deps.sweeper.policies().map(([workflow, ms]) => ({ workflow, retention_seconds: ms / 1000 }));
    res.json({ policies, ...report });
  });

  return router;
}

/** Decides on a run's retention stream; a run that never existed, or expired, is a 404. */
async function decideOnRun(deps: RetentionRouteDeps, req: Request, decide: (state: RetentionState, run: RunRef) => NewEvent[]): Promise<RunRef> {
  const runId = uuidParam(req, 'id', 'Run');
  const found = await findRunRef(deps.pool, runId);
  if (!found) throw new NotFoundError(`Run ${runId} not found`);
  const run = { runId, workflow: found.workflow };
  const stream = retentionStream(runId);
  await runCommand(deps.store, {
    streams: [stream],
    decide: (read: ReadonlyMap<string, RecordedEvent[]>) => ({ events: { [stream]: decide(foldRetention(read.get(stream)!), run) }, result: undefined }),
    metadata: requestMetadata(req),
  });
  return run;
}
