-- Counters over a source's dimension: a running count of every declared
-- key at every step, for one charge.  Each person keeps at most max_groups
-- (2) keys and max_rows (3) rows in all, across keys and steps.
CREATE TABLE test.kd_visits (person int, country text, at timestamptz DEFAULT now());
SELECT contcount.create_ledger('kd_data', 5000);
SELECT contcount.create_ledger('kd_team', 5000);
SELECT contcount.protect_table('kd_visits', 'test.kd_visits', 'person', 'at', 'kd_data',
                               max_rows => 3, max_groups => 2);
SELECT contcount.source_dimension('kd_visits', 'country', ARRAY['it', 'de', 'fr']);
CREATE ROLE regress_kd_analyst LOGIN;
CREATE ROLE regress_kd_app LOGIN;
ALTER ROLE regress_kd_analyst SET contcount.ledger = 'kd_team';
GRANT USAGE ON SCHEMA test TO regress_kd_analyst, regress_kd_app;
GRANT INSERT ON test.kd_visits TO regress_kd_app;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_kd_analyst;
SELECT contcount.grant_source('kd_visits', 'regress_kd_analyst');

\c - regress_kd_analyst
-- Bad calls, refused before anything is charged.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.create_counter('x', 1, horizon => 10, dimension => 'country')$$),
    ($$SELECT contcount.create_counter('x', 1, horizon => 10, source => 'kd_visits', dimension => 'city')$$),
    ($$SELECT contcount.create_counter('x', 1, horizon => 10, source => 'kd_visits', dimension => '')$$),
    ($$SELECT contcount.create_counter('x', 1, horizon => 10, source => 'kd_visits', dimension => 'country',
                                       monotone => true)$$)
) AS cases(s);
SELECT name, spent FROM contcount.ledgers WHERE name LIKE 'kd%' ORDER BY name;
-- One charge for all keys: the epsilon of the counter, once, to each ledger.
SELECT contcount.create_counter('kd_exact', 1000, horizon => 8, step => '1 day', beta => 1e-9,
                                source => 'kd_visits', dimension => 'country', mechanism => 'binary');
SELECT name, spent FROM contcount.ledgers WHERE name LIKE 'kd%' ORDER BY name;
SELECT contcount.create_counter('kd_noisy', 1, horizon => 8, step => '1 day', beta => 1e-9,
                                source => 'kd_visits', dimension => 'country', mechanism => 'binary');
SELECT contcount.create_counter('kd_plain', 1, horizon => 8, step => '1 day', source => 'kd_visits',
                                mechanism => 'binary');
SELECT name, spent FROM contcount.ledgers WHERE name LIKE 'kd%' ORDER BY name;
-- A counter over a dimension is read by key; one without, as before.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT * FROM contcount.current('kd_exact')$$),
    ($$SELECT * FROM contcount.history('kd_exact')$$),
    ($$SELECT * FROM contcount.current_by_key('kd_plain')$$),
    ($$SELECT * FROM contcount.history_by_key('kd_nope')$$),
    ($$SELECT * FROM contcount.current_by_key(NULL)$$),
    ($$SELECT * FROM contcount.history_by_key('')$$),
    ($$SELECT contcount.create_alert('kd_exact', 5, 'kd_channel')$$),
    ($$SELECT contcount.create_alert('kd_exact', 5, 'kd_channel', 'xx')$$)
) AS cases(s);

\c - regress_kd_app
-- Person 1: de twice, fr, it (max_groups 2: de and fr, in key order; 3 rows).
-- Person 2: it five times (max_rows: 3).  Person 3: a key not declared,
-- person 4 no key, a row without a person: none of them counted.
INSERT INTO test.kd_visits (person, country) VALUES (1, 'de'), (1, 'de'), (1, 'fr'), (1, 'it');
INSERT INTO test.kd_visits (person, country) SELECT 2, 'it' FROM generate_series(1, 5);
INSERT INTO test.kd_visits (person, country) VALUES (3, 'xx'), (4, NULL), (NULL, 'de');
-- Person 9: de (one key, one row so far).  Person 10: de and fr twice
-- each, in two keys: 3 rows in all, de's two first (key order).
INSERT INTO test.kd_visits (person, country) VALUES (9, 'de');
INSERT INTO test.kd_visits (person, country) VALUES (10, 'fr'), (10, 'de'), (10, 'fr'), (10, 'de');
-- a rolled-back savepoint counts nothing
BEGIN;
SAVEPOINT a;
INSERT INTO test.kd_visits (person, country) VALUES (6, 'de');
ROLLBACK TO SAVEPOINT a;
COMMIT;

\c - regress_kd_analyst
SELECT contcount.tick('kd_exact');
SELECT contcount.tick('kd_noisy');
SELECT contcount.tick('kd_plain');
SELECT key, t, noisy_count FROM contcount.current_by_key('kd_exact');
-- the plain counter counts the same persons, bounded by max_rows only
SELECT t, noisy_count BETWEEN 10 - bound AND 10 + bound AS within FROM contcount.current('kd_plain');

\c - regress_kd_app
-- Person 1 has its two keys and its three rows: nothing more counts.
-- Person 5: fr.  Person 9, with room for two more rows: it and fr, of
-- which only fr counts (a second key; it would be a third).  No row of de
-- or it counts: their counts stay.
INSERT INTO test.kd_visits (person, country) VALUES (1, 'it'), (1, 'de'), (5, 'fr');
INSERT INTO test.kd_visits (person, country) VALUES (9, 'it'), (9, 'fr');
-- A key not declared yet: left out, even once it is declared.
INSERT INTO test.kd_visits (person, country) VALUES (7, 'es');

\c - postgres
-- One session inserts, the keys change, it inserts again: its trigger
-- reads the keys as declared now (person 30's de counts, and person 31's
-- es, declared in between).
INSERT INTO test.kd_visits (person, country) VALUES (30, 'de');
SELECT contcount.source_dimension('kd_visits', 'country', ARRAY['it', 'de', 'fr', 'es']);
INSERT INTO test.kd_visits (person, country) VALUES (31, 'es');

\c - regress_kd_analyst
SELECT contcount.tick('kd_exact');
SELECT contcount.tick('kd_noisy');

\c - regress_kd_app
-- es joined at that step: person 7's new row counts (its earlier row never).
INSERT INTO test.kd_visits (person, country) VALUES (7, 'es'), (8, 'es');

\c - regress_kd_analyst
SELECT contcount.tick('kd_exact');
SELECT contcount.tick('kd_noisy');
SELECT key, t, noisy_count FROM contcount.history_by_key('kd_exact');
SELECT key, t, noisy_count FROM contcount.current_by_key('kd_exact');
-- With epsilon 1 every release lies within its bound (beta 1e-9 each,
-- 11 releases: a false alarm below 1.1e-8).
SELECT count(*) AS releases, bool_and(abs(n.noisy_count - e.noisy_count) <= n.bound) AS within_bound
FROM contcount.history_by_key('kd_noisy') n JOIN contcount.history_by_key('kd_exact') e USING (key, t);
-- Steps charged nothing more.
SELECT name, spent FROM contcount.ledgers WHERE name LIKE 'kd%' ORDER BY name;
SELECT name, steps, dimension FROM contcount.counters WHERE name LIKE 'kd%' ORDER BY name;

\c - postgres
-- The dimension's column dropped: inserts go through, and count nothing.
ALTER TABLE test.kd_visits DROP COLUMN country;
INSERT INTO test.kd_visits (person) VALUES (20), (21);
-- The log was consumed by the steps, and nothing logged since the drop.
SELECT count(*) AS left_in_log FROM contcount.counter_unit_log l
JOIN contcount.counter c ON c.id = l.counter_id WHERE c.dimension IS NOT NULL;
-- Each person's kept keys and rows are remembered.
SELECT u.rows, (SELECT count(*) FROM contcount.counter_unit_key k
                WHERE k.counter_id = u.counter_id AND k.unit_digest = u.unit_digest) AS keys
FROM contcount.counter_unit u JOIN contcount.counter c ON c.id = u.counter_id
WHERE c.name = 'kd_exact' ORDER BY 1, 2;
\c - regress_kd_analyst
SELECT contcount.drop_counter('kd_exact');
SELECT contcount.drop_counter('kd_noisy');
SELECT contcount.drop_counter('kd_plain');
\c - postgres
SELECT count(*) AS key_rows_left FROM contcount.counter_key_state;
SELECT contcount.drop_source('kd_visits');
DROP TABLE test.kd_visits;
DROP OWNED BY regress_kd_analyst, regress_kd_app;
DROP ROLE regress_kd_analyst, regress_kd_app;
