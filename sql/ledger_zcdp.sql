-- Ledgers that account in zCDP (issue 13): a ledger keeps a pure epsilon
-- budget or a rho-zCDP one, for good.  A pure (Laplace) release costs a zCDP
-- ledger rho = epsilon^2 / 2, rounded up to 1e-9; the views show a zCDP
-- ledger as (epsilon, delta)-DP at a delta its admin sets.  (No release draws
-- Gaussian noise yet: the charge of a Gaussian release's rho, and its refusal
-- by a pure ledger, come with those releases' tests.)

CREATE TABLE test.zcdp_events AS SELECT i FROM generate_series(1, 100) i;

-- Creating: a rho budget and a delta; every bad input is refused.
SELECT contcount.create_ledger('zcdp_team', rho => 2, delta => 0.001);
SELECT contcount.create_ledger('zcdp_data', 1, 0.000001);
SELECT contcount.create_ledger('zcdp_pure', 3);
SELECT name, budget, spent, remaining, accounting, delta, spent_epsilon, budget_epsilon
FROM contcount.ledgers WHERE name LIKE 'zcdp%' ORDER BY name;
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.create_ledger('x', rho => NULL, delta => 0.001)$$),
    ($$SELECT contcount.create_ledger('x', rho => 1, delta => NULL)$$),
    ($$SELECT contcount.create_ledger('x', rho => 1, delta => 0)$$),
    ($$SELECT contcount.create_ledger('x', rho => 1, delta => 1)$$),
    ($$SELECT contcount.create_ledger('x', rho => 1, delta => -0.5)$$),
    ($$SELECT contcount.create_ledger('x', rho => 1, delta => 'NaN')$$),
    ($$SELECT contcount.create_ledger('x', rho => 1, delta => 1e-400)$$),
    ($$SELECT contcount.create_ledger('x', rho => -1, delta => 0.001)$$),
    ($$SELECT contcount.create_ledger('x', rho => 0.0000000001, delta => 0.001)$$),
    ($$SELECT contcount.create_ledger('x', rho => 'Infinity', delta => 0.001)$$),
    ($$SELECT contcount.create_ledger('zcdp_team', rho => 1, delta => 0.001)$$),
    ($$SELECT contcount.create_ledger('zcdp_team', 1)$$),
    ($$SELECT contcount.create_ledger('', rho => 1, delta => 0.001)$$),
    ($$SELECT contcount.create_ledger('x', rho => 1)$$)
) AS cases(s);

-- Charging: exact rho, rounded up, never down.
SET contcount.ledger = 'zcdp_team';
-- epsilon 1/4: rho 1/32 exactly
SELECT count(*) FROM contcount.running_counts(ARRAY[1, 2, 3], 0.25, mechanism => 'binary');
SELECT spent FROM contcount.ledgers WHERE name = 'zcdp_team';
-- epsilon 0.000123457: rho 7.62e-9, charged 8e-9; the least epsilon, 1e-6:
-- rho 5e-13, charged 1e-9
SELECT contcount.noisy_count(0.000123457) IS NOT NULL AS released FROM test.zcdp_events;
SELECT spent - 0.03125 AS charged FROM contcount.ledgers WHERE name = 'zcdp_team';
SELECT contcount.noisy_count(0.000001) IS NOT NULL AS released FROM test.zcdp_events;
SELECT spent - 0.031250008 AS charged FROM contcount.ledgers WHERE name = 'zcdp_team';
-- every group pays, in batches of 1, 2, 4, 8, the 5 unused given back:
-- 10 releases of epsilon 0.01, rho 0.00005 each
SELECT count(n) FROM (SELECT contcount.noisy_count(0.01) AS n FROM test.zcdp_events GROUP BY i % 10) s;
SELECT spent - 0.031250009 AS charged FROM contcount.ledgers WHERE name = 'zcdp_team';
-- a window's partitions: 3 releases of epsilon 1/8, rho 1/128 each
SELECT count(r) FROM (
    SELECT contcount.running_count(1, 0.125, 400) OVER (PARTITION BY i % 3 ORDER BY i ROWS UNBOUNDED PRECEDING) AS r
    FROM test.zcdp_events) s;
SELECT spent - 0.031750009 AS charged FROM contcount.ledgers WHERE name = 'zcdp_team';
-- a counter pays its epsilon's rho at its creation: 1/2 gives 1/8
SELECT contcount.create_counter('zcdp_counter', 0.5, horizon => 100, step => '1 day', mechanism => 'binary');
SELECT spent - 0.055187509 AS charged FROM contcount.ledgers WHERE name = 'zcdp_team';
SELECT contcount.drop_counter('zcdp_counter');

-- The audit: what each charge cost the ledger (epsilon counts rho on a
-- zCDP ledger), how many releases it paid for and each one's epsilon.
SELECT ledger, epsilon, function, accounting, releases, release_epsilon, release_rho
FROM contcount.charges WHERE ledger = 'zcdp_team' ORDER BY at;

-- Overspending is refused in rho, and costs nothing.  Left: 2 - 0.180187509.
SELECT remaining FROM contcount.ledgers WHERE name = 'zcdp_team';
-- epsilon 1.908 is rho 1.820232 > 1.819812491
SELECT contcount.noisy_count(1.908) FROM test.zcdp_events;
SELECT test.error_of($$SELECT * FROM contcount.running_counts(ARRAY[1], 1.908, mechanism => 'binary')$$);
-- epsilon 1.9077 is rho 1.819659645: it fits, and 0.000152846 is left
SELECT contcount.noisy_count(1.9077) IS NOT NULL AS released FROM test.zcdp_events;
SELECT spent, remaining FROM contcount.ledgers WHERE name = 'zcdp_team';
SELECT test.error_of($$SELECT contcount.noisy_count(0.02) FROM test.zcdp_events$$);
RESET contcount.ledger;

-- The views' (epsilon, delta), against a hand computation: Canonne, Kamath
-- and Steinke's bound at its best alpha, here over a grid of alpha, and
-- never above Bun and Steinke's rho + 2 sqrt(rho ln(1/delta)).  Spent rho
-- 1/32 at delta 1e-3 reads as epsilon 0.688 (issue 13's figure).
CREATE FUNCTION test.cks_epsilon(rho float8, delta float8) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
    SELECT min(alpha * rho + (ln(1 / delta) + (alpha - 1) * ln(1 - 1 / alpha) - ln(alpha)) / (alpha - 1))
    FROM (SELECT 1 + exp(u::float8 / 10000) AS alpha FROM generate_series(-100000, 100000) u) g
$$;
SELECT contcount.create_ledger('zcdp_hand', rho => 1, delta => 0.001);
SELECT count(*) FROM contcount.running_counts(ARRAY[1], 0.25, ledger => 'zcdp_hand', mechanism => 'binary');
SELECT spent, delta, spent_epsilon, budget_epsilon,
       abs(spent_epsilon - test.cks_epsilon(spent::float8, delta::float8)) < 1e-6 AS spent_as_by_hand,
       abs(budget_epsilon - test.cks_epsilon(budget::float8, delta::float8)) < 1e-6 AS budget_as_by_hand,
       spent_epsilon <= spent + 2 * sqrt(spent * ln(1 / delta)) AS within_bun_steinke
FROM contcount.ledgers WHERE name = 'zcdp_hand';
SELECT name, spent, delta, spent_epsilon,
       abs(spent_epsilon - test.cks_epsilon(spent::float8, delta::float8)) < 1e-6 AS as_by_hand,
       spent_epsilon <= spent + 2 * sqrt(spent * ln(1 / delta)) AS within_bun_steinke
FROM contcount.ledgers WHERE name = 'zcdp_team';
-- a pure ledger is (spent, 0)-DP
SELECT contcount.noisy_count(0.5, 'zcdp_pure') IS NOT NULL AS released FROM test.zcdp_events;
SELECT name, spent, accounting, delta, spent_epsilon, budget_epsilon FROM contcount.ledgers WHERE name = 'zcdp_pure';

-- Changing a zCDP ledger: its rho budget, its delta, or both; never as if
-- it were pure, nor a pure one as if it were zCDP (ZB003).
SELECT contcount.alter_ledger('zcdp_hand', rho => 0.5, delta => NULL);
SELECT contcount.alter_ledger('zcdp_hand', rho => NULL, delta => 0.000001);
SELECT budget, delta, spent_epsilon, budget_epsilon,
       abs(spent_epsilon - test.cks_epsilon(spent::float8, delta::float8)) < 1e-6 AS as_by_hand
FROM contcount.ledgers WHERE name = 'zcdp_hand';
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.alter_ledger('zcdp_hand', 1)$$),
    ($$SELECT contcount.alter_ledger('zcdp_pure', rho => 1, delta => NULL)$$),
    ($$SELECT contcount.alter_ledger('zcdp_hand', rho => NULL, delta => NULL)$$),
    ($$SELECT contcount.alter_ledger('zcdp_hand', rho => NULL, delta => 1)$$),
    ($$SELECT contcount.alter_ledger('zcdp_hand', rho => -1, delta => NULL)$$),
    ($$SELECT contcount.alter_ledger('nope', rho => 1, delta => NULL)$$)
) AS cases(s);
-- a budget change is in the audit, in rho; delta is how the ledger is
-- shown, not what it may spend, so not a budget change
SELECT ledger, action, old_budget, new_budget FROM contcount.budget_changes
WHERE ledger LIKE 'zcdp%' ORDER BY at;

-- Roles: an analyst spends the zCDP ledger a superuser chose, or one
-- granted; an admin manages it; others cannot.
CREATE ROLE regress_zcdp_analyst LOGIN;
CREATE ROLE regress_zcdp_admin LOGIN;
GRANT USAGE ON SCHEMA test TO regress_zcdp_analyst, regress_zcdp_admin;
GRANT SELECT ON test.zcdp_events TO regress_zcdp_analyst, regress_zcdp_admin;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_zcdp_analyst, regress_zcdp_admin;
ALTER ROLE regress_zcdp_analyst SET contcount.ledger = 'zcdp_data';
SELECT contcount.grant_ledger('zcdp_hand', 'regress_zcdp_analyst');
SELECT contcount.grant_ledger('zcdp_hand', 'regress_zcdp_admin', admin => true);
\c - regress_zcdp_analyst
SELECT contcount.noisy_count(0.5) IS NOT NULL AS released FROM test.zcdp_events;
SELECT contcount.noisy_count(0.5, 'zcdp_hand') IS NOT NULL AS released FROM test.zcdp_events;
SELECT name, budget, spent, accounting, delta FROM contcount.ledgers ORDER BY name;
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.alter_ledger('zcdp_hand', rho => 100, delta => NULL)$$),
    ($$SELECT contcount.alter_ledger('zcdp_data', rho => NULL, delta => 0.1)$$),
    ($$SELECT contcount.create_ledger('mine', rho => 100, delta => 0.001)$$),
    ($$SELECT contcount.noisy_count(0.5, 'zcdp_team') FROM test.zcdp_events$$),
    ($$SELECT contcount_internal.store_accounting(1)$$)
) AS cases(s);
\c - regress_zcdp_admin
SELECT contcount.alter_ledger('zcdp_hand', rho => 0.75, delta => NULL);
SELECT role, ledger, epsilon, function, releases, release_epsilon FROM contcount.charges ORDER BY at;
\c - postgres

-- Protected sources: the team's ledger and the data's may account
-- differently; each pays in its own.  The data's is zCDP here.
CREATE TABLE test.zcdp_visits (user_id int, country text, at timestamptz);
INSERT INTO test.zcdp_visits
SELECT u, (ARRAY['fr', 'de'])[1 + u % 2], '2026-01-01'::timestamptz + u * interval '1 hour'
FROM generate_series(1, 30) u;
SELECT contcount.protect_table('zcdp_visits', 'test.zcdp_visits', 'user_id', 'at', 'zcdp_data');
SELECT contcount.source_dimension('zcdp_visits', 'country', ARRAY['fr', 'de']);
SELECT contcount.grant_source('zcdp_visits', 'regress_zcdp_analyst');
SELECT contcount.grant_ledger('zcdp_pure', 'regress_zcdp_analyst');
SELECT name, spent FROM contcount.ledgers WHERE name IN ('zcdp_data', 'zcdp_pure', 'zcdp_hand') ORDER BY name;
\c - regress_zcdp_analyst
-- a pure team quota: epsilon 0.5 from it, rho 1/8 from the data's
SELECT count(*) FROM contcount.source_counts('zcdp_visits', 0.5, 'country', ledger => 'zcdp_pure');
-- a zCDP team quota: rho 1/8 from each
SELECT count(*) FROM contcount.source_counts('zcdp_visits', 0.5, 'country', ledger => 'zcdp_hand');
\c - postgres
SELECT name, spent FROM contcount.ledgers WHERE name IN ('zcdp_data', 'zcdp_pure', 'zcdp_hand') ORDER BY name;
SELECT ledger, epsilon, accounting, release_epsilon FROM contcount.charges
WHERE function = 'source_counts' AND ledger LIKE 'zcdp%' ORDER BY at, ledger;

-- A budget cut below what was spent leaves nothing.
SELECT contcount.alter_ledger('zcdp_data', rho => 0.3, delta => NULL);
SELECT name, budget, spent, remaining FROM contcount.ledgers WHERE name = 'zcdp_data';
\c - regress_zcdp_analyst
SELECT test.error_of($$SELECT contcount.noisy_count(0.001) FROM test.zcdp_events$$);
\c - postgres

-- Export and import carry each ledger's accounting and delta and each
-- charge's releases; its own export changes nothing; one that would change
-- a ledger's accounting, or whose charges are not what their releases cost,
-- is refused.
SELECT contcount.export_ledgers() -> 'version' AS version;
SELECT e ->> 'name' AS name, e ->> 'accounting' AS accounting, e ->> 'delta' AS delta,
       e -> 'charges' -> 0 ->> 'units' AS first_units, e -> 'charges' -> 0 ->> 'accounting' AS first_accounting,
       e -> 'charges' -> 0 ->> 'releases' AS first_releases, e -> 'charges' -> 0 ->> 'release_units' AS first_release_units
FROM jsonb_array_elements(contcount.export_ledgers() -> 'ledgers') e
WHERE e ->> 'name' LIKE 'zcdp%' ORDER BY name;
CREATE TEMP TABLE zcdp_before AS SELECT name, spent, accounting FROM contcount.ledgers;
SELECT ledger, spent, action FROM contcount.import_ledgers(contcount.export_ledgers())
WHERE ledger LIKE 'zcdp%' ORDER BY ledger;
SELECT test.error_of($$SELECT contcount.import_ledgers(
    jsonb_set(contcount.export_ledgers(), '{ledgers}',
              (SELECT jsonb_agg(CASE WHEN e ->> 'name' = 'zcdp_team'
                                     THEN jsonb_set(e, '{accounting}', '"pure"') ELSE e END)
               FROM jsonb_array_elements(contcount.export_ledgers() -> 'ledgers') e)))$$);
SELECT test.error_of($$SELECT contcount.import_ledgers(
    jsonb_set(contcount.export_ledgers(), '{version}', '3'))$$);
SELECT count(*) AS changed FROM (SELECT name, spent, accounting FROM contcount.ledgers
                                 EXCEPT SELECT * FROM zcdp_before) c;
-- the primitives check what a charge cost: a pure release of epsilon 0.25
-- on a zCDP ledger costs 31250000 units of rho, not 250000000
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount_internal.store_import(1, 'x', now(), 10, 0, ARRAY[now()], ARRAY[10::oid], ARRAY[250000000::bigint], ARRAY[false], ARRAY['f'], ARRAY['s'], 'zcdp', ARRAY['pure'], ARRAY[1::bigint], ARRAY[250000000::bigint])$$),
    ($$SELECT contcount_internal.store_import(1, 'x', now(), 10, 0, ARRAY[now()], ARRAY[10::oid], ARRAY[1::bigint], ARRAY[false], ARRAY['f'], ARRAY['s'], 'pure', ARRAY['zcdp'], ARRAY[1::bigint], ARRAY[1::bigint])$$),
    ($$SELECT contcount_internal.store_import(1, 'x', now(), 10, 0, ARRAY[now()], ARRAY[10::oid], ARRAY[1::bigint], ARRAY[false], ARRAY['f'], ARRAY['s'], 'zcdp', ARRAY['pure'], ARRAY[0::bigint], ARRAY[1::bigint])$$),
    ($$SELECT contcount_internal.store_import(1, 'x', now(), 10, 0, '{}', '{}', '{}', '{}', '{}', '{}', 'renyi', '{}', '{}', '{}')$$)
) AS cases(s);
SELECT contcount_internal.store_accounting(1) AS unknown,
       (SELECT contcount_internal.store_accounting(id) FROM contcount.ledger WHERE name = 'zcdp_team') AS zcdp_team;

-- Dropping a zCDP ledger: refused from then on, its audit kept.
SELECT contcount.drop_ledger('zcdp_hand');
SELECT test.error_of($$SELECT contcount.noisy_count(0.1, 'zcdp_hand') FROM test.zcdp_events$$);
SELECT count(*) AS audited FROM contcount.charges WHERE ledger = 'zcdp_hand';

DROP OWNED BY regress_zcdp_analyst, regress_zcdp_admin;
DROP ROLE regress_zcdp_analyst, regress_zcdp_admin;
