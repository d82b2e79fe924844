// Runs seen over HTTP in e2e tests: the journal as served, waiting for a status or an event, and the
// check that no engine-owned (`_`-prefixed) key leaks into what a caller sees.
import { expect } from 'chai';
import { call, eventually, type HttpResult } from './http.js';
import { readSse } from './sse.js';

/** A journal entry or run descriptor as served; `any` because tests read its fields unchecked, as a client would. */
type Served = any;

/** Starts a run of `workflow` without waiting for it (`?wait=false`, 202); answers its id. */
export async function startRun(baseUrl: string, token: string, workflow: string, input: Record<string, unknown>): Promise<string> {
  const started = await call(baseUrl, 'POST', `/api/workflows/${workflow}/runs?wait=false`, { token, json: input });
  expect(started.status, JSON.stringify(started.body)).to.equal(202);
  return started.body.id as string;
}

/** The journal of a run as `GET /api/runs/{id}/events?follow=false` serves it (each frame's `data`). */
export async function journalOf(baseUrl: string, token: string, runId: string): Promise<Served[]> {
  const answer = await readSse(`${baseUrl}/api/runs/${runId}/events?follow=false`, { token });
  expect(answer.status, answer.text).to.equal(200);
  return answer.frames.map((f) => f.data);
}

/** Polls GET /api/runs/{id} until its status is one of `statuses`; answers the run descriptor. */
export async function waitForStatus(baseUrl: string, token: string, runId: string, statuses: string[], timeoutMs = 10_000): Promise<Served> {
  let last: HttpResult | undefined;
  const reached = await eventually(
    async () => {
      last = await call(baseUrl, 'GET', `/api/runs/${runId}`, { token });
      return last.status === 200 && statuses.includes(last.body.status);
    },
    timeoutMs,
    25,
  );
  if (!reached.ok) throw new Error(`run ${runId} did not reach ${statuses.join('|')} in ${timeoutMs} ms: ${JSON.stringify(last?.body)}`);
  return last!.body;
}

/** Polls the journal until an event of `type` (optionally matching `where`) is in it. */
export async function waitForEvent(
  baseUrl: string,
  token: string,
  runId: string,
  type: string,
  where: (e: Served) => boolean = () => true,
  timeoutMs = 10_000,
): Promise<Served[]> {
  let journal: Served[] = [];
  const found = await eventually(
    async () => {
      journal = await journalOf(baseUrl, token, runId);
      return journal.some((e) => e.type === type && where(e));
    },
    timeoutMs,
    50,
  );
  if (!found.ok) throw new Error(`no ${type} in run ${runId}: ${journal.map((e) => e.type).join(',')}`);
  return journal;
}

/** Every key starting with `_` anywhere in a JSON value, with its path. */
export function privateKeys(value: unknown, at = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => privateKeys(item, `${at}[${index}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) => [...(key.startsWith('_') ? [`${at}.${key}`] : []), ...privateKeys(item, `${at}.${key}`)]);
}

export function expectNoPrivateKeys(value: unknown, what: string): void {
  expect(privateKeys(value), `${what} leaks engine-owned keys: ${JSON.stringify(value)}`).to.deep.equal([]);
}
