-- Schedules: the read model of schedule-<workflow>/<id> streams; the ticker claims due ones on the index.
CREATE TABLE svc_schedules (
  workflow       text NOT NULL,
  schedule_id    text NOT NULL,
  schema_version text NOT NULL,
  cron           text NOT NULL,
  timezone       text NOT NULL,
  enabled        boolean NOT NULL,
  paused         boolean NOT NULL,
  next_fire_at   timestamptz,
  last_fired_at  timestamptz,
  last_run_id    uuid,
  version        bigint NOT NULL,
  updated_at     timestamptz NOT NULL,
  PRIMARY KEY (workflow, schedule_id)
);
CREATE INDEX svc_schedules_due ON svc_schedules (next_fire_at) WHERE enabled AND NOT paused;

-- One row per tick that starts a run: the unique key makes a tick start one run, whoever fires it
-- (the run id is chosen here, before the run starts). Coordination state, not a read model: never rebuilt.
CREATE TABLE svc_schedule_ticks (
  workflow     text NOT NULL,
  schedule_id  text NOT NULL,
  scheduled_at timestamptz NOT NULL,
  run_id       uuid NOT NULL,
  owner        text NOT NULL,
  leased_until timestamptz NOT NULL,
  started_at   timestamptz,
  PRIMARY KEY (workflow, schedule_id, scheduled_at)
);
-- Ticks a worker claimed but did not see started (it died in between): another takes them after the lease.
CREATE INDEX svc_schedule_ticks_unstarted ON svc_schedule_ticks (leased_until) WHERE started_at IS NULL;

-- How a run was started, as its run_started says (a schedule's tick included).
ALTER TABLE svc_runs ADD COLUMN trigger jsonb;
