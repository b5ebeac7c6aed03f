-- Named counters: fed by insert triggers, stepped by the worker, read back.
-- This database is contcount.database, where the step worker runs.

SELECT contcount.create_ledger('counters', 10);
SET contcount.ledger = 'counters';

CREATE TABLE test.signups (id serial, country text, paid boolean DEFAULT false);
CREATE TABLE test.signups_legacy (id serial, country text);

-- Creating a counter charges its ledger once, for the whole continual release.
SELECT contcount.create_counter('signups', 1, horizon => 100, step => '1 day', beta => 1e-9, mechanism => 'binary');
SELECT contcount.create_counter('paid', 0.5, mechanism => 'hybrid', step => '1 day', beta => 1e-9);
SELECT name, mechanism, epsilon, horizon, step, steps, finished FROM contcount.counters ORDER BY name;
SELECT spent FROM contcount.ledgers WHERE name = 'counters';

-- Every kind of trigger: row-level, row-level with WHEN, statement-level
-- with the inserted rows; two tables feed one counter.
CREATE TRIGGER count_signups AFTER INSERT ON test.signups
    FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts('signups');
CREATE TRIGGER count_paid AFTER INSERT ON test.signups
    FOR EACH ROW WHEN (NEW.paid) EXECUTE FUNCTION contcount.count_inserts('paid');
CREATE TRIGGER count_legacy AFTER INSERT ON test.signups_legacy
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('signups');

-- The exact counts, as a superuser sees them: released in steps, and
-- committed but not yet in a step.
CREATE FUNCTION test.counted(counter text) RETURNS TABLE (steps bigint, released bigint, pending bigint)
LANGUAGE sql AS $$ SELECT steps, exact_released, pending FROM contcount.counter_internals(counter) $$;

INSERT INTO test.signups (country, paid) VALUES ('fr', true), ('nz', false), ('usa', true);
INSERT INTO test.signups (country) SELECT 'fr' FROM generate_series(1, 100);
INSERT INTO test.signups_legacy (country) SELECT 'nz' FROM generate_series(1, 50);
COPY test.signups (country, paid) FROM stdin;
fr	t
nz	f
\.
COPY test.signups_legacy (country) FROM stdin;
usa
\.
SELECT * FROM test.counted('signups');
SELECT * FROM test.counted('paid');

-- Aborted work counts nothing: a rollback, a rolled-back savepoint, an
-- error; a released savepoint counts with its transaction.
BEGIN;
INSERT INTO test.signups (country) VALUES ('x');
ROLLBACK;
BEGIN;
INSERT INTO test.signups (country) VALUES ('kept');
SAVEPOINT a;
INSERT INTO test.signups (country) SELECT 'dropped' FROM generate_series(1, 10);
ROLLBACK TO SAVEPOINT a;
SAVEPOINT b;
INSERT INTO test.signups (country) VALUES ('kept too');
RELEASE SAVEPOINT b;
COMMIT;
INSERT INTO test.signups (id, country) VALUES ('not a number', 'x');
SELECT * FROM test.counted('signups');

-- Two-phase commit: counted when committed, not when rolled back.  A stock
-- cluster allows no prepared transaction (max_prepared_transactions is 0):
-- there, plain transactions show the same, the first left open while the
-- counts are read.
SELECT current_setting('max_prepared_transactions')::int > 0 AS two_phase \gset
BEGIN;
INSERT INTO test.signups (country) SELECT 'prepared' FROM generate_series(1, 5);
\if :two_phase
PREPARE TRANSACTION 'counted';
BEGIN;
INSERT INTO test.signups (country) SELECT 'prepared' FROM generate_series(1, 7);
PREPARE TRANSACTION 'not counted';
\endif
SELECT * FROM test.counted('signups');
\if :two_phase
COMMIT PREPARED 'counted';
ROLLBACK PREPARED 'not counted';
\else
COMMIT;
BEGIN;
INSERT INTO test.signups (country) SELECT 'prepared' FROM generate_series(1, 7);
ROLLBACK;
\endif
SELECT * FROM test.counted('signups');

-- Every committed insert is counted exactly once.
SELECT (SELECT count(*) FROM test.signups) + (SELECT count(*) FROM test.signups_legacy)
       = (SELECT released + pending FROM test.counted('signups')) AS all_counted,
       (SELECT count(*) FROM test.signups WHERE paid)
       = (SELECT released + pending FROM test.counted('paid')) AS paid_counted;

-- A statement-level trigger without a transition table counts from the
-- statement's own row count: every plain INSERT and COPY, rows kept out by
-- ON CONFLICT DO NOTHING or a BEFORE trigger not counted, statements inside
-- functions and triggers counted in their own right, partitions through
-- their root.
SELECT contcount.create_counter('orders', 0.5, horizon => 100, step => '1 day', mechanism => 'binary');
CREATE TABLE test.orders (id int PRIMARY KEY, amount int);
CREATE TABLE test.baskets (id int, items int);
CREATE TABLE test.shop_visits (day date, n int) PARTITION BY RANGE (day);
CREATE TABLE test.shop_visits_2025 PARTITION OF test.shop_visits FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
CREATE TABLE test.shop_visits_2026 PARTITION OF test.shop_visits FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
CREATE TRIGGER count_orders AFTER INSERT ON test.orders
    FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('orders');
CREATE TRIGGER count_baskets AFTER INSERT ON test.baskets
    FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('orders');
CREATE TRIGGER count_shop_visits AFTER INSERT ON test.shop_visits
    FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('orders');
INSERT INTO test.orders VALUES (1, 10), (2, 20);
INSERT INTO test.orders SELECT g, g FROM generate_series(3, 12) g;
INSERT INTO test.orders SELECT g, g FROM generate_series(10, 14) g ON CONFLICT DO NOTHING;
COPY test.orders FROM stdin;
15	1
16	2
\.
INSERT INTO test.shop_visits VALUES ('2025-06-01', 1), ('2026-06-01', 2), ('2026-07-01', 3);
SELECT pending AS "2 + 10 + 2 + 2 + 3" FROM test.counted('orders');
CREATE FUNCTION test.skip_negative() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RETURN CASE WHEN NEW.amount < 0 THEN NULL ELSE NEW END; END $$;
CREATE TRIGGER skip_negative BEFORE INSERT ON test.orders
    FOR EACH ROW EXECUTE FUNCTION test.skip_negative();
INSERT INTO test.orders VALUES (20, -1), (21, 1), (22, -5);
COPY test.orders FROM stdin;
23	-1
24	1
\.
SELECT pending AS "19 + 1 + 1" FROM test.counted('orders');
-- a basket's row trigger inserts an order: both statements are counted
CREATE FUNCTION test.order_basket() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO test.orders VALUES (100 + NEW.id, NEW.items); RETURN NULL; END $$;
CREATE TRIGGER order_basket AFTER INSERT ON test.baskets
    FOR EACH ROW EXECUTE FUNCTION test.order_basket();
INSERT INTO test.baskets VALUES (1, 3), (2, 4);
DO $$ BEGIN INSERT INTO test.orders VALUES (30, 1), (31, 1); END $$;
CREATE FUNCTION test.order_one(id int) RETURNS void LANGUAGE sql
AS $$ INSERT INTO test.orders VALUES (id, 1) $$;
SELECT test.order_one(40);
BEGIN;
INSERT INTO test.orders VALUES (50, 1);
SAVEPOINT a;
INSERT INTO test.orders VALUES (51, 1), (52, 1);
ROLLBACK TO SAVEPOINT a;
COMMIT;
SELECT pending AS "21 + 2 + 2 + 2 + 1 + 1" FROM test.counted('orders');
-- statements whose row count is not the rows inserted into the table are
-- refused, inserting nothing
CREATE TABLE test.order_requests (id int, amount int);
CREATE RULE also_order AS ON INSERT TO test.order_requests
    DO ALSO INSERT INTO test.orders VALUES (NEW.id, NEW.amount);
SELECT s, test.error_of(s) FROM (VALUES
    ($$INSERT INTO test.orders VALUES (1, 1), (60, 1) ON CONFLICT (id) DO UPDATE SET amount = 0$$),
    ($$WITH o AS (INSERT INTO test.orders VALUES (61, 1) RETURNING id) SELECT * FROM o$$),
    ($$WITH o AS (INSERT INTO test.orders VALUES (62, 1)) INSERT INTO test.orders VALUES (63, 1)$$),
    ($$MERGE INTO test.orders o USING (VALUES (64, 1)) v (id, amount) ON o.id = v.id
       WHEN NOT MATCHED THEN INSERT VALUES (v.id, v.amount)$$),
    ($$INSERT INTO test.order_requests VALUES (65, 1)$$)
) AS cases(s);
SELECT count(*) AS none_inserted FROM test.orders WHERE id BETWEEN 60 AND 99 OR amount = 0;
SELECT (SELECT count(*) FROM test.orders) + (SELECT count(*) FROM test.baskets)
       + (SELECT count(*) FROM test.shop_visits)
       = (SELECT released + pending FROM test.counted('orders')) AS all_counted;

-- Steps: tick closes one now, with what was committed before it.
SELECT contcount.tick('signups');
SELECT * FROM test.counted('signups');
INSERT INTO test.signups (country) VALUES ('after');
SELECT contcount.tick('signups');
SELECT contcount.tick('signups');
SELECT * FROM test.counted('signups');
-- the releases: their error bars, and within the bound (beta = 1e-9)
SELECT h.t, round(h.stddev::numeric, 4) AS stddev,
       round(sqrt(bit_count(h.t::bit(64)) * test.dlap_var(7))::numeric, 4) AS expected
FROM contcount.history('signups') h ORDER BY t;
SELECT t, bound > 0 AS has_bound FROM contcount.current('signups');
SELECT contcount.tick('paid');
SELECT abs(noisy_count - (SELECT released FROM test.counted('paid'))) <= bound AS within_bound
FROM contcount.current('paid');
SELECT name, steps, finished FROM contcount.counters ORDER BY name;

-- A bounded counter stops at its horizon; an unbounded one goes on.
SELECT contcount.create_counter('short', 1, horizon => 2, step => '1 day', mechanism => 'binary');
SELECT contcount.tick('short');
SELECT contcount.tick('short');
SELECT contcount.tick('short');
SELECT name, steps, finished FROM contcount.counters WHERE name = 'short';
SELECT count(*) FROM contcount.history('short');

-- A counter records where its state lives: this cluster, database and
-- table.  Found elsewhere (a copy by pg_dump and pg_restore or pg_upgrade,
-- simulated here by moving the record), its next step first pays its
-- epsilon again, once; a ledger that cannot pay stops it, the step
-- rolled back.  test/t/009_counter_copy.pl makes real copies.
SELECT contcount.create_ledger('copies', 2);
SELECT contcount.create_counter('copied', 1, horizon => 100, step => '1 day', ledger => 'copies', mechanism => 'binary');
SELECT place_system = (SELECT system_identifier FROM pg_control_system()) AS this_cluster,
       place_database = (SELECT oid FROM pg_database WHERE datname = current_database()) AS this_database,
       place_table = 'contcount.counter'::regclass AS this_table, charged_ledger
FROM contcount.counter WHERE name = 'copied';
SELECT contcount.tick('copied');
SELECT spent AS "1, at its creation" FROM contcount.ledgers WHERE name = 'copies';
UPDATE contcount.counter SET place_database = 0 WHERE name = 'copied';
SELECT contcount.tick('copied');
SELECT spent AS "2, once for the copy" FROM contcount.ledgers WHERE name = 'copies';
SELECT contcount.tick('copied');
SELECT spent AS "still 2" FROM contcount.ledgers WHERE name = 'copies';
SELECT place_database = (SELECT oid FROM pg_database WHERE datname = current_database()) AS here_now
FROM contcount.counter WHERE name = 'copied';
SELECT role = current_user::regrole AS by_its_owner, ledger, epsilon, function,
       statement ~ '^step 2 of counter "copied", copied from system -?\d+ database 0 table \d+ to system' AS says_which
FROM contcount.charges WHERE function = 'counter_copy';
-- a place not recorded (a dump of 0.2) is a copy too; the ledger is spent
SELECT steps, md5(state) AS before FROM contcount.counter_internals('copied') \gset
UPDATE contcount.counter SET place_system = NULL WHERE name = 'copied';
SELECT test.error_of($$SELECT contcount.tick('copied')$$);
SELECT i.steps = :steps AS no_step, md5(i.state) = :'before' AS same_state,
       c.place_system IS NULL AS still_elsewhere
FROM contcount.counter_internals('copied') i, contcount.counter c WHERE c.name = 'copied';
SELECT count(*) AS releases FROM contcount.history('copied');
SELECT contcount.alter_ledger('copies', 3);
SELECT contcount.tick('copied');
SELECT spent AS "3" FROM contcount.ledgers WHERE name = 'copies';
SELECT contcount.drop_counter('copied');
-- a counter from before 0.3 did not record the ledger its creator's
-- contcount.ledger chose (this session's, counters): a copy pays the one
-- the owner's settings choose now (here the database's, tests)
SELECT contcount.create_counter('legacy', 0.25, horizon => 100, step => '1 day', mechanism => 'binary');
UPDATE contcount.counter SET charged_ledger = NULL, place_system = NULL WHERE name = 'legacy';
SELECT contcount.tick('legacy');
SELECT ledger, epsilon FROM contcount.charges
WHERE function = 'counter_copy' AND statement ~ 'of counter "legacy", copied from an unknown place';
SELECT contcount.drop_counter('legacy');

-- Errors.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.create_counter('signups', 1, horizon => 10, mechanism => 'binary')$$),
    ($$SELECT contcount.create_counter(NULL, 1, horizon => 10, mechanism => 'binary')$$),
    ($$SELECT contcount.create_counter('', 1, horizon => 10, mechanism => 'binary')$$),
    ($$SELECT contcount.create_counter(repeat('x', 64), 1, horizon => 10, mechanism => 'binary')$$),
    ($$SELECT contcount.create_counter('c', 1, mechanism => 'binary')$$),
    ($$SELECT contcount.create_counter('c', 0, horizon => 10, mechanism => 'binary')$$),
    ($$SELECT contcount.create_counter('c', 1, horizon => 10, step => '1 month', mechanism => 'binary')$$),
    ($$SELECT contcount.create_counter('c', 1, horizon => 10, step => '0.5 seconds', mechanism => 'binary')$$),
    ($$SELECT contcount.create_counter('c', 1, horizon => 10, step => NULL, mechanism => 'binary')$$),
    ($$SELECT contcount.create_counter('c', 100, horizon => 10, mechanism => 'binary')$$),
    ($$SELECT contcount.tick('nope')$$),
    ($$SELECT * FROM contcount.current('nope')$$),
    ($$SELECT contcount.drop_counter('nope')$$)
) AS cases(s);
-- a refused charge creates nothing
SELECT count(*) FROM contcount.counters WHERE name = 'c';

-- Triggers used the wrong way.
CREATE TABLE test.misuse (i int);
CREATE TRIGGER before_insert BEFORE INSERT ON test.misuse
    FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts('signups');
SELECT test.error_of($$INSERT INTO test.misuse VALUES (1)$$);
DROP TRIGGER before_insert ON test.misuse;
CREATE TRIGGER no_name AFTER INSERT ON test.misuse
    FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts();
SELECT test.error_of($$INSERT INTO test.misuse VALUES (1)$$);
DROP TRIGGER no_name ON test.misuse;
-- a counter that does not exist: the insert goes through, counted nowhere,
-- with a warning (counter_attach.sql)
CREATE TRIGGER no_counter AFTER INSERT ON test.misuse
    FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts('nope');
SELECT test.error_of($$INSERT INTO test.misuse VALUES (1)$$);
DROP TRIGGER no_counter ON test.misuse;

-- Who may read and tick.
CREATE ROLE regress_reader LOGIN;
GRANT USAGE ON SCHEMA test TO regress_reader;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_reader;
\c - regress_reader
SELECT count(*) FROM contcount.counters;
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT * FROM contcount.current('signups')$$),
    ($$SELECT contcount.tick('signups')$$),
    ($$SELECT contcount.drop_counter('signups')$$),
    ($$SELECT contcount.grant_counter('signups', 'regress_reader')$$),
    ($$SELECT * FROM contcount.counter_internals('signups')$$),
    ($$SELECT * FROM contcount.counter_release$$),
    ($$SELECT * FROM contcount.counter$$)
) AS cases(s);
\c - postgres
SELECT contcount.grant_counter('signups', 'regress_reader');
\c - regress_reader
SELECT name FROM contcount.counters;
SELECT t FROM contcount.current('signups');
SELECT count(*) FROM contcount.history('signups');
\c - postgres
SELECT contcount.revoke_counter('signups', 'regress_reader');
\c - regress_reader
SELECT test.error_of($$SELECT * FROM contcount.history('signups')$$);
\c - postgres
DROP OWNED BY regress_reader;
DROP ROLE regress_reader;

-- Dropping a counter: its trigger then counts nothing and lets inserts
-- through, with a warning once a session (the application's inserts must not
-- fail because an analyst dropped its counter).
SELECT contcount.drop_counter('paid');
SELECT name FROM contcount.counters ORDER BY name;
INSERT INTO test.signups (country, paid) VALUES ('fr', true);
DROP TRIGGER count_paid ON test.signups;
INSERT INTO test.signups (country, paid) VALUES ('fr', true);

-- Only a counter's owner feeds it.  A table feeds a counter when the
-- table's owner has the rights of the counter's owner, or of a role the
-- owner allowed to feed it; any other table is refused (42501) and nothing
-- is counted, whichever form its trigger takes.
CREATE ROLE regress_counter_owner;
CREATE ROLE regress_owner_team;
GRANT regress_counter_owner TO regress_owner_team;
CREATE ROLE regress_intruder;
CREATE ROLE regress_feeders;
SELECT contcount.grant_ledger('counters', 'regress_counter_owner');
CREATE SCHEMA regress_feeding;
GRANT USAGE ON SCHEMA test TO regress_counter_owner, regress_owner_team, regress_intruder;
GRANT USAGE, CREATE ON SCHEMA regress_feeding
    TO regress_counter_owner, regress_owner_team, regress_intruder;
SET ROLE regress_counter_owner;
SELECT contcount.create_counter('guarded', 1, horizon => 100, step => '1 day', ledger => 'counters', mechanism => 'binary');
CREATE TABLE regress_feeding.own (i int);
CREATE TRIGGER feed AFTER INSERT ON regress_feeding.own
    FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('guarded');
INSERT INTO regress_feeding.own SELECT generate_series(1, 3);
-- a role with the owner's rights feeds it too
SET ROLE regress_owner_team;
CREATE TABLE regress_feeding.team (i int);
CREATE TRIGGER feed AFTER INSERT ON regress_feeding.team
    FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts('guarded');
INSERT INTO regress_feeding.team SELECT generate_series(1, 4);
-- someone else's tables, with each form of the trigger: their inserts go
-- through (a warning, once a session) and feed nothing
SET ROLE regress_intruder;
CREATE TABLE regress_feeding.by_row (i int);
CREATE TRIGGER feed AFTER INSERT ON regress_feeding.by_row
    FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts('guarded');
CREATE TABLE regress_feeding.by_statement (i int);
CREATE TRIGGER feed AFTER INSERT ON regress_feeding.by_statement
    FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('guarded');
CREATE TABLE regress_feeding.by_transition (i int);
CREATE TRIGGER feed AFTER INSERT ON regress_feeding.by_transition
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('guarded');
-- n rows into each of them
CREATE FUNCTION regress_feeding.feed_all(n int) RETURNS TABLE (tab text, error text)
LANGUAGE sql AS $$
    SELECT tab, test.error_of(format('INSERT INTO regress_feeding.%I SELECT generate_series(1, %s)', tab, n))
    FROM unnest(ARRAY['by_row', 'by_statement', 'by_transition']) tab
$$;
SELECT * FROM regress_feeding.feed_all(1000);
RESET ROLE;
SELECT pending AS "3 + 4" FROM test.counted('guarded');
-- reading it is not feeding it
SET ROLE regress_counter_owner;
SELECT contcount.grant_counter('guarded', 'regress_intruder');
SET ROLE regress_intruder;
SELECT count(*) AS steps FROM contcount.history('guarded');
SELECT * FROM regress_feeding.feed_all(1000);
RESET ROLE;
SELECT pending AS "still 7" FROM test.counted('guarded');
-- allowed to feed, the intruder's tables count
SET ROLE regress_counter_owner;
SELECT contcount.grant_counter('guarded', 'regress_intruder', feed => true);
SET ROLE regress_intruder;
SELECT * FROM regress_feeding.feed_all(10);
RESET ROLE;
SELECT pending AS "7 + 3 * 10" FROM test.counted('guarded');
-- granted again without feed, or revoked: refused again
SET ROLE regress_counter_owner;
SELECT contcount.grant_counter('guarded', 'regress_intruder', feed => false);
SET ROLE regress_intruder;
SELECT * FROM regress_feeding.feed_all(1000);
SET ROLE regress_counter_owner;
SELECT contcount.grant_counter('guarded', 'regress_intruder', feed => true);
SELECT contcount.revoke_counter('guarded', 'regress_intruder');
SET ROLE regress_intruder;
SELECT * FROM regress_feeding.feed_all(1000);
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT * FROM contcount.current('guarded')$$),
    ($$SELECT contcount.grant_counter('guarded', 'regress_intruder', feed => true)$$),
    ($$SELECT contcount.grant_counter('guarded', 'regress_intruder', NULL)$$)
) AS cases(s);
-- a grant to a group lets its members' tables feed
SET ROLE regress_counter_owner;
SELECT contcount.grant_counter('guarded', 'regress_feeders', feed => true);
RESET ROLE;
GRANT regress_feeders TO regress_intruder;
SET ROLE regress_intruder;
SELECT * FROM regress_feeding.feed_all(100);
RESET ROLE;
REVOKE regress_feeders FROM regress_intruder;
SELECT pending AS "37 + 3 * 100" FROM test.counted('guarded');
-- a counter the worker has not loaded yet (created in this transaction) is
-- guarded the same way
BEGIN;
SET ROLE regress_counter_owner;
SELECT contcount.create_counter('guarded_new', 1, horizon => 100, step => '1 day', ledger => 'counters', mechanism => 'binary');
SET ROLE regress_intruder;
CREATE TABLE regress_feeding.by_row_new (i int);
CREATE TRIGGER feed AFTER INSERT ON regress_feeding.by_row_new
    FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts('guarded_new');
SELECT test.error_of($$INSERT INTO regress_feeding.by_row_new VALUES (1)$$);
ROLLBACK;
-- a superuser's table may feed anyone's counter
CREATE TABLE test.dba_table (i int);
CREATE TRIGGER feed AFTER INSERT ON test.dba_table
    FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts('guarded');
INSERT INTO test.dba_table VALUES (1);
SELECT pending AS "337 + 1" FROM test.counted('guarded');
DROP TABLE test.dba_table;

-- Counters live in contcount.database: elsewhere every counter function
-- says so (55000), as create_counter does, not that the counter is missing.
SELECT current_database() AS regress_database \gset
CREATE DATABASE regress_contcount_elsewhere;
\c regress_contcount_elsewhere
CREATE EXTENSION contcount;
CREATE FUNCTION public.error_of(statement text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE statement;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
-- (the database named is contcount.database, shown by its setting's name, as
-- it differs between clusters)
SET ROLE regress_counter_owner;
SELECT s, replace(public.error_of(s), format('"%s"', current_setting('contcount.database')),
                  'contcount.database') AS error_of FROM (VALUES
    ($$SELECT contcount.create_counter('signups', 1, horizon => 10, mechanism => 'binary')$$),
    ($$SELECT contcount.tick('signups')$$),
    ($$SELECT * FROM contcount.current('signups')$$),
    ($$SELECT * FROM contcount.history('signups')$$),
    ($$SELECT contcount.drop_counter('signups')$$),
    ($$SELECT contcount.grant_counter('signups', 'regress_intruder')$$),
    ($$SELECT contcount.revoke_counter('signups', 'regress_intruder')$$)
) AS cases(s);
RESET ROLE;
\c :regress_database
DROP DATABASE regress_contcount_elsewhere;

SELECT contcount.drop_counter('guarded');
SELECT contcount.revoke_ledger('counters', 'regress_counter_owner');
DROP SCHEMA regress_feeding CASCADE;
DROP OWNED BY regress_counter_owner, regress_owner_team, regress_intruder, regress_feeders;
DROP ROLE regress_counter_owner, regress_owner_team, regress_intruder, regress_feeders;
