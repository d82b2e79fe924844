// Takes its time (`ms`, default 2000, at most 10 s) as a slow downstream would, then notes when it settled the account.

/** The longest a caller may make one settle take: `ms` comes from the request, and a step holds a worker and the account's slot. */
export const MAX_SETTLE_MS = 10_000;

/** The wait a request's `ms` asks for, kept within 0..MAX_SETTLE_MS (fuzzing found `ms: 999997` holding a worker for 17 minutes). */
export function settleDelayMs(ms: number | null | undefined): number {
  const asked = typeof ms === 'number' && Number.isFinite(ms) ? ms : 2000;
  return Math.min(Math.max(asked, 0), MAX_SETTLE_MS);
}

export default async function settle(ctx: { account: string }, step: { params: { ms?: number | null } }): Promise<{ settled_at: string }> {
  await new Promise((resolve) => setTimeout(resolve, settleDelayMs(step.params.ms)));
  return { settled_at: new Date().toISOString() };
}
