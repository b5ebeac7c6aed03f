-- The accuracy report: every mechanism released through contcount's own
-- functions on tables of random 0/1 streams, against the exact counts.
-- Variables: trials (streams per horizon), vtrials (streams for the
-- variance table), out (directory for the CSV files).
\set ON_ERROR_STOP 1
SET contcount.ledger = 'report';
SET work_mem = '256MB';

-- The data: :trials random 0/1 streams of each horizon (random() makes the
-- data only; the noise comes from contcount), and their exact running counts.
CREATE TABLE streams AS
SELECT h.horizon, tr.trial, s.t, (random() < 0.5)::int::bigint AS x
FROM (VALUES (1000), (10000)) h(horizon),
     generate_series(1, :trials) tr(trial),
     LATERAL generate_series(1, h.horizon) s(t);
CREATE TABLE exact AS
SELECT horizon, trial, t, x, sum(x) OVER (PARTITION BY horizon, trial ORDER BY t) AS c
FROM streams;

-- The mechanisms compared; two-level with several block sizes (NULL:
-- ceil(sqrt T)).  hybrid is run without a horizon, as for an unbounded stream.
CREATE TABLE configs (label text, mechanism text, block_size bigint, ord int);
INSERT INTO configs VALUES
    ('simple_i', 'simple_i', NULL, 1),
    ('simple_ii', 'simple_ii', NULL, 2),
    ('two_level B=10', 'two_level', 10, 3),
    ('two_level B=25', 'two_level', 25, 4),
    ('two_level B=50', 'two_level', 50, 5),
    ('two_level B=100', 'two_level', 100, 6),
    ('two_level B=sqrt(T)', 'two_level', NULL, 7),
    ('binary', 'binary', NULL, 8),
    ('hybrid', 'hybrid', NULL, 9),
    ('honaker', 'honaker', NULL, 10),
    ('smooth_binary', 'smooth_binary', NULL, 11);

-- Every release of every stream by every mechanism, epsilon = 1, one window
-- partition a stream.  running_count takes its parameters from constants or
-- query parameters only (one value for the whole call site), so one INSERT a
-- mechanism and horizon, its parameters PL/pgSQL variables.
CREATE TABLE errors (label text, horizon int, trial int, t int, err numeric, stddev float8);
DO $$
DECLARE
    cf record;
    v_horizon int;
    v_mechanism text;
    v_block bigint;
    v_stream_horizon bigint;
BEGIN
    FOR cf IN SELECT * FROM configs ORDER BY ord LOOP
        FOR v_horizon IN SELECT DISTINCT horizon FROM streams ORDER BY 1 LOOP
            v_mechanism := cf.mechanism;
            v_block := cf.block_size;
            v_stream_horizon := CASE WHEN cf.mechanism = 'hybrid' THEN NULL ELSE v_horizon END;
            INSERT INTO errors
            SELECT cf.label, v_horizon, trial, t, (r).noisy_count - c, (r).stddev
            FROM (
                SELECT e.trial, e.t, e.c,
                       contcount.running_count(e.x, contcount.mechanism(v_mechanism, 1,
                           horizon => v_stream_horizon, block => v_block))
                         OVER (PARTITION BY e.trial ORDER BY e.t ROWS UNBOUNDED PRECEDING) AS r
                FROM exact e WHERE e.horizon = v_horizon
            ) releases;
        END LOOP;
    END LOOP;
END $$;

-- Mean absolute error at every t, one column per mechanism, for the plots.
CREATE TABLE mean_errors AS
SELECT label, horizon, t, avg(abs(err)) AS mae, max(stddev) AS stddev
FROM errors GROUP BY label, horizon, t;

-- one column a mechanism (horizon last, so gnuplot's columns 1 to 12 are t and the errors)
CREATE VIEW error_columns AS
SELECT t,
       max(mae) FILTER (WHERE label = 'simple_i') AS simple_i,
       max(mae) FILTER (WHERE label = 'simple_ii') AS simple_ii,
       max(mae) FILTER (WHERE label = 'two_level B=10') AS two_level_10,
       max(mae) FILTER (WHERE label = 'two_level B=25') AS two_level_25,
       max(mae) FILTER (WHERE label = 'two_level B=50') AS two_level_50,
       max(mae) FILTER (WHERE label = 'two_level B=100') AS two_level_100,
       max(mae) FILTER (WHERE label = 'two_level B=sqrt(T)') AS two_level_sqrt,
       max(mae) FILTER (WHERE label = 'binary') AS binary,
       max(mae) FILTER (WHERE label = 'hybrid') AS hybrid,
       max(mae) FILTER (WHERE label = 'honaker') AS honaker,
       max(mae) FILTER (WHERE label = 'smooth_binary') AS smooth_binary,
       horizon
FROM mean_errors GROUP BY horizon, t;

\pset format unaligned
\pset fieldsep ','
\pset tuples_only off
\pset footer off
\o :out/errors_T1000.csv
SELECT * FROM error_columns WHERE horizon = 1000 ORDER BY t;
\o :out/errors_T10000.csv
SELECT * FROM error_columns WHERE horizon = 10000 ORDER BY t;
\o

-- Tables for results.md (markdown).
\pset format aligned
\pset border 2
\pset linestyle ascii
\o :out/total_error.txt
-- total error sum_t |M(D_t) - Q(D_t)|, mean over the trials
SELECT label AS mechanism,
       round(avg(total) FILTER (WHERE horizon = 1000)) AS "T = 1000",
       round(avg(total) FILTER (WHERE horizon = 10000)) AS "T = 10000"
FROM (SELECT label, horizon, trial, sum(abs(err)) AS total FROM errors GROUP BY label, horizon, trial) s
JOIN configs USING (label)
GROUP BY label, ord ORDER BY ord;
\o :out/winners.txt
-- which mechanism has the smallest mean absolute error, over which steps
-- (mean errors smoothed over T/10 steps; two-level at B = sqrt(T) only;
-- stretches shorter than T/20 left out)
WITH smooth AS (
    -- t scaled to thousandths of T, so that +/- 50 is +/- T/20 for both horizons
    SELECT label, horizon, t,
           avg(mae) OVER (PARTITION BY label, horizon ORDER BY t * 1000 / horizon
                          RANGE BETWEEN 50 PRECEDING AND 50 FOLLOWING) AS s
    FROM mean_errors
    WHERE label IN ('simple_i', 'simple_ii', 'two_level B=sqrt(T)', 'binary', 'hybrid',
                    'honaker', 'smooth_binary')
), best AS (
    SELECT DISTINCT ON (horizon, t) horizon, t, label FROM smooth ORDER BY horizon, t, s
), runs AS (
    SELECT horizon, t, label,
           t - row_number() OVER (PARTITION BY horizon, label ORDER BY t) AS run
    FROM best
)
SELECT horizon AS "T", label AS "best mechanism", min(t) AS "from t", max(t) AS "to t"
FROM runs GROUP BY horizon, label, run HAVING max(t) - min(t) >= horizon / 20
ORDER BY horizon, min(t);
\o :out/crossover.txt
-- where binary overtakes two-level (B = sqrt(T)): the last step where
-- two-level's mean error (smoothed over 101 steps) is still the smaller
WITH smooth AS (
    SELECT label, horizon, t,
           avg(mae) OVER (PARTITION BY label, horizon ORDER BY t ROWS BETWEEN 50 PRECEDING AND 50 FOLLOWING) AS s
    FROM mean_errors WHERE label IN ('two_level B=sqrt(T)', 'binary')
)
SELECT b.horizon AS "T",
       max(b.t) FILTER (WHERE tl.s <= b.s) AS "two-level no worse up to t",
       round(avg(tl.s / b.s) FILTER (WHERE b.t > b.horizon / 2)::numeric, 2)
           AS "two-level / binary error, second half"
FROM smooth b JOIN smooth tl ON tl.horizon = b.horizon AND tl.t = b.t
WHERE b.label = 'binary' AND tl.label = 'two_level B=sqrt(T)'
GROUP BY b.horizon ORDER BY b.horizon;
\o

-- The exact variance at every step, from the stddev column of one release
-- (no trials needed): T = 1000 and 10000 from the releases above, T = 2^20
-- from one stream of zeros per mechanism (the noise does not depend on the
-- data).  One INSERT a mechanism, as for errors.
CREATE TABLE stddevs (label text, horizon int, t int, stddev float8);
INSERT INTO stddevs SELECT label, horizon, t, max(stddev) FROM errors GROUP BY label, horizon, t;
DO $$
DECLARE
    cf record;
    v_mechanism text;
    v_stream_horizon bigint;
BEGIN
    FOR cf IN SELECT * FROM configs WHERE block_size IS NULL ORDER BY ord LOOP
        v_mechanism := cf.mechanism;
        v_stream_horizon := CASE WHEN cf.mechanism = 'hybrid' THEN NULL ELSE 1048576 END;
        INSERT INTO stddevs
        SELECT cf.label, 1048576, t, (r).stddev
        FROM (
            SELECT s.t,
                   contcount.running_count(0::bigint, contcount.mechanism(v_mechanism, 1,
                       horizon => v_stream_horizon))
                     OVER (ORDER BY s.t ROWS UNBOUNDED PRECEDING) AS r
            FROM generate_series(1, 1048576) s(t)
        ) releases;
    END LOOP;
END $$;
\o :out/exact_variance.txt
-- mean and largest variance over t = 1 .. T (two-level at B = ceil(sqrt T))
SELECT label AS mechanism,
       round(avg(stddev ^ 2) FILTER (WHERE horizon = 1000)::numeric, 1) AS "T = 1000: mean",
       round(max(stddev ^ 2) FILTER (WHERE horizon = 1000)::numeric, 1) AS "worst",
       round(avg(stddev ^ 2) FILTER (WHERE horizon = 10000)::numeric, 1) AS "T = 10^4: mean",
       round(max(stddev ^ 2) FILTER (WHERE horizon = 10000)::numeric, 1) AS "worst",
       round(avg(stddev ^ 2) FILTER (WHERE horizon = 1048576)::numeric, 1) AS "T = 2^20: mean",
       round(max(stddev ^ 2) FILTER (WHERE horizon = 1048576)::numeric, 1) AS "worst"
FROM stddevs JOIN configs USING (label)
WHERE block_size IS NULL
GROUP BY label, ord ORDER BY ord;
\o :out/hybrid.txt
-- hybrid (no horizon) against binary: total error over the trials, and the
-- exact root mean and largest standard deviation over t
WITH tot AS (
    SELECT label, horizon, avg(total) AS total
    FROM (SELECT label, horizon, trial, sum(abs(err)) AS total FROM errors
          WHERE label IN ('binary', 'hybrid') GROUP BY label, horizon, trial) s
    GROUP BY label, horizon
), ex AS (
    SELECT label, horizon, sqrt(avg(stddev ^ 2)) AS rms, max(stddev) AS worst
    FROM stddevs WHERE label IN ('binary', 'hybrid') GROUP BY label, horizon
)
SELECT e.horizon AS "T",
       round((th.total / tb.total)::numeric, 2) AS "total error, hybrid / binary",
       round((eh.rms / e.rms)::numeric, 2) AS "root mean variance, hybrid / binary",
       round((eh.worst / e.worst)::numeric, 2) AS "largest stddev, hybrid / binary"
FROM ex e JOIN ex eh ON eh.horizon = e.horizon AND eh.label = 'hybrid'
LEFT JOIN tot tb ON tb.horizon = e.horizon AND tb.label = 'binary'
LEFT JOIN tot th ON th.horizon = e.horizon AND th.label = 'hybrid'
WHERE e.label = 'binary' ORDER BY e.horizon;
\o

-- The standard deviation against t at T = 2^20, for the figure: the root
-- mean variance over each stretch of 1024 steps.
\pset format unaligned
\pset border 0
\o :out/stddev_T1048576.csv
SELECT (t - 1) / 1024 * 1024 + 512 AS t,
       sqrt(avg(stddev ^ 2) FILTER (WHERE label = 'simple_ii')) AS simple_ii,
       sqrt(avg(stddev ^ 2) FILTER (WHERE label = 'two_level B=sqrt(T)')) AS two_level,
       sqrt(avg(stddev ^ 2) FILTER (WHERE label = 'binary')) AS binary,
       sqrt(avg(stddev ^ 2) FILTER (WHERE label = 'hybrid')) AS hybrid,
       sqrt(avg(stddev ^ 2) FILTER (WHERE label = 'honaker')) AS honaker,
       sqrt(avg(stddev ^ 2) FILTER (WHERE label = 'smooth_binary')) AS smooth_binary
FROM stddevs WHERE horizon = 1048576
GROUP BY 1 ORDER BY 1;
\o
\pset format aligned
\pset border 2

-- Empirical variance against the formula at chosen steps: :vtrials streams
-- of T = 1000 per mechanism.  The formula is the stddev each release reports
-- (the regression tests check it against docs/design.md independently); the
-- tolerance is 5.6 standard errors of the sample variance,
-- sqrt((kappa4 + 2 var^2) / N), kappa4 bounded by 3.6 var^2 / draws.
CREATE TABLE vstreams AS
SELECT tr.trial, s.t, (random() < 0.5)::int::bigint AS x
FROM generate_series(1, :vtrials) tr(trial), generate_series(1, 1000) s(t);
CREATE TABLE vexact AS
SELECT trial, t, x, sum(x) OVER (PARTITION BY trial ORDER BY t) AS c FROM vstreams;
-- one INSERT a mechanism, as for errors
CREATE TABLE verrors (label text, t int, err numeric, stddev float8);
DO $$
DECLARE
    cf record;
    v_mechanism text;
    v_stream_horizon bigint;
BEGIN
    FOR cf IN SELECT * FROM configs WHERE block_size IS NULL ORDER BY ord LOOP
        v_mechanism := cf.mechanism;
        v_stream_horizon := CASE WHEN cf.mechanism = 'hybrid' THEN NULL ELSE 1000 END;
        INSERT INTO verrors
        SELECT cf.label, t, (r).noisy_count - c, (r).stddev
        FROM (
            SELECT e.trial, e.t, e.c,
                   contcount.running_count(e.x, contcount.mechanism(v_mechanism, 1,
                       horizon => v_stream_horizon))
                     OVER (PARTITION BY e.trial ORDER BY e.t ROWS UNBOUNDED PRECEDING) AS r
            FROM vexact e
        ) releases
        WHERE t IN (1, 10, 100, 500, 1000);
    END LOOP;
END $$;
\o :out/variance.txt
SELECT label AS mechanism, t, round((max(stddev) ^ 2)::numeric, 1) AS "formula",
       round(var_pop(err)::numeric, 1) AS "empirical",
       round((5.6 * sqrt(5.6 * max(stddev) ^ 4 / count(*)))::numeric, 1) AS "tolerance",
       abs(var_pop(err) - max(stddev) ^ 2) <= 5.6 * sqrt(5.6 * max(stddev) ^ 4 / count(*)) AS "within"
FROM verrors JOIN configs USING (label)
GROUP BY label, ord, t ORDER BY ord, t;
\o

-- The demo's sign-ups per day (the same data demo/run inserts), released by
-- the binary mechanism at epsilon = 1, with its error band.
\pset format unaligned
\pset border 0
\o :out/demo_band.csv
SELECT t, n AS exact_day, sum(n) OVER (ORDER BY t) AS exact, r.noisy_count, r.stddev, r.bound
FROM (SELECT d + 1 AS t,
             (20 + (d * 37) % 11 + CASE WHEN extract(isodow FROM date '2026-09-01' + d) < 6 THEN 15 ELSE 0 END)::bigint AS n
      FROM generate_series(0, 59) d) days
JOIN contcount.running_counts(
         ARRAY(SELECT (20 + (d * 37) % 11 + CASE WHEN extract(isodow FROM date '2026-09-01' + d) < 6 THEN 15 ELSE 0 END)::bigint
               FROM generate_series(0, 59) d ORDER BY d), 1) r USING (t)
ORDER BY t;
\o
