-- Mechanism blt_scaled: the BLT factorization with its inputs scaled by
-- half-octave stretches of steps, under zCDP.  It takes rho wherever blt
-- does (the series function, the window aggregate, counters), auto picks it
-- under zCDP, its reported stddev^2 is its closed form (mean and worst
-- below blt's at T = 1000 and 2^20), and its noise has that variance.
SET client_min_messages = warning;
SELECT contcount.create_ledger('scaled', rho => 2000, delta => 0.000001);
SET contcount.ledger = 'scaled';
RESET client_min_messages;

-- The parameters, and what auto picks with rho
SELECT name, rho, horizon FROM contcount.mechanism('blt_scaled', rho => 0.5, horizon => 1000);
SELECT h, (contcount.mechanism('auto', rho => 0.5, horizon => h)).name AS mean,
       (contcount.mechanism('auto', rho => 0.5, horizon => h, objective => 'worst')).name AS worst
FROM unnest(ARRAY[1, 2, 1000, 1048576, 1099511627776, 1099511627777]::bigint[]) h;
-- as blt: a horizon is needed, at most 2^40, and rho, not epsilon
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.mechanism('blt_scaled', rho => 0.5)$$),
    ($$SELECT contcount.mechanism('blt_scaled', rho => 0.5, horizon => 1099511627777)$$),
    ($$SELECT contcount.mechanism('blt_scaled', 1, horizon => 10)$$)
) AS cases(s);

-- Over 1000 and 2^20 zeros, the reported stddev^2's mean and worst, beside
-- blt's: 9.05 / 9.69 against 9.63 / 10.66, and 27.04 / 28.34 (its own
-- table of BLTs made for the mean) against 28.97 / 30.96.  The bound is the stddev's sub-Gaussian bound and the
-- rounding.
SELECT m, n, round(avg(stddev ^ 2)::numeric, 2) AS mean, round(max(stddev ^ 2)::numeric, 2) AS worst,
       bool_and(bound >= floor(sqrt(2 * stddev ^ 2 * ln(2 / 0.05)) + 0.5 - 1e-4)) AS bound_in_range
FROM unnest(ARRAY['blt', 'blt_scaled']) m, unnest(ARRAY[1000, 1048576]) n,
     LATERAL contcount.running_counts(array_fill(0::bigint, ARRAY[n]), mechanism => m, rho => 0.5) r
GROUP BY m, n ORDER BY n, m;

-- The noise has the reported variance: 3000 streams of 40 items, the error
-- at step 40 (stddev^2 includes no rounding; the rounding's at most 1/12
-- is inside the tolerance), checked at 8 standard deviations of the sample
-- variance (a false alarm below 1e-12).  Each stream is its own release
-- (the items name i, so the series function is called again for each).
SELECT abs(avg(e ^ 2) / max(v) - 1) < 8 * sqrt(2.0 / 3000) + 1.0 / 12 / min(v) AS variance_as_reported,
       abs(avg(e)) < 8 * sqrt(max(v) / 3000) AS unbiased
FROM (SELECT r.noisy_count - 40 * 2 AS e, r.stddev ^ 2 AS v
      FROM generate_series(1, 3000) i,
           LATERAL contcount.running_counts(array_fill((2 + 0 * i)::bigint, ARRAY[40]),
                                            mechanism => 'blt_scaled', rho => 0.5) r
      WHERE r.t = 40) s;

-- The window aggregate and the series function give the same error bars,
-- and a counter takes it; the ledger is charged every rho.
SELECT bool_and(w.stddev = s.stddev AND w.bound = s.bound) AS same_error_bars
FROM (SELECT i AS day, (contcount.running_count(1, contcount.mechanism('blt_scaled', rho => 0.25, horizon => 30))
                       OVER (ORDER BY i ROWS UNBOUNDED PRECEDING)).*
      FROM generate_series(1, 30) i) w
JOIN contcount.running_counts(array_fill(1::bigint, ARRAY[30]), mechanism => 'blt_scaled', rho => 0.25) s
  ON s.t = w.day;
SELECT contcount.create_counter('scaled_counter', rho => 0.125, mechanism => 'blt_scaled', horizon => 100,
                                step => '1 day');
SELECT mechanism, accounting, rho FROM contcount.counters WHERE name = 'scaled_counter';
SELECT spent FROM contcount.ledgers WHERE name = 'scaled';
