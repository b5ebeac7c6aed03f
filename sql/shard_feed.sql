-- The shard's side of counters fed by many servers, on one server:
-- contcount.feed_shard puts the feeding trigger on a table (superuser),
-- contcount.shard_feed_take seals what the table logged for a feed into
-- batches of exact counts, each person bounded by max_rows, and answers
-- (last batch, rows after the watermark, over a dimension each declared
-- key's rows) to a role granted EXECUTE on it
-- that may SELECT the table; every other role gets 42501, every bad input
-- its SQLSTATE; contcount.shard_feed_drop deletes a dropped counter's feed
-- and everything under its id.  The coordinator and shards:
-- test/t/024_shard_counters.pl, test/t/026_shard_feed_drop.pl.

CREATE TABLE test.feed_rows (user_id int, at timestamptz DEFAULT now());
CREATE VIEW test.feed_view AS SELECT * FROM test.feed_rows;
CREATE ROLE regress_feed_coord LOGIN;
CREATE ROLE regress_feed_app LOGIN;
CREATE ROLE regress_feed_other LOGIN;
GRANT USAGE ON SCHEMA test TO regress_feed_coord, regress_feed_app, regress_feed_other;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_feed_coord, regress_feed_app, regress_feed_other;
GRANT SELECT ON test.feed_rows TO regress_feed_coord, regress_feed_other;
GRANT INSERT ON test.feed_rows TO regress_feed_app;
GRANT EXECUTE ON FUNCTION contcount.shard_feed_take(text, text, text, text, integer, bigint, text, text[],
    integer, boolean)
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
INSERT INTO answers SELECT 1, ARRAY[t.upto, t.rows]
    FROM contcount.shard_feed_take('f', 'test', 'feed_rows', 'user_id', 5, 0) t;
INSERT INTO answers SELECT 2, ARRAY[t.upto, t.rows]
    FROM contcount.shard_feed_take('f', 'test', 'feed_rows', 'user_id', 5, 0) t;
INSERT INTO answers SELECT 3, ARRAY[t.upto, t.rows]
    FROM contcount.shard_feed_take('f', 'test', 'feed_rows', 'user_id', 5,
    (SELECT a[1] FROM answers WHERE n = 1)) t;
SELECT n, a[1] > 0 AS has_batch, a[1] = (SELECT a[1] FROM answers WHERE n = 1) AS same_batch, a[2] AS rows
FROM answers ORDER BY n;
RESET ROLE;
SELECT count(*) AS batches_kept FROM contcount.shard_feed_batch;
-- person 1 has no room left, person 2 has 3
SET ROLE regress_feed_app;
INSERT INTO test.feed_rows (user_id) SELECT u FROM generate_series(1, 2) u, generate_series(1, 4);
SET ROLE regress_feed_coord;
SELECT (contcount.shard_feed_take('f', 'test', 'feed_rows', 'user_id', 5,
    (SELECT a[1] FROM answers WHERE n = 1))).rows AS rows_with_room;
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
GRANT EXECUTE ON FUNCTION contcount.shard_feed_take(text, text, text, text, integer, bigint, text, text[],
    integer, boolean)
    TO regress_feed_app;
SET ROLE regress_feed_app;
SELECT test.error_of($$SELECT contcount.shard_feed_take('f', 'test', 'feed_rows', 'user_id', 5, 0)$$);
RESET ROLE;

-- Over a dimension: the coordinator names the key column, the keys it
-- declared, max_groups and whether it counts persons; the shard logs every
-- key and keeps only the declared ones, so that a key not declared never
-- takes one of a person's max_groups keys.
CREATE TABLE test.feed_keyed (user_id int, country text);
GRANT SELECT ON test.feed_keyed TO regress_feed_coord;
GRANT INSERT ON test.feed_keyed TO regress_feed_app;
SELECT contcount.feed_shard('test.feed_keyed', 'user_id');
SET ROLE regress_feed_coord;
-- bad key arguments
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.shard_feed_take('k', 'test', 'feed_keyed', 'user_id', 3, 0, 'nope', '{de}', 2)$$),
    ($$SELECT contcount.shard_feed_take('k', 'test', 'feed_keyed', 'user_id', 3, 0, 'country', NULL, 2)$$),
    ($$SELECT contcount.shard_feed_take('k', 'test', 'feed_keyed', 'user_id', 3, 0, 'country', '{de,NULL}', 2)$$),
    ($$SELECT contcount.shard_feed_take('k', 'test', 'feed_keyed', 'user_id', 3, 0, 'country', '{{de},{fr}}', 2)$$),
    ($$SELECT contcount.shard_feed_take('k', 'test', 'feed_keyed', 'user_id', 3, 0, 'country', '{de}', 0)$$),
    ($$SELECT contcount.shard_feed_take('k', 'test', 'feed_keyed', 'user_id', 3, 0, 'country', '{de}')$$),
    ($$SELECT contcount.shard_feed_take('k', 'test', 'feed_keyed', 'user_id', 3, 0, NULL, '{de}')$$),
    ($$SELECT contcount.shard_feed_take('k', 'test', 'feed_keyed', 'user_id', 3, 0, NULL, NULL, 2)$$)
) AS cases(s);
-- two feeds opened: rows (max_rows 3, max_groups 2) and persons (a row a
-- person and key, in at most 2 keys: max_rows is the counter's sensitivity)
SELECT upto, rows, key_names, key_rows FROM contcount.shard_feed_take('k', 'test', 'feed_keyed',
    'user_id', 3, 0, 'country', '{it,de,fr}', 2);
SELECT upto, rows, key_names, key_rows FROM contcount.shard_feed_take('kp', 'test', 'feed_keyed',
    'user_id', 2, 0, 'country', '{it,de,fr}', 2, true);
-- a feed keeps its bounds and its key column
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.shard_feed_take('k', 'test', 'feed_keyed', 'user_id', 3, 0, 'country', '{de}', 3)$$),
    ($$SELECT contcount.shard_feed_take('k', 'test', 'feed_keyed', 'user_id', 3, 0, 'country', '{de}', 2, true)$$),
    ($$SELECT contcount.shard_feed_take('k', 'test', 'feed_keyed', 'user_id', 3, 0)$$),
    ($$SELECT contcount.shard_feed_take('f', 'test', 'feed_rows', 'user_id', 5, 0, 'at', '{de}', 2)$$)
) AS cases(s);
-- Person 1: de twice, fr, it (max_groups 2: de and fr, in key order; 3
-- rows).  Person 2: it five times (max_rows: 3).  Person 3: aa (not
-- declared, first in key order), de, fr: both declared keys count.
-- Person 4: no key.
SET ROLE regress_feed_app;
INSERT INTO test.feed_keyed VALUES (1, 'de'), (1, 'de'), (1, 'fr'), (1, 'it');
INSERT INTO test.feed_keyed SELECT 2, 'it' FROM generate_series(1, 5);
INSERT INTO test.feed_keyed VALUES (3, 'aa'), (3, 'de'), (3, 'fr'), (4, NULL);
SET ROLE regress_feed_coord;
CREATE TEMP TABLE keyed AS
SELECT 'k' AS feed, t.* FROM contcount.shard_feed_take('k', 'test', 'feed_keyed', 'user_id', 3, 0,
    'country', '{it,de,fr}', 2) t;
INSERT INTO keyed SELECT 'kp', t.* FROM contcount.shard_feed_take('kp', 'test', 'feed_keyed',
    'user_id', 2, 0, 'country', '{it,de,fr}', 2, true) t;
SELECT feed, upto > 0 AS has_batch, rows, key_names, key_rows FROM keyed ORDER BY feed;
-- asked again from the same watermark: the same; past it: nothing
SELECT rows, key_names, key_rows FROM contcount.shard_feed_take('k', 'test', 'feed_keyed', 'user_id',
    3, 0, 'country', '{it,de,fr}', 2);
-- persons 1 and 2 have no room left, person 5 has; a key declared since
-- (aa) counts from this seal on (person 3's aa row went with the first)
SET ROLE regress_feed_app;
INSERT INTO test.feed_keyed VALUES (1, 'it'), (1, 'de'), (2, 'fr'), (5, 'fr'), (6, 'aa');
SET ROLE regress_feed_coord;
SELECT rows, key_names, key_rows FROM contcount.shard_feed_take('k', 'test', 'feed_keyed', 'user_id',
    3, (SELECT upto FROM keyed WHERE feed = 'k'), 'country', '{it,de,fr,aa}', 2);
RESET ROLE;
SELECT count(*) AS person_keys FROM contcount.counter_unit_key WHERE counter_id < 0;

-- The coordinator dropped counter k: contcount.shard_feed_drop deletes its
-- feed and everything under the feed's id, for the roles granted EXECUTE
-- only; the other feed of the table (kp) keeps all of its own.
SET ROLE regress_feed_app;
INSERT INTO test.feed_keyed VALUES (7, 'de'), (7, 'fr');
RESET ROLE;
CREATE TEMP TABLE feed_ids AS SELECT name, -id AS log_id FROM contcount.shard_feed;
CREATE FUNCTION pg_temp.feed_holds(f text) RETURNS bigint[] LANGUAGE sql AS $$
    SELECT ARRAY[(SELECT count(*) FROM contcount.shard_feed WHERE name = f),
                 (SELECT count(*) FROM contcount.shard_feed_batch b JOIN contcount.shard_feed s
                      ON s.id = b.feed_id WHERE s.name = f),
                 (SELECT count(*) FROM contcount.counter_unit u, feed_ids i
                      WHERE i.name = f AND u.counter_id = i.log_id),
                 (SELECT count(*) FROM contcount.counter_unit_key u, feed_ids i
                      WHERE i.name = f AND u.counter_id = i.log_id),
                 (SELECT count(*) FROM contcount.counter_unit_log u, feed_ids i
                      WHERE i.name = f AND u.counter_id = i.log_id)] $$;
SELECT name, pg_temp.feed_holds(name) AS "feed, batches, persons, keys, log" FROM feed_ids
WHERE name IN ('k', 'kp') ORDER BY name;
-- no EXECUTE: 42501, and nothing is gone
SET ROLE regress_feed_coord;
SELECT test.error_of($$SELECT contcount.shard_feed_drop('k')$$);
RESET ROLE;
SET ROLE regress_feed_other;
SELECT test.error_of($$SELECT contcount.shard_feed_drop('k')$$);
RESET ROLE;
SELECT pg_temp.feed_holds('k') AS k_before;
GRANT EXECUTE ON FUNCTION contcount.shard_feed_drop(text) TO regress_feed_coord;
SET ROLE regress_feed_coord;
SELECT test.error_of($$SELECT contcount.shard_feed_drop(NULL)$$);
SELECT contcount.shard_feed_drop('k') AS dropped;
-- asked again (the answer was lost): nothing to do, no error
SELECT contcount.shard_feed_drop('k') AS dropped_again;
SELECT contcount.shard_feed_drop('never') AS dropped_never;
-- the table's trigger no longer logs for k, still for kp
SET ROLE regress_feed_app;
INSERT INTO test.feed_keyed VALUES (8, 'de');
RESET ROLE;
SELECT name, pg_temp.feed_holds(name) AS "feed, batches, persons, keys, log" FROM feed_ids
WHERE name IN ('k', 'kp') ORDER BY name;

DROP TABLE test.feed_rows CASCADE;
DROP TABLE test.feed_keyed CASCADE;
DELETE FROM contcount.shard_feed;
DELETE FROM contcount.counter_unit WHERE counter_id < 0;
DELETE FROM contcount.counter_unit_log WHERE counter_id < 0;
DELETE FROM contcount.counter_unit_key WHERE counter_id < 0;
DROP OWNED BY regress_feed_coord, regress_feed_app, regress_feed_other;
DROP ROLE regress_feed_coord, regress_feed_app, regress_feed_other;
