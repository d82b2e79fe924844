// Shared pieces of the approval tests: the fixture project served with a finance member, and requesting a refund.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser, type SignedInUser } from '../support/users.js';

/** refund (group finance, 1-day expiry), leave (no group), quick (expires after 1 s), hold (expires after 30 s). */
export const HITL_PROJECT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'hitl');
/** One key for every service of a test, so a token minted by one is good on all of them. */
export const SIGNING_KEY = 'c3'.repeat(32);
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ABSENT_ID = '00000000-0000-4000-8000-000000000000';

/** A finance member: may request refunds and decide approvals, and is in the group `finance`. */
export const FINANCE_ROLES = { finance: ['approvals:decide', 'refunds:request'] };

/** The fixture project served in this process, its bootstrapped admin, and a finance member `fin@example.com`. */
export async function startApprovalService(): Promise<{ service: Service; admin: Admin; fin: SignedInUser }> {
  const service = await startTestService({ projectDir: HITL_PROJECT, env: { SVC_SIGNING_KEY: SIGNING_KEY } });
  const admin = await bootstrapAdmin(service.url);
  return { service, admin, fin: await createUser(service.url, admin.token, 'fin@example.com', FINANCE_ROLES) };
}

/** Triggers a refund that needs a human (amount over 100); checks the 202 and answers the descriptor. */
export async function requestRefund(baseUrl: string, token: string, orderId: string, amount = 500): Promise<any> {
  const result = await call(baseUrl, 'POST', '/api/refunds', { token, json: { order_id: orderId, amount, reason: 'broken' } });
  expect(result.status, JSON.stringify(result.body)).to.equal(202);
  expect(result.body.status).to.equal('waiting_human');
  return result.body;
}
