-- Tamper evidence: every event carries hash = SHA-256(previous hash in its stream || JCS of the event).
-- SQL cannot compute JCS, so events stored before this migration keep a NULL hash until the
-- service's start-up backfill (src/eventstore/backfill.ts) hashes them, before it serves.
ALTER TABLE events ADD COLUMN hash bytea CONSTRAINT events_hash_length CHECK (octet_length(hash) = 32);

-- The backfill's work list; empty (and free) once every event is hashed.
CREATE INDEX events_unhashed_idx ON events (stream_id, stream_position) WHERE hash IS NULL;

-- One link of a stream's chain. The append computes a statement's chains with the window aggregate
-- below: the state starts as the stream head's hash and each event's canonical text extends it. A
-- NULL head (an event not hashed yet) keeps the new events NULL too, for the backfill to chain.
CREATE FUNCTION svc_event_chain_step(state bytea, head bytea, canonical text) RETURNS bytea
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
  AS $$ BEGIN RETURN sha256(coalesce(state, head) || convert_to(canonical, 'UTF8')); END $$;
CREATE AGGREGATE svc_event_chain(bytea, text) (SFUNC = svc_event_chain_step, STYPE = bytea);

-- Events stay immutable, except that a missing hash may be filled in once (the backfill).
CREATE OR REPLACE FUNCTION events_are_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.hash IS NULL AND NEW.hash IS NOT NULL AND (to_jsonb(NEW) - 'hash') = (to_jsonb(OLD) - 'hash') THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'events are immutable (% refused)', TG_OP USING ERRCODE = 'restrict_violation';
END $$;
