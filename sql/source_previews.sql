-- Free previews of releases from protected sources: source_preview() is
-- calibrated to the source's max_rows and shows what source_running_counts
-- shows; source_preview_charge() what both ledgers would be charged.  No
-- table is read, nothing is charged.  Run by a role that is not a superuser.

CREATE ROLE regress_srcprev LOGIN;
CREATE ROLE regress_srcprev_other LOGIN;
GRANT USAGE ON SCHEMA test TO regress_srcprev, regress_srcprev_other;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_srcprev, regress_srcprev_other;
CREATE TABLE test.srcprev_visits (user_id int, at timestamptz);
INSERT INTO test.srcprev_visits
SELECT i % 7, '2026-01-01'::timestamptz + i * interval '1 hour' FROM generate_series(1, 100) i;
SELECT contcount.create_ledger('srcprev_data', 50);
SELECT contcount.create_ledger('srcprev_team', 10);
SELECT contcount.grant_ledger('srcprev_team', 'regress_srcprev');
SELECT contcount.protect_table('srcprev', 'test.srcprev_visits', 'user_id', 'at', 'srcprev_data',
    max_rows => 4);
SELECT contcount.grant_source('srcprev', 'regress_srcprev');

\c - regress_srcprev
SELECT * FROM contcount.source_preview_charge('srcprev', 0.5, 30, ledger => 'srcprev_team');
SELECT (SELECT spent FROM contcount.ledgers WHERE name = 'srcprev_team') AS team_spent;
-- the same stddev and bound as the release, at max_rows' sensitivity
SELECT count(*) AS steps, bool_and(p.stddev = r.stddev AND p.bound = r.bound) AS same,
       bool_and(p.stddev = q.stddev) AS max_rows_sensitivity
FROM contcount.source_preview('srcprev', 0.5, 30, 'two_level') p
JOIN contcount.source_running_counts('srcprev', 0.5, interval '1 hour', '2026-01-01', 30,
    'two_level', ledger => 'srcprev_team') r USING (t)
JOIN contcount.preview('two_level', 0.5, horizon => 30, sensitivity => 4) q USING (t);
SELECT (SELECT spent FROM contcount.ledgers WHERE name = 'srcprev_team') AS team_spent;
SELECT count(*), max(t) FROM contcount.source_preview('srcprev', rho => 0.5, steps => 20);

-- refusals: a source not granted, no steps
\c - regress_srcprev_other
SELECT test.error_of($$SELECT * FROM contcount.source_preview('srcprev', 0.5, 30)$$);
SELECT test.error_of($$SELECT * FROM contcount.source_preview_charge('srcprev', 0.5, 30)$$);
\c - regress_srcprev
SELECT test.error_of($$SELECT * FROM contcount.source_preview('srcprev', 0.5)$$);
SELECT test.error_of($$SELECT * FROM contcount.source_preview('srcprev', 0.5, 0)$$);

-- the source's admin sees what the data's ledger can still pay
\c - postgres
SELECT source_ledger, source_charge, source_releases_left, per_block
FROM contcount.source_preview_charge('srcprev', 0.5, 30, ledger => 'srcprev_team');

SELECT contcount.drop_source('srcprev');
SELECT contcount.drop_ledger('srcprev_data');
SELECT contcount.drop_ledger('srcprev_team');
DROP TABLE test.srcprev_visits;
DROP OWNED BY regress_srcprev;
DROP OWNED BY regress_srcprev_other;
DROP ROLE regress_srcprev, regress_srcprev_other;
