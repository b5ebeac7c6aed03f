-- Counters of distinct persons: create_counter(..., source => s,
-- count => 'persons') releases the running number of distinct persons (with
-- dimension => d, of each declared key): each person counted once (once a
-- key), at the step of their first committed row, in at most max_groups
-- keys, with noise scaled to 1 (without a dimension) or to the least of
-- max_rows, max_groups and the declared keys.  Run as roles that are not
-- superusers.  The counters read exactly use epsilon 1000 with binary over 8
-- steps: noise of scale at most 2 * 4 / 1000 a node, so that a release is
-- off by 1 or more with probability about 2 exp(-125) (about 1e-54) a draw,
-- and the checks that every release is exact fail by chance far below 1e-6.
CREATE TABLE test.cp_visits (person int, country text, at timestamptz DEFAULT now());
SELECT contcount.create_ledger('cp_data', 100000);
SELECT contcount.create_ledger('cp_team', 100000);
SELECT contcount.protect_table('cp_visits', 'test.cp_visits', 'person', 'at', 'cp_data',
                               max_rows => 3, max_groups => 2);
SELECT contcount.source_dimension('cp_visits', 'country', ARRAY['it', 'de', 'fr']);
-- cp_wide: bounds above its two declared keys (sensitivity 2 a person)
CREATE TABLE test.cp_wide (person int, letter text, at timestamptz DEFAULT now());
SELECT contcount.protect_table('cp_wide', 'test.cp_wide', 'person', 'at', 'cp_data',
                               max_rows => 5, max_groups => 5);
SELECT contcount.source_dimension('cp_wide', 'letter', ARRAY['a', 'b']);
CREATE ROLE regress_cp_analyst LOGIN;
CREATE ROLE regress_cp_app LOGIN;
ALTER ROLE regress_cp_analyst SET contcount.ledger = 'cp_team';
GRANT USAGE ON SCHEMA test TO regress_cp_analyst, regress_cp_app;
GRANT INSERT ON test.cp_visits, test.cp_wide TO regress_cp_app;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_cp_analyst;
SELECT contcount.grant_ledger('cp_team', 'regress_cp_analyst');
SELECT contcount.grant_source('cp_visits', 'regress_cp_analyst');
SELECT contcount.grant_source('cp_wide', 'regress_cp_analyst');

\c - regress_cp_analyst
-- Bad values, refused before anything is charged.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.create_counter('x', 1, horizon => 8, source => 'cp_visits', count => 'people')$$),
    ($$SELECT contcount.create_counter('x', 1, horizon => 8, source => 'cp_visits', count => 'Persons')$$),
    ($$SELECT contcount.create_counter('x', 1, horizon => 8, source => 'cp_visits', count => NULL)$$),
    ($$SELECT contcount.create_counter('x', 1, horizon => 8, count => 'persons')$$),
    ($$SELECT contcount.create_counter('x', 1, horizon => 8, count => NULL)$$),
    ($$SELECT contcount.create_counter('x', 1, horizon => 8, source => 'cp_visits', count => 'persons',
                                       sensitivity => 2)$$),
    ($$SELECT contcount.create_counter('x', 1, horizon => 8, source => 'cp_visits', count => 'persons',
                                       dimension => 'city')$$)
) AS cases(s);
SELECT name, spent FROM contcount.ledgers WHERE name LIKE 'cp%' ORDER BY name;
SELECT count(*) AS counters FROM contcount.counters WHERE name LIKE 'x%';

-- The charge is the counter's epsilon, once, to each ledger, as counting rows.
SELECT contcount.create_counter('cp_total', 1000, horizon => 8, step => '1 day', beta => 1e-9,
                                source => 'cp_visits', mechanism => 'binary', count => 'persons');
SELECT name, spent FROM contcount.ledgers WHERE name LIKE 'cp%' ORDER BY name;
SELECT contcount.create_counter('cp_keys', 1000, horizon => 8, step => '1 day', beta => 1e-9,
                                source => 'cp_visits', dimension => 'country', mechanism => 'binary',
                                count => 'persons');
SELECT contcount.create_counter('cp_rows', 1000, horizon => 8, step => '1 day', beta => 1e-9,
                                source => 'cp_visits', mechanism => 'binary', count => 'rows');
SELECT contcount.create_counter('cp_wide_keys', 1000, horizon => 8, step => '1 day', beta => 1e-9,
                                source => 'cp_wide', dimension => 'letter', mechanism => 'binary',
                                count => 'persons');
-- the same with epsilon 1: noise that shows its scale
SELECT contcount.create_counter('cp_total_e1', 1, horizon => 8, step => '1 day', beta => 1e-9,
                                source => 'cp_visits', mechanism => 'binary', count => 'persons');
SELECT contcount.create_counter('cp_keys_e1', 1, horizon => 8, step => '1 day', beta => 1e-9,
                                source => 'cp_visits', dimension => 'country', mechanism => 'binary',
                                count => 'persons');
SELECT name, spent FROM contcount.ledgers WHERE name LIKE 'cp%' ORDER BY name;
SELECT name, dimension, count FROM contcount.counters WHERE name LIKE 'cp%' ORDER BY name;

\c - regress_cp_app
-- Step 1.  Person 1: five rows in de, fr and it (max_groups 2: de and fr,
-- in key order).  Person 2: it four times.  Person 3: a key not declared
-- (a person of cp_total, no key's).  A row without a person: never counted.
INSERT INTO test.cp_visits (person, country) VALUES
    (1, 'de'), (1, 'de'), (1, 'fr'), (1, 'it'), (1, 'de'), (2, 'it'), (2, 'it'), (3, 'xx'), (NULL, 'de');
INSERT INTO test.cp_visits (person, country) SELECT 2, 'it' FROM generate_series(1, 2);
-- Person 6's rows roll back, whole or to a savepoint: nothing counts.
BEGIN;
INSERT INTO test.cp_visits (person, country) VALUES (6, 'de');
ROLLBACK;
BEGIN;
SAVEPOINT a;
INSERT INTO test.cp_visits (person, country) VALUES (6, 'fr');
ROLLBACK TO SAVEPOINT a;
INSERT INTO test.cp_visits (person, country) VALUES (2, 'it');
COMMIT;

\c - postgres
-- What the next step will count, exactly: persons 1, 2, 3 (11 rows, 7 of
-- them within max_rows).
SELECT c.name, i.pending FROM contcount.counters c, contcount.counter_internals(c.name) i
WHERE c.name IN ('cp_total', 'cp_rows') ORDER BY 1;

\c - regress_cp_analyst
SELECT contcount.tick('cp_total');
SELECT contcount.tick('cp_keys');
SELECT contcount.tick('cp_rows');
SELECT contcount.tick('cp_total_e1');
SELECT contcount.tick('cp_keys_e1');

\c - regress_cp_app
-- Step 2.  Persons 1, 2 and 3 again (2 in a second key, de; 3 in it);
-- person 4, new, three times in fr; person 6's first committed row; person
-- 5 twice, in two transactions of one step: counted once.
INSERT INTO test.cp_visits (person, country) VALUES (1, 'de'), (1, 'it'), (2, 'de'), (2, 'it'), (3, 'it');
INSERT INTO test.cp_visits (person, country) VALUES (4, 'fr'), (4, 'fr'), (4, 'fr'), (6, 'de');
INSERT INTO test.cp_visits (person, country) VALUES (5, 'de');
INSERT INTO test.cp_visits (person, country) VALUES (5, 'de');

\c - postgres
-- pending: persons 4, 5 and 6 are new; 7 rows within max_rows
SELECT c.name, i.pending FROM contcount.counters c, contcount.counter_internals(c.name) i
WHERE c.name IN ('cp_total', 'cp_rows') ORDER BY 1;

\c - regress_cp_analyst
SELECT contcount.tick('cp_total');
SELECT contcount.tick('cp_keys');
SELECT contcount.tick('cp_rows');
SELECT contcount.tick('cp_total_e1');
SELECT contcount.tick('cp_keys_e1');

\c - regress_cp_app
-- Step 3.  Person 2 in fr, a third key (max_groups 2): not counted; the
-- others again: nothing new.
INSERT INTO test.cp_visits (person, country) VALUES (2, 'fr'), (1, 'fr'), (4, 'fr'), (5, 'de'), (6, 'de');

\c - regress_cp_analyst
SELECT contcount.tick('cp_total');
SELECT contcount.tick('cp_keys');
SELECT contcount.tick('cp_rows');
SELECT contcount.tick('cp_total_e1');
SELECT contcount.tick('cp_keys_e1');
-- the distinct persons so far: 3, then 6 (4, 5, 6 new), then 6
SELECT t, noisy_count FROM contcount.history('cp_total') ORDER BY t;
-- by key: de 1, 4 (2, 5, 6 new), 4; fr 1, 2 (4), 2; it 1, 2 (3), 2
SELECT key, t, noisy_count FROM contcount.history_by_key('cp_keys') ORDER BY key, t;
SELECT key, t, noisy_count FROM contcount.current_by_key('cp_keys') ORDER BY key;
SELECT t, noisy_count FROM contcount.current('cp_total');
-- counting rows, of the same source: each person's rows up to max_rows (3)
SELECT t, noisy_count FROM contcount.history('cp_rows') ORDER BY t;
-- The noise: that of a counter of sensitivity 1 (without a dimension) and
-- least(max_rows 3, max_groups 2, 3 keys) = 2 (by key), at every step
-- (counting rows it is max_rows, 3); every release of epsilon 1 lies within
-- its bound of the exact one (beta 1e-9 a release, 12 releases: a false
-- alarm below 1.2e-8).
SELECT c.name, s.sensitivity, bool_and(h.stddev = p.stddev AND h.bound = p.bound) AS as_formula,
       bool_and(abs(h.noisy_count - e.noisy_count) <= h.bound) AS within_bound, count(*) AS steps
FROM (VALUES ('cp_total_e1', 'cp_total', 1)) AS s(name, exact, sensitivity)
JOIN contcount.counters c USING (name)
CROSS JOIN LATERAL contcount.history(c.name) h
JOIN contcount.history(s.exact) e USING (t)
JOIN contcount.preview('binary', 1, 8, sensitivity => s.sensitivity, beta => 1e-9) p USING (t)
GROUP BY 1, 2;
SELECT s.sensitivity, bool_and(h.stddev = p.stddev AND h.bound = p.bound) AS as_formula,
       bool_and(abs(h.noisy_count - e.noisy_count) <= h.bound) AS within_bound, count(*) AS releases
FROM (VALUES (2)) AS s(sensitivity)
CROSS JOIN LATERAL contcount.history_by_key('cp_keys_e1') h
JOIN contcount.history_by_key('cp_keys') e USING (key, t)
JOIN contcount.preview('binary', 1, 8, sensitivity => s.sensitivity, beta => 1e-9) p USING (t)
GROUP BY 1;
-- Steps charged nothing more.
SELECT name, spent FROM contcount.ledgers WHERE name LIKE 'cp%' ORDER BY name;

-- Keys declared later never widen a person's reach: cp_wide_keys was
-- created with two keys, so each person counts in at most two, even once a
-- third is declared (max_groups 5 would allow it).
\c - regress_cp_app
INSERT INTO test.cp_wide (person, letter) VALUES (1, 'a'), (1, 'a');
\c - regress_cp_analyst
SELECT contcount.tick('cp_wide_keys');
\c - postgres
SELECT contcount.source_dimension('cp_wide', 'letter', ARRAY['a', 'b', 'c']);
\c - regress_cp_analyst
SELECT contcount.tick('cp_wide_keys');
\c - regress_cp_app
-- person 1: b counts (a second key), c not; person 2: a and b, not c
INSERT INTO test.cp_wide (person, letter) VALUES (1, 'c'), (1, 'b'), (2, 'c'), (2, 'b'), (2, 'a');
\c - regress_cp_analyst
SELECT contcount.tick('cp_wide_keys');
SELECT key, t, noisy_count FROM contcount.history_by_key('cp_wide_keys') ORDER BY key, t;
\c - postgres
-- The sensitivity each counter keeps, and scales its noise to: cp_wide_keys
-- its two keys at creation.
SELECT name, count, sensitivity FROM contcount.counter WHERE name LIKE 'cp%' ORDER BY name;
-- Each person's count is kept (counter_unit: one a person of cp_total;
-- by key, one a key kept, counter_unit_key).
SELECT c.name, u.rows, (SELECT count(*) FROM contcount.counter_unit_key k
                        WHERE k.counter_id = u.counter_id AND k.unit_digest = u.unit_digest) AS keys,
       count(*) AS persons
FROM contcount.counter_unit u JOIN contcount.counter c ON c.id = u.counter_id
WHERE c.name IN ('cp_total', 'cp_keys', 'cp_wide_keys') GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
SELECT c.name, i.steps, i.exact_released, i.pending FROM contcount.counters c,
    contcount.counter_internals(c.name) i WHERE c.name IN ('cp_total', 'cp_rows') ORDER BY 1;
\c - regress_cp_analyst
SELECT contcount.drop_counter(name) FROM contcount.counters WHERE name LIKE 'cp%' ORDER BY name;
\c - postgres
SELECT contcount.drop_source('cp_visits');
SELECT contcount.drop_source('cp_wide');
DROP TABLE test.cp_visits, test.cp_wide;
DROP OWNED BY regress_cp_analyst, regress_cp_app;
DROP ROLE regress_cp_analyst, regress_cp_app;
