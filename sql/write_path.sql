-- The write path of counters over sources: each transaction's persons go
-- to contcount.counter_unit_log in rows small enough never to be toasted
-- (a toasted row cost more than the insert it logged), and a row's key is
-- kept by its text even when the keys are read again in the transaction.
CREATE TABLE test.wp_visits (person int, country text, at timestamptz DEFAULT now());
SELECT contcount.create_ledger('wp_data', 5000);
SELECT contcount.protect_table('wp_visits', 'test.wp_visits', 'person', 'at', 'wp_data',
                               max_rows => 3, max_groups => 2);
SELECT contcount.source_dimension('wp_visits', 'country', ARRAY['de', 'fr', repeat('k', 100)]);
CREATE ROLE regress_wp_app LOGIN;
GRANT USAGE ON SCHEMA test TO regress_wp_app;
GRANT INSERT ON test.wp_visits TO regress_wp_app;
SET contcount.ledger = 'wp_data';
SELECT contcount.create_counter('wp_keys', 1000, horizon => 8, step => '1 day', beta => 1e-9,
                                source => 'wp_visits', dimension => 'country', mechanism => 'binary');
SELECT contcount.create_counter('wp_rows', 1000, horizon => 8, step => '1 day', beta => 1e-9,
                                source => 'wp_visits', mechanism => 'binary');

-- 300 persons in one transaction, each in the key of 100 letters: several
-- rows of the log for each counter, none of them over TOAST's threshold.
\c - regress_wp_app
INSERT INTO test.wp_visits (person, country) SELECT g, repeat('k', 100) FROM generate_series(1, 300) g;
\c - postgres
SELECT c.name, count(*) > 1 AS several_rows, sum(cardinality(l.unit_digests)) AS persons,
       bool_and(pg_column_size(l.*) < 2032) AS none_toasted
FROM contcount.counter_unit_log l JOIN contcount.counter c ON c.id = l.counter_id
WHERE c.name LIKE 'wp%' GROUP BY c.name ORDER BY c.name;
SELECT contcount.tick('wp_keys');
SELECT contcount.tick('wp_rows');
SELECT key = repeat('k', 100) AS long_key, t, noisy_count FROM contcount.current_by_key('wp_keys')
ORDER BY key COLLATE "C";
SELECT t, noisy_count FROM contcount.current('wp_rows');

-- One transaction: rows, the keys declared again (the trigger reads them
-- again at its next statement), more rows of the same persons in the same
-- keys, and a savepoint rolled back.  Person 1000: de twice, before and
-- after (2 rows of de).  Person 1001: fr three times and de once (max_rows
-- 3: fr's first two, de's one, in key order).  Person 1002's rows are all
-- in the savepoint: none counts.
BEGIN;
INSERT INTO test.wp_visits (person, country) VALUES (1000, 'de'), (1001, 'fr'), (1001, 'fr');
SELECT contcount.source_dimension('wp_visits', 'country', ARRAY['de', 'fr', repeat('k', 100), 'it']);
INSERT INTO test.wp_visits (person, country) VALUES (1000, 'de'), (1001, 'fr'), (1001, 'de');
SAVEPOINT a;
INSERT INTO test.wp_visits (person, country) VALUES (1002, 'de'), (1000, 'fr'), (1002, 'it');
ROLLBACK TO SAVEPOINT a;
COMMIT;
SELECT contcount.tick('wp_keys');
SELECT contcount.tick('wp_rows');
SELECT key, t, noisy_count FROM contcount.current_by_key('wp_keys')
WHERE key IN ('de', 'fr', 'it') ORDER BY key COLLATE "C";
SELECT t, noisy_count FROM contcount.current('wp_rows');
SELECT count(*) AS left_in_log FROM contcount.counter_unit_log l
JOIN contcount.counter c ON c.id = l.counter_id WHERE c.name LIKE 'wp%';

-- Each step rewrites every key's state: room is left on its pages so that
-- the new version needs no new entry in the key index.
SELECT reloptions FROM pg_class WHERE oid = 'contcount.counter_key_state'::regclass;

SELECT contcount.drop_counter('wp_keys');
SELECT contcount.drop_counter('wp_rows');
SELECT contcount.drop_source('wp_visits');
DROP TABLE test.wp_visits;
DROP OWNED BY regress_wp_app;
DROP ROLE regress_wp_app;
