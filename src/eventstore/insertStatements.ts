// The append's two INSERT statements. Both are named (prepared): each connection parses and plans
// them once, which costs several times what executing them does on the service's hottest path.
import { ZERO_HASH } from './canonical.js';

export const CHAIN_IN_DATABASE_STATEMENT = 'svc_insert_events_v5';
/**
 * For streams whose head this process does not know. Each stream's head (version and hash) is read once by a lateral join, in the statement that checks
 * the expected version: a concurrent writer of the same positions fails on the unique key, so the
 * head a successful insert chained from is the true one. The canonical text is the client's JCS with
 * the time and position spliced in; every stored column is read back out of that text, so what is
 * hashed is exactly what is stored. MATERIALIZED keeps the request's jsonb out of the
 * rows the window sorts; OFFSET 0 keeps the text parsed once per event.
 */
export const CHAIN_IN_DATABASE_SQL = `WITH request AS (
       SELECT s.ordinality AS stream_order, s.value->>'stream_id' AS stream_id, s.value->>'stream_type' AS stream_type,
              (s.value->>'expected')::bigint AS expected, s.value->>'middle' AS middle, s.value->'events' AS events
       FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS s(value, ordinality)
     ), canonical AS MATERIALIZED (
       SELECT r.stream_order, r.stream_id, r.stream_type, e.ordinality, v.version + e.ordinality AS stream_position,
              CASE WHEN v.version = 0 THEN '\\x${ZERO_HASH}'::bytea ELSE v.hash END AS head,
              (e.value->>'head')
                || to_char(coalesce((e.value->>'recorded_at')::timestamptz, now()) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
                || r.middle || (v.version + e.ordinality)::text || (e.value->>'tail') AS text
       FROM request r
       CROSS JOIN LATERAL (
         SELECT coalesce(h.stream_position, 0) AS version, h.hash
         FROM (SELECT 1) one
         LEFT JOIN LATERAL (SELECT x.stream_position, x.hash FROM events x WHERE x.stream_id = r.stream_id ORDER BY x.stream_position DESC LIMIT 1) h ON true
       ) v
       CROSS JOIN LATERAL jsonb_array_elements(r.events) WITH ORDINALITY AS e(value, ordinality)
       WHERE r.expected IS NULL OR v.version = r.expected
     )
     INSERT INTO events (stream_id, stream_type, stream_position, type, data, metadata, recorded_at, hash)
     SELECT c.stream_id, c.stream_type, c.stream_position, d.doc->>'type', d.doc->'data', d.doc->'metadata', (d.doc->>'recorded_at')::timestamptz,
            svc_event_chain(c.head, c.text) OVER (PARTITION BY c.stream_order ORDER BY c.ordinality)
     FROM canonical c
     CROSS JOIN LATERAL (SELECT c.text::jsonb AS doc OFFSET 0) d
     ORDER BY c.stream_order, c.ordinality
     RETURNING global_position, stream_id, stream_position, transaction_id::text AS transaction_id, recorded_at, encode(hash, 'hex') AS hash`;

export const CHAINED_HERE_STATEMENT = 'svc_insert_chained_events_v1';
/**
 * For streams whose head this process knows: the hashes come computed. The statement checks, once
 * per stream, that the head is the one they were chained from (version and hash): a stream that
 * moved on is left out, as in the statement above. `metadata` on a stream is every event's whose
 * own is absent (the common case of one call's metadata, parsed once).
 */
export const CHAINED_HERE_SQL = `WITH request AS (
       SELECT s.ordinality AS stream_order, s.value->>'stream_id' AS stream_id, s.value->>'stream_type' AS stream_type,
              (s.value->>'expected')::bigint AS expected, decode(s.value->>'previous', 'hex') AS previous,
              s.value->'metadata' AS metadata, s.value->'events' AS events
       FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS s(value, ordinality)
     ), admitted AS (
       SELECT r.* FROM request r
       CROSS JOIN LATERAL (
         SELECT coalesce(h.stream_position, 0) AS version, h.hash
         FROM (SELECT 1) one
         LEFT JOIN LATERAL (SELECT x.stream_position, x.hash FROM events x WHERE x.stream_id = r.stream_id ORDER BY x.stream_position DESC LIMIT 1) h ON true
       ) v
       WHERE v.version = r.expected AND (r.expected = 0 OR v.hash = r.previous)
     )
     INSERT INTO events (stream_id, stream_type, stream_position, type, data, metadata, recorded_at, hash)
     SELECT a.stream_id, a.stream_type, a.expected + e.ordinality, e.value->>'type', e.value->'data',
            coalesce(e.value->'metadata', a.metadata), (e.value->>'recorded_at')::timestamptz, decode(e.value->>'hash', 'hex')
     FROM admitted a CROSS JOIN LATERAL jsonb_array_elements(a.events) WITH ORDINALITY AS e(value, ordinality)
     ORDER BY a.stream_order, e.ordinality
     RETURNING global_position, stream_id, stream_position, transaction_id::text AS transaction_id, recorded_at, encode(hash, 'hex') AS hash`;
