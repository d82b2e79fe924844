// Query plans in tests: what PostgreSQL would do for a statement, as a flat list of plan nodes.
import type pg from 'pg';

export type PlanNode = Record<string, unknown>;

/** Every node of `EXPLAIN (FORMAT JSON)` of the statement with these values, depth first. */
export async function planNodes(db: pg.Pool, text: string, values: unknown[] = []): Promise<PlanNode[]> {
  const { rows } = await db.query(`EXPLAIN (FORMAT JSON) ${text}`, values);
  return nodesOf((rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan);
}

function nodesOf(plan: PlanNode): PlanNode[] {
  const children = (plan.Plans as PlanNode[] | undefined) ?? [];
  return [plan, ...children.flatMap(nodesOf)];
}
