-- Retention and legal hold (docs/privacy.md): the read model of retention-<run id> streams, which
-- hold run_hold_placed, run_hold_released and run_expired. No foreign keys: rebuilt from the log alone.
CREATE TABLE svc_run_retention (
  run_id      uuid PRIMARY KEY,
  workflow    text NOT NULL,
  held        boolean NOT NULL,
  held_at     timestamptz,
  held_by     text,
  hold_reason text,
  ended_at    timestamptz,
  expired_at  timestamptz
);
CREATE INDEX ON svc_run_retention (held_at) WHERE held;
CREATE INDEX ON svc_run_retention (expired_at) WHERE expired_at IS NOT NULL;

-- The sweeper's batches: a workflow's ended runs, oldest end first (updated_at is the end of an
-- ended run: nothing is appended to its stream after it ends).
CREATE INDEX ON svc_runs (workflow, updated_at) WHERE status IN ('completed', 'failed', 'aborted');
