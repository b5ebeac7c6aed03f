-- Attacks on 0.6's new surface by roles that are not superusers.
--
-- The counter's owner, who has no right on the table an application
-- attached its counter to, never locks that table: neither detach_counter
-- (42501, at once) nor drop_counter (the trigger stays, an orphan that
-- counts nothing) queues an ACCESS EXCLUSIVE request behind the
-- application's readers, which would stop every later query on the table,
-- or holds one in a transaction left open.
CREATE ROLE regress_ra_analyst;
CREATE ROLE regress_ra_app;
SELECT contcount.create_ledger('review_attacks', 10);
SELECT contcount.grant_ledger('review_attacks', 'regress_ra_analyst');
CREATE SCHEMA regress_ra AUTHORIZATION regress_ra_app;
GRANT USAGE ON SCHEMA regress_ra TO regress_ra_analyst;
GRANT USAGE ON SCHEMA test TO regress_ra_analyst;

SET ROLE regress_ra_analyst;
SELECT contcount.create_counter('ra_c', 1, horizon => 100, step => '1 day', ledger => 'review_attacks');
SELECT contcount.grant_counter('ra_c', 'regress_ra_app', feed => true);
SET ROLE regress_ra_app;
CREATE TABLE regress_ra.events (i int);
SELECT contcount.attach_counter('ra_c', 'regress_ra.events');

-- the analyst is refused at once, by privilege, before it asks for any
-- lock on the table
SET ROLE regress_ra_analyst;
SET statement_timeout = '3s';
SELECT test.error_of($$SELECT contcount.detach_counter('ra_c', 'regress_ra.events')$$);
RESET statement_timeout;
-- the refusal changed nothing: still attached, the trigger still there
RESET ROLE;
SELECT count(*) AS "1" FROM contcount.counter_attachment a
JOIN pg_trigger t ON t.tgrelid = a.table_id AND t.tgname = a.trigger_name
WHERE a.table_id = 'regress_ra.events'::regclass;
SELECT count(*) AS "0" FROM pg_locks
WHERE relation = 'regress_ra.events'::regclass AND mode = 'AccessExclusiveLock';
-- nor does its drop_counter, in a transaction it leaves open: the
-- trigger stays
SET ROLE regress_ra_analyst;
BEGIN;
SELECT contcount.drop_counter('ra_c');
SELECT count(*) AS "0" FROM pg_locks
WHERE relation = 'regress_ra.events'::regclass AND mode = 'AccessExclusiveLock';
COMMIT;
SET ROLE regress_ra_app;
DROP TRIGGER contcount_ra_c ON regress_ra.events;
RESET ROLE;

-- The application replaces the trigger attach_counter made by one of its
-- own under the same name (an audit trigger, or one with a WHEN condition
-- written by hand): a drop_counter or detach_counter by a role that may
-- drop triggers there (a superuser here), which drop as the extension's
-- owner, must leave it alone.
SET ROLE regress_ra_analyst;
SELECT contcount.create_counter('ra_d', 1, horizon => 100, step => '1 day', ledger => 'review_attacks');
SELECT contcount.grant_counter('ra_d', 'regress_ra_app', feed => true);
SELECT contcount.create_counter('ra_e', 1, horizon => 100, step => '1 day', ledger => 'review_attacks');
SELECT contcount.grant_counter('ra_e', 'regress_ra_app', feed => true);
SET ROLE regress_ra_app;
CREATE FUNCTION regress_ra.audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RETURN NULL; END $$;
SELECT contcount.attach_counter('ra_d', 'regress_ra.events');
SELECT contcount.attach_counter('ra_e', 'regress_ra.events');
DROP TRIGGER contcount_ra_d ON regress_ra.events;
CREATE TRIGGER contcount_ra_d AFTER INSERT ON regress_ra.events
    FOR EACH ROW EXECUTE FUNCTION regress_ra.audit();
DROP TRIGGER contcount_ra_e ON regress_ra.events;
CREATE TRIGGER contcount_ra_e AFTER INSERT ON regress_ra.events
    FOR EACH ROW WHEN (NEW.i > 0) EXECUTE FUNCTION contcount.count_inserts('ra_other');
RESET ROLE;
SELECT contcount.drop_counter('ra_d');
SELECT contcount.detach_counter('ra_e', 'regress_ra.events');
SELECT tgname FROM pg_trigger WHERE tgrelid = 'regress_ra.events'::regclass ORDER BY 1;
SELECT contcount.drop_counter('ra_e');

-- The per-statement cap holds for a DO block that commits between its
-- releases: the statements a DO block runs are part of its statement.
SET contcount.max_epsilon_per_statement = 1.5;
SET ROLE regress_ra_analyst;
CREATE TEMP TABLE ra_spent AS
SELECT spent FROM contcount.ledgers WHERE name = 'review_attacks';
DO $$
BEGIN
    FOR i IN 1..3 LOOP
        PERFORM contcount.noisy_count(1.0, 'review_attacks') FROM pg_catalog.pg_class;
        COMMIT;
    END LOOP;
END $$;
SELECT l.spent - s.spent AS "1" FROM contcount.ledgers l, ra_spent s WHERE l.name = 'review_attacks';
DROP TABLE ra_spent;
RESET ROLE;
RESET contcount.max_epsilon_per_statement;

DROP SCHEMA regress_ra CASCADE;
REVOKE USAGE ON SCHEMA test FROM regress_ra_analyst;
SELECT contcount.revoke_ledger('review_attacks', 'regress_ra_analyst');
DROP ROLE regress_ra_analyst, regress_ra_app;
