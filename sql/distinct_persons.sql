-- Distinct persons: releases from protected sources with count => 'persons'
-- count each person once in each group, at their first row there in time
-- order (ties by key), within the source's bounds: at most
-- least(max_rows, max_groups) groups a person.  The noise is scaled to that
-- many (1 without a dimension): what one person moves the counts by in all.
-- Run by a role that is not a superuser.  The releases use epsilon 500 with
-- simple_ii: noise of scale at most 2 / 500 a step, so that a count is off
-- by 1 or more with probability about 2 exp(-250) a draw (and the checks
-- that every count is exact fail by chance far below 1e-6).

CREATE TABLE test.dp_visits (user_id int, country text, at timestamptz);
-- days: step 1 is 2026-03-01, step 2 2026-03-02, and so on
INSERT INTO test.dp_visits VALUES
    -- user 1: 50 visits in fr from day 1 on: one person, counted once, at step 1
    (1, 'fr', '2026-03-01 10:00+00'),
    -- user 2: fr on day 2, de on day 3, fr and de again later
    (2, 'fr', '2026-03-02 09:00+00'), (2, 'de', '2026-03-03 09:00+00'),
    (2, 'fr', '2026-03-03 10:00+00'), (2, 'de', '2026-03-04 09:00+00'),
    -- user 3: fr (day 1), de (day 2), us (day 3): max_groups 2 leaves us out
    (3, 'fr', '2026-03-01 12:00+00'), (3, 'de', '2026-03-02 12:00+00'),
    (3, 'us', '2026-03-03 12:00+00'),
    -- user 4: first seen on day 3, in us, then 30 more visits there
    (4, 'us', '2026-03-03 23:59+00'),
    -- user 5: two rows at one time, de and fr: ties go by key, de first
    (5, 'fr', '2026-03-02 08:00+00'), (5, 'de', '2026-03-02 08:00+00'),
    -- user 6: an undeclared country first (not a group), then us on day 4
    (6, 'xx', '2026-03-01 01:00+00'), (6, 'us', '2026-03-04 01:00+00'),
    -- user 7: before the window (2026-02-28), then fr on day 2: the window's
    -- first row counts, rows outside it are left out before bounding
    (7, 'fr', '2026-02-28 12:00+00'), (7, 'fr', '2026-03-02 13:00+00'),
    -- no person: never counted
    (NULL, 'fr', '2026-03-01 00:00+00');
INSERT INTO test.dp_visits
SELECT 1, 'fr', '2026-03-01 11:00+00'::timestamptz + i * interval '1 hour' FROM generate_series(1, 49) i;
INSERT INTO test.dp_visits
SELECT 4, 'us', '2026-03-04 00:00+00'::timestamptz + i * interval '1 minute' FROM generate_series(1, 30) i;

SELECT contcount.create_ledger('dp_data', 100000);
SELECT contcount.create_ledger('dp_team', 100000);
-- dp: up to 5 rows in up to 2 groups a person; dp_one: 1 row in up to 3 groups
SELECT contcount.protect_table('dp', 'test.dp_visits', 'user_id', 'at', 'dp_data',
                               max_rows => 5, max_groups => 2);
SELECT contcount.source_dimension('dp', 'country', ARRAY['fr', 'de', 'us']);
SELECT contcount.protect_table('dp_one', 'test.dp_visits', 'user_id', 'at', 'dp_data',
                               max_rows => 1, max_groups => 3);
SELECT contcount.source_dimension('dp_one', 'country', ARRAY['fr', 'de', 'us']);
CREATE ROLE regress_dp_analyst LOGIN;
ALTER ROLE regress_dp_analyst SET contcount.ledger = 'dp_team';
GRANT USAGE ON SCHEMA test TO regress_dp_analyst;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_dp_analyst;
SELECT contcount.grant_ledger('dp_team', 'regress_dp_analyst');
SELECT contcount.grant_source('dp', 'regress_dp_analyst');
SELECT contcount.grant_source('dp_one', 'regress_dp_analyst');

-- The rule, written apart from the extension: each person's groups in the
-- order of their first row in the window (ties by key), the first
-- least(max_rows, max_groups) of them, each counted at its first row's day.
CREATE TABLE test.dp_expected AS
WITH firsts AS (
    SELECT user_id, country, min(at) AS first_at
    FROM test.dp_visits
    WHERE user_id IS NOT NULL AND country IN ('fr', 'de', 'us')
      AND at >= '2026-03-01 00:00+00' AND at < '2026-03-05 00:00+00'
    GROUP BY user_id, country
), ranked AS (
    SELECT *, row_number() OVER (PARTITION BY user_id ORDER BY first_at, country) AS rank
    FROM firsts
), sources(source, keep) AS (VALUES ('dp', 2), ('dp_one', 1))
SELECT s.source, k.key, t, count(r.user_id) AS running
FROM sources s
CROSS JOIN unnest(ARRAY['fr', 'de', 'us']) k(key)
CROSS JOIN generate_series(1, 4) t
LEFT JOIN ranked r ON r.country = k.key AND r.rank <= s.keep
     AND r.first_at < '2026-03-01 00:00+00'::timestamptz + t * interval '1 day'
GROUP BY s.source, k.key, t;
GRANT SELECT ON test.dp_expected TO regress_dp_analyst;

\c - regress_dp_analyst
-- Distinct persons per country and day, each person once a country, at
-- their first visit's day: fr 2 on day 1 (users 1, 3; user 1's 50 visits
-- count once), then 5 (users 2, 5, 7); de 2 on day 2 (users 3, 5), 3 on
-- day 3 (user 2); us 1 on day 3 (user 4 at 23:59; not user 3, whose third
-- group max_groups leaves out), 2 on day 4 (user 6).
SELECT key, t, noisy_count, round(stddev::numeric, 6) AS stddev
FROM contcount.source_running_counts('dp', 500, '1 day', '2026-03-01 00:00+00', 4, 'simple_ii',
                                     dimension => 'country', count => 'persons')
ORDER BY key, t;
-- exactly the rule above, for both sources (dp_one: one row a person, so
-- only their first group: users 2 and 3 in fr, user 5 in de)
SELECT source, bool_and(r.noisy_count = e.running) AS exact, count(*) AS cells
FROM (SELECT 'dp' AS source, * FROM contcount.source_running_counts('dp', 500, '1 day',
          '2026-03-01 00:00+00', 4, 'simple_ii', dimension => 'country', count => 'persons')
      UNION ALL
      SELECT 'dp_one', * FROM contcount.source_running_counts('dp_one', 500, '1 day',
          '2026-03-01 00:00+00', 4, 'simple_ii', dimension => 'country', count => 'persons')) r
JOIN test.dp_expected e USING (source, key, t)
GROUP BY source ORDER BY source;
SELECT key, t, running FROM test.dp_expected WHERE source = 'dp_one' AND t = 4 ORDER BY key;
-- rows, the default, count every kept row: user 1 adds 5 to fr
SELECT key, noisy_count FROM contcount.source_counts('dp', 500, 'country',
    filter => '{"country": ["fr"]}');
SELECT key, noisy_count FROM contcount.source_counts('dp', 500, 'country', count => 'rows',
    filter => '{"country": ["fr"]}');
-- persons, one count of all: the 7 persons (user 6's undeclared country
-- counts too, there is no dimension), each once
SELECT key, noisy_count, round(stddev::numeric, 6) AS stddev
FROM contcount.source_counts('dp', 500, count => 'persons');
SELECT key, noisy_count FROM contcount.source_counts('dp', 500, 'country', count => 'persons');

-- The sensitivity: least(max_rows, max_groups, keys) for persons, 1 without
-- a dimension, max_rows for rows.  The release's stddev and bound are a
-- preview's at that sensitivity, and source_preview shows them, given the
-- count and the dimension.
SELECT count(*) AS steps,
       bool_and(r.stddev = p.stddev AND r.bound = p.bound) AS preview_shows_it,
       bool_and(p.stddev = q.stddev AND p.bound = q.bound) AS sensitivity_2,
       bool_and(p.stddev < rows.stddev) AS less_than_rows
FROM contcount.source_running_counts('dp', 0.5, '1 day', '2026-03-01 00:00+00', 30, 'binary',
         dimension => 'country', count => 'persons') r
JOIN contcount.source_preview('dp', 0.5, 30, 'binary', count => 'persons', dimension => 'country') p
     USING (t)
JOIN contcount.preview('binary', 0.5, horizon => 30, sensitivity => 2) q USING (t)
JOIN contcount.source_preview('dp', 0.5, 30, 'binary') rows USING (t)
WHERE r.key = 'fr';
SELECT bool_and(p.stddev = q.stddev AND p.bound = q.bound) AS sensitivity_1
FROM contcount.source_preview('dp', 0.5, 30, 'binary', count => 'persons') p
JOIN contcount.preview('binary', 0.5, horizon => 30, sensitivity => 1) q USING (t);
SELECT bool_and(p.stddev = q.stddev AND p.bound = q.bound) AS sensitivity_1
FROM contcount.source_preview('dp_one', 0.5, 30, 'binary', count => 'persons', dimension => 'country') p
JOIN contcount.preview('binary', 0.5, horizon => 30, sensitivity => 1) q USING (t);
SELECT bool_and(p.stddev = q.stddev AND p.bound = q.bound) AS sensitivity_5
FROM contcount.source_preview('dp', 0.5, 30, 'binary', count => 'rows', dimension => 'country') p
JOIN contcount.preview('binary', 0.5, horizon => 30, sensitivity => 5) q USING (t);
-- one count: stddev of discrete Laplace at scale 2 / epsilon for persons
-- over the dimension, 1 / epsilon without one, 5 / epsilon for rows
SELECT key, round(stddev::numeric, 6) AS stddev,
       round(sqrt(test.dlap_var(2 / 0.5))::numeric, 6) AS expected
FROM contcount.source_counts('dp', 0.5, 'country', count => 'persons') WHERE key = 'fr';
SELECT round(stddev::numeric, 6) AS stddev, round(sqrt(test.dlap_var(1 / 0.5))::numeric, 6) AS expected
FROM contcount.source_counts('dp', 0.5, count => 'persons');
SELECT key, round(stddev::numeric, 6) AS stddev,
       round(sqrt(test.dlap_var(5 / 0.5))::numeric, 6) AS expected
FROM contcount.source_counts('dp', 0.5, 'country') WHERE key = 'fr';
-- zCDP: the L2 sensitivity, sqrt(2): each of the 2 keys' streams at
-- sensitivity 1 and rho / 2 (sql/persons_gaussian.sql)
SELECT bool_and(p.stddev = q.stddev AND p.bound = q.bound) AS l2_sensitivity
FROM contcount.source_preview('dp', NULL, 30, 'gaussian_honaker', 0.5, count => 'persons',
         dimension => 'country') p
JOIN contcount.preview('gaussian_honaker', horizon => 30, rho => 0.25, sensitivity => 1) q USING (t);

-- The charge: one epsilon for all keys, to both ledgers, what the charge
-- preview says it would be.
SELECT charge, source_charge
FROM contcount.source_preview_charge('dp', 0.75, 30, 'binary', count => 'persons',
                                     dimension => 'country');
SELECT spent AS before FROM contcount.ledgers WHERE name = 'dp_team' \gset
SELECT count(*) FROM contcount.source_running_counts('dp', 0.75, '1 day', '2026-03-01 00:00+00', 30,
    'binary', dimension => 'country', count => 'persons');
SELECT spent - :before AS charged FROM contcount.ledgers WHERE name = 'dp_team';

-- Bad values are refused before any charge.
SELECT spent AS before FROM contcount.ledgers WHERE name = 'dp_team' \gset
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT * FROM contcount.source_counts('dp', 1, count => 'users')$$),
    ($$SELECT * FROM contcount.source_counts('dp', 1, count => NULL)$$),
    ($$SELECT * FROM contcount.source_counts('dp', 1, count => 'Persons')$$),
    ($$SELECT * FROM contcount.source_running_counts('dp', 1, '1 day', now(), 3, count => 'distinct')$$),
    ($$SELECT * FROM contcount.source_running_counts('dp', 1, '1 day', now(), 3, count => NULL)$$),
    ($$SELECT * FROM contcount.source_preview('dp', 1, 3, count => 'users')$$),
    ($$SELECT * FROM contcount.source_preview('dp', 1, 3, count => 'persons', dimension => 'nope')$$),
    ($$SELECT * FROM contcount.source_preview_charge('dp', 1, 3, count => NULL)$$),
    ($$SELECT * FROM contcount.source_preview_charge('dp', 1, 3, count => 'persons', dimension => 'nope')$$)
) AS cases(s);
SELECT spent - :before AS charged FROM contcount.ledgers WHERE name = 'dp_team';

-- A source whose budget is held per block: persons too, charged to the
-- blocks the window touches, each the release's epsilon.  Days are UTC days
-- from the test's start (crossing midnight during it changes nothing).
\c - postgres
CREATE TABLE test.dp_anchor AS
SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS today;
GRANT SELECT ON test.dp_anchor TO regress_dp_analyst;
CREATE TABLE test.dp_block_visits (user_id int, at timestamptz);
-- user 1: 20 visits the day before yesterday and 20 yesterday; user 2: one yesterday
INSERT INTO test.dp_block_visits
SELECT 1, today - interval '2 days' + i * interval '1 minute' FROM test.dp_anchor, generate_series(1, 20) i;
INSERT INTO test.dp_block_visits
SELECT 1, today - interval '1 day' + i * interval '1 minute' FROM test.dp_anchor, generate_series(1, 20) i;
INSERT INTO test.dp_block_visits SELECT 2, today - interval '12 hours' FROM test.dp_anchor;
SELECT contcount.create_ledger('dp_block_data', 100000);
SELECT contcount.protect_table('dp_blocks', 'test.dp_block_visits', 'user_id', 'at', 'dp_block_data',
                               max_rows => 5);
SELECT contcount.source_blocks('dp_blocks', '1 day', 10000, '30 days');
SELECT contcount.grant_source('dp_blocks', 'regress_dp_analyst');
\c - regress_dp_analyst
SELECT noisy_count AS persons, round(stddev::numeric, 6) AS stddev
FROM contcount.source_counts('dp_blocks', 500, count => 'persons');
SELECT noisy_count AS rows FROM contcount.source_counts('dp_blocks', 500);
SELECT r.t, r.noisy_count AS persons
FROM test.dp_anchor a,
     contcount.source_running_counts('dp_blocks', 500, '1 day', a.today - interval '2 days', 2,
                                     'simple_ii', count => 'persons') r
ORDER BY t;
-- every block of the window paid the two counts, 500 each; the two days of
-- the running counts paid 500 more
SELECT extract(day FROM a.today - b.block_start) AS days_ago, b.spent
FROM contcount.blocks b, test.dp_anchor a
WHERE b.source = 'dp_blocks' AND b.block_start >= a.today - interval '3 days'
  AND b.block_start < a.today
ORDER BY b.block_start;

\c - postgres
SELECT contcount.drop_source('dp_blocks');
SELECT contcount.drop_ledger('dp_block_data');
DROP TABLE test.dp_block_visits, test.dp_anchor;
SELECT contcount.drop_source('dp');
SELECT contcount.drop_source('dp_one');
SELECT contcount.drop_ledger('dp_data');
SELECT contcount.drop_ledger('dp_team');
DROP TABLE test.dp_expected;
DROP TABLE test.dp_visits;
DROP OWNED BY regress_dp_analyst;
DROP ROLE regress_dp_analyst;
