-- A release that the data's ledger (a protected source's) refuses says
-- only that the data's budget cannot pay, with the same SQLSTATE (ZB001),
-- unless the caller may see that ledger (a superuser, a role granted it,
-- or the one contcount.ledger selects): what it has left would tell what
-- other roles spent.  The caller's own ledger shows its figures.

CREATE TABLE test.calls (person int, at timestamptz);
INSERT INTO test.calls SELECT p, '2026-01-01 00:00+00'::timestamptz + p * interval '1 hour'
FROM generate_series(1, 20) p;
SELECT contcount.create_ledger('calls_data', 1);
SELECT contcount.create_ledger('calls_team', 10);
SELECT contcount.protect_table('calls', 'test.calls', 'person', 'at', 'calls_data');
CREATE ROLE regress_msg_analyst LOGIN;
ALTER ROLE regress_msg_analyst SET contcount.ledger = 'calls_team';
SELECT contcount.grant_source('calls', 'regress_msg_analyst');
-- another team spends most of the data's budget
SELECT contcount.create_ledger('calls_other_team', 10);
SELECT count(*) AS keys FROM contcount.source_counts('calls', 0.75, ledger => 'calls_other_team');

\c - regress_msg_analyst
-- the analyst sees its own ledger, not the data's
SELECT name, remaining FROM contcount.ledgers ORDER BY name;
-- refused by the data's ledger: no figure of it
SELECT count(*) FROM contcount.source_counts('calls', 0.5);
-- refused by its own ledger: its figures
SELECT count(*) FROM contcount.source_counts('calls', 20);
-- the team paid for the first (its charge comes first and stays), not the second
SELECT name, remaining FROM contcount.ledgers ORDER BY name;

\c - postgres
-- a role granted the data's ledger sees it, and its figures
SELECT contcount.grant_ledger('calls_data', 'regress_msg_analyst');
\c - regress_msg_analyst
SELECT name, remaining FROM contcount.ledgers ORDER BY name;
SELECT count(*) FROM contcount.source_counts('calls', 0.5);
\c - postgres
SELECT contcount.revoke_ledger('calls_data', 'regress_msg_analyst');
-- and so does a superuser
SELECT count(*) FROM contcount.source_counts('calls', 0.5, ledger => 'calls_team');

SELECT contcount.drop_source('calls');
DROP TABLE test.calls;
DROP OWNED BY regress_msg_analyst;
DROP ROLE regress_msg_analyst;
SELECT contcount.drop_ledger('calls_data');
SELECT contcount.drop_ledger('calls_team');
SELECT contcount.drop_ledger('calls_other_team');
