// Stands in for an upstream that is briefly down: the first two attempts of each run fail (counted in
// this process), the third answers. The workflow's `retry` makes it succeed; nothing retries here.
const attempts = new Map<string, number>();

export default function flakyQuote(_ctx: Record<string, unknown>, step: { idempotencyKey: string }): { quote: string; attempts: number } {
  const attempt = (attempts.get(step.idempotencyKey) ?? 0) + 1;
  attempts.set(step.idempotencyKey, attempt);
  if (attempt < 3) {
    const busy = new Error(`the quote service is busy (attempt ${attempt})`);
    busy.name = 'UpstreamBusy';
    throw busy;
  }
  attempts.delete(step.idempotencyKey);
  return { quote: 'Simple is better than complex.', attempts: attempt };
}
