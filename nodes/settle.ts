// Takes its time (`ms`, default 2000) as a slow downstream would, then notes when it settled the account.
export default async function settle(ctx: { account: string }, step: { params: { ms?: number | null } }): Promise<{ settled_at: string }> {
  await new Promise((resolve) => setTimeout(resolve, step.params.ms ?? 2000));
  return { settled_at: new Date().toISOString() };
}
