// The svc client library (`svc/client`): works in Node 20+ and browsers.
export { SvcAuth, type SvcAuthOptions } from './auth.js';
export { SvcClient, type ExecuteOptions, type ListQuery, type RunEventsOptions, type SvcClientOptions, type Transport } from './client.js';
export type { RunPage, RunSearch } from './runSearch.js';
export type { BackfillWindow } from './schedules.js';
export type { AuditVerification, LogQuery, LogStreamOptions } from './audit.js';
export type { WorkflowVersion } from './versions.js';
export { SvcRequestError, SvcRunFailedError, SvcRunPendingError } from './errors.js';
export type * from '../contract/types.js';
export { RUN_STATUSES } from '../contract/types.js';
export type { AdminRole, AdminUser, AdminUserChanges, Artifact, ArtifactSummary, ArtifactType, NewAdminRole, NewAdminUser, ScopesPalette } from './admin.js';
