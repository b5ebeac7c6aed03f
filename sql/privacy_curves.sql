-- Privacy curves (issue 13): the (epsilon, delta) of everything a ledger
-- was charged, from the composition of its releases, against closed forms.
-- A pure release of epsilon is dominated by randomized response; k of them
-- compose into a binomial of losses (2j - k) epsilon, j favouring the data
-- with probability p = e^epsilon / (1 + e^epsilon) each (Kairouz, Oh and
-- Viswanath), so delta(e) = sum_j C(k, j) p^j (1 - p)^(k - j) (1 - e^(e -
-- (2j - k) epsilon))_+, written here from the formula alone.  (Gaussian
-- releases come with their SQL; the core's tests cover their curves.)

CREATE FUNCTION test.pure_delta(k int, eps float8, e float8) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
    SELECT sum(CASE WHEN (2 * j - k) * eps > e AND log_pj > -700
                    THEN exp(log_pj) * (1 - exp(e - (2 * j - k) * eps)) ELSE 0 END)
    FROM (SELECT j, log_c + j * ln(p) + (k - j) * ln(1 - p) AS log_pj
          FROM (SELECT j, exp(eps) / (1 + exp(eps)) AS p,
                       sum(CASE WHEN j = 0 THEN 0 ELSE ln((k - j + 1)::float8 / j) END)
                           OVER (ORDER BY j) AS log_c
                FROM generate_series(0, k) j) s) t
$$;

CREATE TABLE test.curve_rows AS SELECT i FROM generate_series(1, 100) i;
SELECT contcount.create_ledger('curve_one', 10);
SELECT contcount.create_ledger('curve_k', 10);
SELECT contcount.create_ledger('curve_z', rho => 1, delta => 0.000001);
SELECT contcount.create_ledger('curve_many', 1000);

-- Nothing spent: delta 0 everywhere, epsilon 0 at every delta.
SELECT contcount.ledger_delta('curve_one', 0) AS delta, contcount.ledger_epsilon('curve_one', 0) AS epsilon;

-- One pure release of 1/2: randomized response's curve, delta 0 from 1/2
-- on, and epsilon 1/2 at delta 0.
SELECT contcount.noisy_count(0.5, 'curve_one') IS NOT NULL AS released FROM test.curve_rows;
SELECT e, contcount.ledger_delta('curve_one', e) >= test.pure_delta(1, 0.5, e) AS not_below,
       abs(contcount.ledger_delta('curve_one', e) - test.pure_delta(1, 0.5, e)) <= 1e-9 * test.pure_delta(1, 0.5, e)
           AS as_closed_form,
       contcount.ledger_delta('curve_one', e) > 0 AS positive
FROM (VALUES (0.0), (0.1), (0.25), (0.49), (0.4999999), (0.5), (0.6), (1000)) v(e);
SELECT contcount.ledger_epsilon('curve_one', 0) AS at_delta_0,
       abs(contcount.ledger_epsilon('curve_one', 0.001) - ln(exp(0.5) - 0.001 * (1 + exp(0.5)))) < 1e-9
           AS at_delta_1e_3_as_closed_form,
       contcount.ledger_epsilon('curve_one', 1) AS at_delta_1;

-- Ten pure releases of 1/4, one a group, paid in batches of 1, 2, 4 and 8
-- with the 5 unused refunded: the curve composes the ten made.
SELECT count(n) FROM (SELECT contcount.noisy_count(0.25, 'curve_k') AS n FROM test.curve_rows GROUP BY i % 10) s;
SELECT sum(releases) FILTER (WHERE epsilon > 0) AS charged, -sum(releases) FILTER (WHERE epsilon < 0) AS refunded
FROM contcount.charges WHERE ledger = 'curve_k';
SELECT e, abs(contcount.ledger_delta('curve_k', e) - test.pure_delta(10, 0.25, e)) <=
              1e-9 * test.pure_delta(10, 0.25, e) AS as_closed_form,
       contcount.ledger_delta('curve_k', e) >= test.pure_delta(10, 0.25, e) AS not_below
FROM (VALUES (0.0), (0.5), (1.0), (1.5), (2.0), (2.25), (2.4999)) v(e);
SELECT contcount.ledger_delta('curve_k', 2.5) AS at_sum, contcount.ledger_epsilon('curve_k', 0) AS at_delta_0;
-- every epsilon found is the least whose delta is at most the one asked
SELECT d, contcount.ledger_delta('curve_k', contcount.ledger_epsilon('curve_k', d)) <= d AS reaches,
       test.pure_delta(10, 0.25, contcount.ledger_epsilon('curve_k', d) - 1e-6) > d AS least
FROM (VALUES (0.1), (0.001), (0.000001)) v(d);

-- A zCDP ledger with pure releases (each charged rho = epsilon^2 / 2): the
-- curve gives no more than the zCDP conversion the views show, and as much
-- as the exact composition; tight_epsilon is the curve's at the ledger's
-- delta, rounded up.
SELECT count(n) FROM (SELECT contcount.noisy_count(0.1, 'curve_z') AS n FROM test.curve_rows GROUP BY i % 10) s;
SELECT spent, delta, spent_epsilon, tight_epsilon,
       tight_epsilon <= spent_epsilon AS tighter,
       tight_epsilon = ceil(contcount.ledger_epsilon('curve_z', 0.000001) * 1e9) / 1e9 AS tight_from_curve,
       contcount.ledger_epsilon('curve_z', 0.000001) <= spent_epsilon AS function_tighter
FROM contcount.ledgers WHERE name = 'curve_z';
SELECT e, abs(contcount.ledger_delta('curve_z', e) - test.pure_delta(10, 0.1, e)) <=
              1e-9 * test.pure_delta(10, 0.1, e) AS as_closed_form
FROM (VALUES (0.0), (0.3), (0.6), (0.9), (0.99)) v(e);
SELECT d, contcount.ledger_epsilon('curve_z', d) <= test_zcdp AS below_conversion
FROM (VALUES (0.001), (0.000001), (1e-12)) v(d),
     LATERAL (SELECT min(alpha * 0.05 + (ln(1 / d) + (alpha - 1) * ln(1 - 1 / alpha) - ln(alpha)) / (alpha - 1))
              AS test_zcdp
              FROM (SELECT 1 + exp(u::float8 / 1000) AS alpha FROM generate_series(-10000, 10000) u) g) c;
-- a pure ledger's tight_epsilon is what it spent
SELECT name, spent, spent_epsilon, tight_epsilon FROM contcount.ledgers WHERE name IN ('curve_one', 'curve_k')
ORDER BY name;

-- A zCDP ledger known by its rho only (an imported charge, whose noise the
-- export does not say): the zCDP conversion, no less.
SELECT ledger, spent, action FROM contcount.import_ledgers(jsonb_build_object(
    'format', 'contcount ledgers', 'version', 2, 'ledgers', jsonb_build_array(jsonb_build_object(
        'id', 4242424242, 'name', 'curve_imported', 'budget', 2, 'accounting', 'zcdp', 'delta', 0.000001,
        'created_at', '2026-01-01 00:00:00+00', 'created_by', current_user, 'spent_units', 500000000,
        'grants', '[]'::jsonb, 'charges', jsonb_build_array(jsonb_build_object(
            'at', '2026-01-01 00:00:00+00', 'role', current_user, 'units', 500000000, 'refund', false,
            'accounting', 'zcdp', 'releases', 1, 'release_units', 500000000,
            'function', 'a Gaussian release', 'statement', ''))))));
SELECT spent, spent_epsilon, abs(tight_epsilon - spent_epsilon) <= 1e-8 AS tight_as_conversion,
       abs(contcount.ledger_epsilon('curve_imported', 0.000001) - spent_epsilon) <= 1e-8 AS function_as_conversion,
       contcount.ledger_epsilon('curve_imported', 0) AS at_delta_0
FROM contcount.ledgers WHERE name = 'curve_imported';

-- Who sees a ledger: as in contcount.ledgers.  A stranger gets 42501, and
-- 42704 for a ledger that does not exist; a role granted the ledger, or
-- whose contcount.ledger (a superuser's setting) names it, sees it.
CREATE ROLE regress_curve_stranger;
CREATE ROLE regress_curve_analyst;
GRANT USAGE ON SCHEMA test TO regress_curve_stranger;
SELECT contcount.grant_ledger('curve_k', 'regress_curve_analyst');
SET ROLE regress_curve_stranger;
SELECT test.error_of($$SELECT contcount.ledger_delta('curve_k', 1)$$);
SELECT test.error_of($$SELECT contcount.ledger_epsilon('curve_k', 0.001)$$);
SELECT test.error_of($$SELECT contcount.ledger_epsilon('curve_nope', 0.001)$$);
SELECT count(*) AS ledgers_seen FROM contcount.ledgers WHERE name LIKE 'curve%';
RESET ROLE;
SET contcount.ledger = 'curve_one';
SET ROLE regress_curve_stranger;
SELECT contcount.ledger_epsilon('curve_one', 0) AS selected_by_setting;
SELECT test.error_of($$SELECT contcount.ledger_epsilon('curve_k', 0)$$);
RESET ROLE;
RESET contcount.ledger;
SET ROLE regress_curve_analyst;
SELECT contcount.ledger_epsilon('curve_k', 0) AS granted;
RESET ROLE;

-- Bad inputs: 22023; nulls give null.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.ledger_delta('curve_k', -0.5)$$),
    ($$SELECT contcount.ledger_delta('curve_k', 'NaN')$$),
    ($$SELECT contcount.ledger_delta('curve_k', 'Infinity')$$),
    ($$SELECT contcount.ledger_epsilon('curve_k', -0.1)$$),
    ($$SELECT contcount.ledger_epsilon('curve_k', 1.5)$$),
    ($$SELECT contcount.ledger_epsilon('curve_k', 'NaN')$$),
    ($$SELECT contcount.ledger_epsilon('', 0.5)$$)
) AS cases(s);
SELECT contcount.ledger_delta(NULL, 1) IS NULL AS null_ledger, contcount.ledger_epsilon('curve_k', NULL) IS NULL AS null_delta;

-- 10^5 releases of 1/1000 (one a group, about a hundred charges with their
-- refunds): composed at once, quickly, and as the binomial says.
SELECT count(n) FROM (SELECT contcount.noisy_count(0.001, 'curve_many') AS n
                      FROM generate_series(1, 100000) g GROUP BY g) s;
SELECT clock_timestamp() AS started \gset
SELECT contcount.ledger_delta('curve_many', 0.5) > 0 AS answered, contcount.ledger_epsilon('curve_many', 0.000001) > 0 AS answered;
SELECT clock_timestamp() - :'started' < interval '2 seconds' AS quickly;
SELECT e, abs(contcount.ledger_delta('curve_many', e) - test.pure_delta(100000, 0.001, e)) <=
              1e-6 * test.pure_delta(100000, 0.001, e) AS as_closed_form
FROM (VALUES (0.0), (0.5), (1.0), (1.5)) v(e);
SELECT contcount.ledger_epsilon('curve_many', 0) AS at_delta_0, contcount.ledger_delta('curve_many', 100) AS at_sum;

REVOKE USAGE ON SCHEMA test FROM regress_curve_stranger;
DROP ROLE regress_curve_stranger;
SELECT contcount.revoke_ledger('curve_k', 'regress_curve_analyst');
DROP ROLE regress_curve_analyst;
