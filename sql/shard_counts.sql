-- The shard's side of releases over sharded sources, on one server:
-- contcount.shard_bounded_counts gives the exact bounded counts of a table
-- to a role granted EXECUTE on it that may SELECT the table, and refuses
-- every other role (42501) and every bad input with its SQLSTATE.  The
-- coordinator and shards themselves: test/t/017_shards.pl.

CREATE TABLE test.shard_rows (user_id int, at timestamptz, device text);
-- 30 persons, person u with u % 4 + 1 rows over two devices and four days
INSERT INTO test.shard_rows
SELECT u, '2026-01-01 00:00+00'::timestamptz + ((u + r) % 4) * interval '1 day' + r * interval '1 minute',
       (ARRAY['phone', 'tv'])[1 + (u + r) % 2]
FROM generate_series(1, 30) u, generate_series(1, u % 4 + 1) r;
INSERT INTO test.shard_rows VALUES (NULL, '2026-01-01', 'tv');
CREATE ROLE regress_shard_coord LOGIN;
CREATE ROLE regress_shard_other LOGIN;
GRANT USAGE ON SCHEMA test TO regress_shard_coord, regress_shard_other;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_shard_coord, regress_shard_other;
GRANT SELECT ON test.shard_rows TO regress_shard_coord, regress_shard_other;
GRANT EXECUTE ON FUNCTION contcount.shard_bounded_counts(text, text, text, text, text, text[],
    integer, integer, timestamptz, interval, bigint, jsonb, timestamptz, timestamptz, boolean) TO regress_shard_coord;

-- the same rule as a release: compare with source_counts at epsilon 1000
-- (noise 0 but with probability below 1e-80 a key)
SELECT contcount.create_ledger('regress_shard_data', 10000);
SELECT contcount.protect_table('regress_shard', 'test.shard_rows', 'user_id', 'at', 'regress_shard_data', 2, 1);
SELECT contcount.source_dimension('regress_shard', 'device', ARRAY['phone', 'tv', 'car']);
SELECT array_agg(noisy_count ORDER BY ord) AS release
FROM contcount.source_counts('regress_shard', 1000, 'device', ledger => 'regress_shard_data')
     WITH ORDINALITY AS c(key, noisy_count, stddev, ord);

SET ROLE regress_shard_coord;
SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', 'device',
    ARRAY['phone', 'tv', 'car'], 2, 1, NULL, NULL, 1, NULL, NULL, NULL) AS shard;
-- unbounded, for comparison: the rule kept fewer
SELECT count(*) FROM test.shard_rows WHERE user_id IS NOT NULL;
-- all rows, a filter, steps of a day, a window
SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', NULL, NULL, 2, 1,
    NULL, NULL, 1, NULL, NULL, NULL) AS all_rows,
       contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', NULL, NULL, 2, 1,
    NULL, NULL, 1, '{"device": ["tv"]}', NULL, NULL) AS tv_only,
       contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', 'device', ARRAY['phone', 'tv'], 3, 2,
    '2026-01-01 00:00+00', '1 day', 4, NULL, NULL, NULL) AS daily,
       contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', NULL, NULL, 3, 2,
    '2026-01-01 00:00+00', '1 day', 4, NULL, '2026-01-02 00:00+00', '2026-01-03 00:00+00') AS windowed;

-- bad inputs, each with its SQLSTATE
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.shard_bounded_counts(NULL, 'shard_rows', 'user_id', 'at', NULL, NULL, 2, 1, NULL, NULL, 1, NULL, NULL, NULL)$$),
    ($$SELECT contcount.shard_bounded_counts('nope', 'shard_rows', 'user_id', 'at', NULL, NULL, 2, 1, NULL, NULL, 1, NULL, NULL, NULL)$$),
    ($$SELECT contcount.shard_bounded_counts('test', 'nope', 'user_id', 'at', NULL, NULL, 2, 1, NULL, NULL, 1, NULL, NULL, NULL)$$),
    ($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'nope', 'at', NULL, NULL, 2, 1, NULL, NULL, 1, NULL, NULL, NULL)$$),
    ($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'device', NULL, NULL, 2, 1, NULL, NULL, 1, NULL, NULL, NULL)$$),
    ($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', 'device', NULL, 2, 1, NULL, NULL, 1, NULL, NULL, NULL)$$),
    ($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', 'device', ARRAY['a', NULL], 2, 1, NULL, NULL, 1, NULL, NULL, NULL)$$),
    ($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', NULL, NULL, 0, 1, NULL, NULL, 1, NULL, NULL, NULL)$$),
    ($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', NULL, NULL, 2, NULL, NULL, NULL, 1, NULL, NULL, NULL)$$),
    ($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', NULL, NULL, 2, 1, NULL, NULL, 2, NULL, NULL, NULL)$$),
    ($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', NULL, NULL, 2, 1, NULL, '1 day', 2, NULL, NULL, NULL)$$),
    ($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', NULL, NULL, 2, 1, '2026-01-01', '1 month', 2, NULL, NULL, NULL)$$),
    ($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', NULL, NULL, 2, 1, '2026-01-01', '1 day', 20000000, NULL, NULL, NULL)$$),
    ($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', NULL, NULL, 2, 1, '294276-12-01', '1 day', 100, NULL, NULL, NULL)$$),
    ($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', NULL, NULL, 2, 1, NULL, NULL, 1, '[1]', NULL, NULL)$$),
    ($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', NULL, NULL, 2, 1, NULL, NULL, 1, '{"device": "tv"}', NULL, NULL)$$),
    ($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', NULL, NULL, 2, 1, NULL, NULL, 1, '{"device": [1]}', NULL, NULL)$$),
    ($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', NULL, NULL, 2, 1, NULL, NULL, 1, '{"nope": ["tv"]}', NULL, NULL)$$),
    ($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', NULL, NULL, 2, 1, NULL, NULL, 1, NULL, '2026-01-01', NULL)$$)
) v(s);
RESET ROLE;

-- other roles: no EXECUTE (with SELECT), no SELECT (with EXECUTE), row level security
SET ROLE regress_shard_other;
SELECT test.error_of($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', NULL, NULL, 2, 1, NULL, NULL, 1, NULL, NULL, NULL)$$);
RESET ROLE;
REVOKE SELECT ON test.shard_rows FROM regress_shard_coord;
SET ROLE regress_shard_coord;
SELECT test.error_of($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', NULL, NULL, 2, 1, NULL, NULL, 1, NULL, NULL, NULL)$$);
RESET ROLE;
GRANT SELECT ON test.shard_rows TO regress_shard_coord;
ALTER TABLE test.shard_rows ENABLE ROW LEVEL SECURITY;
SET ROLE regress_shard_coord;
SELECT test.error_of($$SELECT contcount.shard_bounded_counts('test', 'shard_rows', 'user_id', 'at', NULL, NULL, 2, 1, NULL, NULL, 1, NULL, NULL, NULL)$$);
RESET ROLE;
ALTER TABLE test.shard_rows DISABLE ROW LEVEL SECURITY;
-- and it charged nothing: the ledger paid the release above, once
SELECT spent FROM contcount.ledgers WHERE name = 'regress_shard_data';

SELECT contcount.drop_source('regress_shard');
DROP TABLE test.shard_rows;
SELECT contcount.drop_ledger('regress_shard_data');
REVOKE ALL ON SCHEMA test FROM regress_shard_coord, regress_shard_other;
REVOKE ALL ON FUNCTION test.error_of(text) FROM regress_shard_coord, regress_shard_other;
REVOKE ALL ON FUNCTION contcount.shard_bounded_counts(text, text, text, text, text, text[],
    integer, integer, timestamptz, interval, bigint, jsonb, timestamptz, timestamptz, boolean) FROM regress_shard_coord;
DROP ROLE regress_shard_coord, regress_shard_other;
