-- Forked runs (POST /api/runs/{id}/fork): the run and step a fork came from, as its run_started says
-- ({run_id, step_id}); NULL for every other run. Filled by the svc_runs projection (rebuilt at start).
ALTER TABLE svc_runs ADD COLUMN forked_from jsonb;
