// Deciding approvals: validate the form, append the decision on the run stream (one winner), resume the run.
import type { Principal } from '../kernel/access.js';
import type { Pool } from '../db/pool.js';
import type { Clock } from '../kernel/clock.js';
import { runCommand } from '../eventstore/command.js';
import type { EventStore } from '../eventstore/store.js';
import type { EventMetadata } from '../eventstore/types.js';
import type { RunExecutor } from '../runs/engine/executor.js';
import { foldRun } from '../runs/state.js';
import { BadRequestError, NotFoundError, PermissionDeniedError, ValidationError } from '../kernel/errors.js';
import type { JsonObject } from '../kernel/json.js';
import { compileValidator } from '../kernel/validation.js';
import { asRunEvent, runStream } from '../runs/events.js';
import { canDecide, decideApproval, DECISIONS, type DecisionInput } from './decide.js';
import { formSchema, type FeedbackField } from './form.js';
import { findApproval, type ApprovalRow } from './queries.js';

export class ApprovalService {
  constructor(
    private readonly pool: Pool,
    private readonly store: EventStore,
    private readonly executor: RunExecutor,
    private readonly clock: Clock,
  ) {}

  /** Decides; exactly one of concurrent decisions wins, the others get 409. */
  async decide(approvalId: string, input: DecisionInput, principal: Principal, metadata?: EventMetadata): Promise<ApprovalRow> {
    const approval = await findApproval(this.pool, approvalId);
    if (!approval || (approval.tenant ?? null) !== (principal.tenant ?? null)) throw new NotFoundError(`Approval ${approvalId} not found`);
    if (!canDecide(principal, approval)) throw new PermissionDeniedError('Permission denied: you may not decide this approval');
    const allowed = DECISIONS[approval.kind] ?? DECISIONS.human!;
    if (!allowed.includes(input.decision)) throw new BadRequestError(`decision must be one of ${allowed.join(', ')}`);
    this.checkValues(approval, input.values ?? {}, input.decision !== 'reject');
    if (input.edited_args !== undefined && !(approval.kind === 'tool' && input.decision === 'edit')) {
      throw new BadRequestError('edited_args only goes with decision "edit" on a tool approval');
    }
    if (input.decision === 'edit' && input.edited_args === undefined) throw new BadRequestError('decision "edit" needs edited_args');
    const stream = runStream(approval.run_id);
    await runCommand(this.store, {
      streams: [stream],
      decide: (read) => ({
        events: { [stream]: decideApproval(foldRun(read.get(stream)!.map((e) => asRunEvent(e))), approvalId, input, principal.userId, this.clock.now()) },
        result: undefined,
      }),
      // A lost race re-reads the run and finds the approval decided: 409 with a clear reason.
      retries: 2,
      ...(metadata ? { metadata } : {}),
    });
    await this.executor.resume(approval.run_id);
    return (await findApproval(this.pool, approvalId))!;
  }

  /** A rejection needs no values (required fields may be absent), but what it carries must still fit the form. */
  private checkValues(approval: ApprovalRow, values: JsonObject, isComplete: boolean): void {
    const fields = Array.isArray(approval.form) ? (approval.form as unknown as FeedbackField[]) : [];
    if (approval.kind !== 'human') return;
    const schema = formSchema(isComplete ? fields : fields.map((field) => ({ ...field, required: false })));
    const issues = compileValidator(schema).issues(values);
    if (issues.length > 0) throw new ValidationError(issues.map((i) => ({ ...i, loc: ['body', 'values', ...i.loc.slice(1)] })));
  }
}
