-- Sealed releases: the query a release runs as the extension's owner tells
-- the caller nothing but its noisy values.  An analyst (not a superuser)
-- turns every talkative setting up to its most talkative value and runs the
-- same releases over two neighbouring tables, plainly and under EXPLAIN
-- (ANALYZE, BUFFERS, WAL, VERBOSE, SETTINGS): what the client receives
-- (messages, EXPLAIN's lines, rows) is the same for both but the noisy
-- values.  Rows at the ends of the time types' ranges, in a time zone the
-- caller picks, make no release fail.  Last, every setting a role may
-- change is one that docs/sealed-releases.md classifies.

-- Neighbours for counts: B is A plus one person's 300 rows.  An index on
-- the time column, so that a window reads only the pages it needs.
CREATE TABLE test.seal_a (person int, region text, at timestamptz);
INSERT INTO test.seal_a
SELECT p % 50, (ARRAY['north', 'south'])[1 + p % 2], '2026-01-01 00:00+00'::timestamptz + p * interval '7 minutes'
FROM generate_series(1, 2000) p;
CREATE TABLE test.seal_b AS SELECT * FROM test.seal_a;
INSERT INTO test.seal_b
SELECT 1000, 'north', '2026-01-03 00:00+00'::timestamptz + p * interval '1 minute' FROM generate_series(1, 300) p;
CREATE INDEX ON test.seal_a (at);
CREATE INDEX ON test.seal_b (at);
-- Neighbours for the running mean, whose public arrival pattern is the
-- same: B differs in one person's values.
CREATE TABLE test.seal_mean_a (person int, at timestamptz, amount float8);
INSERT INTO test.seal_mean_a
SELECT p % 20, '2026-01-01 00:00+00'::timestamptz + p * interval '1 hour', p % 5
FROM generate_series(1, 200) p;
CREATE TABLE test.seal_mean_b AS
SELECT person, at, CASE WHEN person = 7 THEN 4 - amount ELSE amount END AS amount FROM test.seal_mean_a;
CREATE INDEX ON test.seal_mean_a (at);
CREATE INDEX ON test.seal_mean_b (at);
ANALYZE test.seal_a, test.seal_b, test.seal_mean_a, test.seal_mean_b;

SELECT contcount.create_ledger('seal_data', 100000);
SELECT contcount.create_ledger('seal_team', 100000);
SELECT contcount.protect_table(t, 'test.' || t, 'person', 'at', 'seal_data', max_rows => 10)
FROM unnest(ARRAY['seal_a', 'seal_b', 'seal_mean_a', 'seal_mean_b']) t;
SELECT contcount.source_dimension(t, 'region', ARRAY['north', 'south']) FROM unnest(ARRAY['seal_a', 'seal_b']) t;
SELECT contcount.source_mean_value(t, 'amount') FROM unnest(ARRAY['seal_mean_a', 'seal_mean_b']) t;
CREATE ROLE regress_seal_analyst LOGIN;
ALTER ROLE regress_seal_analyst SET contcount.ledger = 'seal_team';
GRANT USAGE ON SCHEMA test TO regress_seal_analyst;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_seal_analyst;
SELECT contcount.grant_source(t, 'regress_seal_analyst')
FROM unnest(ARRAY['seal_a', 'seal_b', 'seal_mean_a', 'seal_mean_b']) t;

-- A release with every talkative setting at its loudest while it runs (or
-- at its default, to plan this function's statements before: a statement
-- planned or parsed while they are on prints itself, which is the caller's
-- own business and the same for both tables).  The noisy values masked.
CREATE FUNCTION test.seal_release(release text, source text, talk boolean) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    flag text := CASE WHEN talk THEN 'on' ELSE 'off' END;
BEGIN
    PERFORM set_config('client_min_messages', CASE WHEN talk THEN 'debug5' ELSE 'notice' END, true),
        set_config('trace_sort', flag, true), set_config('trace_notify', flag, true),
        set_config('debug_print_parse', flag, true), set_config('debug_print_rewritten', flag, true),
        set_config('debug_print_plan', flag, true), set_config('debug_pretty_print', flag, true),
        set_config('force_parallel_mode', CASE WHEN talk THEN 'regress' ELSE 'off' END, true),
        set_config('jit_above_cost', CASE WHEN talk THEN '0' ELSE '100000' END, true),
        set_config('work_mem', CASE WHEN talk THEN '64kB' ELSE '4MB' END, true),
        set_config('TimeZone', CASE WHEN talk THEN 'Pacific/Kiritimati' ELSE 'UTC' END, true),
        set_config('extra_float_digits', CASE WHEN talk THEN '-15' ELSE '1' END, true),
        set_config('DateStyle', CASE WHEN talk THEN 'SQL, DMY' ELSE 'ISO, MDY' END, true);
    IF release = 'counts' THEN
        RETURN QUERY SELECT format('%s %s', key, noisy_count IS NOT NULL)
            FROM contcount.source_counts(source, 0.5, 'region');
    ELSIF release = 'running' THEN
        RETURN QUERY SELECT format('%s %s %s %s %s', key, t, step_start AT TIME ZONE 'UTC', stddev, bound)
            FROM contcount.source_running_counts(source, 0.5, '1 day', '2026-01-01 00:00+00', 10,
                                                 dimension => 'region');
    ELSE
        RETURN QUERY SELECT format('%s %s %s %s', t, at AT TIME ZONE 'UTC', covered, mean IS NOT NULL)
            FROM contcount.source_running_mean(source, 'amount',
                                               contcount.mean_mechanism(0, 4, 0.5, 200, 10, units => 20));
    END IF;
    PERFORM set_config('client_min_messages', 'notice', true), set_config('trace_sort', 'off', true),
        set_config('trace_notify', 'off', true), set_config('debug_print_parse', 'off', true),
        set_config('debug_print_rewritten', 'off', true), set_config('debug_print_plan', 'off', true),
        set_config('debug_pretty_print', 'off', true), set_config('force_parallel_mode', 'off', true),
        set_config('jit_above_cost', '100000', true), set_config('work_mem', '4MB', true),
        set_config('TimeZone', 'UTC', true), set_config('extra_float_digits', '1', true),
        set_config('DateStyle', 'ISO, MDY', true);
END $$;

-- EXPLAIN's lines of a talkative release, timings and the source's name masked.
CREATE FUNCTION test.seal_explain(release text, source text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, WAL, VERBOSE, SETTINGS) '
                        'SELECT * FROM test.seal_release($1, $2, true)' USING release, source LOOP
        RETURN NEXT replace(regexp_replace(regexp_replace(line, 'time=[0-9.]+\.\.[0-9.]+', 'time=x', 'g'),
                                           'Time: [0-9.]+ ms', 'Time: x ms'),
                            quote_literal(source), 'source');
    END LOOP;
END $$;
GRANT EXECUTE ON FUNCTION test.seal_release(text, text, boolean), test.seal_explain(text, text)
    TO regress_seal_analyst;


-- Rows at the ends of the time types' ranges: a date beyond what a
-- timestamp holds (and infinity), timestamps within hours of both ends.
CREATE TABLE test.seal_edges (person int, day date, at timestamp, amount float8);
INSERT INTO test.seal_edges VALUES
    (1, '2026-01-01', '2026-01-01 12:00', 1), (2, '2026-01-02', '2026-01-02 12:00', 2),
    (3, '300000-01-01', '294276-12-31 23:00', 3), (4, 'infinity', 'infinity', 4),
    (5, '4714-11-24 BC', '4714-11-24 01:00 BC', 5), (6, '5874897-12-31', '-infinity', 6);
SELECT contcount.protect_table('seal_days', 'test.seal_edges', 'person', 'day', 'seal_data');
SELECT contcount.protect_table('seal_stamps', 'test.seal_edges', 'person', 'at', 'seal_data');
SELECT contcount.source_mean_value(t, 'amount') FROM unnest(ARRAY['seal_days', 'seal_stamps']) t;
SELECT contcount.grant_source(t, 'regress_seal_analyst') FROM unnest(ARRAY['seal_days', 'seal_stamps']) t;

\c - regress_seal_analyst
-- Plan this session's statements first, with every setting at its default.
SET plan_cache_mode = force_generic_plan;
SELECT count(*) FROM test.seal_release('counts', 'seal_a', false);
SELECT count(*) FROM test.seal_release('running', 'seal_a', false);
SELECT count(*) FROM test.seal_release('mean', 'seal_mean_a', false);
SELECT count(*) FROM test.seal_explain('counts', 'seal_a');
SELECT count(*) FROM test.seal_explain('counts', 'seal_b');
SELECT count(*) FROM test.seal_explain('running', 'seal_a');
SELECT count(*) FROM test.seal_explain('running', 'seal_b');
SELECT count(*) FROM test.seal_explain('mean', 'seal_mean_a');
SELECT count(*) FROM test.seal_explain('mean', 'seal_mean_b');

-- Talkative: no message reaches the client (the expected output has none),
-- and the rows are the same but the noisy values.
SELECT * FROM test.seal_release('counts', 'seal_a', true);
SELECT * FROM test.seal_release('counts', 'seal_b', true);
SELECT (SELECT array_agg(r) FROM test.seal_release('running', 'seal_a', true) r)
     = (SELECT array_agg(r) FROM test.seal_release('running', 'seal_b', true) r) AS running_same;
SELECT (SELECT array_agg(r) FROM test.seal_release('mean', 'seal_mean_a', true) r)
     = (SELECT array_agg(r) FROM test.seal_release('mean', 'seal_mean_b', true) r) AS mean_same;
SELECT * FROM test.seal_release('mean', 'seal_mean_a', true) LIMIT 3;

-- Under EXPLAIN: the same lines for both tables (buffers, WAL, settings,
-- rows), and the release's own buffers and WAL are not the caller's.
SELECT regexp_replace(l, '[0-9]+', 'N', 'g') AS counts_explain FROM test.seal_explain('counts', 'seal_a') l;
SELECT (SELECT array_agg(l) FROM test.seal_explain('counts', 'seal_a') l)
     = (SELECT array_agg(l) FROM test.seal_explain('counts', 'seal_b') l) AS counts_explain_same,
       (SELECT array_agg(l) FROM test.seal_explain('running', 'seal_a') l)
     = (SELECT array_agg(l) FROM test.seal_explain('running', 'seal_b') l) AS running_explain_same,
       (SELECT array_agg(l) FROM test.seal_explain('mean', 'seal_mean_a') l)
     = (SELECT array_agg(l) FROM test.seal_explain('mean', 'seal_mean_b') l) AS mean_explain_same;
-- and the caller's settings are back as they were
SHOW TimeZone;
SHOW DateStyle;
SHOW trace_sort;
RESET plan_cache_mode;

-- No row at the ends of the ranges makes a release fail, in a time zone
-- the caller picks either side of UTC: a timestamp is read as UTC, a date
-- beyond timestamp's range has no time (in no step; a release over all
-- rows still counts it).
SET TimeZone = 'America/New_York';
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT count(*) FROM contcount.source_counts('seal_days', 0.5)$$),
    ($$SELECT count(*) FROM contcount.source_counts('seal_stamps', 0.5)$$),
    ($$SELECT count(*) FROM contcount.source_running_counts('seal_days', 0.5, '1 day', '2026-01-01 00:00+00', 3)$$),
    ($$SELECT count(*) FROM contcount.source_running_counts('seal_stamps', 0.5, '1 day', '2026-01-01 00:00+00', 3)$$),
    ($$SELECT count(*) FROM contcount.source_running_mean('seal_days', 'amount', contcount.mean_mechanism(0, 10, 0.5, 10, 4, units => 10))$$),
    ($$SELECT count(*) FROM contcount.source_running_mean('seal_stamps', 'amount', contcount.mean_mechanism(0, 10, 0.5, 10, 4, units => 10))$$)
) AS cases(s);
SET TimeZone = 'Asia/Tokyo';
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT count(*) FROM contcount.source_counts('seal_stamps', 0.5)$$),
    ($$SELECT count(*) FROM contcount.source_running_counts('seal_stamps', 0.5, '1 day', '2026-01-01 00:00+00', 3)$$),
    ($$SELECT count(*) FROM contcount.source_running_mean('seal_stamps', 'amount', contcount.mean_mechanism(0, 10, 0.5, 10, 4, units => 10))$$)
) AS cases(s);
-- the samples a running mean sees: the times it can read, as UTC
SELECT t, at AT TIME ZONE 'UTC' AS at_utc, covered FROM contcount.source_running_mean('seal_days', 'amount',
    contcount.mean_mechanism(0, 10, 0.5, 10, 4, units => 10));
RESET TimeZone;
-- A range the core cannot place a sample in is refused before anything is
-- charged, not failed on a large value later.
SELECT test.error_of($$SELECT contcount.mean_mechanism(-1.7e308, 1.7e308, 0.5, 10, 4)$$);
SELECT test.error_of($$SELECT count(*) FROM contcount.source_running_mean('seal_days', 'amount', contcount.mean_mechanism(-1e308, 1e308, 0.5, 10, 4, units => 10))$$);

-- Every setting a role may change is classified in docs/sealed-releases.md
-- (pinned, harmless, or cannot matter): this list is that table's.  A
-- setting that is not fails here until the docs, and this list, say why.
SELECT name AS unclassified FROM pg_settings WHERE context = 'user' AND name NOT IN (
    'DateStyle', 'IntervalStyle', 'TimeZone', 'application_name', 'array_nulls',
    'backend_flush_after', 'backslash_quote', 'bytea_output', 'check_function_bodies',
    'client_connection_check_interval', 'client_encoding', 'client_min_messages',
    'commit_siblings', 'constraint_exclusion', 'cpu_index_tuple_cost', 'cpu_operator_cost',
    'cpu_tuple_cost', 'cursor_tuple_fraction', 'debug_pretty_print', 'debug_print_parse',
    'debug_print_plan', 'debug_print_rewritten', 'default_statistics_target',
    'default_table_access_method', 'default_tablespace', 'default_text_search_config',
    'default_toast_compression', 'default_transaction_deferrable', 'default_transaction_isolation',
    'default_transaction_read_only', 'effective_cache_size', 'effective_io_concurrency',
    'enable_async_append', 'enable_bitmapscan', 'enable_gathermerge', 'enable_hashagg',
    'enable_hashjoin', 'enable_incremental_sort', 'enable_indexonlyscan', 'enable_indexscan',
    'enable_material', 'enable_memoize', 'enable_mergejoin', 'enable_nestloop',
    'enable_parallel_append', 'enable_parallel_hash', 'enable_partition_pruning',
    'enable_partitionwise_aggregate', 'enable_partitionwise_join', 'enable_seqscan', 'enable_sort',
    'enable_tidscan', 'escape_string_warning', 'exit_on_error', 'extra_float_digits',
    'force_parallel_mode', 'from_collapse_limit', 'geqo', 'geqo_effort', 'geqo_generations',
    'geqo_pool_size', 'geqo_seed', 'geqo_selection_bias', 'geqo_threshold', 'gin_fuzzy_search_limit',
    'gin_pending_list_limit', 'hash_mem_multiplier', 'idle_in_transaction_session_timeout',
    'idle_session_timeout', 'jit', 'jit_above_cost', 'jit_expressions', 'jit_inline_above_cost',
    'jit_optimize_above_cost', 'jit_tuple_deforming', 'join_collapse_limit', 'lc_monetary',
    'lc_numeric', 'lc_time', 'local_preload_libraries', 'lock_timeout',
    'log_parameter_max_length_on_error', 'logical_decoding_work_mem', 'maintenance_io_concurrency',
    'maintenance_work_mem', 'max_parallel_maintenance_workers', 'max_parallel_workers',
    'max_parallel_workers_per_gather', 'min_parallel_index_scan_size', 'min_parallel_table_scan_size',
    'parallel_leader_participation', 'parallel_setup_cost', 'parallel_tuple_cost',
    'password_encryption', 'plan_cache_mode', 'quote_all_identifiers', 'random_page_cost',
    'recursive_worktable_factor', 'restrict_nonsystem_relation_kind', 'row_security', 'search_path',
    'seq_page_cost', 'standard_conforming_strings', 'statement_timeout', 'stats_fetch_consistency',
    'synchronize_seqscans', 'synchronous_commit', 'tcp_keepalives_count', 'tcp_keepalives_idle',
    'tcp_keepalives_interval', 'tcp_user_timeout', 'temp_buffers', 'temp_tablespaces',
    'timezone_abbreviations', 'trace_notify', 'trace_sort', 'transaction_deferrable',
    'transaction_isolation', 'transaction_read_only', 'transform_null_equals', 'vacuum_cost_delay',
    'vacuum_cost_limit', 'vacuum_cost_page_dirty', 'vacuum_cost_page_hit', 'vacuum_cost_page_miss',
    'vacuum_failsafe_age', 'vacuum_freeze_min_age', 'vacuum_freeze_table_age',
    'vacuum_multixact_failsafe_age', 'vacuum_multixact_freeze_min_age',
    'vacuum_multixact_freeze_table_age', 'wal_sender_timeout', 'wal_skip_threshold', 'work_mem',
    'xmlbinary', 'xmloption')
ORDER BY name;
