-- A pause asked for while a step runs: the run stays `running` until the executor pauses it.
ALTER TABLE svc_runs ADD COLUMN pause_requested boolean NOT NULL DEFAULT false;
