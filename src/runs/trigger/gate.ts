// Who may start a run of a workflow: its declared scope and group, and a token unless it is public.
import type { Request } from 'express';
import type { Authenticator } from '../../http/authenticator.js';
import { isAllowed, type Principal } from '../../kernel/access.js';
import { PermissionDeniedError, UnauthenticatedError } from '../../kernel/errors.js';
import type { WorkflowDefinition } from '../../workflows/definition.js';
import type { RunPrincipal } from '../state.js';

/** The workflow's gates: declared scope AND group; a token is needed unless the workflow is public. */
export async function triggerPrincipal(req: Request, workflow: WorkflowDefinition, authenticator: Authenticator): Promise<RunPrincipal | null> {
  const gated = workflow.requiredScope !== null || workflow.requiredGroup !== null;
  if (workflow.trigger.isPublic && !gated && !req.headers.authorization) return null;
  return triggerPrincipalOf(workflow, await authenticator.principalOf(req));
}

/** The same gates for an already verified caller (undefined: no token was sent). */
export async function triggerPrincipalOf(workflow: WorkflowDefinition, principal: Principal | undefined): Promise<RunPrincipal | null> {
  const gated = workflow.requiredScope !== null || workflow.requiredGroup !== null;
  if (!principal) {
    if (workflow.trigger.isPublic && !gated) return null;
    throw new UnauthenticatedError('Not authenticated');
  }
  const rule = { scope: workflow.requiredScope ?? undefined, groups: workflow.requiredGroup ? [workflow.requiredGroup] : undefined };
  if (!isAllowed(principal, rule)) throw new PermissionDeniedError(`Permission denied: ${workflow.name} requires ${[workflow.requiredScope, workflow.requiredGroup].filter(Boolean).join(' and ')}`);
  return { user_id: principal.userId, groups: principal.groups, scopes: principal.scopes, tenant: principal.tenant ?? null };
}
