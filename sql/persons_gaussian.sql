-- Gaussian releases of distinct persons over a dimension are calibrated to
-- their L2 sensitivity.  Counting persons, one person moves at most
-- k = least(max_rows, max_groups, declared keys) keys' streams, each by 1
-- at one step: L1 k, L2 sqrt(k).  Each key's stream is its own mechanism,
-- so source_running_counts with rho draws every key's noise at sensitivity
-- 1 and rho / k (k times less variance than at sensitivity k and rho), and
-- charges the ledgers the composition of k such streams: the release's
-- rho.  Pure releases, rows and persons without a dimension are as before.
-- Run by a role that is not a superuser.
CREATE TABLE test.pg_visits (user_id int, country text, at timestamptz);
INSERT INTO test.pg_visits
SELECT u, (ARRAY['a', 'b', 'c', 'd'])[1 + (u + i) % 4], '2026-03-01 00:00+00'::timestamptz + i * interval '5 hours'
FROM generate_series(1, 20) u, generate_series(0, 9) i;
SELECT contcount.create_ledger('pg_data', rho => 100, delta => 0.000001);
SELECT contcount.create_ledger('pg_team', rho => 100, delta => 0.000001);
-- k = 4: max_rows 5, max_groups 4, four keys
SELECT contcount.protect_table('pgs', 'test.pg_visits', 'user_id', 'at', 'pg_data',
                               max_rows => 5, max_groups => 4);
SELECT contcount.source_dimension('pgs', 'country', ARRAY['a', 'b', 'c', 'd']);
CREATE ROLE regress_pg_analyst LOGIN;
ALTER ROLE regress_pg_analyst SET contcount.ledger = 'pg_team';
SELECT contcount.grant_ledger('pg_team', 'regress_pg_analyst');
SELECT contcount.grant_source('pgs', 'regress_pg_analyst');

\c - regress_pg_analyst
-- The preview: a key's stddev and bound are those of sensitivity 1 at
-- rho / 4, half the stddev of sensitivity 4 at rho (the L1 calibration).
SELECT count(*) AS steps,
       bool_and(p.stddev = q.stddev AND p.bound = q.bound) AS l2_calibrated,
       bool_and(abs(2 * p.stddev - l1.stddev) <= 1e-9 * l1.stddev) AS half_the_l1_stddev
FROM contcount.source_preview('pgs', NULL, 8, 'gaussian_honaker', 1, count => 'persons',
                              dimension => 'country') p
JOIN contcount.preview('gaussian_honaker', horizon => 8, rho => 0.25, sensitivity => 1) q USING (t)
JOIN contcount.preview('gaussian_honaker', horizon => 8, rho => 1, sensitivity => 4) l1 USING (t);
-- Unchanged: rows (sensitivity max_rows), persons without a dimension (1),
-- and a pure release of persons (4 at epsilon).
SELECT bool_and(p.stddev = q.stddev AND p.bound = q.bound) AS rows_at_max_rows
FROM contcount.source_preview('pgs', NULL, 8, 'gaussian_honaker', 1, dimension => 'country') p
JOIN contcount.preview('gaussian_honaker', horizon => 8, rho => 1, sensitivity => 5) q USING (t);
SELECT bool_and(p.stddev = q.stddev AND p.bound = q.bound) AS persons_without_dimension
FROM contcount.source_preview('pgs', NULL, 8, 'gaussian_honaker', 1, count => 'persons') p
JOIN contcount.preview('gaussian_honaker', horizon => 8, rho => 1, sensitivity => 1) q USING (t);
SELECT bool_and(p.stddev = q.stddev AND p.bound = q.bound) AS pure_at_l1
FROM contcount.source_preview('pgs', 1, 8, 'binary', count => 'persons', dimension => 'country') p
JOIN contcount.preview('binary', 1, horizon => 8, sensitivity => 4) q USING (t);

-- The release shows what the preview showed, for every key, and charges
-- both ledgers its rho, once, as the charge preview says; what each ledger
-- can still pay goes down by one such release.
SELECT mechanism, rho, charge, source_charge, releases_left AS left_before
FROM contcount.source_preview_charge('pgs', NULL, 8, 'gaussian_honaker', 1, count => 'persons',
                                     dimension => 'country') \gset
SELECT :'mechanism' AS mechanism, :rho AS rho, :charge AS charge, :source_charge AS source_charge;
SELECT spent AS before FROM contcount.ledgers WHERE name = 'pg_team' \gset
SELECT count(*) AS rows, count(DISTINCT key) AS keys,
       bool_and(r.stddev = p.stddev AND r.bound = p.bound) AS as_previewed
FROM contcount.source_running_counts('pgs', NULL, '1 day', '2026-03-01 00:00+00', 8, 'gaussian_honaker',
         dimension => 'country', rho => 1, count => 'persons') r
JOIN contcount.source_preview('pgs', NULL, 8, 'gaussian_honaker', 1, count => 'persons',
                              dimension => 'country') p USING (t);
SELECT spent - :before AS charged FROM contcount.ledgers WHERE name = 'pg_team';
SELECT :left_before - releases_left AS fewer_left
FROM contcount.source_preview_charge('pgs', NULL, 8, 'gaussian_honaker', 1, count => 'persons',
                                     dimension => 'country');

\c - postgres
SELECT contcount.drop_source('pgs');
DROP TABLE test.pg_visits;
DROP OWNED BY regress_pg_analyst;
DROP ROLE regress_pg_analyst;
