-- A daemon keeps the policy state row it last read (src/storage/postgres/prefetched-policy.ts)
-- rather than reading it again in every creating transaction; a transaction that relied on that
-- copy checks here, before anything after it, that the row is still as read, and fails with
-- CS001 otherwise (the daemon reads the row again and runs the transaction again).
CREATE FUNCTION countersign_expect_policy_state(expected TEXT) RETURNS VOID LANGUAGE plpgsql AS $$
BEGIN
  IF (SELECT p::text FROM policy_state p WHERE id = 1) IS DISTINCT FROM expected THEN
    RAISE EXCEPTION 'the policy state changed since this daemon read it' USING ERRCODE = 'CS001';
  END IF;
END $$;
