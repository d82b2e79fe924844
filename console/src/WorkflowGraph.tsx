// The step graph of a workflow (@xyflow/react, laid out by dagre), and the same graph as a list for
// those who do not see it. xyflow's styles come in as a CSS file of the bundle (style-src 'self').
import '@xyflow/react/dist/style.css';
import './extras.css';
import { Background, Controls, MarkerType, ReactFlow, useReactFlow, useStore, type Edge, type Node } from '@xyflow/react';
import { useEffect, useMemo } from 'react';
import { END, layoutSteps, type ManifestStep } from './stepGraph.js';

function flowOf(steps: readonly ManifestStep[]): { nodes: Node[]; edges: Edge[] } {
  const laid = layoutSteps(steps);
  const nodes: Node[] = laid.nodes.map((node) => ({
    id: node.id,
    position: { x: node.x, y: node.y },
    data: { label: `${node.id === END ? 'END' : node.label} · ${node.kind}` },
    className: `graph-node${node.id === END ? ' graph-end' : ''}`,
    ariaLabel: node.id === END ? 'End of the run' : `Step ${node.id}, ${node.kind}`,
    draggable: false,
    connectable: false,
  }));
  const edges: Edge[] = laid.edges.map((edge) => ({
    id: edge.id,
    source: edge.source,
    target: edge.target,
    label: edge.signal,
    className: edge.implicit ? 'graph-implicit' : undefined,
    markerEnd: { type: MarkerType.ArrowClosed, color: '#5b6577' },
    focusable: false,
  }));
  return { nodes, edges };
}

/** Fits the graph again when its pane changes size (a phone turned, a window resized): `fitView` alone fits once. */
function FitOnResize() {
  const { fitView } = useReactFlow();
  const width = useStore((state) => state.width);
  const height = useStore((state) => state.height);
  useEffect(() => {
    if (width > 0 && height > 0) void fitView();
  }, [width, height, fitView]);
  return null;
}

export function WorkflowGraph({ name, steps }: { name: string; steps: readonly ManifestStep[] }) {
  const flow = useMemo(() => flowOf(steps), [steps]);
  const transitions = layoutSteps(steps).edges;
  return (
    <figure className="graph" aria-labelledby="graph-caption">
      <figcaption id="graph-caption">
        Steps of {name}: an arrow per signal (dashed: <code>default</code> to the next step, not written in the routes)
      </figcaption>
      <div className="graph-canvas" data-testid="step-graph">
        <ReactFlow
          nodes={flow.nodes}
          edges={flow.edges}
          fitView
          nodesDraggable={false}
          nodesConnectable={false}
          elementsSelectable={false}
          proOptions={{ hideAttribution: false }}
        >
          <Background />
          <Controls showInteractive={false} />
          <FitOnResize />
        </ReactFlow>
      </div>
      <details>
        <summary>The graph as a list</summary>
        <ul className="transitions">
          {transitions.map((edge) => (
            <li key={edge.id} data-transition={edge.id}>
              {edge.source} → {edge.target} on <code>{edge.signal}</code>
              {edge.implicit ? ' (next step)' : ''}
            </li>
          ))}
        </ul>
      </details>
    </figure>
  );
}
