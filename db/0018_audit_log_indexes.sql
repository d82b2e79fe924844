-- The audit API's filters (GET /admin/events, BEYOND 3.2), each served by an index that also gives
-- the gated order (transaction_id, global_position), so a filtered page is a range scan, not a sort.
-- stream_id: the unique key (stream_id, stream_position) serves it; stream_type: events_stream_type_idx.
CREATE INDEX events_type_order_idx ON events (type, transaction_id, global_position);
-- The actor's id: `metadata.actor.id`, or `metadata.actor` itself in events written before actors had a type.
CREATE INDEX events_actor_order_idx ON events ((coalesce(metadata->'actor'->>'id', metadata->>'actor')), transaction_id, global_position);
CREATE INDEX events_recorded_at_idx ON events (recorded_at);
