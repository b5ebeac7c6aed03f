-- A transaction with many persons writes its log early, a level at a time
-- (65,536 entries in memory at most): what a rolled-back savepoint logged
-- early is rolled back with it, what a released one logged is kept, and
-- each person is counted once, within max_rows (2), by the step.
CREATE TABLE test.ul_visits (person int, at timestamptz DEFAULT now());
SELECT contcount.create_ledger('ul_visits_data', 100);
SELECT contcount.protect_table('ul_visits', 'test.ul_visits', 'person', 'at', 'ul_visits_data', max_rows => 2);
SELECT contcount.create_counter('ul_visits_live', 1, horizon => 10, step => '1 day', ledger => 'ul_visits_data',
                                source => 'ul_visits', mechanism => 'binary');
BEGIN;
INSERT INTO test.ul_visits (person) SELECT g FROM generate_series(1, 70000) g;
SAVEPOINT a;
INSERT INTO test.ul_visits (person) SELECT g FROM generate_series(100001, 170000) g;
ROLLBACK TO SAVEPOINT a;
SAVEPOINT b;
INSERT INTO test.ul_visits (person) SELECT g FROM generate_series(200001, 270000) g;
RELEASE SAVEPOINT b;
-- every person of the first statement once more (the first rows of some
-- were written early, in the transaction's own level: kept), and one row
-- too many for some of them
INSERT INTO test.ul_visits (person) SELECT g FROM generate_series(1, 70000) g;
INSERT INTO test.ul_visits (person) SELECT g FROM generate_series(1, 1000) g;
COMMIT;
-- 70,000 persons at their bound of 2, 70,000 with one row
SELECT pending FROM contcount.counter_internals('ul_visits_live');
SELECT contcount.tick('ul_visits_live');
SELECT exact_released, pending FROM contcount.counter_internals('ul_visits_live');
SELECT rows, count(*) AS persons FROM contcount.counter_unit u JOIN contcount.counter c ON c.id = u.counter_id
WHERE c.name = 'ul_visits_live' GROUP BY rows ORDER BY rows;
SELECT count(*) AS left_in_log FROM contcount.counter_unit_log l JOIN contcount.counter c ON c.id = l.counter_id
WHERE c.name = 'ul_visits_live';
SELECT contcount.drop_counter('ul_visits_live');
SELECT contcount.drop_source('ul_visits');
DROP TABLE test.ul_visits;
