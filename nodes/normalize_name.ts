// Trims and capitalises `name`.
export default function normalizeName(ctx: { name?: string }): { name: string } {
  const name = (ctx.name ?? 'world').trim() || 'world';
  return { name: name.charAt(0).toUpperCase() + name.slice(1) };
}
