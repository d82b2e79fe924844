// A workflow's steps as a graph: an edge per route (signal to step), plus the `default` signal's
// implicit edge to the next step where a step does not map it (Router steps emit their own signals
// only), laid out top to bottom by dagre.
import dagre from '@dagrejs/dagre';

export interface ManifestStep {
  id: string;
  kind: string;
  routes: Record<string, string>;
}

export interface GraphNode {
  id: string;
  label: string;
  kind: string;
  x: number;
  y: number;
}

export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  signal: string;
  /** Not written in `routes`: the next step in order, which the `default` signal takes. */
  implicit: boolean;
}

export const END = 'END';
export const NODE_WIDTH = 170;
export const NODE_HEIGHT = 48;

export function stepEdges(steps: readonly ManifestStep[]): GraphEdge[] {
  const edges: GraphEdge[] = [];
  steps.forEach((step, index) => {
    for (const [signal, target] of Object.entries(step.routes ?? {}))
      edges.push({ id: `${step.id}:${signal}`, source: step.id, target, signal, implicit: false });
    if (!('default' in (step.routes ?? {})) && step.kind !== 'Router') {
      edges.push({ id: `${step.id}:default`, source: step.id, target: steps[index + 1]?.id ?? END, signal: 'default', implicit: true });
    }
  });
  return edges;
}

/** Node positions (top-left corners) from dagre's layout; END is a node when an edge leads there. */
export function layoutSteps(steps: readonly ManifestStep[]): { nodes: GraphNode[]; edges: GraphEdge[] } {
  const edges = stepEdges(steps);
  const graph = new dagre.graphlib.Graph({ multigraph: true });
  graph.setGraph({ rankdir: 'TB', nodesep: 40, ranksep: 60 });
  graph.setDefaultEdgeLabel(() => ({}));
  const labels = new Map<string, string>(steps.map((step) => [step.id, step.kind]));
  if (edges.some((edge) => edge.target === END)) labels.set(END, 'end of the run');
  for (const id of labels.keys()) graph.setNode(id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  // A route to a step that does not exist is V-checked at load; drawn anyway if it slips through.
  for (const edge of edges) {
    if (!labels.has(edge.target)) labels.set(edge.target, 'unknown step');
    graph.setNode(edge.target, { width: NODE_WIDTH, height: NODE_HEIGHT });
    graph.setEdge(edge.source, edge.target, { label: edge.signal, width: 60, height: 18 }, edge.id);
  }
  dagre.layout(graph);
  const nodes = [...labels.entries()].map(([id, kind]) => {
    const placed = graph.node(id);
    return { id, label: id, kind, x: placed.x - NODE_WIDTH / 2, y: placed.y - NODE_HEIGHT / 2 };
  });
  return { nodes, edges };
}
