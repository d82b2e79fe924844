-- A run commit settles its runs' leases in the statement sent just before its COMMIT, without
-- waiting for the answer: a run whose lease another process holds must then fail the statement, so
-- that PostgreSQL rolls that COMMIT back. SQLSTATE SV001; the detail lists the runs, comma-separated.
CREATE FUNCTION svc_refuse_fenced_runs(fenced uuid[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF cardinality(fenced) > 0 THEN
    RAISE EXCEPTION 'runs leased by another process: %', array_to_string(fenced, ', ')
      USING ERRCODE = 'SV001', DETAIL = array_to_string(fenced, ',');
  END IF;
END $$;
