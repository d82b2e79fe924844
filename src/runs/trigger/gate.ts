// Who may start a run of a workflow: its declared scope and group, and a token unless it is public.
import type { Request } from 'express';
import type { Authenticator } from '../../http/authenticator.js';
import { isAllowed, type AccessRule, type Principal } from '../../kernel/access.js';
import { PermissionDeniedError, UnauthenticatedError } from '../../kernel/errors.js';
import type { WorkflowDefinition } from '../../workflows/definition.js';
import type { RunPrincipal } from '../state.js';

/** The workflow's declared scope AND group, as an access rule. */
export function workflowGate(workflow: WorkflowDefinition): AccessRule {
  return { scope: workflow.requiredScope ?? undefined, groups: workflow.requiredGroup ? [workflow.requiredGroup] : undefined };
}

/** Public, with neither scope nor group: anyone may start it, signed in or not. */
export const isOpenToAll = (workflow: WorkflowDefinition) => workflow.trigger.isPublic && workflow.requiredScope === null && workflow.requiredGroup === null;

/**
 * The caller of an HTTP trigger: nobody for a workflow open to all called without an Authorization
 * header (no credentials are looked at then), else the verified principal (a 401 without one).
 */
export async function triggerCaller(req: Request, workflow: WorkflowDefinition, authenticator: Authenticator): Promise<Principal | undefined> {
  if (isOpenToAll(workflow) && !req.headers.authorization) return undefined;
  return authenticator.principalOf(req);
}

/** The workflow's gates for a verified caller (undefined: none): who the run is for, or null for an anonymous run. */
export function passGate(workflow: WorkflowDefinition, caller: Principal | undefined): RunPrincipal | null {
  if (!caller) {
    if (isOpenToAll(workflow)) return null;
    throw new UnauthenticatedError('Not authenticated');
  }
  if (!isAllowed(caller, workflowGate(workflow))) {
    throw new PermissionDeniedError(
      `Permission denied: ${workflow.name} requires ${[workflow.requiredScope, workflow.requiredGroup].filter(Boolean).join(' and ')}`,
    );
  }
  return { user_id: caller.userId, groups: caller.groups, scopes: caller.scopes, tenant: caller.tenant ?? null };
}
