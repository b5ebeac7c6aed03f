-- Protected sources against an analyst who may release from them (issue
-- 11, item 4): every other way to the rows or their counts is refused, or
-- shows nothing, and the two that PostgreSQL opens to every role (row
-- estimates in pg_class and the statistics views) close as the README says.

CREATE TABLE test.visits_by_month (person int, region text, at timestamptz) PARTITION BY RANGE (at);
CREATE TABLE test.visits_jan PARTITION OF test.visits_by_month
    FOR VALUES FROM ('2026-01-01 00:00+00') TO ('2026-02-01 00:00+00');
CREATE TABLE test.visits_feb PARTITION OF test.visits_by_month
    FOR VALUES FROM ('2026-02-01 00:00+00') TO ('2026-03-01 00:00+00');
INSERT INTO test.visits_by_month
SELECT p, (ARRAY['north', 'south'])[1 + p % 2], '2026-01-01 00:00+00'::timestamptz + p * interval '7 hours'
FROM generate_series(1, 200) p;
CREATE TABLE test.visits_parent (person int, region text, at timestamptz);
CREATE TABLE test.visits_child () INHERITS (test.visits_parent);
INSERT INTO test.visits_child VALUES (1, 'north', '2026-01-02 00:00+00');
CREATE VIEW test.visits_view AS SELECT * FROM test.visits_by_month;
ANALYZE test.visits_by_month;

SELECT contcount.create_ledger('visits_data', 10);
SELECT contcount.create_ledger('visits_team', 10);
SELECT contcount.protect_table('visits', 'test.visits_by_month', 'person', 'at', 'visits_data');
SELECT contcount.protect_table('inherited', 'test.visits_parent', 'person', 'at', 'visits_data');
SELECT contcount.source_dimension('visits', 'region', ARRAY['north', 'south']);
-- a time column that is not a date or a timestamp is refused: its cast
-- could fail on a value and show it in the error
SELECT test.error_of($$SELECT contcount.protect_table('bad', 'test.visits_by_month', 'person', 'region', 'visits_data')$$);

-- a source whose running mean may be released: values that a cast to
-- float8 would refuse (numeric beyond its range), or that the open path
-- refuses (NaN), must not show themselves by an error
CREATE TABLE test.spend (person int, at timestamptz, amount numeric, paid float8, secret numeric);
INSERT INTO test.spend VALUES
    (1, '2026-01-01 00:00+00', 3, 3, 1), (2, '2026-01-02 00:00+00', '1e400', 'Infinity', 2),
    (3, '2026-01-03 00:00+00', '-1e400', '-Infinity', 3), (4, '2026-01-04 00:00+00', 'NaN', 'NaN', 4);
SELECT contcount.protect_table('spend', 'test.spend', 'person', 'at', 'visits_data');
SELECT contcount.source_mean_value('spend', 'amount');
SELECT contcount.source_mean_value('spend', 'paid');

CREATE ROLE regress_src_mallory LOGIN;
ALTER ROLE regress_src_mallory SET contcount.ledger = 'visits_team';
GRANT USAGE ON SCHEMA test TO regress_src_mallory;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_src_mallory;
SELECT contcount.grant_source('visits', 'regress_src_mallory');
SELECT contcount.grant_source('spend', 'regress_src_mallory');

\c - regress_src_mallory
-- The release works, over every partition.
SELECT key, noisy_count IS NOT NULL AS released FROM contcount.source_counts('visits', 1, 'region');
-- Every other way is refused.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT count(*) FROM test.visits_by_month$$),
    ($$SELECT count(*) FROM test.visits_jan$$),
    ($$SELECT count(*) FROM ONLY test.visits_by_month$$),
    ($$SELECT count(*) FROM test.visits_by_month TABLESAMPLE SYSTEM (50)$$),
    ($$SELECT count(*) FROM test.visits_view$$),
    ($$SELECT count(*) FROM test.visits_child$$),
    ($$EXPLAIN SELECT * FROM test.visits_jan WHERE person = 1$$),
    ($$SELECT count(*) FROM contcount.source$$),
    ($$SELECT count(*) FROM contcount.source_dimension$$),
    ($$SELECT count(*) FROM contcount.source_grant$$),
    ($$SELECT * FROM contcount.source_counts('inherited', 1)$$),
    ($$SELECT contcount.source_dimension('visits', 'person', ARRAY['1'])$$),
    ($$SELECT contcount.grant_source('inherited', 'regress_src_mallory')$$),
    ($$SELECT contcount.protect_table('mine', 'test.visits_jan', 'person', 'at', 'visits_team')$$),
    ($$SELECT * FROM contcount.source_counts('visits', 1, 'person')$$),
    ($$SELECT * FROM contcount.source_counts('visits', 1, ledger => 'visits_data')$$),
    ($$SELECT * FROM contcount.source_counts('visits', 1, filter => '{"person": ["1"]}')$$),
    ($$SELECT * FROM contcount.source_counts('visits', 1, filter => '{"region": ["north'' OR true --"]}')$$),
    ($$SELECT * FROM contcount.source_counts('visits', 1, filter => '{"region) OR (true": ["north"]}')$$),
    ($$SELECT contcount.bounded_counts(person, region, at ORDER BY person, at, region) FROM (VALUES (1, 'north', now())) v(person, region, at)$$),
    ($$SELECT contcount_internal.store_spent(1)$$),
    ($$SELECT * FROM contcount_internal.store_charges()$$),
    ($$SELECT pg_catalog.pg_read_file('base')$$)
) AS cases(s);
COPY test.visits_jan TO STDOUT;
COPY (SELECT 1 FROM test.visits_by_month) TO STDOUT;
-- the statistics the planner keeps show nothing of a table one cannot read
SELECT count(*) AS stats_rows FROM pg_stats WHERE tablename LIKE 'visits%';
-- the analyst sees the source granted, not the other; a leaky function in
-- the WHERE clause sees no more than the view lets through
CREATE FUNCTION pg_temp.leak(text) RETURNS boolean LANGUAGE plpgsql COST 0.0000001 AS
$$ BEGIN RAISE NOTICE 'seen: %', $1; RETURN true; END $$;
SELECT name, dimension FROM contcount.sources WHERE pg_temp.leak(name) ORDER BY name;
-- the data's ledger is not the analyst's to see
SELECT name FROM contcount.ledgers ORDER BY name;
-- a running mean: no value breaks it; the value must be a declared column
-- (not SQL text, not the unit or the time), and only a superuser declares
SELECT count(*) AS samples, count(mean) AS means
FROM contcount.source_running_mean('spend', 'amount', contcount.mean_mechanism(0, 10, 0.01, 10, 1));
SELECT count(*) AS samples, count(mean) AS means
FROM contcount.source_running_mean('spend', 'paid', contcount.mean_mechanism(0, 10, 0.01, 10, 1));
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT * FROM contcount.source_running_mean('spend', 'secret', contcount.mean_mechanism(0, 10, 0.01, 10, 1))$$),
    ($$SELECT * FROM contcount.source_running_mean('spend', 'person', contcount.mean_mechanism(0, 10, 0.01, 10, 1))$$),
    ($$SELECT * FROM contcount.source_running_mean('spend', 'amount"::numeric, secret AS "x', contcount.mean_mechanism(0, 10, 0.01, 10, 1))$$),
    ($$SELECT * FROM contcount.source_running_mean('visits', 'amount', contcount.mean_mechanism(0, 10, 0.01, 10, 1))$$),
    ($$SELECT contcount.source_mean_value('spend', 'secret')$$),
    ($$SELECT contcount.drop_source_mean_value('spend', 'amount')$$),
    ($$SELECT count(*) FROM contcount.source_mean_value$$)
) AS cases(s);

-- But PostgreSQL shows every role a table's row estimate, its size and its
-- tuple counts: these side doors are open until a DBA closes them (setup
-- closed them: open them again as PostgreSQL has them).
\c - postgres
SELECT test.unlock_statistics();
\c - regress_src_mallory
SELECT reltuples > 0 AS estimate_shown FROM pg_class WHERE relname = 'visits_jan';
SELECT pg_stat_get_tuples_inserted('test.visits_jan'::regclass) > 0 AS counts_shown;
SELECT pg_relation_size('test.visits_jan') > 0 AS size_shown;

\c - postgres
-- Closing them with contcount.lockdown_statistics(): the estimate columns
-- of pg_class (by granting every other column instead of the table), the
-- statistics views and functions, and the size functions.
SELECT contcount.lockdown_statistics();
\c - regress_src_mallory
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT reltuples FROM pg_class WHERE relname = 'visits_jan'$$),
    ($$SELECT relpages FROM pg_class WHERE relname = 'visits_jan'$$),
    ($$SELECT pg_stat_get_live_tuples('test.visits_jan'::regclass)$$),
    ($$SELECT pg_stat_get_tuples_inserted('test.visits_jan'::regclass)$$),
    ($$SELECT pg_stat_get_xact_tuples_inserted('test.visits_jan'::regclass)$$),
    ($$SELECT pg_relation_size('test.visits_jan')$$),
    ($$SELECT pg_total_relation_size('test.visits_jan')$$),
    ($$SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'visits_jan'$$),
    ($$SELECT n_tup_ins FROM pg_stat_all_tables WHERE relname = 'visits_jan'$$),
    ($$SELECT heap_blks_hit FROM pg_statio_user_tables WHERE relname = 'visits_jan'$$)
) AS cases(s);
-- and what an analyst needs of pg_class still works
SELECT relname, relkind FROM pg_class WHERE relname = 'visits_jan';
-- releases go on
SELECT key, noisy_count IS NOT NULL AS released FROM contcount.source_counts('visits', 1, 'region');
\c - postgres
SELECT contcount.drop_source('spend');
DROP TABLE test.spend;
DROP OWNED BY regress_src_mallory;
DROP ROLE regress_src_mallory;
DROP VIEW test.visits_view;
