-- Alerts over a quantity that is not released: the sparse vector technique
-- over the count of a counter's last steps, charged once to a ledger for up
-- to max_positives answers above the threshold, then it stops.  Its owner
-- is not a superuser.

SELECT contcount.create_ledger('sparse', 25);
CREATE ROLE regress_sparse_owner LOGIN;
CREATE ROLE regress_sparse_reader LOGIN;
GRANT USAGE ON SCHEMA test TO regress_sparse_owner, regress_sparse_reader;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_sparse_owner, regress_sparse_reader;
SELECT contcount.grant_ledger('sparse', 'regress_sparse_owner');
CREATE TABLE test.sparse_rows (n int);
ALTER TABLE test.sparse_rows OWNER TO regress_sparse_owner;

\c - regress_sparse_owner
SELECT contcount.create_counter('windowed', 1, horizon => 100, step => '1 day', mechanism => 'binary',
    ledger => 'sparse');
SELECT contcount.create_counter('wide', 1, horizon => 100, step => '1 day', mechanism => 'binary',
    sensitivity => 1000000, ledger => 'sparse');
SELECT contcount.attach_counter('windowed', 'test.sparse_rows');
SELECT contcount.grant_counter('windowed', 'regress_sparse_reader');

-- Bad input.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.create_sparse_alert('nope', 10, 2, 1)$$),
    ($$SELECT contcount.create_sparse_alert('windowed', NULL, 2, 1)$$),
    ($$SELECT contcount.create_sparse_alert('windowed', 'ten', 2, 1)$$),
    ($$SELECT contcount.create_sparse_alert('windowed', 10, 0, 1)$$),
    ($$SELECT contcount.create_sparse_alert('windowed', 10, 10001, 1)$$),
    ($$SELECT contcount.create_sparse_alert('windowed', 10, 2, 0)$$),
    ($$SELECT contcount.create_sparse_alert('windowed', 10, 2, 'NaN')$$),
    ($$SELECT contcount.create_sparse_alert('windowed', 10, 2, 1, max_positives => 0)$$),
    ($$SELECT contcount.create_sparse_alert('windowed', 10, 2, 1, max_positives => 1001)$$),
    ($$SELECT contcount.create_sparse_alert('windowed', 10, 2, 1e-9)$$),
    ($$SELECT contcount.create_sparse_alert('wide', 10, 2, 1e-6, max_positives => 1000)$$),
    ($$SELECT contcount.create_sparse_alert('windowed', 10, 2, 1, channel => '')$$),
    ($$SELECT contcount.create_sparse_alert('windowed', 10, 2, 100, ledger => 'sparse')$$),
    ($$SELECT contcount.create_sparse_alert('windowed', 10, 2, 1, ledger => 'nope')$$)
) AS cases(s);
-- Refused, they charged nothing, and left no alert.
SELECT spent FROM contcount.ledgers WHERE name = 'sparse';
SELECT count(*) FROM contcount.alerts;

-- A reader of the counter may not spend on its exact counts.
\c - regress_sparse_reader
SELECT test.error_of($$SELECT contcount.create_sparse_alert('windowed', 10, 2, 1, ledger => 'sparse')$$);
SELECT count(*) FROM contcount.alerts;

-- Charged once, at creation: epsilon each (the counters paid 2).  High
-- epsilons, so that the noise (threshold and query scales 4/10 and 8/10 for
-- two positives, 2/10 and 4/10 for one) cannot matter here: a draw beyond
-- 49 has probability below e^-60.
\c - regress_sparse_owner
SELECT contcount.create_sparse_alert('windowed', 150, 2, 10, max_positives => 2, ledger => 'sparse') AS twice \gset
SELECT contcount.create_sparse_alert('windowed', 1000000, 2, 10, channel => 'never', ledger => 'sparse') IS NOT NULL AS created;
SELECT spent FROM contcount.ledgers WHERE name = 'sparse';
SELECT kind, counter, threshold, window_steps, epsilon, max_positives, positives, fired_step, fired_value
FROM contcount.alerts ORDER BY id;

-- Steps of 100 rows: the count of the last two steps is 100, then 200 at
-- every step.  Above 150 at steps 2 and 3; then the alert has answered
-- twice and stops, silent at step 4, where the count is still 200.
INSERT INTO test.sparse_rows SELECT 1 FROM generate_series(1, 100);
\c - postgres
SELECT contcount.tick('windowed');
\c - regress_sparse_owner
SELECT positives, fired_step FROM contcount.alerts WHERE id = :twice;
INSERT INTO test.sparse_rows SELECT 1 FROM generate_series(1, 100);
\c - postgres
SELECT contcount.tick('windowed');
\c - regress_sparse_owner
SELECT positives, fired_step FROM contcount.alerts WHERE id = :twice;
INSERT INTO test.sparse_rows SELECT 1 FROM generate_series(1, 100);
\c - postgres
SELECT contcount.tick('windowed');
\c - regress_sparse_owner
INSERT INTO test.sparse_rows SELECT 1 FROM generate_series(1, 100);
\c - postgres
SELECT contcount.tick('windowed');
\c - regress_sparse_owner
SELECT kind, threshold, positives, fired_step FROM contcount.alerts ORDER BY id;
-- Nothing more was charged by the steps.
SELECT spent FROM contcount.ledgers WHERE name = 'sparse';

-- The state (its noise, the window's exact counts) is the extension owner's.
SELECT test.error_of($$SELECT state FROM contcount.counter_sparse_alert$$);


-- A copy of an alert's state (pg_upgrade carries it; simulated here by
-- moving its record) is dropped at the next step, before it answers.
\c - postgres
UPDATE contcount.counter_sparse_alert SET place_database = 0 WHERE channel = 'never';
SELECT contcount.tick('windowed');
\c - regress_sparse_owner
SELECT kind, threshold, channel FROM contcount.alerts ORDER BY id;

-- The creator drops it; dropping the counter drops the rest.
SELECT contcount.drop_alert(:twice);
SELECT contcount.create_sparse_alert('windowed', 10, 2, 0.5, ledger => 'sparse') IS NOT NULL AS another;
SELECT count(*) FROM contcount.alerts;
SELECT contcount.drop_counter('windowed');
SELECT count(*) FROM contcount.alerts;
\c - postgres
SELECT count(*) FROM contcount.counter_sparse_alert;
DROP TABLE test.sparse_rows;
DROP OWNED BY regress_sparse_owner, regress_sparse_reader;
DROP ROLE regress_sparse_owner, regress_sparse_reader;
