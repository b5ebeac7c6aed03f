-- Attacks on the releases by an untrusted analyst (issue 9, items 2 to 5):
-- each one fails, and the ledger is charged exactly the epsilon that
-- calibrated every value shown.  Run as a non-superuser unless said.

CREATE ROLE regress_mallory;
CREATE SCHEMA mallory AUTHORIZATION regress_mallory;
SELECT contcount.create_ledger('mallory', 10000);
SELECT contcount.grant_ledger('mallory', 'regress_mallory');
-- as ALTER ROLE ... SET would at login: the DBA decides what it spends
SET contcount.ledger = 'mallory';
GRANT USAGE ON SCHEMA test TO regress_mallory;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_mallory;

-- What the ledger has spent, as a superuser sees it.
CREATE FUNCTION test.mallory_spent() RETURNS numeric
LANGUAGE sql AS $$ SELECT spent FROM contcount.ledgers WHERE name = 'mallory' $$;

SET SESSION AUTHORIZATION regress_mallory;
CREATE TABLE mallory.events AS
SELECT i AS id, i % 2 + 1 AS p, i % 3 AS a, i % 2 AS b, 1::bigint AS n
FROM generate_series(1, 100) i;

-- 2. contcount's support functions in someone else's aggregate.  They are
-- not PUBLIC, nor is their schema: an aggregate built on them cannot even
-- be created.
CREATE FUNCTION mallory.add_1000(bigint, float8) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT $1 + 1000 $$;
CREATE FUNCTION mallory.add_1(bigint, float8, bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT $1 + 1 $$;
SELECT test.error_of($$CREATE AGGREGATE mallory.thousand(float8)
    (SFUNC = mallory.add_1000, STYPE = bigint, INITCOND = '0',
     FINALFUNC = contcount_internal.noisy_count_final)$$);
SELECT test.error_of($$CREATE AGGREGATE mallory.crash(float8, bigint)
    (SFUNC = mallory.add_1, STYPE = bigint, INITCOND = '0',
     FINALFUNC = contcount_internal.noisy_count_final)$$);
SELECT test.error_of($$CREATE AGGREGATE mallory.steps(float8, text)
    (SFUNC = contcount_internal.noisy_count_step, STYPE = bigint, INITCOND = '0')$$);
SELECT test.error_of($$SELECT contcount_internal.noisy_count_final(1000)$$);
RESET SESSION AUTHORIZATION;

-- A superuser is trusted, yet the functions themselves refuse to run
-- outside contcount's aggregates, whatever the state they would be fed.
CREATE AGGREGATE test.thousand(float8)
    (SFUNC = mallory.add_1000, STYPE = bigint, INITCOND = '0',
     FINALFUNC = contcount_internal.noisy_count_final);
-- the final function of noisy_count(epsilon, ledger) would read this
-- bigint as its ledger's name
CREATE AGGREGATE test.crash(float8, bigint)
    (SFUNC = mallory.add_1, STYPE = bigint, INITCOND = '0',
     FINALFUNC = contcount_internal.noisy_count_final);
CREATE AGGREGATE test.steps(bigint, float8, bigint)
    (SFUNC = contcount_internal.running_count_step, STYPE = internal,
     FINALFUNC = contcount_internal.running_count_final);
CREATE AGGREGATE test.ledger_steps(float8, text)
    (SFUNC = contcount_internal.noisy_count_step, STYPE = bigint, INITCOND = '0');
SELECT test.mallory_spent() AS before \gset
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT test.thousand(1) FROM mallory.events$$),
    ($$SELECT test.crash(1, 5::bigint) FROM mallory.events$$),
    ($$SELECT test.steps(n, 1, 100) FROM mallory.events$$),
    ($$SELECT test.steps(n, 1, 100) OVER (ORDER BY id) FROM mallory.events$$),
    ($$SELECT test.ledger_steps(1, 'x') FROM mallory.events$$)
) AS cases(s);
SELECT test.mallory_spent() = :before AS nothing_charged;
DROP AGGREGATE test.thousand(float8), test.crash(float8, bigint),
    test.steps(bigint, float8, bigint), test.ledger_steps(float8, text);

-- 3. Parameters that change between rows, partitions or groups: refused
-- before anything is released or charged.
SET SESSION AUTHORIZATION regress_mallory;
CREATE FUNCTION mallory.moving() RETURNS float8
LANGUAGE plpgsql STABLE AS $$
BEGIN
    -- STABLE in name only: a different epsilon at every call
    PERFORM nextval('mallory.seq');
    RETURN CASE WHEN currval('mallory.seq') = 1 THEN 0.000001 ELSE 1000 END;
END $$;
CREATE SEQUENCE mallory.seq;
SET enable_sort = off;
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.running_count(n, contcount.mechanism('binary', CASE WHEN p = 1 THEN 0.000001 ELSE 1000 END, 64))
           OVER (PARTITION BY p ORDER BY id ROWS UNBOUNDED PRECEDING) FROM mallory.events$$),
    ($$SELECT contcount.running_count(n, CASE WHEN p = 1 THEN 0.000001 ELSE 1000 END, 64)
           OVER (PARTITION BY p ORDER BY id ROWS UNBOUNDED PRECEDING) FROM mallory.events$$),
    ($$SELECT p, contcount.running_count(n, CASE WHEN p = 1 THEN 0.000001 ELSE 1000 END, 64)
           FROM mallory.events GROUP BY p$$),
    ($$SELECT contcount.running_count(n, mallory.moving(), 64)
           OVER (PARTITION BY p ORDER BY id ROWS UNBOUNDED PRECEDING) FROM mallory.events$$),
    ($$SELECT contcount.running_count(n, contcount.mechanism('binary', 1, (SELECT 64)))
           OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) FROM mallory.events$$),
    ($$SELECT p, contcount.noisy_count(mallory.moving()) FROM mallory.events GROUP BY p$$),
    ($$SELECT p, contcount.noisy_count(CASE WHEN p = 1 THEN 0.000001 ELSE 1000 END) FROM mallory.events GROUP BY p$$),
    ($$SELECT p, contcount.noisy_count(1, CASE WHEN p = 1 THEN 'mallory' ELSE 'tests' END) FROM mallory.events GROUP BY p$$),
    ($$SELECT contcount.noisy_count(pg_catalog.random() + 1) FROM mallory.events$$)
) AS cases(s);
RESET enable_sort;
RESET SESSION AUTHORIZATION;
SELECT test.mallory_spent() = :before AS nothing_charged;
SET SESSION AUTHORIZATION regress_mallory;
-- constants, query parameters and immutable functions of them are one value
PREPARE grouped(float8) AS
    SELECT p, contcount.noisy_count($1 * 2) IS NOT NULL AS released FROM mallory.events GROUP BY p ORDER BY p;
EXECUTE grouped(0.25);
RESET SESSION AUTHORIZATION;
SELECT test.mallory_spent() - :before AS spent;

-- 4. Charging follows the releases, not the plan: every group, partition
-- and grouping set a call site releases pays for itself, whatever the plan.
SELECT test.mallory_spent() AS before \gset
SET SESSION AUTHORIZATION regress_mallory;
-- one count released 1000 times: 1000 charges, not one
SELECT count(n) FROM (SELECT g, contcount.noisy_count(0.01) AS n
                      FROM mallory.events CROSS JOIN generate_series(1, 1000) g GROUP BY g) s;
RESET SESSION AUTHORIZATION;
SELECT test.mallory_spent() - :before AS spent_hashed;
SELECT test.mallory_spent() AS before \gset
SET SESSION AUTHORIZATION regress_mallory;
SET enable_hashagg = off;
SELECT count(n) FROM (SELECT g, contcount.noisy_count(0.01) AS n
                      FROM mallory.events CROSS JOIN generate_series(1, 1000) g GROUP BY g) s;
RESET enable_hashagg;
RESET SESSION AUTHORIZATION;
SELECT test.mallory_spent() - :before AS spent_sorted;
-- ... in few fsyncs: batches of 1, 2, 4, ... and the unused rest refunded
SELECT count(*) AS charges, sum(epsilon) AS net, min(epsilon) AS refund
FROM contcount.charges WHERE ledger = 'mallory' AND statement LIKE '%generate_series(1, 1000) g GROUP BY g%'
  AND at > now() - interval '1 hour';
-- window partitions: 50 streams, 50 charges
SELECT test.mallory_spent() AS before \gset
SET SESSION AUTHORIZATION regress_mallory;
SELECT count(r) FROM (
    SELECT contcount.running_count(n, 0.03125, 100) OVER (PARTITION BY g ORDER BY id ROWS UNBOUNDED PRECEDING) AS r
    FROM mallory.events CROSS JOIN generate_series(1, 50) g) s;
RESET SESSION AUTHORIZATION;
SELECT test.mallory_spent() - :before AS spent_partitions;
-- grouping sets and CUBE, hashed and sorted: (a, b) 6 groups, (a) 3, (b) 2,
-- () 1: 12 releases
SELECT test.mallory_spent() AS before \gset
SET SESSION AUTHORIZATION regress_mallory;
SELECT count(n) FROM (SELECT a, b, contcount.noisy_count(0.0625) AS n FROM mallory.events GROUP BY CUBE (a, b)) s;
RESET SESSION AUTHORIZATION;
SELECT test.mallory_spent() - :before AS spent_cube_hashed;
SELECT test.mallory_spent() AS before \gset
SET SESSION AUTHORIZATION regress_mallory;
SET enable_hashagg = off;
SELECT count(n) FROM (SELECT a, b, contcount.noisy_count(0.0625) AS n FROM mallory.events GROUP BY CUBE (a, b)) s;
SELECT count(r) FROM (SELECT a, b, contcount.running_count(n, 0.0625, 100 ORDER BY id) AS r
                      FROM mallory.events GROUP BY GROUPING SETS ((a), (b))) s;
RESET enable_hashagg;
RESET SESSION AUTHORIZATION;
SELECT test.mallory_spent() - :before AS spent_cube_sorted_and_sets;
-- a parallel plan: the groups are finalized in the leader, each paid for
SELECT test.mallory_spent() AS before \gset
SET SESSION AUTHORIZATION regress_mallory;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT count(n) FROM (SELECT a, contcount.noisy_count(0.125) AS n FROM mallory.events GROUP BY a) s;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET SESSION AUTHORIZATION;
SELECT test.mallory_spent() - :before AS spent_parallel;
-- values never computed are never charged: a cursor that fetches 4 of 1000
-- groups pays for 4 (7 were paid in advance, 3 come back when it closes)
SELECT test.mallory_spent() AS before \gset
SET SESSION AUTHORIZATION regress_mallory;
SET enable_hashagg = off;
BEGIN;
DECLARE c CURSOR FOR
    SELECT g, contcount.noisy_count(0.5) IS NOT NULL AS released
    FROM generate_series(1, 1000) g GROUP BY g ORDER BY g;
FETCH 4 FROM c;
CLOSE c;
COMMIT;
RESET enable_hashagg;
RESET SESSION AUTHORIZATION;
SELECT test.mallory_spent() - :before AS spent_cursor;

-- 5. Changes bind from their commit: a budget raised in the caller's own
-- open transaction does not let it spend more; a cut binds at once.
SELECT contcount.create_ledger('mallory_team', 1);
SELECT contcount.grant_ledger('mallory_team', 'regress_mallory', admin => true);
SET SESSION AUTHORIZATION regress_mallory;
BEGIN;
SELECT contcount.alter_ledger('mallory_team', 100);
SELECT test.error_of($$SELECT contcount.noisy_count(2, 'mallory_team') FROM mallory.events$$);
COMMIT;
SELECT contcount.noisy_count(2, 'mallory_team') IS NOT NULL AS released FROM mallory.events;
BEGIN;
SELECT contcount.alter_ledger('mallory_team', 2);
SELECT test.error_of($$SELECT contcount.noisy_count(1, 'mallory_team') FROM mallory.events$$);
ROLLBACK;
-- the audit has every budget change: who, when, old and new
SELECT role, ledger, action, old_budget, new_budget FROM contcount.budget_changes ORDER BY at;
RESET SESSION AUTHORIZATION;
SELECT name, budget, spent, remaining FROM contcount.ledgers WHERE name = 'mallory_team';
