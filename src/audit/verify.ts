// `svc audit verify` and GET /admin/audit/verify: every hash chain and every checkpoint, recomputed.
import type { JSONWebKeySet } from 'jose';
import type { Queryable } from '../db/pool.js';
import { verifyChains, type Broken } from './chains.js';
import { verifyCheckpoints } from './checkpointVerify.js';

export interface VerifyReport {
  ok: boolean;
  events_checked: number;
  checkpoints_checked: number;
  first_broken: Broken | null;
}

/**
 * Recomputes the chains, then the checkpoints (signatures checked against `trustedKeys`); the
 * first break found is the report's `first_broken`, and checking stops there.
 */
export async function verifyAuditLog(client: Queryable, trustedKeys: JSONWebKeySet): Promise<VerifyReport> {
  const chains = await verifyChains(client);
  if (chains.broken) return { ok: false, events_checked: chains.checked, checkpoints_checked: 0, first_broken: chains.broken };
  const checkpoints = await verifyCheckpoints(client, trustedKeys);
  return { ok: checkpoints.broken === null, events_checked: chains.checked, checkpoints_checked: checkpoints.checked, first_broken: checkpoints.broken };
}
