-- The statistics lockdown.  PostgreSQL shows every role exact counts of a
-- protected table, and of contcount's own tables (counter_unit holds a row
-- per person a counter counted), in pg_class, the statistics views and
-- functions of tables, indexes, the database and the server, the size
-- functions and pg_stat_statements.  contcount.lockdown_statistics()
-- closes them to all but superusers and pg_read_all_stats,
-- contcount.statistics_lockdown() says what is still open, and
-- protect_table warns while a door is open to PUBLIC.

-- Setup applied the lockdown: nothing is open.
SELECT count(*) AS open_doors FROM contcount.statistics_lockdown();
-- PostgreSQL's defaults again: every door of this database open to PUBLIC
SELECT test.unlock_statistics();
SELECT kind, count(DISTINCT door) > 0 AS open, array_agg(DISTINCT open_to) AS open_to
FROM contcount.statistics_lockdown() GROUP BY kind ORDER BY kind;
SELECT door FROM contcount.statistics_lockdown()
WHERE door IN ('pg_catalog.pg_class.reltuples', 'pg_catalog.pg_stat_get_db_tuples_fetched(oid)',
               'pg_catalog.pg_stat_get_xact_tuples_fetched(oid)', 'pg_catalog.pg_relation_size(regclass)',
               'pg_catalog.pg_database_size(name)', 'pg_catalog.pg_stat_all_indexes',
               'pg_catalog.pg_stat_database', 'pg_catalog.pg_stat_xact_user_tables',
               'pg_catalog.pg_statio_user_tables', 'pg_catalog.pg_stat_user_functions')
ORDER BY door;

-- The first column of a statement's first row, or its error.
CREATE FUNCTION test.value_of(statement text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v text;
BEGIN
    EXECUTE statement INTO v;
    RETURN v;
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

CREATE TABLE test.taps (person int, at timestamptz);
CREATE INDEX taps_at ON test.taps (at);
SELECT contcount.create_ledger('taps_data', 100);
SELECT contcount.create_ledger('taps_team', 100);
-- declaring a source while the doors are open warns
SELECT contcount.protect_table('taps', 'test.taps', 'person', 'at', 'taps_data');
CREATE ROLE regress_lock_analyst LOGIN;
ALTER ROLE regress_lock_analyst SET contcount.ledger = 'taps_team';
CREATE ROLE regress_lock_monitor LOGIN IN ROLE pg_read_all_stats;
GRANT USAGE ON SCHEMA test TO regress_lock_analyst, regress_lock_monitor;
GRANT EXECUTE ON FUNCTION test.error_of(text), test.value_of(text)
    TO regress_lock_analyst, regress_lock_monitor;
SELECT contcount.grant_source('taps', 'regress_lock_analyst');
\c - regress_lock_analyst
SELECT contcount.create_counter('taps_counter', 1, horizon => 10, step => '1 day', source => 'taps', mechanism => 'binary');
\c - postgres
-- 40 rows of 7 persons; what counter_unit_log had inserted before them
CREATE TABLE test.units_before AS
SELECT n_tup_ins AS inserted FROM pg_stat_all_tables WHERE relid = 'contcount.counter_unit_log'::regclass;
GRANT SELECT ON test.units_before TO regress_lock_analyst, regress_lock_monitor;
INSERT INTO test.taps SELECT p % 7, '2026-01-01 00:00+00'::timestamptz + p * interval '1 hour'
FROM generate_series(1, 40) p;
ANALYZE test.taps;
SELECT pg_stat_force_next_flush();

-- The doors, as an analyst uses them: exact counts of the protected table
-- (40 rows in 1 page) and of the transactions that logged persons for the
-- counter (1: at least, as a session of an earlier test may flush its
-- counts of counter_unit_log late; the step writes a row a person to
-- counter_unit).
CREATE TABLE test.doors (n int, statement text);
INSERT INTO test.doors VALUES
    (1, $$SELECT reltuples FROM pg_class WHERE oid = 'test.taps'::regclass$$),
    (2, $$SELECT relpages FROM pg_class WHERE oid = 'test.taps'::regclass$$),
    (3, $$SELECT n_tup_ins FROM pg_stat_user_tables WHERE relname = 'taps'$$),
    (4, $$SELECT n_tup_ins FROM pg_stat_all_tables WHERE relid = 'test.taps'::regclass$$),
    (5, $$SELECT pg_stat_get_tuples_inserted('test.taps'::regclass)$$),
    (6, $$SELECT n_tup_ins - (SELECT inserted FROM test.units_before) >= 1
          FROM pg_stat_all_tables WHERE relid = 'contcount.counter_unit_log'::regclass$$),
    (7, $$SELECT pg_stat_get_tuples_inserted('contcount.counter_unit_log'::regclass)
              - (SELECT inserted FROM test.units_before) >= 1$$),
    (8, $$SELECT heap_blks_hit + heap_blks_read > 0 FROM pg_statio_user_tables WHERE relname = 'taps'$$),
    (9, $$SELECT idx_scan IS NOT NULL FROM pg_stat_user_indexes WHERE indexrelname = 'taps_at'$$),
    (10, $$SELECT idx_blks_read IS NOT NULL FROM pg_statio_all_indexes WHERE indexrelname = 'taps_at'$$),
    (11, $$SELECT pg_stat_get_numscans('test.taps_at'::regclass) IS NOT NULL$$),
    (12, $$SELECT tup_fetched > 0 FROM pg_stat_database WHERE datname = current_database()$$),
    (13, $$SELECT pg_stat_get_db_tuples_returned(oid) > 0 FROM pg_database WHERE datname = current_database()$$),
    (14, $$SELECT buffers_alloc IS NOT NULL FROM pg_stat_bgwriter$$),
    (15, $$SELECT wal_records IS NOT NULL FROM pg_stat_wal$$),
    (16, $$SELECT pg_relation_size('test.taps') > 0$$),
    (17, $$SELECT pg_total_relation_size('test.taps') > 0$$),
    (18, $$SELECT pg_database_size(current_database()) > 0$$);
GRANT SELECT ON test.doors TO regress_lock_analyst, regress_lock_monitor;

\c - regress_lock_analyst
SELECT n, test.value_of(statement) AS value FROM test.doors ORDER BY n;
-- a release reports the rows its query read in the caller's own
-- transaction: all 40 (or those of its window, through the index)
BEGIN;
SELECT count(*) AS keys FROM contcount.source_counts('taps', 1);
SELECT seq_tup_read + COALESCE(idx_tup_fetch, 0) AS rows_read
FROM pg_stat_xact_user_tables WHERE relname = 'taps';
COMMIT;
-- only a superuser locks down
SELECT test.error_of($$SELECT contcount.lockdown_statistics()$$);

\c - postgres
SELECT contcount.lockdown_statistics();
SELECT count(*) AS open_doors FROM contcount.statistics_lockdown();
-- a source declared now draws no warning
SELECT contcount.protect_table('taps_again', 'test.taps', 'person', 'at', 'taps_data');
SELECT contcount.drop_source('taps_again');

\c - regress_lock_analyst
-- every door is shut
SELECT n, test.value_of(statement) AS value FROM test.doors ORDER BY n;
SELECT test.error_of($$SELECT relid FROM pg_stat_xact_user_tables$$);
SELECT test.error_of($$SELECT pg_stat_get_xact_tuples_fetched('test.taps'::regclass)$$);
-- what an analyst needs of pg_class is still there, and releases go on
SELECT relname, relkind, relhasindex FROM pg_class WHERE oid = 'test.taps'::regclass;
SELECT count(*) AS keys FROM contcount.source_counts('taps', 1);
-- and anyone may check the lockdown
SELECT count(*) AS open_doors FROM contcount.statistics_lockdown();

\c - regress_lock_monitor
-- monitoring keeps every door
SELECT n, test.value_of(statement) AS value FROM test.doors ORDER BY n;

\c - postgres
-- a grant of EXECUTE does not make another role a locksmith
GRANT EXECUTE ON FUNCTION contcount.lockdown_statistics() TO regress_lock_analyst;
\c - regress_lock_analyst
SELECT test.error_of($$SELECT contcount.lockdown_statistics()$$);
\c - postgres
REVOKE EXECUTE ON FUNCTION contcount.lockdown_statistics() FROM regress_lock_analyst;

-- pg_stat_statements shows every role the buffers and rows of every
-- statement: installed after the lockdown, it is open until the lockdown
-- runs again.
CREATE EXTENSION pg_stat_statements;
SELECT * FROM contcount.statistics_lockdown();
SELECT contcount.lockdown_statistics();
SELECT count(*) AS open_doors FROM contcount.statistics_lockdown();
SELECT r AS role, has_table_privilege(r, 'pg_stat_statements', 'SELECT') AS statements,
       has_function_privilege(r, 'pg_stat_statements(boolean)', 'EXECUTE') AS statements_function
FROM unnest(ARRAY['regress_lock_analyst', 'regress_lock_monitor']) r;
DROP EXTENSION pg_stat_statements;

-- another database's pg_stat_database shows this one's counters: a role
-- that may connect there holds a door, which the lockdown names, and
-- PUBLIC's CONNECT is left to the DBA
GRANT CONNECT ON DATABASE template1 TO regress_lock_analyst;
SELECT * FROM contcount.statistics_lockdown();
REVOKE CONNECT ON DATABASE template1 FROM regress_lock_analyst;
GRANT CONNECT ON DATABASE template1 TO PUBLIC;
SELECT contcount.lockdown_statistics();
SELECT contcount.protect_table('taps_again', 'test.taps', 'person', 'at', 'taps_data');
SELECT contcount.drop_source('taps_again');
REVOKE CONNECT ON DATABASE template1 FROM PUBLIC;
SELECT count(*) AS open_doors FROM contcount.statistics_lockdown();

-- two settings of preloaded modules that would show what the owner's own
-- statements did (only a superuser sets them; no lockdown closes them):
-- named while they are so, and protect_table warns
SET pg_stat_statements.track = 'all';
SET auto_explain.log_nested_statements = on;
SET auto_explain.log_level = 'notice';
SELECT * FROM contcount.statistics_lockdown();
SELECT contcount.protect_table('taps_again', 'test.taps', 'person', 'at', 'taps_data');
SELECT contcount.drop_source('taps_again');
SET auto_explain.log_level = 'log';
SET pg_stat_statements.track = 'top';
SELECT count(*) AS open_doors FROM contcount.statistics_lockdown();
RESET pg_stat_statements.track;
RESET auto_explain.log_nested_statements;
RESET auto_explain.log_level;

\c - regress_lock_analyst
SELECT contcount.drop_counter('taps_counter');
\c - postgres
SELECT contcount.drop_source('taps');
DROP TABLE test.taps, test.doors, test.units_before;
DROP FUNCTION test.value_of(text);
DROP OWNED BY regress_lock_analyst, regress_lock_monitor;
DROP ROLE regress_lock_analyst, regress_lock_monitor;
