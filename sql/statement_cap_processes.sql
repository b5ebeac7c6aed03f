-- The per-statement cap holds every process that runs a role's SQL, not
-- only a regular backend: a forced parallel plan runs a release in a
-- parallel worker, whose count of the statement's spending would be its
-- own, so a capped release is refused there (0A000) before it pays; and a
-- walsender of a replication connection to a database runs SQL like a
-- backend, held to the cap like one.  Only contcount's step worker is
-- exempt (test/t/009_counter_copy.pl).  Run by roles that are not
-- superusers.

CREATE ROLE regress_capp_par LOGIN;
CREATE ROLE regress_capp_rep LOGIN REPLICATION;
GRANT USAGE ON SCHEMA test TO regress_capp_par, regress_capp_rep;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_capp_par, regress_capp_rep;
SELECT contcount.create_ledger('capp_team', 100);
SELECT contcount.grant_ledger('capp_team', 'regress_capp_par');
SELECT contcount.grant_ledger('capp_team', 'regress_capp_rep');
ALTER ROLE regress_capp_par SET contcount.max_epsilon_per_statement = 1;
ALTER ROLE regress_capp_rep SET contcount.max_epsilon_per_statement = 1;

-- a forced parallel plan runs the whole GROUP BY, releases and all, in one
-- parallel worker: refused there, before the first group pays
\c - regress_capp_par
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET force_parallel_mode = on;
EXPLAIN (COSTS OFF)
SELECT g, contcount.noisy_count(0.25, 'capp_team') IS NOT NULL AS released
FROM generate_series(1, 10) g GROUP BY g;
SELECT test.error_of($$SELECT g, contcount.noisy_count(0.25, 'capp_team') IS NOT NULL AS released
    FROM generate_series(1, 10) g GROUP BY g$$);
SELECT spent FROM contcount.ledgers WHERE name = 'capp_team';
-- without the forced plan the leader runs it, held to the cap: four pay
RESET force_parallel_mode;
SELECT test.error_of($$SELECT g, contcount.noisy_count(0.25, 'capp_team') IS NOT NULL AS released
    FROM generate_series(1, 10) g GROUP BY g$$);
SELECT spent FROM contcount.ledgers WHERE name = 'capp_team';

-- a walsender running SQL for a replication connection: the fifth group is
-- refused, as in a backend
\c -reuse-previous=on "user=regress_capp_rep replication=database"
SELECT backend_type FROM pg_stat_activity WHERE pid = pg_backend_pid();
SELECT test.error_of($$SELECT g, contcount.noisy_count(0.25, 'capp_team') IS NOT NULL AS released
    FROM generate_series(1, 10) g GROUP BY g$$);
SELECT spent FROM contcount.ledgers WHERE name = 'capp_team';

\c -reuse-previous=on "user=postgres replication=false"
SELECT count(*) AS charges, sum(epsilon) AS charged FROM contcount.charges
WHERE ledger = 'capp_team';
SELECT contcount.drop_ledger('capp_team');
DROP OWNED BY regress_capp_par, regress_capp_rep;
DROP ROLE regress_capp_par, regress_capp_rep;
