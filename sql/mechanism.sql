-- contcount.mechanism(): the parameters of a release, checked.

-- Defaults: no horizon, sensitivity 1, beta 0.05; epsilon as charged.
SELECT * FROM contcount.mechanism('hybrid', 0.5);
SELECT * FROM contcount.mechanism('binary', epsilon => 0.1, horizon => 365);
SELECT * FROM contcount.mechanism('simple_ii', 2);
SELECT * FROM contcount.mechanism('simple_i', 1, horizon => 100, sensitivity => 3, beta => 0.01);
-- two_level fills in its block size, ceil(sqrt(horizon)), or takes one
SELECT * FROM contcount.mechanism('two_level', 1, horizon => 17);
SELECT * FROM contcount.mechanism('two_level', 1, horizon => 100, block => 25);
-- the tree with Honaker's estimates
SELECT * FROM contcount.mechanism('honaker', 0.5, horizon => 1000);
SELECT * FROM contcount.mechanism('smooth_binary', 0.5, horizon => 1000);
-- epsilon is rounded to a multiple of 1e-9
SELECT (contcount.mechanism('hybrid', 0.1234567891234)).epsilon;
-- the extremes that are allowed
SELECT (contcount.mechanism('binary', 0.000001, horizon => 4611686018427387904, sensitivity => 1000000)).name;
SELECT (contcount.mechanism('honaker', 0.000001, horizon => 4611686018427387904, sensitivity => 1000000)).name;
SELECT (contcount.mechanism('smooth_binary', 0.000001, horizon => 4611686018427387904, sensitivity => 1000000)).name;
SELECT (contcount.mechanism('hybrid', 1000)).epsilon;

-- Every bad parameter: SQLSTATE and message.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.mechanism('binary', 0, horizon => 10)$$),
    ($$SELECT contcount.mechanism('binary', -1, horizon => 10)$$),
    ($$SELECT contcount.mechanism('binary', 'NaN', horizon => 10)$$),
    ($$SELECT contcount.mechanism('binary', 'Infinity', horizon => 10)$$),
    ($$SELECT contcount.mechanism('binary', '-Infinity', horizon => 10)$$),
    ($$SELECT contcount.mechanism('binary', 1e-7, horizon => 10)$$),
    ($$SELECT contcount.mechanism('binary', 1000.001, horizon => 10)$$),
    ($$SELECT contcount.mechanism('binary', 1e300, horizon => 10)$$),
    ($$SELECT contcount.mechanism('binary', NULL, horizon => 10)$$),
    ($$SELECT contcount.mechanism('binary', 1)$$),
    ($$SELECT contcount.mechanism('simple_i', 1)$$),
    ($$SELECT contcount.mechanism('two_level', 1)$$),
    ($$SELECT contcount.mechanism('honaker', 1)$$),
    ($$SELECT contcount.mechanism('honaker', 1, horizon => 10, block => 3)$$),
    ($$SELECT contcount.mechanism('smooth_binary', 1)$$),
    ($$SELECT contcount.mechanism('binary', 1, horizon => 0)$$),
    ($$SELECT contcount.mechanism('binary', 1, horizon => -5)$$),
    ($$SELECT contcount.mechanism('hybrid', 1, horizon => 4611686018427387905)$$),
    ($$SELECT contcount.mechanism('binomial', 1, horizon => 10)$$),
    ($$SELECT contcount.mechanism('Binary', 1, horizon => 10)$$),
    ($$SELECT contcount.mechanism('blt', 1, horizon => 10)$$),
    ($$SELECT contcount.mechanism('gaussian_honaker', 1, horizon => 10)$$),
    ($$SELECT contcount.mechanism(NULL, 1, horizon => 10)$$),
    ($$SELECT contcount.mechanism('two_level', 1, horizon => 10, block => 0)$$),
    ($$SELECT contcount.mechanism('two_level', 1, horizon => 10, block => 11)$$),
    ($$SELECT contcount.mechanism('binary', 1, horizon => 10, block => 3)$$),
    ($$SELECT contcount.mechanism('hybrid', 1, sensitivity => 0)$$),
    ($$SELECT contcount.mechanism('hybrid', 1, sensitivity => 1000001)$$),
    ($$SELECT contcount.mechanism('hybrid', 1, sensitivity => NULL)$$),
    ($$SELECT contcount.mechanism('hybrid', 1, beta => 0)$$),
    ($$SELECT contcount.mechanism('hybrid', 1, beta => 1)$$),
    ($$SELECT contcount.mechanism('hybrid', 1, beta => -0.5)$$),
    ($$SELECT contcount.mechanism('hybrid', 1, beta => 'NaN')$$),
    ($$SELECT contcount.mechanism('hybrid', 1, beta => NULL)$$),
    ($$SELECT contcount.mechanism('simple_i', 0.000001, horizon => 1000000000000)$$)
) AS cases(s);

-- Hints say what to do.
SELECT contcount.mechanism('binary', 1);
SELECT contcount.mechanism('binomial', 1);
SELECT contcount.mechanism('simple_i', 0.000001, horizon => 1000000000000);

-- honaker and smooth_binary through the window aggregate and the series
-- function: at epsilon 1000 every draw is 0 (but with probability below
-- e^-300), so each release is the exact running count.
SELECT t, x, (r).noisy_count, sum(x) OVER (ORDER BY t) AS exact
FROM (SELECT t, x, contcount.running_count(x, contcount.mechanism('honaker', 1000, horizon => 6))
                       OVER (ORDER BY t ROWS UNBOUNDED PRECEDING) AS r
      FROM (VALUES (1, 3), (2, 1), (3, 4), (4, 1), (5, 5), (6, 9)) v(t, x)) q;
SELECT t, x, (r).noisy_count, sum(x) OVER (ORDER BY t) AS exact
FROM (SELECT t, x, contcount.running_count(x, contcount.mechanism('smooth_binary', 1000, horizon => 6))
                       OVER (ORDER BY t ROWS UNBOUNDED PRECEDING) AS r
      FROM (VALUES (1, 3), (2, 1), (3, 4), (4, 1), (5, 5), (6, 9)) v(t, x)) q;
SELECT t, noisy_count FROM contcount.running_counts(ARRAY[3, 1, 4, 1, 5, 9], 1000, mechanism => 'honaker');
SELECT t, noisy_count FROM contcount.running_counts(ARRAY[3, 1, 4, 1, 5, 9], 1000, mechanism => 'smooth_binary');

-- Mechanism "auto": the least mean (default) or worst variance over the
-- horizon.  The value names the mechanism picked, its block (two_level's, or kary's k) filled in.
SELECT * FROM contcount.mechanism('auto', 1, horizon => 1000);
SELECT * FROM contcount.mechanism('auto', 1, horizon => 1000, objective => 'worst');
SELECT * FROM contcount.mechanism('auto', 0.5, horizon => 1000000, sensitivity => 2, objective => 'mean');

-- The pick is the least of every mechanism's variances as its releases
-- report them (stddev^2 of a release of zeros at every step), by objective.
CREATE TEMP TABLE auto_variance AS
SELECT h, m, avg(stddev ^ 2) AS mean, max(stddev ^ 2) AS worst
FROM unnest(ARRAY[1, 2, 3, 10, 40, 100, 1000, 5000]) h,
     unnest(ARRAY['simple_i', 'simple_ii', 'two_level', 'binary', 'hybrid', 'honaker', 'smooth_binary', 'kary']) m,
     contcount.running_counts(array_fill(0::bigint, ARRAY[h]), 1, mechanism => m)
GROUP BY h, m;
SELECT h, o, (contcount.mechanism('auto', 1, horizon => h, objective => o)).name AS picked,
       (SELECT CASE o WHEN 'mean' THEN v.mean ELSE v.worst END
        FROM auto_variance v
        WHERE v.h = a.h AND v.m = (contcount.mechanism('auto', 1, horizon => h, objective => o)).name)
       <= (SELECT min(CASE o WHEN 'mean' THEN v.mean ELSE v.worst END) * (1 + 1e-9)
           FROM auto_variance v WHERE v.h = a.h) AS least
FROM (SELECT DISTINCT h FROM auto_variance) a, unnest(ARRAY['mean', 'worst']) o
ORDER BY h, o;

-- Through the window aggregate (exact at epsilon 1000), a composite written
-- by hand, and the series function and a counter, which say what they
-- picked in a NOTICE.
SELECT t, x, (r).noisy_count, sum(x) OVER (ORDER BY t) AS exact
FROM (SELECT t, x, contcount.running_count(x, contcount.mechanism('auto', 1000, horizon => 6, objective => 'worst'))
                       OVER (ORDER BY t ROWS UNBOUNDED PRECEDING) AS r
      FROM (VALUES (1, 3), (2, 1), (3, 4), (4, 1), (5, 5), (6, 9)) v(t, x)) q;
SELECT (contcount.running_count(x, ROW('auto', 1000, 6, NULL, 1, 0.05, NULL, NULL, NULL)::contcount.mechanism)).noisy_count
FROM (VALUES (1, 3), (2, 1), (3, 4), (4, 1), (5, 5), (6, 9)) v(t, x);
SELECT t, round(stddev::numeric, 3) AS stddev
FROM contcount.running_counts(ARRAY[3, 1, 4, 1, 5, 9], 1, mechanism => 'auto');
SELECT count(*) AS steps, count(*) FILTER (WHERE a.stddev <> b.stddev) AS differing
FROM contcount.running_counts(array_fill(0::bigint, ARRAY[1000]), 1, mechanism => 'auto', objective => 'worst') a
JOIN contcount.running_counts(array_fill(0::bigint, ARRAY[1000]), 1,
         mechanism => (contcount.mechanism('auto', 1, horizon => 1000, objective => 'worst')).name) b
     USING (t);
SELECT contcount.create_counter('auto_counter', 1, mechanism => 'auto', horizon => 100000,
                                step => '1 day', objective => 'worst');
SELECT name, mechanism, horizon FROM contcount.counters WHERE name = 'auto_counter';
SELECT contcount.drop_counter('auto_counter');

-- Its refusals, each before anything is charged.
CREATE TEMP TABLE spent_before AS SELECT spent FROM contcount.ledgers WHERE name = 'tests';
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.mechanism('auto', 1)$$),
    ($$SELECT contcount.mechanism('auto', 1, horizon => 100, block => 10)$$),
    ($$SELECT contcount.mechanism('auto', 1, horizon => 100, objective => 'median')$$),
    ($$SELECT contcount.mechanism('auto', 1, horizon => 100, objective => 'Mean')$$),
    ($$SELECT contcount.mechanism('binary', 1, horizon => 100, objective => 'mean')$$),
    ($$SELECT contcount.mechanism('auto', 0, horizon => 100)$$),
    ($$SELECT contcount.mechanism('auto', 1, horizon => 0)$$),
    ($$SELECT contcount.mechanism('Auto', 1, horizon => 100)$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1, 2]::bigint[], 1, mechanism => 'auto', objective => 'max')$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1, 2]::bigint[], 1, objective => 'worst', mechanism => 'binary')$$),
    ($$SELECT contcount.create_counter('auto_refused', 1, mechanism => 'auto')$$),
    ($$SELECT contcount.create_counter('auto_refused', 1, mechanism => 'auto', horizon => 10, objective => 'least')$$)
) AS cases(s);
SELECT contcount.mechanism('auto', 1);
SELECT l.spent - b.spent AS charged FROM contcount.ledgers l, spent_before b WHERE l.name = 'tests';
