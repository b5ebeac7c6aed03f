-- Privacy budget ledgers: management, charging, refusal, roles, audit.

CREATE TABLE test.visits AS SELECT i AS id FROM generate_series(1, 1000) i;

-- What a ledger has spent, as a superuser sees it.
CREATE FUNCTION test.spent(ledger text) RETURNS numeric
LANGUAGE sql AS $$ SELECT spent FROM contcount.ledgers WHERE name = ledger $$;

-- Creating: budgets are exact multiples of 1e-9 epsilon.
SELECT contcount.create_ledger('clinic', 2);
SELECT contcount.create_ledger('marketing', 1.5);
SELECT name, budget, spent, remaining FROM contcount.ledgers WHERE name <> 'tests' ORDER BY name;
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.create_ledger('clinic', 1)$$),
    ($$SELECT contcount.create_ledger(NULL, 1)$$),
    ($$SELECT contcount.create_ledger('', 1)$$),
    ($$SELECT contcount.create_ledger('x', NULL)$$),
    ($$SELECT contcount.create_ledger('x', -1)$$),
    ($$SELECT contcount.create_ledger('x', 'NaN')$$),
    ($$SELECT contcount.create_ledger('x', 'Infinity')$$),
    ($$SELECT contcount.create_ledger('x', 0.0000000001)$$),
    ($$SELECT contcount.create_ledger('x', 10000000000)$$),
    ($$SELECT contcount.create_ledger(repeat('x', 1024), 1)$$),
    ($$SELECT contcount.alter_ledger('nope', 1)$$),
    ($$SELECT contcount.drop_ledger('nope')$$)
) AS cases(s);

-- Every release charges its epsilon once, before its first value.
SET contcount.ledger = 'clinic';
SELECT count(*) FROM contcount.running_counts(ARRAY[1, 2, 3], 0.25, mechanism => 'binary');
SELECT test.spent('clinic');
-- one window call site, three partitions: three releases, each charged
-- (SQL cannot tell contcount that partitions are disjoint)
SELECT count(r) FROM (
    SELECT contcount.running_count(1, 0.125, 400) OVER (PARTITION BY id % 3 ORDER BY id ROWS UNBOUNDED PRECEDING) AS r
    FROM test.visits) s;
SELECT test.spent('clinic');
-- two call sites: charged twice
SELECT count(a), count(b) FROM (
    SELECT contcount.running_count(1, 0.0625, 1000) OVER w AS a, contcount.running_count(2, 0.0625, 1000) OVER w AS b
    FROM test.visits WINDOW w AS (ORDER BY id ROWS UNBOUNDED PRECEDING)) s;
SELECT test.spent('clinic');
-- GROUP BY: ten groups, ten releases, each charged
SELECT count(n) FROM (SELECT contcount.noisy_count(0.01) AS n FROM test.visits GROUP BY id % 10) s;
SELECT test.spent('clinic');
-- a value nobody reads is not released, and not charged
SELECT count(*) FROM (SELECT contcount.noisy_count(0.5) AS n FROM test.visits GROUP BY id % 10) s;
SELECT test.spent('clinic');
-- a call site that runs again for every outer row pays every time
SELECT count(n) FROM generate_series(1, 4) g,
    LATERAL (SELECT contcount.noisy_count(0.001) AS n FROM test.visits WHERE id > g) s;
SELECT test.spent('clinic');
SELECT count(r) FROM generate_series(1, 3) g,
    LATERAL (SELECT contcount.running_count(1, 0.001, 1000) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) AS r
             FROM test.visits WHERE id > g) s;
SELECT test.spent('clinic');
-- run whole inside a parallel worker, the release charges from there, once
SET force_parallel_mode = on;
SELECT contcount.noisy_count(0.002) IS NOT NULL AS released FROM test.visits;
RESET force_parallel_mode;
SELECT test.spent('clinic');
-- bad input releases nothing and costs nothing
SELECT test.error_of($$SELECT * FROM contcount.running_counts(ARRAY[1, 2, -1], 0.25, mechanism => 'binary')$$);
SELECT test.error_of($$SELECT * FROM contcount.running_counts(ARRAY[1, 2, 3], 0.25, horizon => 2, mechanism => 'binary')$$);
SELECT test.spent('clinic');
-- the ledger named in the mechanism pays instead
SELECT count(r) FROM (
    SELECT contcount.running_count(1, contcount.mechanism('hybrid', 0.5, ledger => 'marketing'))
        OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) AS r FROM test.visits) s;
SELECT count(*) FROM contcount.running_counts(ARRAY[1], 0.25, ledger => 'marketing', mechanism => 'binary');
SELECT contcount.noisy_count(0.25, 'marketing') IS NOT NULL FROM test.visits;
SELECT name, spent, remaining FROM contcount.ledgers WHERE name <> 'tests' ORDER BY name;

-- Nothing takes a charge back.
SELECT test.spent('clinic') AS before \gset
BEGIN;
SELECT contcount.noisy_count(0.01) IS NOT NULL FROM test.visits;
ROLLBACK;
BEGIN;
SAVEPOINT s;
SELECT contcount.noisy_count(0.01) IS NOT NULL FROM test.visits;
ROLLBACK TO SAVEPOINT s;
COMMIT;
DO $$ BEGIN
    PERFORM contcount.noisy_count(0.01) FROM test.visits;
    RAISE EXCEPTION 'an error after the release';
END $$;
SET statement_timeout = '500ms';
SELECT n, pg_sleep(5) FROM (SELECT contcount.noisy_count(0.01) AS n FROM test.visits) s;
RESET statement_timeout;
-- A prepared transaction rolled back, where the server allows them (a stock
-- cluster does not: max_prepared_transactions is 0); a plain rollback there.
SELECT current_setting('max_prepared_transactions')::int > 0 AS two_phase \gset
BEGIN;
SELECT contcount.noisy_count(0.01) IS NOT NULL FROM test.visits;
\if :two_phase
PREPARE TRANSACTION 'contcount_test';
ROLLBACK PREPARED 'contcount_test';
\else
ROLLBACK;
\endif
SELECT test.spent('clinic') - :before AS spent_by_the_five;

-- Refusal: its own SQLSTATE, the ledger, requested and remaining epsilon,
-- and nothing released or charged.
SELECT contcount.alter_ledger('clinic', test.spent('clinic') + 0.5);
SELECT contcount.noisy_count(0.75) FROM test.visits;
SELECT test.error_of($$SELECT * FROM contcount.running_counts(ARRAY[1], 0.75, mechanism => 'binary')$$);
SELECT name, remaining FROM contcount.ledgers WHERE name = 'clinic';
SELECT contcount.noisy_count(0.5) IS NOT NULL AS released FROM test.visits;
SELECT name, remaining FROM contcount.ledgers WHERE name = 'clinic';
SELECT test.error_of($$SELECT * FROM contcount.running_counts(ARRAY[1], 0.000001, mechanism => 'binary')$$);
-- a higher budget lets it through; a budget lowered below what was spent
-- leaves nothing
SELECT contcount.alter_ledger('clinic', 3);
SELECT contcount.noisy_count(0.75) IS NOT NULL AS released FROM test.visits;
SELECT contcount.alter_ledger('clinic', 0.5);
SELECT name, budget, remaining FROM contcount.ledgers WHERE name = 'clinic';

-- Which ledger pays.
SET contcount.ledger = '';
SELECT contcount.noisy_count(1) FROM test.visits;
SET contcount.ledger = 'nope';
SELECT contcount.noisy_count(1) FROM test.visits;
RESET contcount.ledger;

-- Roles.  An analyst spends the ledger a superuser set for the role, and
-- cannot choose another; ledger admins manage theirs.
CREATE ROLE regress_analyst LOGIN;
CREATE ROLE regress_lead LOGIN;
GRANT USAGE ON SCHEMA test TO regress_analyst, regress_lead;
GRANT SELECT ON test.visits TO regress_analyst, regress_lead;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_analyst, regress_lead;
ALTER ROLE regress_analyst SET contcount.ledger = 'marketing';
SELECT contcount.grant_ledger('marketing', 'regress_lead', admin => true);

\c - regress_analyst
SHOW contcount.ledger;
SELECT contcount.noisy_count(0.125) IS NOT NULL AS released FROM test.visits;
SELECT name, spent, remaining FROM contcount.ledgers;
SELECT count(*) AS visible_charges FROM contcount.charges;
SELECT s, test.error_of(s) FROM (VALUES
    ($$SET contcount.ledger = 'clinic'$$),
    ($$SELECT contcount.noisy_count(0.125, 'clinic') FROM test.visits$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1], 0.125, ledger => 'clinic', mechanism => 'binary')$$),
    ($$SELECT contcount.alter_ledger('marketing', 100)$$),
    ($$SELECT contcount.create_ledger('mine', 100)$$),
    ($$SELECT contcount.grant_ledger('marketing', 'regress_analyst', true)$$),
    ($$SELECT * FROM contcount.ledger$$),
    ($$SELECT contcount.ledger_granted(1, 1, false)$$)
) AS cases(s);

\c - regress_lead
-- an admin of marketing sees its audit, and can grant it
SELECT role, ledger, epsilon, function FROM contcount.charges ORDER BY at;
SELECT contcount.grant_ledger('clinic', 'regress_lead');
SELECT contcount.alter_ledger('marketing', 2);
SELECT contcount.grant_ledger('marketing', 'regress_analyst');

\c - regress_analyst
-- granted, the analyst may name it; the setting still applies by default
SELECT contcount.noisy_count(0.125, 'marketing') IS NOT NULL AS released FROM test.visits;
SELECT name, budget, spent FROM contcount.ledgers;

\c - postgres
-- the audit: who spent what, on what
SELECT role, ledger, epsilon, function, left(statement, 40) AS statement
FROM contcount.charges WHERE ledger <> 'tests' ORDER BY at;

-- Dropping: releases refused, the audit keeps the name, the name is free again.
SELECT contcount.drop_ledger('marketing');
\c - regress_analyst
SELECT test.error_of($$SELECT contcount.noisy_count(0.125) FROM test.visits$$);
\c - postgres
SELECT count(*) AS marketing_charges FROM contcount.charges WHERE ledger = 'marketing';
SELECT contcount.create_ledger('marketing', 1);
SELECT name, spent FROM contcount.ledgers WHERE name = 'marketing';

-- Ledgers are transactional; their charges are not.
BEGIN;
SELECT contcount.create_ledger('ephemeral', 1);
ROLLBACK;
SELECT count(*) FROM contcount.ledgers WHERE name = 'ephemeral';

-- Export and import (for pg_dump and pg_upgrade): superusers only.  Here
-- every ledger is known to the store: its own export changes nothing, nor
-- does an older one, its audit shorter (nothing is lowered).  A document
-- that is not an export is refused.
SELECT pg_catalog.jsonb_typeof(contcount.export_ledgers() -> 'ledgers') AS ledgers,
       pg_catalog.jsonb_array_length(contcount.export_ledgers() -> 'ledgers') =
       (SELECT count(*) FROM contcount.ledger) AS every_ledger;
CREATE TEMP TABLE before_import AS SELECT name, spent FROM contcount.ledgers;
SELECT ledger, spent, action FROM contcount.import_ledgers(contcount.export_ledgers())
WHERE ledger IN ('clinic', 'marketing') ORDER BY ledger;
SELECT ledger, spent, action FROM contcount.import_ledgers(
    jsonb_set(contcount.export_ledgers(), '{ledgers}',
              (SELECT jsonb_agg(jsonb_set(jsonb_set(e, '{spent_units}', '0'), '{charges}', '[]'))
               FROM jsonb_array_elements(contcount.export_ledgers() -> 'ledgers') e)))
WHERE ledger IN ('clinic', 'marketing') ORDER BY ledger;
SELECT count(*) AS changed FROM (SELECT name, spent FROM contcount.ledgers
                                 EXCEPT SELECT * FROM before_import) c;
SELECT contcount.accept_ledger_store();
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.import_ledgers('{"format": "something else", "version": 1}')$$),
    ($$SELECT contcount.import_ledgers('{"format": "contcount ledgers", "version": 3}')$$),
    ($$SELECT contcount.import_ledgers('[]')$$),
    ($$SELECT contcount_internal.store_import(1, 'x', now(), 10, 0, ARRAY[now()], ARRAY[10::oid], ARRAY[1::bigint], ARRAY[true], ARRAY['f'], ARRAY['s'], 'pure', ARRAY['pure'], ARRAY[1::bigint], ARRAY[1::bigint])$$),
    ($$SELECT contcount_internal.store_import(1, 'x', now(), 10, 0, ARRAY[now()], ARRAY[]::oid[], ARRAY[]::bigint[], ARRAY[]::boolean[], ARRAY[]::text[], ARRAY[]::text[], 'pure', ARRAY[]::text[], ARRAY[]::bigint[], ARRAY[]::bigint[])$$),
    ($$SELECT contcount_internal.store_import(1, repeat('x', 1024), now(), 10, 0, '{}', '{}', '{}', '{}', '{}', '{}', 'pure', '{}', '{}', '{}')$$)
) AS cases(s);
\c - regress_lead
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.export_ledgers()$$),
    ($$SELECT contcount.import_ledgers('{}')$$),
    ($$SELECT contcount.accept_ledger_store()$$),
    ($$SELECT contcount_internal.store_spent(1)$$),
    ($$SELECT * FROM contcount_internal.store_charges()$$)
) AS cases(s);
\c - postgres

DROP OWNED BY regress_analyst, regress_lead;
DROP ROLE regress_analyst, regress_lead;
