// Builds the greeting from the step's `template` parameter.
export default function greet(ctx: { name: string }, step: { params: { template?: string } }): { greeting: string } {
  return { greeting: (step.params.template ?? 'Hello, {name}!').replace('{name}', ctx.name) };
}
