// Projections: row read models folded from the log, applied inline and rebuildable.
export * from './types.js';
export { ProjectionRegistry } from './registry.js';
export { rebuildProjection, type RebuildProgress, type RebuildResult } from './rebuild.js';
export { projectionLags, projectionStatus, rebuildStaleProjections, type ProjectionStatus } from './status.js';
