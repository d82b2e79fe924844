-- spec.concurrency: which runs hold a slot of their workflow's limit (slot 'held') and which wait for
-- one (slot 'waiting', in arrival order: created_at, id), per key value. Part of the svc_runs read
-- model (run_queued, run_dequeued and the events that give a slot up). Admission counts holders and
-- finds the queue's head through the partial index, under an advisory lock per (workflow, key).
ALTER TABLE svc_runs ADD COLUMN concurrency_key text;
ALTER TABLE svc_runs ADD COLUMN slot text;
CREATE INDEX svc_runs_slot_idx ON svc_runs (workflow, concurrency_key, slot, created_at, id) WHERE slot IS NOT NULL;
