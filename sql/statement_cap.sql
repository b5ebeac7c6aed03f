-- A per-statement cap: contcount.max_epsilon_per_statement and
-- contcount.max_rho_per_statement, set by a superuser per role, refuse a
-- statement's release once its releases would cost more than the cap in
-- all (54000), before it pays or computes anything; what was charged
-- before stays charged.  Run by a role that is not a superuser.

CREATE ROLE regress_cap_a LOGIN;
GRANT USAGE ON SCHEMA test TO regress_cap_a;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_cap_a;
SELECT contcount.create_ledger('cap_team', 100);
SELECT contcount.grant_ledger('cap_team', 'regress_cap_a');
SELECT contcount.create_ledger('cap_rho', 100, 1e-6);
SELECT contcount.grant_ledger('cap_rho', 'regress_cap_a');
ALTER ROLE regress_cap_a SET contcount.max_epsilon_per_statement = 1;
ALTER ROLE regress_cap_a SET contcount.max_rho_per_statement = 0.1;

\c - regress_cap_a
SHOW contcount.max_epsilon_per_statement;
-- the role cannot lift its own cap
SELECT test.error_of($$SET contcount.max_epsilon_per_statement = 0$$);

-- a GROUP BY whose groups each pay 0.25: the fifth group is refused, the
-- four before it stay charged, and nothing was paid in advance beyond them
SELECT g, contcount.noisy_count(0.25, 'cap_team') IS NOT NULL AS released
FROM generate_series(1, 10) g GROUP BY g;
SELECT spent FROM contcount.ledgers WHERE name = 'cap_team';
SELECT count(*) AS charges, sum(epsilon) AS charged FROM contcount.charges
WHERE ledger = 'cap_team';

-- under the cap, a statement passes, and the next statement starts afresh
SELECT count(n) FROM (SELECT contcount.noisy_count(0.25, 'cap_team') AS n
    FROM generate_series(1, 4) g GROUP BY g) s;
SELECT count(n) FROM (SELECT contcount.noisy_count(0.25, 'cap_team') AS n
    FROM generate_series(1, 4) g GROUP BY g) s;
SELECT spent FROM contcount.ledgers WHERE name = 'cap_team';

-- several releases in one statement add up: the second is refused, before
-- it pays
SELECT test.error_of($$SELECT (SELECT count(*) FROM contcount.running_counts(ARRAY[1, 2, 3], 0.5,
        ledger => 'cap_team')),
    (SELECT count(*) FROM contcount.running_counts(ARRAY[1, 2, 3], 0.75, ledger => 'cap_team'))$$);
SELECT spent FROM contcount.ledgers WHERE name = 'cap_team';

-- a set-returning function called per row: the third call is refused
SELECT test.error_of($$SELECT (contcount.running_counts(ARRAY[1], 0.5, ledger => 'cap_team')).t
    FROM generate_series(1, 3)$$);
SELECT spent FROM contcount.ledgers WHERE name = 'cap_team';

-- the statements a function runs are part of the statement that called it
SELECT test.error_of($q$DO $do$ BEGIN
    PERFORM contcount.running_counts(ARRAY[1], 0.5, ledger => 'cap_team');
    PERFORM contcount.running_counts(ARRAY[1], 0.5, ledger => 'cap_team');
    PERFORM contcount.running_counts(ARRAY[1], 0.5, ledger => 'cap_team');
END $do$$q$);
SELECT spent FROM contcount.ledgers WHERE name = 'cap_team';

-- Gaussian releases count their rho against contcount.max_rho_per_statement
SELECT test.error_of($$SELECT (SELECT count(*) FROM contcount.running_counts(ARRAY[1, 2], mechanism => 'gaussian_honaker',
        rho => 0.06, ledger => 'cap_rho')),
    (SELECT count(*) FROM contcount.running_counts(ARRAY[1, 2], mechanism => 'gaussian_honaker',
        rho => 0.06, ledger => 'cap_rho'))$$);
SELECT spent AS spent_rho FROM contcount.ledgers WHERE name = 'cap_rho';
SELECT count(*) FROM contcount.running_counts(ARRAY[1, 2], mechanism => 'gaussian_honaker',
    rho => 0.06, ledger => 'cap_rho');

-- without a cap, the same GROUP BY passes
\c - postgres
ALTER ROLE regress_cap_a RESET contcount.max_epsilon_per_statement;
\c - regress_cap_a
SELECT count(n) FROM (SELECT contcount.noisy_count(0.25, 'cap_team') AS n
    FROM generate_series(1, 10) g GROUP BY g) s;

\c - postgres
SELECT contcount.drop_ledger('cap_team');
SELECT contcount.drop_ledger('cap_rho');
DROP OWNED BY regress_cap_a;
DROP ROLE regress_cap_a;
