-- The event store: one append-only table, the truth every read model is rebuilt from.
CREATE TABLE events (
  global_position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  stream_id       text        NOT NULL,
  stream_type     text        NOT NULL,
  stream_position bigint      NOT NULL CHECK (stream_position > 0),
  type            text        NOT NULL,
  data            jsonb       NOT NULL,
  metadata        jsonb       NOT NULL DEFAULT '{}'::jsonb,
  transaction_id  xid8        NOT NULL DEFAULT pg_current_xact_id(),
  recorded_at     timestamptz NOT NULL DEFAULT now(),
  -- Optimistic concurrency: two writers of the same position collide here (SQLSTATE 23505).
  CONSTRAINT events_stream_position_key UNIQUE (stream_id, stream_position)
);

-- Global readers page by (transaction_id, global_position) behind the pg_snapshot_xmin gate.
CREATE INDEX events_transaction_order_idx ON events (transaction_id, global_position);
CREATE INDEX events_stream_type_idx ON events (stream_type, global_position);

-- Events are immutable: refuse edits and deletes at the database too.
CREATE FUNCTION events_are_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'events are immutable (% refused)', TG_OP USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER events_immutable BEFORE UPDATE OR DELETE ON events
  FOR EACH ROW EXECUTE FUNCTION events_are_immutable();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_are_immutable();

-- Rebuilds build shadow tables here, then move them into public in one transaction.
CREATE SCHEMA svc_rebuild;

-- What each projection has applied, at which version.
CREATE TABLE projection_state (
  name         text PRIMARY KEY,
  version      integer NOT NULL,
  rebuilt_at   timestamptz,
  events_applied bigint NOT NULL DEFAULT 0
);
