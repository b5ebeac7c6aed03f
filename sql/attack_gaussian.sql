-- Attacks on Gaussian releases by an untrusted analyst (issue 13, item 3):
-- a Gaussian release paid as if it were pure, composites forged to pair a
-- zCDP mechanism with an epsilon or a pure one with a rho, a rho that
-- changes between partitions, and a refused release that would still spend
-- one of a source's two ledgers.  Each fails, and every ledger is charged
-- exactly the rho or epsilon that calibrated the values shown.  Run as a
-- role that is not a superuser unless said.

CREATE ROLE regress_gmallory;
CREATE SCHEMA gmallory AUTHORIZATION regress_gmallory;
-- the DBA gives the analyst a pure quota as its contcount.ledger, and a
-- zCDP one it may name
SELECT contcount.create_ledger('gmallory_pure', 100);
SELECT contcount.create_ledger('gmallory_zcdp', rho => 1, delta => 0.000001);
SELECT contcount.grant_ledger('gmallory_pure', 'regress_gmallory');
SELECT contcount.grant_ledger('gmallory_zcdp', 'regress_gmallory');
SET contcount.ledger = 'gmallory_pure';
GRANT USAGE ON SCHEMA test TO regress_gmallory;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_gmallory;

-- What each ledger has spent, as a superuser sees it.
CREATE FUNCTION test.gmallory_spent() RETURNS TABLE (ledger text, spent numeric)
LANGUAGE sql AS $$
    SELECT name, spent FROM contcount.ledgers WHERE name LIKE 'gmallory%' ORDER BY name
$$;
SELECT * FROM test.gmallory_spent();

SET SESSION AUTHORIZATION regress_gmallory;
CREATE TABLE gmallory.events AS
SELECT i AS id, i % 2 + 1 AS p, 1::bigint AS n FROM generate_series(1, 64) i;
CREATE SEQUENCE gmallory.seq;
CREATE FUNCTION gmallory.moving() RETURNS float8
LANGUAGE plpgsql STABLE AS $$
BEGIN
    -- STABLE in name only: a different rho at every call
    RETURN CASE WHEN nextval('gmallory.seq') = 1 THEN 0.000001 ELSE 1000 END;
END $$;

-- 1. A Gaussian release paid as pure: its ledger (here the one
-- contcount.ledger chooses) accounts in epsilon, which no Gaussian release
-- satisfies.  Refused (ZB003) at every entry point, with nothing charged.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.running_count(n, contcount.mechanism('blt', rho => 0.000001, horizon => 64))
           OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) FROM gmallory.events$$),
    ($$SELECT contcount.running_count(n, contcount.mechanism('gaussian_honaker', rho => 0.000001, horizon => 64))
           FROM gmallory.events$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1, 2, 3], mechanism => 'auto', rho => 0.000001)$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1, 2, 3], mechanism => 'blt', rho => 0.000001,
                                              ledger => 'gmallory_pure')$$),
    ($$SELECT contcount.create_counter('gmallory_c', mechanism => 'blt', rho => 0.000001, horizon => 10)$$)
) AS cases(s);

-- 2. Forged composites: a zCDP mechanism with an epsilon (it would be
-- charged that epsilon, or as a pure release costs a zCDP ledger, for
-- Gaussian noise), with both, a pure mechanism with a rho (charged a rho
-- where its Laplace noise needs an epsilon), auto with both, or neither.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.running_count(n, ROW('blt', 0.000001, 64, NULL, 1, 0.05, NULL, NULL, NULL)::contcount.mechanism)
           OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) FROM gmallory.events$$),
    ($$SELECT contcount.running_count(n, ROW('blt', 0.000001, 64, NULL, 1, 0.05, 'gmallory_zcdp', NULL, NULL)::contcount.mechanism)
           OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) FROM gmallory.events$$),
    ($$SELECT contcount.running_count(n, ROW('gaussian_honaker', 0.000001, 64, NULL, 1, 0.05, 'gmallory_zcdp', 0.5, NULL)::contcount.mechanism)
           OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) FROM gmallory.events$$),
    ($$SELECT contcount.running_count(n, ROW('binary', NULL, 64, NULL, 1, 0.05, 'gmallory_zcdp', 0.000001, NULL)::contcount.mechanism)
           OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) FROM gmallory.events$$),
    ($$SELECT contcount.running_count(n, ROW('auto', 1, 64, NULL, 1, 0.05, 'gmallory_zcdp', 0.5, NULL)::contcount.mechanism)
           OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) FROM gmallory.events$$),
    ($$SELECT contcount.running_count(n, ROW('blt', NULL, 64, NULL, 1, 0.05, 'gmallory_zcdp', NULL, NULL)::contcount.mechanism)
           OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) FROM gmallory.events$$)
) AS cases(s);

-- 3. A rho that differs between partitions or groups, or between calls of
-- a function that is not what it says: refused before anything is drawn
-- or charged.  Overspending in rho is refused too.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.running_count(n, contcount.mechanism('blt', rho => CASE WHEN p = 1 THEN 0.000001 ELSE 1000 END,
                                                            horizon => 64, ledger => 'gmallory_zcdp'))
           OVER (PARTITION BY p ORDER BY id ROWS UNBOUNDED PRECEDING) FROM gmallory.events$$),
    ($$SELECT p, contcount.running_count(n, contcount.mechanism('blt', rho => CASE WHEN p = 1 THEN 0.000001 ELSE 1000 END,
                                                               horizon => 64, ledger => 'gmallory_zcdp'))
           FROM gmallory.events GROUP BY p$$),
    ($$SELECT contcount.running_count(n, contcount.mechanism('gaussian_honaker', rho => gmallory.moving(),
                                                            horizon => 64, ledger => 'gmallory_zcdp'))
           OVER (PARTITION BY p ORDER BY id ROWS UNBOUNDED PRECEDING) FROM gmallory.events$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1], mechanism => 'blt', rho => 2, ledger => 'gmallory_zcdp')$$)
) AS cases(s);

-- 4. The raw state of a counter with Gaussian noise (its exact count and
-- noise) is not the analyst's to read, nor its row to change (its rho, and
-- the recorded place that decides whether a copy pays again), even for the
-- counter's owner.
SELECT contcount.create_counter('gmallory_c', mechanism => 'blt', rho => 0.25, horizon => 10,
                                step => '1 day', ledger => 'gmallory_zcdp');
SELECT name, mechanism, epsilon, accounting, rho FROM contcount.counters;
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT * FROM contcount.counter_internals('gmallory_c')$$),
    ($$UPDATE contcount.counter SET place_database = 0, rho = 0.000001$$)
) AS cases(s);
RESET SESSION AUTHORIZATION;
SELECT * FROM test.gmallory_spent();

-- 5. A protected source whose data budget is pure, released from with a
-- zCDP team quota: the release is refused before the quota pays (the quota
-- is charged first when both can pay), so a refused release costs nothing.
CREATE TABLE test.gmallory_visits (user_id int, at timestamptz);
INSERT INTO test.gmallory_visits
SELECT u % 5, '2026-01-01'::timestamptz + u * interval '1 hour' FROM generate_series(1, 50) u;
SELECT contcount.create_ledger('gmallory_data', 10);
SELECT contcount.protect_table('gmallory_visits', 'test.gmallory_visits', 'user_id', 'at', 'gmallory_data');
SELECT contcount.grant_source('gmallory_visits', 'regress_gmallory');
SET SESSION AUTHORIZATION regress_gmallory;
SELECT test.error_of($$SELECT count(*) FROM contcount.source_running_counts('gmallory_visits', NULL, '1 hour',
    '2026-01-01', 10, mechanism => 'blt', rho => 0.125, ledger => 'gmallory_zcdp')$$);
-- a pure release from it pays the pure quota and the data epsilon
SELECT count(*) FROM contcount.source_running_counts('gmallory_visits', 0.5, '1 hour', '2026-01-01', 10);
RESET SESSION AUTHORIZATION;

-- Charged exactly what was released: the counter's rho 1/4 to the zCDP
-- quota, the pure release's epsilon 1/2 to the pure quota and the data.
SELECT * FROM test.gmallory_spent();
SELECT role, ledger, epsilon, function, accounting, release_epsilon, release_rho
FROM contcount.charges WHERE ledger LIKE 'gmallory%' ORDER BY at, ledger;

SELECT contcount.drop_counter('gmallory_c');
SELECT contcount.drop_source('gmallory_visits');
RESET contcount.ledger;
DROP OWNED BY regress_gmallory;
DROP ROLE regress_gmallory;
