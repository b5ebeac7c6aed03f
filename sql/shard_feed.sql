-- The shard's side of counters fed by many servers, on one server:
-- contcount.feed_shard puts the feeding trigger on a table (superuser),
-- contcount.shard_feed_take seals what the table logged for a feed into
-- batches of exact counts, each person bounded by max_rows, and answers
-- {last batch, rows after the watermark} to a role granted EXECUTE on it
-- that may SELECT the table; every other role gets 42501, every bad input
-- its SQLSTATE.  The coordinator and shards: test/t/024_shard_counters.pl.

CREATE TABLE test.feed_rows (user_id int, at timestamptz DEFAULT now());
CREATE VIEW test.feed_view AS SELECT * FROM test.feed_rows;
CREATE ROLE regress_feed_coord LOGIN;
CREATE ROLE regress_feed_app LOGIN;
CREATE ROLE regress_feed_other LOGIN;
GRANT USAGE ON SCHEMA test TO regress_feed_coord, regress_feed_app, regress_feed_other;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_feed_coord, regress_feed_app, regress_feed_other;
GRANT SELECT ON test.feed_rows TO regress_feed_coord, regress_feed_other;
GRANT INSERT ON test.feed_rows TO regress_feed_app;
GRANT EXECUTE ON FUNCTION contcount.shard_feed_take(text, text, text, text, integer, bigint)
    TO regress_feed_coord;

-- no trigger yet: the shard does not feed counters
SET ROLE regress_feed_coord;
SELECT test.error_of($$SELECT contcount.shard_feed_take('f', 'test', 'feed_rows', 'user_id', 5, 0)$$);
RESET ROLE;
-- the trigger: a superuser's, on a table, once
SELECT test.error_of($$SELECT contcount.feed_shard('test.feed_view', 'user_id')$$);
SELECT test.error_of($$SELECT contcount.feed_shard('test.feed_rows', 'nobody')$$);
SELECT test.error_of($$SELECT contcount.feed_shard('test.feed_rows', NULL)$$);
SET ROLE regress_feed_other;
SELECT test.error_of($$SELECT contcount.feed_shard('test.feed_rows', 'user_id')$$);
RESET ROLE;
SELECT contcount.feed_shard('test.feed_rows', 'user_id');
SELECT test.error_of($$SELECT contcount.feed_shard('test.feed_rows', 'user_id')$$);
SELECT tgname, tgfoid::regprocedure FROM pg_trigger WHERE tgrelid = 'test.feed_rows'::regclass;

-- another unit column than the trigger's: 55000
SET ROLE regress_feed_coord;
SELECT test.error_of($$SELECT contcount.shard_feed_take('f', 'test', 'feed_rows', 'at', 5, 0)$$);
-- the first call makes the feed: rows committed before it are not its
RESET ROLE;
INSERT INTO test.feed_rows (user_id) VALUES (1), (1);
SET ROLE regress_feed_coord;
SELECT contcount.shard_feed_take('f', 'test', 'feed_rows', 'user_id', 5, 0) AS opened;
RESET ROLE;

-- the application's inserts: person 1 with 7 rows (bounded to 5), person 2
-- with 2, a row without a person, a transaction rolled back, a savepoint
-- rolled back
SET ROLE regress_feed_app;
INSERT INTO test.feed_rows (user_id) SELECT 1 FROM generate_series(1, 4);
INSERT INTO test.feed_rows (user_id) VALUES (2), (2), (NULL);
BEGIN;
INSERT INTO test.feed_rows (user_id) SELECT 3 FROM generate_series(1, 10);
ROLLBACK;
BEGIN;
INSERT INTO test.feed_rows (user_id) VALUES (1), (1);
SAVEPOINT s;
INSERT INTO test.feed_rows (user_id) SELECT 4 FROM generate_series(1, 10);
ROLLBACK TO SAVEPOINT s;
INSERT INTO test.feed_rows (user_id) VALUES (1);
COMMIT;
-- the application cannot read what is sealed
SELECT test.error_of('SELECT count(*) FROM contcount.shard_feed_batch');
SELECT test.error_of('SELECT count(*) FROM contcount.counter_unit_log');
RESET ROLE;

-- sealed: 5 of person 1, 2 of person 2; asked again from the same
-- watermark (the coordinator's step did not commit), the same answer; from
-- past it, nothing, and the batch is gone
SET ROLE regress_feed_coord;
CREATE TEMP TABLE answers (n int, a bigint[]);
INSERT INTO answers SELECT 1, contcount.shard_feed_take('f', 'test', 'feed_rows', 'user_id', 5, 0);
INSERT INTO answers SELECT 2, contcount.shard_feed_take('f', 'test', 'feed_rows', 'user_id', 5, 0);
INSERT INTO answers SELECT 3, contcount.shard_feed_take('f', 'test', 'feed_rows', 'user_id', 5,
    (SELECT a[1] FROM answers WHERE n = 1));
SELECT n, a[1] > 0 AS has_batch, a[1] = (SELECT a[1] FROM answers WHERE n = 1) AS same_batch, a[2] AS rows
FROM answers ORDER BY n;
RESET ROLE;
SELECT count(*) AS batches_kept FROM contcount.shard_feed_batch;
-- person 1 has no room left, person 2 has 3
SET ROLE regress_feed_app;
INSERT INTO test.feed_rows (user_id) SELECT u FROM generate_series(1, 2) u, generate_series(1, 4);
SET ROLE regress_feed_coord;
SELECT (contcount.shard_feed_take('f', 'test', 'feed_rows', 'user_id', 5,
    (SELECT a[1] FROM answers WHERE n = 1)))[2] AS rows_with_room;
RESET ROLE;

-- bad inputs
SET ROLE regress_feed_coord;
SELECT test.error_of($$SELECT contcount.shard_feed_take('f', 'test', 'feed_rows', 'user_id', 4, 0)$$);
SELECT test.error_of($$SELECT contcount.shard_feed_take('g', 'test', 'feed_rows', 'user_id', 0, 0)$$);
SELECT test.error_of($$SELECT contcount.shard_feed_take('g', 'test', 'feed_rows', 'user_id', 5, -1)$$);
SELECT test.error_of($$SELECT contcount.shard_feed_take(NULL, 'test', 'feed_rows', 'user_id', 5, 0)$$);
SELECT test.error_of($$SELECT contcount.shard_feed_take('g', 'nowhere', 'feed_rows', 'user_id', 5, 0)$$);
SELECT test.error_of($$SELECT contcount.shard_feed_take('g', 'test', 'nothing', 'user_id', 5, 0)$$);
RESET ROLE;

-- other roles: no EXECUTE, or no SELECT on the table: 42501
SET ROLE regress_feed_other;
SELECT test.error_of($$SELECT contcount.shard_feed_take('f', 'test', 'feed_rows', 'user_id', 5, 0)$$);
RESET ROLE;
GRANT EXECUTE ON FUNCTION contcount.shard_feed_take(text, text, text, text, integer, bigint)
    TO regress_feed_app;
SET ROLE regress_feed_app;
SELECT test.error_of($$SELECT contcount.shard_feed_take('f', 'test', 'feed_rows', 'user_id', 5, 0)$$);
RESET ROLE;

DROP TABLE test.feed_rows CASCADE;
DELETE FROM contcount.shard_feed;
DELETE FROM contcount.counter_unit WHERE counter_id < 0;
DELETE FROM contcount.counter_unit_log WHERE counter_id < 0;
DROP OWNED BY regress_feed_coord, regress_feed_app, regress_feed_other;
DROP ROLE regress_feed_coord, regress_feed_app, regress_feed_other;
