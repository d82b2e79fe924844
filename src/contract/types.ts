// The HTTP contract's shapes, shared by the server's answers and the client library (types only).
// Type aliases, not interfaces: an alias is assignable to the JSON types the server builds bodies with.

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type JsonRecord = { [key: string]: Json };

export type TokenResponse = {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
};

export type Identity = {
  user_id: string;
  groups: string[];
  scopes: string[];
  tenant?: string;
};

/** A federation provider offered on sign-in pages (`GET /auth/providers`). */
export type SignInProvider = {
  name: string;
  kind: 'google' | 'github' | 'microsoft' | 'custom';
  /** Relative to the service: send the browser there to sign in. */
  start_url: string;
};

/** Every status a run can have (run search names them, and lists every one when a caller names none). */
export const RUN_STATUSES = [
  'queued',
  'running',
  'waiting_human',
  'waiting_approval',
  'waiting_retry',
  'waiting_timer',
  'waiting_child',
  'paused',
  'completed',
  'failed',
  'aborted',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export type PendingApprovalRef = {
  approval_id: string;
  kind: string;
  title: string;
  form: Json;
  decide_url: string;
};

export type RunDescriptor = {
  id: string;
  workflow: string;
  schema_version: string;
  status: RunStatus;
  input: JsonRecord;
  output: Json;
  error: { message: string; details: string } | null;
  current_step: string | null;
  /** A pause was asked for while a step runs: the run reports `paused` once that step's outcome is journaled. */
  pause_requested: boolean;
  /** When a run waiting for a retry or a timer goes on (kept while it is paused); null otherwise. */
  wake_at: string | null;
  created_at: string;
  updated_at: string;
  status_url: string;
  events_url: string;
  approval: PendingApprovalRef | null;
  /** How the run was started: `http`, `api`, `grpc`, `mcp`, `workflow` (a child run), or a schedule's tick. */
  trigger?: RunTrigger | null;
  /** The run whose Workflow step started this one; null for a top-level run. */
  parent_run_id?: string | null;
  /** Run detail only: the runs this run's Workflow steps started, oldest first. */
  children?: RunChild[];
  /** Present on a forked run (POST /api/runs/{id}/fork): the run and step it was forked from. */
  forked_from?: { run_id: string; step_id: string };
  /** Under spec.concurrency, while the run holds a slot or waits for one: its key value and which (absent otherwise). */
  concurrency?: RunConcurrency;
};

/** A child run as its parent's detail lists it. */
export type RunChild = { run_id: string; workflow: string; status: RunStatus };
/** `queue_position` (1: next to start) is in run detail for a run waiting for a slot. */
export type RunConcurrency = { key: string; slot: 'held' | 'waiting'; queue_position?: number };

/** `type` is how the run was started; a schedule's run names its schedule and tick. */
export type RunTrigger = { type: string; schedule_id?: string; scheduled_at?: string };

export type RunEvent = {
  run_id: string;
  seq: number;
  ts: string;
  type: string;
  agent_id: string;
  engine: string;
  payload: JsonRecord;
};

/** One frame of a workflow's client step stream (SSE trigger and gRPC-Web). */
export type StepFrame = {
  event_type: 'step' | 'done' | 'error' | 'suspended';
  step_id?: string;
  kind?: string;
  signal?: string;
  snapshot?: JsonRecord;
  duration_ms?: number;
  error_detail?: string;
  output?: Json;
  message?: string;
  details?: string;
  run?: RunDescriptor;
};

export type WorkflowSummary = {
  trigger_path: string;
  trigger_method: string;
  public: boolean;
  has_slow_steps: boolean;
  slow_kinds_present: string[];
};

export type WorkflowManifest = WorkflowSummary & {
  name: string;
  /** In order; `routes` as written (signal to step id or END): `default` not mapped goes to the next step. */
  steps: { id: string; kind: string; routes: Record<string, string> }[];
  /** spec.concurrency as written; null when every run starts at once. */
  concurrency: { limit: number; key: string | null; on_limit: 'queue' | 'reject' } | null;
};

export type WorkflowEnvelope = {
  success: false;
  status_code: number;
  data: JsonRecord | null;
  error: { message: string; details: string };
};

export type Approval = {
  approval_id: string;
  run_id: string;
  step_id: string;
  kind: 'human' | 'tool';
  workflow: string;
  title: string;
  instruction: string | null;
  form: Json;
  display: JsonRecord;
  required_group: string | null;
  status: 'pending' | 'decided' | 'expired' | 'cancelled';
  decision: string | null;
  decided_by: string | null;
  decided_at: string | null;
  values: Json;
  comment: string | null;
  created_at: string;
  expires_at: string | null;
  decide_url: string;
};

export type DecisionRequest = {
  decision: 'approve' | 'reject' | 'edit';
  values?: JsonRecord;
  comment?: string;
  edited_args?: JsonRecord;
};

export type RunExport = {
  format: 'svc.run/v1';
  run: RunDescriptor;
  workflow: { name: string; schema_version: string; definition: JsonRecord | null };
  events: RunEvent[];
};

/** A schedule as `GET /admin/schedules` lists it; `next_fire_at` is null while it is paused or its workflow version disabled. */
export type Schedule = {
  workflow: string;
  schema_version: string;
  id: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  paused: boolean;
  next_fire_at: string | null;
  last_fired_at: string | null;
  last_run_id: string | null;
};

/** The runs a backfill started, one per tick of its window that had none. */
export type ScheduleBackfill = { runs: string[] };

/** Who caused an event and through which door (BEYOND 3.1), as every event's metadata says. */
export type EventCause = {
  actor: { type: 'user' | 'dev' | 'system' | 'schedule'; id: string };
  source: 'http' | 'grpc' | 'mcp' | 'cli' | 'executor' | 'scheduler';
  /** The X-Request-Id of the request that caused it, when one did. */
  request_id?: string;
  tenant?: string;
};

/** An event as `GET /admin/events` shows it; `cursor` resumes after it. */
export type LogEvent = {
  cursor: string;
  global_position: number;
  stream_id: string;
  stream_type: string;
  stream_position: number;
  type: string;
  data: JsonRecord;
  /** Events before BEYOND 3.1 may carry less (or `actor` as a bare id). */
  metadata: Partial<EventCause> & JsonRecord;
  /** ISO 8601 UTC with six fraction digits: the shape the hash covers. */
  recorded_at: string;
  hash: string | null;
};

/** A page of the log; `next_cursor` is null at the head. */
export type LogEventPage = { events: LogEvent[]; next_cursor: string | null };
