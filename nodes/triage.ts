// Decides a ticket's priority from its subject: returns the signal `urgent` or `normal`.
export default function triage(ctx: { subject: string }): { context: { priority: number }; signal: string } {
  const urgent = /\b(down|outage|urgent|broken)\b/i.test(ctx.subject);
  return { context: { priority: urgent ? 1 : 3 }, signal: urgent ? 'urgent' : 'normal' };
}
