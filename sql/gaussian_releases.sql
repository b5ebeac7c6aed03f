-- Releases with discrete Gaussian noise (issue 13, item 3): gaussian_honaker
-- and blt take rho in place of epsilon, in the window aggregate, the series
-- function, counters and releases from protected sources.  A zCDP ledger is
-- charged their rho; a pure one refuses them (ZB003) before anything is
-- computed or charged.  Error bars: the exact stddev of the core's closed
-- forms and a simultaneous bound; their noise has that variance.

CREATE TABLE test.gauss_daily AS
SELECT i AS day, (i * 7 + 3) % 5 AS n, sum((i * 7 + 3) % 5) OVER (ORDER BY i) AS exact
FROM generate_series(1, 64) i;
SELECT contcount.create_ledger('gauss', rho => 1000, delta => 0.000001);
SELECT contcount.create_ledger('gauss_pure', 1000);
SET contcount.ledger = 'gauss';

-- Variance of the discrete Gaussian of parameter s2, summed from its pmf,
-- apart from the extension's own code.
CREATE FUNCTION test.dgauss_var(s2 float8) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
    SELECT sum(k ^ 2 * exp(-(k ^ 2) / (2 * s2))) / sum(exp(-(k ^ 2) / (2 * s2)))
    FROM generate_series(-ceil(12 * sqrt(s2))::int, ceil(12 * sqrt(s2))::int) k
$$;
-- gaussian_honaker: sigma^2 = L Delta^2 / (2 rho) on every node, L levels
-- of the tree over T steps; the release at t weighs its nodes as honaker
-- does, a variance of sigma^2's times the sum over the set bits d of t of
-- 2^d / (2^(d+1) - 1) (README, Mechanisms).
CREATE FUNCTION test.gauss_honaker_share(t bigint) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
    SELECT sum(2 ^ d / (2 ^ (d + 1) - 1)) FROM generate_series(0, 62) d WHERE (t >> d) & 1 = 1
$$;

-- The parameters: rho in place of epsilon, the composite's last field.
SELECT * FROM contcount.mechanism('blt', rho => 0.5, horizon => 1024);
SELECT * FROM contcount.mechanism('gaussian_honaker', rho => 0.25, horizon => 64, sensitivity => 3,
                                  beta => 0.01, ledger => 'gauss');
-- rho is rounded to a multiple of 1e-9, as it is charged
SELECT rho FROM contcount.mechanism('blt', rho => 0.1234567894, horizon => 10);
-- auto with rho picks among the zCDP mechanisms: blt_scaled up to its
-- longest horizon, 2^40 steps, gaussian_honaker beyond (and at T = 1, where
-- it has a little less variance)
SELECT h, (contcount.mechanism('auto', rho => 0.5, horizon => h)).name AS mean,
       (contcount.mechanism('auto', rho => 0.5, horizon => h, objective => 'worst')).name AS worst
FROM unnest(ARRAY[1, 2, 64, 1048576, 1099511627776, 1099511627777, 4611686018427387904]::bigint[]) h;

-- Every bad combination, with its SQLSTATE: a pure mechanism takes epsilon
-- alone, a zCDP one rho alone, auto either; neither is 22004.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.mechanism('blt', 1, horizon => 10)$$),
    ($$SELECT contcount.mechanism('blt', 1, horizon => 10, rho => 0.5)$$),
    ($$SELECT contcount.mechanism('blt', horizon => 10)$$),
    ($$SELECT contcount.mechanism('gaussian_honaker', NULL, horizon => 10, rho => NULL)$$),
    ($$SELECT contcount.mechanism('binary', rho => 0.5, horizon => 10)$$),
    ($$SELECT contcount.mechanism('binary', 1, horizon => 10, rho => 0.5)$$),
    ($$SELECT contcount.mechanism('binary', horizon => 10)$$),
    ($$SELECT contcount.mechanism('auto', 1, horizon => 10, rho => 0.5)$$),
    ($$SELECT contcount.mechanism('auto', horizon => 10)$$),
    ($$SELECT contcount.mechanism('blt', rho => 0, horizon => 10)$$),
    ($$SELECT contcount.mechanism('blt', rho => -1, horizon => 10)$$),
    ($$SELECT contcount.mechanism('blt', rho => 1000.1, horizon => 10)$$),
    ($$SELECT contcount.mechanism('blt', rho => 'NaN', horizon => 10)$$),
    ($$SELECT contcount.mechanism('blt', rho => 'Infinity', horizon => 10)$$),
    ($$SELECT contcount.mechanism('blt', rho => 0.5)$$),
    ($$SELECT contcount.mechanism('gaussian_honaker', rho => 0.5)$$),
    ($$SELECT contcount.mechanism('blt', rho => 0.5, horizon => 1099511627777)$$),
    ($$SELECT contcount.mechanism('gaussian_honaker', rho => 0.5, horizon => 10, block => 3)$$),
    ($$SELECT contcount.mechanism('blt', rho => 0.5, horizon => 10, objective => 'worst')$$),
    ($$SELECT contcount.mechanism('blt', rho => 0.5, horizon => 10, sensitivity => 0)$$),
    ($$SELECT contcount.mechanism('blt', rho => 0.5, horizon => 10, beta => 1)$$),
    ($$SELECT contcount.mechanism('gaussian_honaker', rho => 0.000001, horizon => 4611686018427387904, sensitivity => 1000000)$$),
    ($$SELECT contcount.mechanism('auto', rho => 0.000001, horizon => 4611686018427387904, sensitivity => 1000000)$$),
    ($$SELECT contcount.running_count(n, contcount.mechanism('blt', horizon => 64)) OVER (ORDER BY day) FROM test.gauss_daily$$),
    ($$SELECT contcount.running_count(n, ROW('blt', 0.5, 64, NULL, 1, 0.05, NULL, NULL, NULL)::contcount.mechanism) FROM test.gauss_daily$$),
    ($$SELECT contcount.running_count(n, ROW('blt', 0.5, 64, NULL, 1, 0.05, NULL, 0.5, NULL)::contcount.mechanism) FROM test.gauss_daily$$),
    ($$SELECT contcount.running_count(n, ROW('binary', NULL, 64, NULL, 1, 0.05, NULL, 0.5, NULL)::contcount.mechanism) FROM test.gauss_daily$$),
    ($$SELECT contcount.running_count(n, ROW('blt', NULL, 64, NULL, 1, 0.05, NULL, NULL, NULL)::contcount.mechanism) FROM test.gauss_daily$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1, 2], 1, mechanism => 'blt')$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1, 2], mechanism => 'blt')$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1, 2], rho => 0.5, mechanism => 'binary')$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1, 2], mechanism => 'binary')$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1, 2], 1, mechanism => 'auto', rho => 0.5)$$),
    ($$SELECT contcount.create_counter('gauss_bad', mechanism => 'blt', horizon => 10)$$),
    ($$SELECT contcount.create_counter('gauss_bad', 1, mechanism => 'blt', horizon => 10)$$),
    ($$SELECT contcount.create_counter('gauss_bad', rho => 0.5, horizon => 10, mechanism => 'binary')$$),
    ($$SELECT contcount.create_counter('gauss_bad', horizon => 10, mechanism => 'binary')$$)
) AS cases(s);
SELECT count(*) AS no_bad_counter FROM contcount.counters WHERE name = 'gauss_bad';

-- The charges: a zCDP ledger pays each release's rho, exactly.
SELECT spent FROM contcount.ledgers WHERE name = 'gauss';
-- the series function: one release
SELECT count(*) FROM contcount.running_counts(ARRAY(SELECT n FROM test.gauss_daily ORDER BY day),
                                              mechanism => 'blt', rho => 0.125);
-- the window aggregate: one release per partition, 3 of rho 1/16 (paid in
-- batches of 1 and 2)
SELECT count(r) FROM (
    SELECT contcount.running_count(n, contcount.mechanism('gaussian_honaker', rho => 0.0625, horizon => 64))
               OVER (PARTITION BY day % 3 ORDER BY day ROWS UNBOUNDED PRECEDING) AS r
    FROM test.gauss_daily) s;
-- the plain aggregate, a ledger named: one release
SELECT (contcount.running_count(n, contcount.mechanism('blt', rho => 0.03125, horizon => 64, ledger => 'gauss'))).t
FROM test.gauss_daily;
-- auto with rho: blt_scaled, rho 1/4
SELECT count(*) FROM contcount.running_counts(ARRAY[1, 2, 3], mechanism => 'auto', rho => 0.25);
SELECT spent FROM contcount.ledgers WHERE name = 'gauss';
SELECT ledger, epsilon, function, accounting, releases, release_epsilon, release_rho
FROM contcount.charges WHERE ledger = 'gauss' ORDER BY at;

-- A pure ledger refuses a Gaussian release (ZB003) at every entry point,
-- before any value is computed: a negative item would otherwise be the
-- error (22023), as it is on the zCDP ledger, where such a release costs
-- nothing either.  Nothing is charged.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT * FROM contcount.running_counts(ARRAY[-1, 2], mechanism => 'blt', rho => 0.5, ledger => 'gauss_pure')$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[-1, 2], mechanism => 'blt', rho => 0.5)$$),
    ($$SELECT contcount.running_count(n - 1, contcount.mechanism('gaussian_honaker', rho => 0.5, horizon => 64, ledger => 'gauss_pure')) OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) FROM test.gauss_daily$$),
    ($$SELECT contcount.running_count(n - 1, contcount.mechanism('gaussian_honaker', rho => 0.5, horizon => 64)) OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) FROM test.gauss_daily$$),
    ($$SELECT contcount.running_count(n, contcount.mechanism('blt', rho => 0.5, horizon => 64, ledger => 'gauss_pure')) FROM test.gauss_daily$$),
    ($$SELECT contcount.create_counter('gauss_bad', mechanism => 'blt', rho => 0.5, horizon => 10, ledger => 'gauss_pure')$$)
) AS cases(s);
SET contcount.ledger = 'gauss_pure';
SELECT test.error_of($$SELECT count(*) FROM contcount.running_counts(ARRAY[1], mechanism => 'auto', rho => 0.5)$$);
SELECT test.error_of($$SELECT contcount.running_count(n, contcount.mechanism('blt', rho => 0.5, horizon => 64)) OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) FROM test.gauss_daily$$);
-- a pure release still pays the pure ledger epsilon
SELECT count(*) FROM contcount.running_counts(ARRAY[1], 0.5, mechanism => 'binary');
SET contcount.ledger = 'gauss';
SELECT name, spent FROM contcount.ledgers WHERE name LIKE 'gauss%' ORDER BY name;
SELECT count(*) AS no_bad_counter FROM contcount.counters WHERE name = 'gauss_bad';

-- Error bars.  gaussian_honaker's stddev is its closed form at every step
-- (T = 64, rho 1/2: L = 7, sigma^2 = 7; T = 100, rho 1/4, sensitivity 3:
-- sigma^2 = 7 * 9 / (1/2) = 126).  Its bound, a sub-Gaussian tail of proxy
-- sigma^2 times the share plus the rounding's 1/2, splits beta over the
-- steps (src/core/bounds.c): each step's at least a single step's at beta,
-- sqrt(2 proxy ln(2 / beta)) + 1/2, and the largest at most the even
-- union's, sqrt(2 proxy ln(2 T / beta)) + 1/2 (the classes of widest tails
-- share a cap above some steps' own), in integers.
SELECT count(*) AS steps,
       max(abs(r.stddev / sqrt(test.dgauss_var(7) * test.gauss_honaker_share(r.t)) - 1)) < 1e-12 AS stddev_closed_form,
       bool_and(r.bound >= floor(sqrt(2 * 7 * test.gauss_honaker_share(r.t) * ln(2 / 0.05)) + 0.5 - 1e-6))
           AND max(r.bound) <= max(ceil(sqrt(2 * 7 * test.gauss_honaker_share(r.t) * ln(2 * 64 / 0.05)) + 0.5 + 1e-6)) AS bound_in_range
FROM contcount.running_counts(ARRAY(SELECT n FROM test.gauss_daily ORDER BY day),
                              mechanism => 'gaussian_honaker', rho => 0.5) r;
SELECT count(*) AS steps,
       max(abs(r.stddev / sqrt(test.dgauss_var(126) * test.gauss_honaker_share(r.t)) - 1)) < 1e-12 AS stddev_closed_form,
       bool_and(r.bound >= floor(sqrt(2 * 126 * test.gauss_honaker_share(r.t) * ln(2 / 0.01)) + 0.5 - 1e-6))
           AND max(r.bound) <= max(ceil(sqrt(2 * 126 * test.gauss_honaker_share(r.t) * ln(2 * 100 / 0.01)) + 0.5 + 1e-6)) AS bound_in_range
FROM contcount.running_counts(array_fill(1::bigint, ARRAY[100]), mechanism => 'gaussian_honaker',
                              rho => 0.25, sensitivity => 3, beta => 0.01) r;
-- At T = 2^20 and rho 1/2, the core's figures (src/core/README.md): blt
-- worst 30.96, mean 28.97 (within 1.04 of the square-root factorization's
-- 30.02); gaussian_honaker worst 226.9, mean 113.4.  blt's variance grows
-- with t, and its bound is its stddev's sub-Gaussian bound and the
-- rounding, as above (the fixed point's deviation, 2e-6, within the
-- tolerance).
SELECT m, round(max(stddev ^ 2)::numeric, 2) AS worst, round(avg(stddev ^ 2)::numeric, 2) AS mean,
       CASE m WHEN 'blt' THEN bool_and(stddev >= previous) END AS growing,
       bool_and(bound >= floor(sqrt(2 * stddev ^ 2 * ln(2 / 0.05)) + 0.5 - 1e-4))
           AND max(bound) <= max(ceil(sqrt(2 * stddev ^ 2 * ln(2 * 1048576 / 0.05)) + 0.5 + 1e-4)) AS bound_in_range
FROM unnest(ARRAY['blt', 'gaussian_honaker']) m,
     LATERAL (SELECT stddev, bound, lag(stddev, 1, 0::float8) OVER (ORDER BY t) AS previous
              FROM contcount.running_counts(array_fill(0::bigint, ARRAY[1048576]), mechanism => m, rho => 0.5)) r
GROUP BY m ORDER BY m;

-- The window aggregate and the series function give the same error bars;
-- every release is within its bound (beta 1e-9).
SELECT bool_and(w.stddev = s.stddev AND w.bound = s.bound) AS same_error_bars,
       bool_and(abs(w.noisy_count - d.exact) <= w.bound) AND bool_and(abs(s.noisy_count - d.exact) <= s.bound) AS within_bound
FROM (SELECT day, (contcount.running_count(n, contcount.mechanism('blt', rho => 0.5, horizon => 64, beta => 1e-9))
                       OVER (ORDER BY day ROWS UNBOUNDED PRECEDING)).*
      FROM test.gauss_daily) w
JOIN contcount.running_counts(ARRAY(SELECT n FROM test.gauss_daily ORDER BY day), mechanism => 'blt',
                              rho => 0.5, beta => 1e-9) s ON s.t = w.day
JOIN test.gauss_daily d ON d.day = w.day;

-- Counters with Gaussian noise: created on the zCDP ledger (charged rho),
-- fed by a trigger, stepped and released; the view shows their accounting.
CREATE TABLE test.gauss_events (id serial);
SELECT contcount.create_counter('gauss_blt', mechanism => 'blt', rho => 0.25, horizon => 100,
                                step => '1 day', beta => 1e-9);
SELECT contcount.create_counter('gauss_honaker', rho => 0.125, mechanism => 'gaussian_honaker',
                                horizon => 100, step => '1 day', beta => 1e-9, ledger => 'gauss');
SELECT contcount.create_counter('gauss_auto', rho => 0.125, mechanism => 'auto', horizon => 100,
                                step => '1 day', objective => 'worst');
SELECT name, mechanism, epsilon, horizon, ledger, steps, accounting, rho
FROM contcount.counters WHERE name LIKE 'gauss%' ORDER BY name;
-- a pure counter says so
SELECT contcount.create_counter('gauss_laplace', 0.5, horizon => 100, step => '1 day', mechanism => 'binary');
SELECT name, mechanism, epsilon, accounting, rho FROM contcount.counters WHERE name = 'gauss_laplace';
SELECT function, epsilon, accounting, release_epsilon, release_rho
FROM contcount.charges WHERE ledger = 'gauss' AND function = 'create_counter' ORDER BY at;
CREATE TRIGGER count_gauss_blt AFTER INSERT ON test.gauss_events
    FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('gauss_blt');
CREATE TRIGGER count_gauss_honaker AFTER INSERT ON test.gauss_events
    FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts('gauss_honaker');
INSERT INTO test.gauss_events SELECT FROM generate_series(1, 10);
SELECT contcount.tick('gauss_blt'), contcount.tick('gauss_honaker');
INSERT INTO test.gauss_events SELECT FROM generate_series(1, 5);
SELECT contcount.tick('gauss_blt'), contcount.tick('gauss_honaker');
SELECT contcount.tick('gauss_blt'), contcount.tick('gauss_honaker');
-- every step released, within its bound; the exact counts released are 10,
-- 15 and 15; the error bars are those of the same parameters' series
SELECT c.name, h.t, i.steps, i.exact_released,
       abs(h.noisy_count - (ARRAY[10, 15, 15])[h.t]) <= h.bound AS within_bound,
       h.stddev = s.stddev AND h.bound = s.bound AS error_bars_as_series
FROM (VALUES ('gauss_blt', 'blt', 0.25), ('gauss_honaker', 'gaussian_honaker', 0.125)) c(name, m, rho)
CROSS JOIN LATERAL contcount.history(c.name) h
CROSS JOIN LATERAL contcount.counter_internals(c.name) i
JOIN LATERAL contcount.running_counts(array_fill(0::bigint, ARRAY[100]), mechanism => c.m, rho => c.rho,
                                      beta => 1e-9) s ON s.t = h.t
ORDER BY c.name, h.t;

-- A copy pays again what the counter costs: its rho, to the same ledger
-- (test/t/009_counter_copy.pl makes real copies; here the recorded place
-- is made another, as a restore elsewhere would find it).
SELECT spent AS before_copy FROM contcount.ledgers WHERE name = 'gauss' \gset
UPDATE contcount.counter SET place_database = 0 WHERE name = 'gauss_blt';
SELECT contcount.tick('gauss_blt');
SELECT spent - :before_copy AS copy_charged FROM contcount.ledgers WHERE name = 'gauss';
SELECT function, epsilon, accounting, releases, release_epsilon, release_rho
FROM contcount.charges WHERE ledger = 'gauss' AND function = 'counter_copy';
-- a copy whose ledger is pure (a restore into a cluster where that name is
-- a pure ledger) is refused with ZB003 and takes no step
UPDATE contcount.counter SET place_database = 0, ledger = 'gauss_pure', charged_ledger = 'gauss_pure'
WHERE name = 'gauss_honaker';
SELECT test.error_of($$SELECT contcount.tick('gauss_honaker')$$);
SELECT steps FROM contcount.counters WHERE name = 'gauss_honaker';
SELECT spent FROM contcount.ledgers WHERE name = 'gauss_pure';
SELECT contcount.drop_counter(c) FROM unnest(ARRAY['gauss_blt', 'gauss_honaker', 'gauss_auto', 'gauss_laplace']) c;

-- Protected sources: source_running_counts takes rho too (epsilon NULL),
-- its noise calibrated for max_rows; both ledgers pay rho, and if either is
-- pure neither pays anything.
CREATE TABLE test.gauss_visits (user_id int, country text, at timestamptz);
INSERT INTO test.gauss_visits
SELECT u % 7, (ARRAY['fr', 'de'])[1 + u % 2], '2026-01-01'::timestamptz + u * interval '1 hour'
FROM generate_series(1, 200) u;
SELECT contcount.create_ledger('gauss_data', rho => 100, delta => 0.000001);
SELECT contcount.create_ledger('gauss_pure_data', 100);
SELECT contcount.protect_table('gauss_visits', 'test.gauss_visits', 'user_id', 'at', 'gauss_data',
                               max_rows => 2);
SELECT contcount.source_dimension('gauss_visits', 'country', ARRAY['fr', 'de']);
SELECT contcount.protect_table('gauss_visits_pure', 'test.gauss_visits', 'user_id', 'at', 'gauss_pure_data',
                               max_rows => 2);
-- a person may reach two countries here: blt's rounding is per moving
-- stream, so blt is refused over the dimension (0A000), before any charge
SELECT contcount.protect_table('gauss_visits_two', 'test.gauss_visits', 'user_id', 'at', 'gauss_data',
                               max_rows => 2, max_groups => 2);
SELECT contcount.source_dimension('gauss_visits_two', 'country', ARRAY['fr', 'de']);
SELECT spent AS before_source FROM contcount.ledgers WHERE name = 'gauss' \gset
-- the error bars are those of the series function with sensitivity 2
SELECT r.key, count(*) AS steps, bool_and(r.stddev = s.stddev AND r.bound = s.bound) AS calibrated_for_max_rows
FROM contcount.source_running_counts('gauss_visits', NULL, '1 day', '2026-01-01', 10, mechanism => 'blt',
                                     dimension => 'country', rho => 0.125) r
JOIN contcount.running_counts(array_fill(0::bigint, ARRAY[10]), mechanism => 'blt', rho => 0.125,
                              sensitivity => 2) s USING (t)
GROUP BY r.key ORDER BY r.key;
SELECT (SELECT spent - :before_source FROM contcount.ledgers WHERE name = 'gauss') AS team_charged,
       (SELECT spent FROM contcount.ledgers WHERE name = 'gauss_data') AS data_charged;
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT count(*) FROM contcount.source_running_counts('gauss_visits', NULL, '1 day', '2026-01-01', 10, mechanism => 'blt', rho => 0.125, ledger => 'gauss_pure')$$),
    ($$SELECT count(*) FROM contcount.source_running_counts('gauss_visits_pure', NULL, '1 day', '2026-01-01', 10, mechanism => 'blt', rho => 0.125)$$),
    ($$SELECT count(*) FROM contcount.source_running_counts('gauss_visits', 0.5, '1 day', '2026-01-01', 10, mechanism => 'blt', rho => 0.125)$$),
    ($$SELECT count(*) FROM contcount.source_running_counts('gauss_visits', NULL, '1 day', '2026-01-01', 10, mechanism => 'blt')$$),
    ($$SELECT count(*) FROM contcount.source_running_counts('gauss_visits', NULL, '1 day', '2026-01-01', 10, mechanism => 'binary')$$),
    ($$SELECT count(*) FROM contcount.source_running_counts('gauss_visits_two', NULL, '1 day', '2026-01-01', 10, mechanism => 'blt', dimension => 'country', rho => 0.125)$$)
) AS cases(s);
SELECT name, spent FROM contcount.ledgers
WHERE name IN ('gauss', 'gauss_pure', 'gauss_data', 'gauss_pure_data') ORDER BY name;
SELECT (SELECT spent - :before_source FROM contcount.ledgers WHERE name = 'gauss') AS team_charged;

-- Statistics: the noise has the variance the stddev states.  20000
-- independent releases (window partitions) of the 64-step stream per
-- mechanism at rho 0.002, whose variances (600 to 5800) make the rounding to
-- an integer, at most 1/2, weigh little.  At steps 1, 31 and 64 the mean
-- error is within z = 5.9 standard errors of 0 and the sample variance
-- within 5.9 standard errors of the stated one, each widened by what the
-- rounding can add, as in sql/statistics.sql.  The noise is a weighted sum
-- of independent discrete Gaussians of sigma^2 in the thousands or more,
-- whose fourth cumulant is 0 far below rounding: Var(sample variance) =
-- 2 var^2 / n.  12 checks at a two-sided 3.7e-9 each (the budget in
-- test/unit/unit.h).  gaussian_honaker's stated variance is also its closed
-- form.  A wrong scale is caught: the same checks against 0.75 of the stated
-- variance (the noise of a rho 4/3 as large) fail at every step, by over 15
-- standard errors.
CREATE TABLE test.gauss_trials (mechanism text, trial int, t int, err bigint, stddev float8);
DO $$
DECLARE
    m text;
BEGIN
    FOREACH m IN ARRAY ARRAY['gaussian_honaker', 'blt'] LOOP
        INSERT INTO test.gauss_trials
        SELECT m, trial, t, (r).noisy_count - exact, (r).stddev
        FROM (
            SELECT trial, s.day AS t, s.exact,
                   contcount.running_count(s.n, contcount.mechanism(m, rho => 0.002, horizon => 64))
                       OVER (PARTITION BY trial ORDER BY s.day ROWS UNBOUNDED PRECEDING) AS r
            FROM generate_series(1, 20000) trial, test.gauss_daily s
        ) releases
        WHERE t IN (1, 31, 64);
    END LOOP;
END $$;
CREATE TABLE test.gauss_moments AS
SELECT mechanism, t, count(*) AS n, avg(err) AS mean, var_pop(err) AS variance,
       max(stddev) ^ 2 AS stated, min(stddev) = max(stddev) AS one_stddev,
       -- sigma^2 = 7 / (2 * 0.002) = 1750, its share at t as above
       CASE mechanism WHEN 'gaussian_honaker' THEN test.dgauss_var(1750) * test.gauss_honaker_share(t) END AS closed_form
FROM test.gauss_trials GROUP BY mechanism, t;
CREATE FUNCTION test.gauss_checks(scale float8)
RETURNS TABLE (mechanism text, t int, mean_ok boolean, variance_ok boolean)
LANGUAGE sql AS $$
    SELECT mechanism, t,
           abs(mean) <= 5.9 * (sqrt(scale * stated) + 0.5) / sqrt(n),
           abs(variance - scale * stated)
               <= 5.9 * sqrt(2 * (scale * stated) ^ 2 / n) + 0.5 * (2 * sqrt(scale * stated) + 0.5)
    FROM test.gauss_moments
$$;
SELECT mechanism, t, n, one_stddev, round(stated::numeric, 1) AS stated,
       abs(stated / closed_form - 1) < 1e-12 AS stated_is_closed_form
FROM test.gauss_moments ORDER BY mechanism, t;
SELECT * FROM test.gauss_checks(1) ORDER BY mechanism, t;
SELECT mechanism, t, variance_ok AS wrong_scale_passes FROM test.gauss_checks(0.75) ORDER BY mechanism, t;
RESET contcount.ledger;
