-- Protected sources: an analyst without SELECT on a table publishes noisy
-- counts from it, each person's contribution bounded, charged once to the
-- team's ledger and once to the data's.

CREATE TABLE test.enrolments (user_id int, country text, at timestamptz, device text DEFAULT 'web');
-- users 1..40 sign up once or twice, in one country; user 41 makes 1000
-- rows over 1000 countries (a person who would dominate an unbounded count)
INSERT INTO test.enrolments
SELECT u, (ARRAY['fr', 'de', 'us', 'it'])[1 + u % 4], '2026-01-01'::timestamptz + u * interval '1 hour'
FROM generate_series(1, 40) u;
INSERT INTO test.enrolments
SELECT u, (ARRAY['fr', 'de', 'us', 'it'])[1 + u % 4], '2026-02-01'::timestamptz + u * interval '1 hour'
FROM generate_series(1, 40, 3) u;
INSERT INTO test.enrolments
SELECT 41, CASE WHEN i <= 3 THEN (ARRAY['fr', 'de', 'us'])[i] ELSE 'c' || i END,
       '2026-01-01'::timestamptz + i * interval '1 minute'
FROM generate_series(1, 1000) i;
INSERT INTO test.enrolments VALUES (NULL, 'fr', '2026-01-05');  -- no unit: not counted
-- even users sign up on phones, and user 41 on a phone from its third row
UPDATE test.enrolments SET device = 'phone'
WHERE user_id % 2 = 0 OR (user_id = 41 AND at >= '2026-01-01 00:03+00');

SELECT contcount.create_ledger('signups_data', 10);
SELECT contcount.create_ledger('growth', 3);
SELECT contcount.protect_table('signups', 'test.enrolments', 'user_id', 'at', 'signups_data',
                               max_rows => 2, max_groups => 1);
SELECT contcount.source_dimension('signups', 'country', ARRAY['fr', 'de', 'us', 'zz']);
SELECT contcount.source_dimension('signups', 'device', ARRAY['web', 'phone', 'tv']);
CREATE ROLE regress_src_analyst LOGIN;
ALTER ROLE regress_src_analyst SET contcount.ledger = 'growth';
GRANT USAGE ON SCHEMA test TO regress_src_analyst;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_src_analyst;
SELECT contcount.grant_source('signups', 'regress_src_analyst');

-- Declaring is refused with a clear error for every bad input.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.protect_table('signups', 'test.enrolments', 'user_id', 'at', 'signups_data')$$),
    ($$SELECT contcount.protect_table('x', 'test.enrolments', 'nope', 'at', 'signups_data')$$),
    ($$SELECT contcount.protect_table('x', 'test.enrolments', 'user_id', 'at', 'nope')$$),
    ($$SELECT contcount.protect_table('x', 'test.enrolments', 'user_id', 'at', 'signups_data', 0)$$),
    ($$SELECT contcount.protect_table('', 'test.enrolments', 'user_id', 'at', 'signups_data')$$),
    ($$SELECT contcount.protect_table('x', NULL, 'user_id', 'at', 'signups_data')$$),
    ($$SELECT contcount.source_dimension('signups', 'nope', ARRAY['a'])$$),
    ($$SELECT contcount.source_dimension('signups', 'country', ARRAY['a', 'a'])$$),
    ($$SELECT contcount.source_dimension('signups', 'country', ARRAY['a', NULL])$$),
    ($$SELECT contcount.source_dimension('signups', 'country', ARRAY[]::text[])$$),
    ($$SELECT contcount.source_dimension('nope', 'country', ARRAY['a'])$$),
    ($$SELECT contcount.grant_source('nope', 'regress_src_analyst')$$)
) AS cases(s);

\c - regress_src_analyst
-- The analyst cannot read the table, but releases from it: every declared
-- key, in their order, zeros included ('zz'); 'it' and the 1000 countries
-- of user 41 are not declared, so never appear.  Noise of scale
-- max_rows / epsilon = 2.
SELECT test.error_of('SELECT count(*) FROM test.enrolments');
-- what the analyst may ask for
SELECT name, relation, unit_column, time_column, max_rows, max_groups, ledger, dimension, keys
FROM contcount.sources ORDER BY name, dimension;
SELECT key, noisy_count IS NOT NULL AS released, round(stddev::numeric, 4) AS stddev
FROM contcount.source_counts('signups', 1, 'country');
-- charged once for all keys (the analyst sees the team's ledger; the
-- data's is charged too, below)
SELECT name, spent FROM contcount.ledgers ORDER BY name;
-- without a dimension: one count of all bounded rows
SELECT key, noisy_count IS NOT NULL AS released FROM contcount.source_counts('signups', 0.25);
-- running counts per day over three days, per country: every key, every step
SELECT key, t, step_start, noisy_count IS NOT NULL AS released, round(stddev::numeric, 3) AS stddev
FROM contcount.source_running_counts('signups', 0.25, '1 day', '2026-01-01 00:00+00', 3,
                                     dimension => 'country', mechanism => 'binary');
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT * FROM contcount.source_counts('nope', 1)$$),
    ($$SELECT * FROM contcount.source_counts('signups', 1, 'country; DROP TABLE test.enrolments')$$),
    ($$SELECT * FROM contcount.source_counts('signups', 1, 'at')$$),
    ($$SELECT * FROM contcount.source_counts('signups', 0)$$),
    ($$SELECT * FROM contcount.source_counts('signups', NULL)$$),
    ($$SELECT * FROM contcount.source_counts('signups', 1, ledger => 'signups_data')$$),
    ($$SELECT * FROM contcount.source_counts('signups', 2)$$),
    ($$SELECT * FROM contcount.source_running_counts('signups', 0.1, '1 month', now(), 3, mechanism => 'binary')$$),
    ($$SELECT * FROM contcount.source_running_counts('signups', 0.1, '-1 day', now(), 3, mechanism => 'binary')$$),
    ($$SELECT * FROM contcount.source_running_counts('signups', 0.1, '2000000000 days', now(), 3, mechanism => 'binary')$$),
    ($$SELECT * FROM contcount.source_running_counts('signups', 0.1, '1 day', now(), 0, mechanism => 'binary')$$),
    ($$SELECT * FROM contcount.source_running_counts('signups', 0.1, '1 day', now(), 3, 'nope')$$),
    ($$SELECT * FROM contcount.source_running_counts('signups', 0.1, '1 day', 'infinity', 3, mechanism => 'binary')$$),
    ($$SELECT * FROM contcount.source_running_counts('signups', 0.1, '1 day', now(), 100000000, mechanism => 'binary')$$),
    ($$SELECT * FROM contcount.source_running_counts('signups', 0.1, NULL, now(), 3, mechanism => 'binary')$$),
    ($$SELECT * FROM contcount.source_counts('signups', 0.1, filter => '["phone"]')$$),
    ($$SELECT * FROM contcount.source_counts('signups', 0.1, filter => '{"device": "phone"}')$$),
    ($$SELECT * FROM contcount.source_counts('signups', 0.1, filter => '{"device": [1]}')$$),
    ($$SELECT * FROM contcount.source_counts('signups', 0.1, filter => '{"device": [["phone"]]}')$$),
    ($$SELECT * FROM contcount.source_counts('signups', 0.1, filter => '{"device": []}')$$),
    ($$SELECT * FROM contcount.source_counts('signups', 0.1, filter => '{"device": ["fax"]}')$$),
    ($$SELECT * FROM contcount.source_counts('signups', 0.1, filter => '{"at": ["2026-01-01"]}')$$),
    ($$SELECT * FROM contcount.source_counts('signups', 0.1, filter => '{"device": ["phone"], "user_id": ["41"]}')$$),
    ($$SELECT * FROM contcount.source_running_counts('signups', 0.1, '1 day', now(), 3, filter => '{"device": ["PHONE"]}', mechanism => 'binary')$$),
    ($$SELECT contcount.protect_table('mine', 'test.enrolments', 'user_id', 'at', 'growth')$$),
    ($$SELECT contcount.grant_source('signups', 'regress_src_analyst')$$)
) AS cases(s);
-- nothing was charged by the refusals (the team's quota: 3 - 1.5 = 1.5 < 2)
SELECT name, spent FROM contcount.ledgers ORDER BY name;

\c - postgres
-- both releases charged the data's ledger too
SELECT name, spent FROM contcount.ledgers WHERE name IN ('growth', 'signups_data') ORDER BY name;
SELECT role, ledger, epsilon, function FROM contcount.charges
WHERE ledger IN ('growth', 'signups_data') ORDER BY at, ledger;
-- The bounding, exactly: at epsilon 1000 the noise (scale 0.002) is zero
-- but with probability below e^-499, so the counts are the bounded ones.  Each
-- user keeps the group of its first row and at most 2 rows in it: user 41
-- adds 1 to 'fr' (its first minute), not 1000 rows.
SELECT contcount.create_ledger('exact', 9000);
SELECT contcount.alter_ledger('signups_data', 9010);
SET contcount.ledger = 'exact';
SELECT key, noisy_count FROM contcount.source_counts('signups', 1000, 'country');
SELECT country, count(*) FROM (
    SELECT country, row_number() OVER (PARTITION BY user_id ORDER BY at) AS r,
           first_value(country) OVER (PARTITION BY user_id ORDER BY at) AS first
    FROM test.enrolments WHERE user_id IS NOT NULL AND country IN ('fr', 'de', 'us', 'zz')) s
WHERE r <= 2 AND country = first GROUP BY country ORDER BY country;
-- Running counts, exactly: the bounded rows of the window [1 Jan, 4 Jan)
-- (rows outside it are left out before bounding), per day, cumulated; the
-- same rule written in plain SQL gives the same counts.
CREATE TEMP TABLE expected_running AS
WITH r AS (SELECT user_id AS u, country AS k, at AS t FROM test.enrolments
           WHERE user_id IS NOT NULL AND country IN ('fr', 'de', 'us', 'zz')
             AND at >= '2026-01-01 00:00+00' AND at < '2026-01-04 00:00+00'),
f AS (SELECT *, min(t) OVER (PARTITION BY u, k) AS ft FROM r),
g AS (SELECT *, dense_rank() OVER (PARTITION BY u ORDER BY ft, k) AS g FROM f),
kept AS (SELECT *, row_number() OVER (PARTITION BY u ORDER BY t, k) AS n FROM g WHERE g <= 1),
days AS (SELECT k, d FROM unnest(ARRAY['fr', 'de', 'us', 'zz']) k, generate_series(0, 2) d)
SELECT days.k, days.d + 1 AS t,
       (SELECT count(*) FROM kept WHERE kept.k = days.k AND kept.n <= 2
          AND kept.t < '2026-01-01 00:00+00'::timestamptz + (days.d + 1) * interval '1 day') AS exact
FROM days;
SELECT e.k, e.t, e.exact, r.noisy_count = e.exact AS same
FROM contcount.source_running_counts('signups', 1000, '1 day', '2026-01-01 00:00+00', 3,
                                     dimension => 'country', mechanism => 'binary') r
JOIN expected_running e ON e.k = r.key AND e.t = r.t ORDER BY e.k, e.t;
-- With two groups a person, three rows: user 41 keeps its rows in its first
-- two groups ('fr', 'de'), and the rule written in plain SQL agrees.
SELECT contcount.protect_table('signups_g2', 'test.enrolments', 'user_id', 'at', 'signups_data',
                               max_rows => 3, max_groups => 2);
SELECT contcount.source_dimension('signups_g2', 'country', ARRAY['fr', 'de', 'us', 'zz']);
SELECT contcount.source_dimension('signups_g2', 'device', ARRAY['web', 'phone', 'tv']);
WITH r AS (SELECT user_id AS u, country AS k, at AS t FROM test.enrolments
           WHERE user_id IS NOT NULL AND country IN ('fr', 'de', 'us', 'zz')),
f AS (SELECT *, min(t) OVER (PARTITION BY u, k) AS ft FROM r),
g AS (SELECT *, dense_rank() OVER (PARTITION BY u ORDER BY ft, k) AS g FROM f),
kept AS (SELECT *, row_number() OVER (PARTITION BY u ORDER BY t, k) AS n FROM g WHERE g <= 2),
expected AS (SELECT k, count(*) FILTER (WHERE n <= 3) AS exact FROM kept GROUP BY k)
SELECT r.key, r.noisy_count, COALESCE(e.exact, 0) AS exact
FROM contcount.source_counts('signups_g2', 1000, 'country') r LEFT JOIN expected e ON e.k = r.key;
-- A filter on a public dimension leaves rows out before bounding: the
-- phone rows only, bounded by the same rule, give the same counts as the
-- rule in plain SQL over those rows (user 41 keeps its first phone row's
-- group, 'us'); a filter on the released dimension zeroes the other keys;
-- two filters keep the rows that pass both.
CREATE FUNCTION pg_temp.expected(devices text[], countries text[], max_groups int, max_rows int)
RETURNS TABLE (k text, exact bigint) LANGUAGE sql AS $$
    WITH r AS (SELECT user_id AS u, country AS k, at AS t FROM test.enrolments
               WHERE user_id IS NOT NULL AND country = ANY (countries) AND device = ANY (devices)),
    f AS (SELECT *, min(t) OVER (PARTITION BY u, k) AS ft FROM r),
    g AS (SELECT *, dense_rank() OVER (PARTITION BY u ORDER BY ft, k) AS g FROM f),
    kept AS (SELECT *, row_number() OVER (PARTITION BY u ORDER BY t, k) AS n FROM g WHERE g <= max_groups)
    SELECT d.k, (SELECT count(*) FROM kept WHERE kept.k = d.k AND n <= max_rows)
    FROM unnest(ARRAY['fr', 'de', 'us', 'zz']) d(k)
$$;
SELECT r.key, r.noisy_count, e.exact
FROM contcount.source_counts('signups', 1000, 'country', filter => '{"device": ["phone"]}') r
JOIN pg_temp.expected('{phone}', '{fr,de,us,zz}', 1, 2) e ON e.k = r.key;
SELECT r.key, r.noisy_count, e.exact
FROM contcount.source_counts('signups_g2', 1000, 'country', filter => '{"device": ["phone", "tv", "phone"]}') r
JOIN pg_temp.expected('{phone,tv}', '{fr,de,us,zz}', 2, 3) e ON e.k = r.key;
SELECT r.key, r.noisy_count, e.exact
FROM contcount.source_counts('signups', 1000, 'country', filter => '{"country": ["de", "us"], "device": ["web"]}') r
JOIN pg_temp.expected('{web}', '{de,us}', 1, 2) e ON e.k = r.key;
SELECT key, noisy_count FROM contcount.source_counts('signups', 1000, 'device', filter => '{"country": ["us"]}');
SELECT r.key, r.t, r.noisy_count
FROM contcount.source_running_counts('signups', 1000, '1 day', '2026-01-01 00:00+00', 2,
                                     dimension => 'country', filter => '{"device": ["phone"]}', mechanism => 'binary') r
WHERE r.key IN ('fr', 'us') ORDER BY r.key, r.t;
-- neighbours: without every row of user 41, each count moves by at most
-- max_rows = 2 in all (here by 1, in 'fr')
BEGIN;
DELETE FROM test.enrolments WHERE user_id = 41;
SELECT key, noisy_count FROM contcount.source_counts('signups', 1000, 'country');
ROLLBACK;
-- A unit is what the unit column's equality says, not its bytes: 1.0 and
-- 1.00 are one person, and so are 'Ann' and 'ann' under a case-insensitive
-- collation; each keeps one row (max_rows 1), not one per spelling.
CREATE COLLATION test.nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE test.spellings (num numeric, name text COLLATE test.nocase, at timestamptz);
INSERT INTO test.spellings VALUES (1.0, 'Ann', '2026-01-01'), (1.00, 'ann', '2026-01-02'),
    (1, 'ANN', '2026-01-03'), (2, 'Bob', '2026-01-04');
SELECT contcount.protect_table('by_number', 'test.spellings', 'num', 'at', 'signups_data');
SELECT contcount.protect_table('by_name', 'test.spellings', 'name', 'at', 'signups_data');
SELECT contcount.alter_ledger('signups_data', 11010);
SELECT contcount.alter_ledger('exact', 11000);
SELECT noisy_count FROM contcount.source_counts('by_number', 1000);
SELECT noisy_count FROM contcount.source_counts('by_name', 1000);
-- the bounding aggregate runs only inside a release, even for a superuser
SELECT test.error_of($$SELECT contcount.bounded_counts(u, k, t ORDER BY u, t, k) FROM (VALUES (1, 'fr', now())) v(u, k, t)$$);
-- a team without a ledger spends nothing of the data's budget
SET contcount.ledger = '';
CREATE TEMP TABLE data_spent AS SELECT spent FROM contcount.ledgers WHERE name = 'signups_data';
SELECT test.error_of($$SELECT * FROM contcount.source_counts('signups', 1)$$);
SELECT l.spent = d.spent AS unchanged FROM contcount.ledgers l, data_spent d WHERE l.name = 'signups_data';

-- Revoking the grant stops the analyst.
SELECT contcount.revoke_source('signups', 'regress_src_analyst');
\c - regress_src_analyst
SELECT test.error_of($$SELECT * FROM contcount.source_counts('signups', 0.1)$$);
\c - postgres
DROP OWNED BY regress_src_analyst;
DROP ROLE regress_src_analyst;
-- A dropped table: its source refuses, before any charge.
DROP TABLE test.enrolments;
SELECT test.error_of($$SELECT * FROM contcount.source_counts('signups', 1, ledger => 'growth')$$);
SELECT name, spent FROM contcount.ledgers WHERE name IN ('growth', 'signups_data') ORDER BY name;
-- Dropping a source: releases refused from then on, before any charge.
SELECT contcount.drop_source('signups_g2');
SELECT test.error_of($$SELECT * FROM contcount.source_counts('signups_g2', 1, ledger => 'growth')$$);
SELECT test.error_of($$SELECT contcount.drop_source('signups_g2')$$);
SELECT name, spent FROM contcount.ledgers WHERE name = 'growth';
