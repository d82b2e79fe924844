// The event store: append with optimistic concurrency, read streams and the gated global log, follow live.
export * from './types.js';
export { EventStore } from './store.js';
export { EventTransaction, type AppendOptions, type InlineProjector } from './transaction.js';
export { WakeUps, EVENTS_CHANNEL, type WakeReason } from './wakeUps.js';
export { LogFollower } from './follow.js';
export { HorizonWatch, type HorizonStatus } from './horizon.js';
export type { LogFilter } from './sql.js';
export { backfillEventHashes } from './backfill.js';
export { canonicalText, canonicalTime, chainHash, eventHash, ZERO_HASH, type CanonicalEvent } from './canonical.js';
