// Adds the length of the greeting and the sum of `values`, so the output depends on the whole input.
export default function stamp(ctx: { greeting: string; values?: number[] }): { length: number; total: number } {
  return { length: ctx.greeting.length, total: (ctx.values ?? []).reduce((sum, value) => sum + value, 0) };
}
