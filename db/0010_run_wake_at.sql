-- The time a run waits for (a step's next attempt, a Wait step's timer), and which of the two:
-- claims find due runs through the partial index, never by scanning svc_runs. Kept while the run
-- is paused (its resume returns to waiting), null otherwise. Part of the svc_runs read model.
ALTER TABLE svc_runs ADD COLUMN wake_at timestamptz;
ALTER TABLE svc_runs ADD COLUMN wake_status text;
CREATE INDEX svc_runs_wake_at ON svc_runs (wake_at) WHERE status IN ('waiting_retry', 'waiting_timer');
