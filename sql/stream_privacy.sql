-- contcount.streaming_composition: seed 002's Theorem 4, a calculator.

-- epsilon_max + (steps - 1) gamma, steps delta_max (rounded up, never down)
SELECT round(epsilon::numeric, 9) AS epsilon, delta, vacuous
FROM contcount.streaming_composition(0.5, 1e-6, 0.75, 11);
SELECT epsilon >= 8 AND epsilon < 8.000001 AS epsilon_ok, delta >= 1.1e-5 AND delta < 1.1e-5 * 1.000001 AS delta_ok
FROM contcount.streaming_composition(0.5, 1e-6, 0.75, 11);
-- one step is the step's own guarantee
SELECT * FROM contcount.streaming_composition(0.5, 0, 0.75, 1);
-- steps delta_max reaching 1 says nothing
SELECT delta, vacuous FROM contcount.streaming_composition(0.1, 0.01, 0.2, 100);
SELECT vacuous FROM contcount.streaming_composition(0.1, 0.01, 0.2, 99);
SELECT * FROM contcount.streaming_composition(NULL, 0, 1, 2);

-- From a mechanism: one release's curve at delta_max.  A pure epsilon 1 at
-- delta 0 is epsilon 1; at delta 0.1 randomized response's curve gives
-- log(e - 0.1 (1 + e)).
SELECT round(epsilon_max::numeric, 6) AS epsilon_max, round(epsilon::numeric, 6) AS epsilon
FROM contcount.streaming_composition(contcount.mechanism('binary', epsilon => 1, horizon => 64), 0, 2, 10);
SELECT epsilon_max >= ln(exp(1) - 0.1 * (1 + exp(1))) - 1e-12
       AND epsilon_max < ln(exp(1) - 0.1 * (1 + exp(1))) + 1e-3 AS on_rr_curve
FROM contcount.streaming_composition(contcount.mechanism('binary', epsilon => 1, horizon => 64), 0.1, 2, 10);
-- a Gaussian mechanism at delta 1e-6: below the zCDP conversion
SELECT epsilon_max > 0 AND epsilon_max < 0.5 + 2 * sqrt(0.5 * ln(1e6)) AS gaussian_ok
FROM contcount.streaming_composition(contcount.mechanism('gaussian_honaker', rho => 0.5, horizon => 64), 1e-6, 10, 3);

-- Errors (22023), and what a calculator does not do: charge
SELECT spent AS spent_before FROM contcount.ledgers WHERE name = 'tests' \gset
SELECT test.error_of($$SELECT contcount.streaming_composition(-0.1, 0, 1, 2)$$);
SELECT test.error_of($$SELECT contcount.streaming_composition('NaN', 0, 1, 2)$$);
SELECT test.error_of($$SELECT contcount.streaming_composition(1, 1.5, 1, 2)$$);
SELECT test.error_of($$SELECT contcount.streaming_composition(1, -1e-9, 1, 2)$$);
SELECT test.error_of($$SELECT contcount.streaming_composition(1, 0, 0.5, 2)$$);
SELECT test.error_of($$SELECT contcount.streaming_composition(1, 0, 'Infinity', 2)$$);
SELECT test.error_of($$SELECT contcount.streaming_composition(1, 0, 1, 0)$$);
SELECT test.error_of($$SELECT contcount.streaming_composition(
    contcount.mechanism('binary', epsilon => 1, horizon => 64), 0, 0.5, 2)$$);
SELECT test.error_of($$SELECT contcount.streaming_composition(
    contcount.mechanism('binary', epsilon => 1, horizon => 64), 2, 3, 2)$$);
SELECT test.error_of($$SELECT contcount.streaming_composition(
    contcount.mechanism('binary', epsilon => -1, horizon => 64), 0, 3, 2)$$);
SELECT test.error_of($$SELECT contcount.streaming_composition(
    contcount.mechanism('gaussian_honaker', rho => 0.5, horizon => 64), 0, 30, 2)$$);
SELECT spent = :'spent_before' AS nothing_charged FROM contcount.ledgers WHERE name = 'tests';
