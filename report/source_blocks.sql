-- Per-block budgets: two years of daily publishing from one
-- table of events, through a protected source with daily blocks (budget 1
-- each, 90-day retention) and, beside it, through a source whose one
-- all-time ledger holds 10.  Every day d publishes the week to d, its
-- running counts at epsilon 0.1 (7 daily steps), to each source.  Writes
-- :out/source_blocks.csv (each day: its block's spending at the end, and
-- what the all-time ledger had left after the day) and
-- :out/source_blocks.txt.
--
-- Retention is measured from the server's clock, so the simulated days lie
-- ahead of it: no block retires during the run.  Each block is charged by
-- the 7 weekly windows it is in, all of them within a week of its day.
CREATE TABLE blk_day0 AS
SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '1 day' AS day0,
       730 AS days;
-- 100 events a day from a million persons (random() draws the data only)
CREATE TABLE blk_events (person int NOT NULL, at timestamptz NOT NULL);
INSERT INTO blk_events
SELECT (random() * 1e6)::int, day0 + (d + random()) * interval '1 day'
FROM blk_day0, generate_series(0, days - 1) d, generate_series(1, 100) i;
CREATE INDEX ON blk_events (at);
-- the all-time source reads a copy: a source with blocks is the only one
-- over its rows
CREATE TABLE blk_events_copy AS SELECT * FROM blk_events;
CREATE INDEX ON blk_events_copy (at);
\o /dev/null
SELECT contcount.create_ledger('blk_data', 1);
SELECT contcount.create_ledger('blk_all_time', 10);
SELECT contcount.protect_table('blk_daily', 'blk_events', 'person', 'at', 'blk_data');
SELECT contcount.source_blocks('blk_daily', '1 day', 1, '90 days');
SELECT contcount.protect_table('blk_all_time', 'blk_events_copy', 'person', 'at', 'blk_all_time');
\o

CREATE TABLE blk_log (day int, blocks_published boolean, all_time_published boolean,
                      all_time_remaining numeric, weekly bigint, exact bigint);
DO $$
DECLARE
    day0 timestamptz := (SELECT day0 FROM blk_day0);
    start timestamptz;
    weekly bigint;
    published boolean;
    all_time boolean;
BEGIN
    FOR d IN 0 .. (SELECT days FROM blk_day0) - 1 LOOP
        start := day0 + (d - 6) * interval '1 day';
        BEGIN
            SELECT noisy_count INTO weekly
            FROM contcount.source_running_counts('blk_daily', 0.1, '1 day', start, 7, ledger => 'report')
            WHERE t = 7;
            published := true;
        EXCEPTION WHEN SQLSTATE 'ZB001' THEN
            published := false;
        END;
        BEGIN
            PERFORM FROM contcount.source_running_counts('blk_all_time', 0.1, '1 day', start, 7,
                                                         ledger => 'report');
            all_time := true;
        EXCEPTION WHEN SQLSTATE 'ZB001' THEN
            all_time := false;
        END;
        INSERT INTO blk_log
        SELECT d, published, all_time, l.remaining, weekly,
               (SELECT count(DISTINCT person) FROM blk_events
                WHERE at >= start AND at < start + interval '7 days')
        FROM contcount.ledgers l WHERE l.name = 'blk_all_time';
    END LOOP;
END $$;

\o :out/source_blocks.csv
\pset format unaligned
\pset fieldsep ','
\pset tuples_only on
SELECT g.day, b.spent, b.budget, g.all_time_remaining
FROM blk_log g, blk_day0 z, contcount.blocks b
WHERE b.source = 'blk_daily' AND b.block_start = z.day0 + g.day * interval '1 day'
ORDER BY g.day;
\o :out/source_blocks.txt
\pset format aligned
\pset tuples_only off
\pset footer off
SELECT count(*) FILTER (WHERE blocks_published) AS "days published, daily blocks of 1",
       count(*) FILTER (WHERE all_time_published) AS "days published, one ledger of 10",
       min(day) FILTER (WHERE NOT all_time_published) AS "first day refused, one ledger"
FROM blk_log;
SELECT count(*) AS "blocks charged", min(spent) AS "least spent", max(spent) AS "most spent",
       max(budget) AS "budget of each", bool_or(retired) AS "any retired"
FROM contcount.blocks WHERE source = 'blk_daily';
SELECT round(sqrt(avg((weekly - exact)^2))::numeric, 1) AS "rms error of the weekly count",
       round(avg(exact), 1) AS "mean weekly count"
FROM blk_log WHERE day >= 6;
\o
