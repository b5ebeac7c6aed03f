-- One's own spending: contcount.charges shows every role its own charges,
-- to any ledger, and another role's only on the ledgers it administers.
-- Run by roles that are not superusers.

CREATE ROLE regress_own_a LOGIN;
CREATE ROLE regress_own_b LOGIN;
CREATE ROLE regress_own_admin LOGIN;
SELECT contcount.create_ledger('own_team', 10);
SELECT contcount.grant_ledger('own_team', 'regress_own_a');
SELECT contcount.grant_ledger('own_team', 'regress_own_b');
SELECT contcount.grant_ledger('own_team', 'regress_own_admin', admin => true);

-- a spends from the team's ledger and from contcount.ledger's (tests),
-- which it does not administer; b spends from the team's
\c - regress_own_a
SELECT contcount.noisy_count(0.25, 'own_team') IS NOT NULL AS released;
SELECT contcount.noisy_count(0.5) IS NOT NULL AS released;
\c - regress_own_b
SELECT contcount.noisy_count(0.125, 'own_team') IS NOT NULL AS released;

-- each sees its own charges and no other role's
SELECT role, ledger, epsilon, function FROM contcount.charges ORDER BY at;
\c - regress_own_a
SELECT role, ledger, epsilon, function, statement FROM contcount.charges ORDER BY at;
SELECT count(*) AS not_mine FROM contcount.charges WHERE role::oid OPERATOR(pg_catalog.<>) 'regress_own_a'::regrole;

-- the admin of the team's ledger sees every charge to it, and nothing of
-- the tests ledger
\c - regress_own_admin
SELECT role, ledger, epsilon FROM contcount.charges ORDER BY at;

-- a superuser still sees every charge
\c - postgres
SELECT role, ledger, epsilon FROM contcount.charges
WHERE role::text LIKE 'regress_own_%' ORDER BY at;

SELECT contcount.drop_ledger('own_team');
DROP ROLE regress_own_a, regress_own_b, regress_own_admin;
