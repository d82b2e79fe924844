// Shared pieces of the approval tests: the fixture project, finance users' roles, and requesting a refund.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { call } from '../support/http.js';

/** refund (group finance, 1-day expiry), leave (no group), quick (expires after 1 s), hold (expires after 30 s). */
export const HITL_PROJECT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'hitl');
/** One key for every service of a test, so a token minted by one is good on all of them. */
export const SIGNING_KEY = 'c3'.repeat(32);
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ABSENT_ID = '00000000-0000-4000-8000-000000000000';

/** A finance member: may request refunds and decide approvals, and is in the group `finance`. */
export const FINANCE_ROLES = { finance: ['approvals:decide', 'refunds:request'] };

/** Triggers a refund that needs a human (amount over 100); checks the 202 and answers the descriptor. */
export async function requestRefund(baseUrl: string, token: string, orderId: string, amount = 500): Promise<any> {
  const result = await call(baseUrl, 'POST', '/api/refunds', { token, json: { order_id: orderId, amount, reason: 'broken' } });
  expect(result.status, JSON.stringify(result.body)).to.equal(202);
  expect(result.body.status).to.equal('waiting_human');
  return result.body;
}
