-- Per-block budgets: a protected source whose budget is held per day, rows
-- older than the retention never read.  Every attack is tried by an analyst
-- who is not a superuser.  Releases use epsilon 1000, whose noise is 0 but
-- with probability 2e^-1000: the counts show which rows were read.

-- Days are UTC days from the day the test starts, so that crossing midnight
-- during it changes nothing shown.
CREATE TABLE test.anchor AS
SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS today;
CREATE FUNCTION test.day(n float8) RETURNS timestamptz
LANGUAGE sql STABLE AS $$ SELECT today + n * interval '1 day' FROM test.anchor $$;
GRANT SELECT ON test.anchor TO PUBLIC;

CREATE TABLE test.block_visits (user_id int, at timestamptz);
INSERT INTO test.block_visits SELECT u, test.day(-2.5) FROM generate_series(1, 10) u;
INSERT INTO test.block_visits SELECT u, test.day(-1.5) FROM generate_series(11, 30) u;
INSERT INTO test.block_visits SELECT u, test.day(-40) FROM generate_series(31, 35) u;   -- retired
INSERT INTO test.block_visits SELECT u, NULL FROM generate_series(36, 40) u;            -- no time
INSERT INTO test.block_visits SELECT u, test.day(5.5) FROM generate_series(41, 45) u;   -- the future

SELECT contcount.create_ledger('blk_data', 1);
SELECT contcount.create_ledger('blk_team', 1000000);
SELECT contcount.protect_table('blk_visits', 'test.block_visits', 'user_id', 'at', 'blk_data');
CREATE ROLE regress_blk_analyst LOGIN;
ALTER ROLE regress_blk_analyst SET contcount.ledger = 'blk_team';
GRANT USAGE ON SCHEMA test TO regress_blk_analyst;
GRANT EXECUTE ON FUNCTION test.error_of(text), test.day(float8) TO regress_blk_analyst;
SELECT contcount.grant_source('blk_visits', 'regress_blk_analyst');

-- Declaring: bad inputs are refused.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.source_blocks('nope', '1 day', 10, '30 days')$$),
    ($$SELECT contcount.source_blocks('blk_visits', '1 month', 10, '30 days')$$),
    ($$SELECT contcount.source_blocks('blk_visits', '0.5 seconds', 10, '30 days')$$),
    ($$SELECT contcount.source_blocks('blk_visits', '1 day', 10, '-1 day')$$),
    ($$SELECT contcount.source_blocks('blk_visits', '1 day', 0, '30 days')$$),
    ($$SELECT contcount.source_blocks('blk_visits', '1 day', 1e-10, '30 days')$$),
    ($$SELECT contcount.source_blocks('blk_visits', '1 day', NULL, '30 days')$$)) v(s);
SELECT contcount.source_blocks('blk_visits', '1 day', 2500, '30 days');
SELECT name, block_length, block_budget, retention FROM contcount.sources WHERE name = 'blk_visits';

\c - regress_blk_analyst
-- The analyst cannot declare, change or count expired rows.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.source_blocks('blk_visits', '1 day', 1000000, '30 days')$$),
    ($$SELECT contcount.source_expired_rows('blk_visits')$$),
    ($$UPDATE contcount.source SET block_budget = 1000000$$)) v(s);

-- A release over all rows reads the retained ones up to the current day's
-- end: 30 persons, not the retired, untimed or future ones.  It charges the
-- 31 blocks from the retention's to today's, and not the source's ledger.
SELECT noisy_count FROM contcount.source_counts('blk_visits', 1000);
SELECT count(*), min(spent), max(spent), bool_or(retired), min(budget), max(remaining)
FROM contcount.blocks WHERE source = 'blk_visits';
SELECT name, spent FROM contcount.ledgers WHERE name = 'blk_team';

-- Stepped: each day's persons, charging the three days it reads.
SELECT t, noisy_count FROM contcount.source_running_counts('blk_visits', 1000, '1 day', test.day(-3), 3, mechanism => 'binary');
SELECT extract(day FROM block_start - test.day(0)) AS day, spent FROM contcount.blocks
WHERE source = 'blk_visits' AND block_start >= test.day(-4) ORDER BY block_start;

-- Choosing a range to dodge blocks: a range of a microsecond pays for its
-- block; one across midnight pays for both days.
SELECT count(*) FROM contcount.source_running_counts('blk_visits', 1, '00:00:01', test.day(-3) - interval '1 second', 1, mechanism => 'binary');
SELECT count(*) FROM contcount.source_running_counts('blk_visits', 1, '1 hour', test.day(-4) - interval '1 hour', 2, mechanism => 'binary');
SELECT extract(day FROM block_start - test.day(0)) AS day, spent FROM contcount.blocks
WHERE source = 'blk_visits' AND block_start >= test.day(-5) AND block_start < test.day(-2) ORDER BY block_start;

-- Overspending one block refuses the release, and no block pays (all or
-- nothing): days -5 and -4 keep what they spent.  The team's quota, charged
-- first, pays as for any refused release from a source.  The error names
-- the block (in ISO format).
SET DateStyle = ISO;
SELECT test.error_of($$SELECT * FROM contcount.source_running_counts('blk_visits', 1000, '1 day', test.day(-5), 4, mechanism => 'binary')$$)
       = format('ZB001: privacy budget of block [%s, %s) of ledger "blk_data" would be overspent',
                test.day(-3), test.day(-2)) AS refused_at_day_minus_3;
SELECT extract(day FROM block_start - test.day(0)) AS day, spent FROM contcount.blocks
WHERE source = 'blk_visits' AND block_start >= test.day(-5) AND block_start < test.day(-1) ORDER BY block_start;

-- Rows in the future are not read, nor their block made, before it is
-- current: a release that asks for their time reads up to the end of today's
-- block only.  Retired rows never are, and a range wholly older than the
-- retention charges no block.
SELECT t, noisy_count FROM contcount.source_running_counts('blk_visits', 1000, '1 day', test.day(5), 1, mechanism => 'binary');
SELECT t, noisy_count FROM contcount.source_running_counts('blk_visits', 1000, '1 day', test.day(-41), 2, mechanism => 'binary');
SELECT count(*) FILTER (WHERE block_start >= test.day(1)) AS future_blocks,
       count(*) FILTER (WHERE block_start < test.day(-31)) AS retired_blocks
FROM contcount.blocks WHERE source = 'blk_visits';

-- Rolling back does not refund a block.
BEGIN;
SELECT count(*) FROM contcount.source_running_counts('blk_visits', 1, '1 day', test.day(-10), 1, mechanism => 'binary');
ROLLBACK;
SELECT spent FROM contcount.blocks WHERE source = 'blk_visits' AND block_start = test.day(-10);

-- A release whose steps reach 20000 days ahead reads and charges only up to
-- the end of today's block: it makes no block in the future, which would
-- hold the server's room for good.
SELECT spent AS team_before FROM contcount.ledgers WHERE name = 'blk_team' \gset
SELECT test.error_of($$SELECT * FROM contcount.source_running_counts('blk_visits', 1, '1 day', test.day(0), 20000, mechanism => 'binary')$$);
SELECT spent = :team_before AS team_unchanged FROM contcount.ledgers WHERE name = 'blk_team';
SELECT count(*) AS future_blocks FROM contcount.blocks WHERE source = 'blk_visits' AND block_start > test.day(0);

-- A running mean would pay the source's ledger, which no block limits:
-- refused as well, before the value column is even looked up.
SELECT test.error_of($$SELECT * FROM contcount.source_running_mean('blk_visits', 'user_id', contcount.mean_mechanism(0, 1, 1, 16, 4))$$);

-- The analyst sees the blocks of the source it is granted, but not the
-- audit of the data's ledger, which it does not administer.
SELECT count(*) > 0 AS sees_blocks FROM contcount.blocks;
SELECT count(*) AS sees_charges FROM contcount.block_charges;
\c - postgres

-- The audit says which blocks each release charged.
SELECT role, source, extract(day FROM first_block - test.day(0)) AS first_day,
       extract(day FROM blocks_end - test.day(0)) AS end_day, blocks, spent, function
FROM contcount.block_charges WHERE source = 'blk_visits' AND first_block >= test.day(-30)
ORDER BY at, first_block;
SELECT count(*) AS charges_of_all_retained FROM contcount.block_charges
WHERE source = 'blk_visits' AND blocks = 31;

-- Rows older than the retention still in the table, for the DBA.
SELECT contcount.source_expired_rows('blk_visits');

-- The block length is fixed once declared; the budget and the retention
-- may change.
SELECT test.error_of($$SELECT contcount.source_blocks('blk_visits', '2 days', 2500, '30 days')$$);
SELECT contcount.source_blocks('blk_visits', '1 day', 5000, '60 days');
SELECT name, block_length, block_budget, retention FROM contcount.sources WHERE name = 'blk_visits';

-- Declaring the source again, with blocks of another length, does not give
-- the same rows fresh budgets: the store refuses blocks that overlap blocks
-- charged with another length.  With the same length, the blocks are the
-- same ones, spending included.
SELECT contcount.drop_source('blk_visits');
SELECT contcount.protect_table('blk_visits', 'test.block_visits', 'user_id', 'at', 'blk_data');
SELECT contcount.grant_source('blk_visits', 'regress_blk_analyst');
SELECT contcount.source_blocks('blk_visits', '12 hours', 5000, '60 days');
\c - regress_blk_analyst
SELECT test.error_of($$SELECT * FROM contcount.source_running_counts('blk_visits', 1, '1 day', test.day(-3), 1, mechanism => 'binary')$$);
\c - postgres
SELECT contcount.drop_source('blk_visits');
SELECT contcount.protect_table('blk_visits', 'test.block_visits', 'user_id', 'at', 'blk_data');
SELECT contcount.grant_source('blk_visits', 'regress_blk_analyst');
SELECT contcount.source_blocks('blk_visits', '1 day', 5000, '60 days');
SELECT extract(day FROM block_start - test.day(0)) AS day, spent FROM contcount.blocks
WHERE source = 'blk_visits' AND block_start >= test.day(-3) AND block_start < test.day(-1) ORDER BY block_start;

-- Export and import carry the blocks.  Importing an export whose day -3
-- spent less and day -2 more lowers nothing and raises day -2.
SELECT jsonb_array_length(l -> 'blocks') > 30 AS blocks_exported
FROM jsonb_array_elements(contcount.export_ledgers() -> 'ledgers') l WHERE l ->> 'name' = 'blk_data';
CREATE TABLE test.block_export AS
SELECT jsonb_set(e, '{ledgers}', (
    SELECT jsonb_agg(CASE WHEN l ->> 'name' <> 'blk_data' THEN l
                          ELSE jsonb_set(l, '{blocks}', (
                              SELECT jsonb_agg(CASE (b ->> 'start')::timestamptz
                                                   WHEN test.day(-3) THEN jsonb_set(b, '{spent_units}', '1')
                                                   WHEN test.day(-2) THEN jsonb_set(b, '{spent_units}',
                                                       to_jsonb((b ->> 'spent_units')::bigint + 7000000000))
                                                   ELSE b END ORDER BY n)
                              FROM jsonb_array_elements(l -> 'blocks') WITH ORDINALITY y(b, n))) END
                     ORDER BY m)
    FROM jsonb_array_elements(e -> 'ledgers') WITH ORDINALITY x(l, m))) AS export
FROM contcount.export_ledgers() e;
SELECT ledger, action FROM contcount.import_ledgers((SELECT export FROM test.block_export))
WHERE ledger LIKE 'blk%' ORDER BY ledger;
SELECT extract(day FROM block_start - test.day(0)) AS day, spent FROM contcount.blocks
WHERE source = 'blk_visits' AND block_start >= test.day(-3) AND block_start < test.day(-1) ORDER BY block_start;
SELECT extract(day FROM first_block - test.day(0)) AS day, blocks, spent, function, statement
FROM contcount.block_charges WHERE function = 'import_ledgers';
-- a block that is not a block of the export's length is refused
SELECT test.error_of(format($$SELECT contcount.import_ledgers(%L)$$, jsonb_set(export, '{ledgers}', (
    SELECT jsonb_agg(CASE WHEN l ->> 'name' <> 'blk_data' THEN l
                          ELSE jsonb_set(l, '{blocks}', jsonb_build_array(jsonb_build_object(
                              'start', test.day(-3), 'end', test.day(-3) + interval '12 hours',
                              'spent_units', 1))) END)
    FROM jsonb_array_elements(export -> 'ledgers') l))))
FROM test.block_export;

-- A shorter retention retires more blocks: their rows are no longer read,
-- and no release charges them.
SELECT contcount.source_blocks('blk_visits', '1 day', 5000, '2 days');
SELECT extract(day FROM block_start - test.day(0)) AS day, retired FROM contcount.blocks
WHERE source = 'blk_visits' AND block_start IN (test.day(-5), test.day(5)) ORDER BY block_start;
\c - regress_blk_analyst
SELECT t, noisy_count FROM contcount.source_running_counts('blk_visits', 1000, '1 day', test.day(-3), 1, mechanism => 'binary');
\c - postgres
SELECT spent FROM contcount.blocks WHERE source = 'blk_visits' AND block_start = test.day(-3);

-- A timestamp column is cast in UTC, whatever TimeZone the analyst sets:
-- it cannot move a row into another block (and read it again from a block
-- with budget left).
CREATE TABLE test.block_local_visits (user_id int, at timestamp);
INSERT INTO test.block_local_visits
SELECT u, (test.day(-2) AT TIME ZONE 'UTC') + interval '23 hours 30 minutes' FROM generate_series(1, 10) u;
SELECT contcount.protect_table('blk_local_visits', 'test.block_local_visits', 'user_id', 'at', 'blk_data');
SELECT contcount.grant_source('blk_local_visits', 'regress_blk_analyst');
\c - regress_blk_analyst
SELECT test.error_of($$SELECT * FROM contcount.source_running_counts('blk_local_visits', 1000, '1 day', test.day(-2), 2, mechanism => 'binary')$$)
    AS before_blocks;
\c - postgres
SELECT contcount.source_blocks('blk_local_visits', '1 day', 100000, '30 days');
\c - regress_blk_analyst
SET TimeZone = 'America/Los_Angeles';
SELECT t, noisy_count FROM contcount.source_running_counts('blk_local_visits', 1000, '1 day', test.day(-2), 2, mechanism => 'binary');
SET TimeZone = 'Pacific/Kiritimati';
SELECT t, noisy_count FROM contcount.source_running_counts('blk_local_visits', 1000, '1 day', test.day(-2), 2, mechanism => 'binary');
RESET TimeZone;
\c - postgres

-- What the source's ledger itself paid (here, a release before the blocks
-- were declared, which read rows of every day) counts against every block.
CREATE TABLE test.block_early (user_id int, at timestamptz);
INSERT INTO test.block_early SELECT u, test.day(-1.5) FROM generate_series(1, 10) u;
SELECT contcount.create_ledger('blk_early_data', 10);
SELECT contcount.protect_table('blk_early', 'test.block_early', 'user_id', 'at', 'blk_early_data');
SELECT count(*) FROM contcount.source_counts('blk_early', 3, ledger => 'blk_team');
SELECT contcount.source_blocks('blk_early', '1 day', 5, '30 days');
SET DateStyle = ISO;
SELECT test.error_of($$SELECT * FROM contcount.source_running_counts('blk_early', 2.5, '1 day', test.day(-1), 1, ledger => 'blk_team', mechanism => 'binary')$$)
       = format('ZB001: privacy budget of block [%s, %s) of ledger "blk_early_data" would be overspent',
                test.day(-1), test.day(0)) AS refused;
SELECT count(*) FROM contcount.source_running_counts('blk_early', 2, '1 day', test.day(-1), 1, ledger => 'blk_team', mechanism => 'binary');
SELECT extract(day FROM block_start - test.day(0)) AS day, budget, spent, remaining FROM contcount.blocks
WHERE source = 'blk_early';
SELECT contcount.drop_source('blk_early');

-- Declaring blocks on a source a counter counts is refused: the counter
-- paid the source's ledger, not the blocks of the rows it counts.
CREATE TABLE test.block_clicks (user_id int, at timestamptz);
SELECT contcount.create_ledger('blk_clicks_data', 100);
SELECT contcount.protect_table('blk_clicks', 'test.block_clicks', 'user_id', 'at', 'blk_clicks_data');
SELECT contcount.create_counter('blk_clicks_live', 1, horizon => 10, step => '1 day', source => 'blk_clicks', mechanism => 'binary');
SELECT test.error_of($$SELECT contcount.source_blocks('blk_clicks', '1 day', 10, '30 days')$$);
SELECT contcount.drop_counter('blk_clicks_live');
SELECT contcount.drop_source('blk_clicks');

SELECT contcount.drop_source('blk_local_visits');

-- Counters over a source with blocks.  A counter pays its epsilon to each
-- block as its clock enters it (the blocks of its first step when created,
-- those of each next step when the step before closes), and counts only the
-- rows timed in the blocks it paid.  Epsilon 1000: the releases show the
-- exact counts.
CREATE TABLE test.block_taps (user_id int, at timestamptz);
SELECT contcount.create_ledger('blk_taps_data', 1);
SELECT contcount.protect_table('blk_taps', 'test.block_taps', 'user_id', 'at', 'blk_taps_data', max_rows => 2);
SELECT contcount.source_blocks('blk_taps', '1 day', 1500, '30 days');
SELECT contcount.grant_source('blk_taps', 'regress_blk_analyst');
\c - regress_blk_analyst
-- a step must not touch more blocks than the server holds
SELECT test.error_of($$SELECT contcount.create_counter('blk_taps_live', 1000, horizon => 10, step => '11000 days', source => 'blk_taps', mechanism => 'binary')$$);
SELECT spent AS team_before FROM contcount.ledgers WHERE name = 'blk_team' \gset
SELECT contcount.create_counter('blk_taps_live', 1000, horizon => 10, step => '1 day', source => 'blk_taps', mechanism => 'binary');
-- It paid the blocks its first step may count: the day it started and the
-- next, 1000 each, in place of the source's ledger; the team paid once.
SELECT blocks_until - blocks_from AS paid,
       blocks_from = date_trunc('day', started_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS from_its_day,
       finished, finish_reason
FROM contcount.counters WHERE name = 'blk_taps_live';
SELECT blocks_from AS f, blocks_until AS u FROM contcount.counters WHERE name = 'blk_taps_live' \gset
SELECT extract(day FROM block_start - :'f') AS day, spent FROM contcount.blocks
WHERE source = 'blk_taps' ORDER BY block_start;
SELECT spent - :team_before AS team_paid FROM contcount.ledgers WHERE name = 'blk_team';
\c - postgres
SELECT spent AS source_ledger_spent FROM contcount.ledgers WHERE name = 'blk_taps_data';
-- The application inserts.  Counted: persons 1 to 3 on the first day,
-- person 4 twice on the second, person 5 three times (capped at max_rows
-- 2).  Not counted: a row in the next, unpaid, day, one without a time,
-- one before the counter's first day, one older than the retention; and
-- person 6's two rows in the unpaid day do not use up its max_rows: its
-- two rows in a paid day count.
INSERT INTO test.block_taps VALUES (1, :'f'::timestamptz + interval '1 hour'),
    (2, :'f'::timestamptz + interval '2 hours'), (3, :'f'::timestamptz + interval '3 hours'),
    (4, :'f'::timestamptz + interval '30 hours'), (4, :'f'::timestamptz + interval '31 hours'),
    (5, :'f'::timestamptz + interval '1 hour'), (5, :'f'::timestamptz + interval '2 hours'),
    (5, :'f'::timestamptz + interval '3 hours');
INSERT INTO test.block_taps VALUES (7, :'u'::timestamptz + interval '1 hour'), (8, NULL),
    (9, :'f'::timestamptz - interval '1 hour'), (10, :'f'::timestamptz - interval '40 days'),
    (6, :'u'::timestamptz), (6, :'u'::timestamptz + interval '1 hour');
INSERT INTO test.block_taps VALUES (6, :'f'::timestamptz), (6, :'u'::timestamptz - interval '1 microsecond');
SELECT pending FROM contcount.counter_internals('blk_taps_live');
\c - regress_blk_analyst
-- The first step releases them, and pays the day after the next: its next
-- step may count rows timed up to its end.
SELECT contcount.tick('blk_taps_live');
SELECT t, noisy_count FROM contcount.current('blk_taps_live');
SELECT blocks_until - :'f' AS paid FROM contcount.counters WHERE name = 'blk_taps_live';
\c - postgres
-- Rows of the newly paid day now count; no block was charged twice.
INSERT INTO test.block_taps VALUES (7, :'u'::timestamptz + interval '2 hours');
SELECT pending FROM contcount.counter_internals('blk_taps_live');
SELECT extract(day FROM block_start - :'f') AS day, spent FROM contcount.blocks
WHERE source = 'blk_taps' ORDER BY block_start;
-- The audit shows each charge of the counter's blocks: the first by
-- create_counter, the next by the step that entered it.
SELECT role, extract(day FROM first_block - :'f') AS first_day, blocks, spent, function, statement
FROM contcount.block_charges WHERE source = 'blk_taps' ORDER BY at;
\c - regress_blk_analyst
-- The DBA lowers the blocks' budget below a step's 1000 (no release can
-- spend the fourth day in advance: it lies in the future): when the
-- counter's clock enters it, the block refuses, and the counter stops after
-- releasing its step, rather than count rows it could not pay for.
\c - postgres
SELECT contcount.source_blocks('blk_taps', '1 day', 999, '30 days');
\c - regress_blk_analyst
SELECT test.error_of($$SELECT contcount.tick('blk_taps_live')$$) LIKE
       'ZB001: counter "blk_taps_live" releases no more: privacy budget of block % would be overspent' AS stopped;
SELECT t, noisy_count FROM contcount.history('blk_taps_live');
SELECT steps, finished, finish_reason LIKE 'privacy budget of block %' AS block_refused,
       blocks_until - :'f' AS paid
FROM contcount.counters WHERE name = 'blk_taps_live';
\c - postgres
SELECT extract(day FROM block_start - :'f') AS day, spent FROM contcount.blocks
WHERE source = 'blk_taps' ORDER BY block_start;
-- A stopped counter counts nothing more.
INSERT INTO test.block_taps VALUES (1, :'f'::timestamptz + interval '1 hour');
SELECT pending FROM contcount.counter_internals('blk_taps_live');
-- The source's budget and retention may change while a counter counts it
-- (each block it paid stays paid); its length may not.
SELECT contcount.source_blocks('blk_taps', '1 day', 2000, '60 days');
SELECT test.error_of($$SELECT contcount.source_blocks('blk_taps', '2 days', 2000, '60 days')$$);
SELECT contcount.drop_counter('blk_taps_live');
SELECT contcount.drop_source('blk_taps');

-- A date is its midnight UTC, as releases read it: the counter's first
-- day counts, the day after its paid days and an infinite date do not.
CREATE TABLE test.block_days (user_id int, on_day date);
SELECT contcount.create_ledger('blk_days_data', 1);
SELECT contcount.protect_table('blk_days', 'test.block_days', 'user_id', 'on_day', 'blk_days_data');
SELECT contcount.source_blocks('blk_days', '1 day', 1500, '30 days');
SELECT contcount.grant_source('blk_days', 'regress_blk_analyst');
\c - regress_blk_analyst
SELECT contcount.create_counter('blk_days_live', 1000, horizon => 10, step => '1 day', source => 'blk_days', mechanism => 'binary');
SELECT blocks_from AS f, blocks_until AS u FROM contcount.counters WHERE name = 'blk_days_live' \gset
\c - postgres
INSERT INTO test.block_days VALUES (1, (:'f'::timestamptz AT TIME ZONE 'UTC')::date),
    (2, (:'u'::timestamptz AT TIME ZONE 'UTC')::date - 1), (3, (:'u'::timestamptz AT TIME ZONE 'UTC')::date),
    (4, 'infinity'), (5, '-infinity');
SELECT pending FROM contcount.counter_internals('blk_days_live');
SELECT contcount.drop_counter('blk_days_live');
SELECT contcount.drop_source('blk_days');

-- A zCDP data ledger: its blocks account in rho.  A Gaussian release pays
-- each block it reads its rho; a pure one its epsilon^2 / 2 (rounded up),
-- as the ledger would; the block that would pass its budget refuses, and
-- no block pays.
SELECT contcount.create_ledger('blk_z_data', rho => 1, delta => 0.000001);
SELECT contcount.create_ledger('blk_z_team', rho => 100, delta => 0.000001);
SELECT contcount.grant_ledger('blk_z_team', 'regress_blk_analyst');
-- (over a copy of the rows: blk_visits holds the table's rows per block)
CREATE TABLE test.block_visits_z AS SELECT * FROM test.block_visits;
SELECT contcount.protect_table('blk_z', 'test.block_visits_z', 'user_id', 'at', 'blk_z_data');
SELECT contcount.source_blocks('blk_z', '1 day', 0.3, '30 days');
SELECT contcount.grant_source('blk_z', 'regress_blk_analyst');
\c - regress_blk_analyst
SELECT count(*) AS steps
FROM contcount.source_running_counts('blk_z', NULL, '1 day', test.day(-3), 3, mechanism => 'gaussian_honaker',
                                     rho => 0.125, ledger => 'blk_z_team');
SELECT count(*) AS steps
FROM contcount.source_running_counts('blk_z', 0.5, '1 day', test.day(-3), 2, ledger => 'blk_z_team', mechanism => 'binary');
SELECT extract(day FROM block_start - test.day(0)) AS day, budget, spent, remaining, accounting
FROM contcount.blocks WHERE source = 'blk_z' ORDER BY block_start;
SELECT regexp_replace(test.error_of($$SELECT count(*) FROM contcount.source_running_counts('blk_z', NULL, '1 day',
    test.day(-3), 3, mechanism => 'gaussian_honaker', rho => 0.1, ledger => 'blk_z_team')$$), '\[.*\)', '[day -3)') AS refused;
SELECT extract(day FROM block_start - test.day(0)) AS day, spent
FROM contcount.blocks WHERE source = 'blk_z' ORDER BY block_start;
\c - postgres
SELECT contcount.drop_source('blk_z');
DROP TABLE test.block_visits_z;
