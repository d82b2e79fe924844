// What routes need of authentication: a verified principal on the request, and access guards.
// IAM implements it (src/iam/authenticator.ts); the composition root hands it to every router.
import type { Request, RequestHandler } from 'express';
import type { AccessRule, Principal } from '../kernel/access.js';

export interface Authenticator {
  /** Steps 1-6 and 8: a verified principal on `req.principal`, or a 401. */
  authenticate: RequestHandler;
  /** Authentication plus step 7 for one rule. */
  require(rule?: AccessRule): RequestHandler;
  /** The principal of a request, verifying it if no middleware did (for handlers with dynamic rules). */
  principalOf(req: Request): Promise<Principal>;
  /** The same pipeline for a raw token (gRPC-Web calls); `remoteAddress` gates the dev key. */
  principalOfToken(token: string | undefined, remoteAddress: string | undefined): Promise<Principal>;
  /** Whether the principal administers the whole deployment (see isDeploymentAdmin). */
  isDeploymentAdmin(principal: Principal): boolean;
  /**
   * Authentication plus a deployment admin; `why` says, in the 403 a tenant admin gets, why it is
   * deployment-wide. With another `rule` (default `iam:admin`): that rule, and with SVC_TENANT_IDS the
   * `superadmin` group too (what spans every tenant is never for one tenant's principals).
   */
  requireDeploymentAdmin(why: string, rule?: AccessRule): RequestHandler;
  /**
   * For long-lived answers (streams): calls `onEnd` once, with the 401 detail a request would get
   * now, when the principal's token is revoked, its session ends or it expires; answers the cancel.
   * The dev key is not a token: nothing to watch.
   */
  watch(principal: Principal, onEnd: (reason: string) => void): () => void;
}

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}
