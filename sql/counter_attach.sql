-- Counters never break inserts: a trigger whose counter is gone counts
-- nothing and lets the insert through, with one warning a session; a
-- counter attached to a table through contcount is detached by
-- detach_counter() and by drop_counter().  Every role here is not a
-- superuser: an analyst owns the counters, an application owns the table.
CREATE ROLE regress_ca_analyst;
CREATE ROLE regress_ca_app;
CREATE ROLE regress_ca_other;
SELECT contcount.create_ledger('attach', 10);
SELECT contcount.grant_ledger('attach', 'regress_ca_analyst');
CREATE SCHEMA regress_ca AUTHORIZATION regress_ca_app;
GRANT USAGE ON SCHEMA regress_ca TO regress_ca_other, regress_ca_analyst;
GRANT USAGE ON SCHEMA test TO regress_ca_analyst, regress_ca_app, regress_ca_other;
-- pending counts of a counter, read as a superuser
CREATE FUNCTION test.ca_pending(counter text) RETURNS bigint
LANGUAGE sql AS $$ SELECT pending FROM contcount.counter_internals(counter) $$;

SET ROLE regress_ca_analyst;
SELECT contcount.create_counter('ca_app', 1, horizon => 100, step => '1 day', ledger => 'attach');
SELECT contcount.grant_counter('ca_app', 'regress_ca_app', feed => true);
SET ROLE regress_ca_app;
CREATE TABLE regress_ca.events (i int);
CREATE TABLE regress_ca.audit (i int);
-- the trigger the application wrote itself, as before 0.6
CREATE TRIGGER count_events AFTER INSERT ON regress_ca.events
    FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts('ca_app');
INSERT INTO regress_ca.events SELECT generate_series(1, 3);
RESET ROLE;
SELECT test.ca_pending('ca_app') AS "3";

-- The analyst drops its counter: the application's inserts go on, counted
-- nowhere, and the session is warned once for that counter name.
SET ROLE regress_ca_analyst;
SELECT contcount.drop_counter('ca_app');
SET ROLE regress_ca_app;
INSERT INTO regress_ca.events VALUES (4);
INSERT INTO regress_ca.events VALUES (5), (6);
SELECT count(*) AS "6" FROM regress_ca.events;
-- a statement trigger with a transition table, and one without, in the
-- same session: no second warning for the same name
CREATE TRIGGER count_events_stmt AFTER INSERT ON regress_ca.events
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('ca_app');
CREATE TRIGGER count_events_stmt2 AFTER INSERT ON regress_ca.events
    FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('ca_app');
INSERT INTO regress_ca.events VALUES (7);
-- another gone counter's name warns once too
CREATE TRIGGER count_audit AFTER INSERT ON regress_ca.audit
    FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts('ca_never');
INSERT INTO regress_ca.audit VALUES (1);
INSERT INTO regress_ca.audit VALUES (2);
DROP TRIGGER count_events ON regress_ca.events;
DROP TRIGGER count_events_stmt ON regress_ca.events;
DROP TRIGGER count_events_stmt2 ON regress_ca.events;
DROP TRIGGER count_audit ON regress_ca.audit;
-- feeding rules are as they were: a counter that exists and that the
-- table's owner may not feed is not fed (a name taken again by another role
-- after a drop, say), and the insert goes through, with a warning (42501)
SET ROLE regress_ca_analyst;
SELECT contcount.create_counter('ca_closed', 1, horizon => 100, step => '1 day', ledger => 'attach');
SET ROLE regress_ca_app;
CREATE TRIGGER count_closed AFTER INSERT ON regress_ca.audit
    FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts('ca_closed');
SELECT test.error_of('INSERT INTO regress_ca.audit VALUES (3)');
DROP TRIGGER count_closed ON regress_ca.audit;
RESET ROLE;
SELECT pending AS not_fed FROM contcount.counter_internals('ca_closed');

-- attach_counter: the table's owner attaches a counter it may feed.
SET ROLE regress_ca_analyst;
SELECT contcount.create_counter('ca_feed', 1, horizon => 100, step => '1 day', ledger => 'attach');
SELECT contcount.grant_counter('ca_feed', 'regress_ca_app', feed => true);
SET ROLE regress_ca_app;
SELECT contcount.attach_counter('ca_feed', 'regress_ca.events');
SELECT contcount.attach_counter('ca_feed', 'regress_ca.audit', for_each => 'row');
SELECT tgname, tgrelid::regclass, tgtype & 1 = 1 AS for_row FROM pg_trigger
WHERE tgrelid IN ('regress_ca.events'::regclass, 'regress_ca.audit'::regclass) ORDER BY tgname, 2;
INSERT INTO regress_ca.events SELECT generate_series(1, 5);
INSERT INTO regress_ca.audit SELECT generate_series(1, 2);
RESET ROLE;
SELECT test.ca_pending('ca_feed') AS "5 + 2";

-- refusals, each with its SQLSTATE
SET ROLE regress_ca_app;
-- a counter that does not exist (42704)
SELECT test.error_of($$SELECT contcount.attach_counter('ca_none', 'regress_ca.events')$$);
-- attached already: the trigger's name is taken (42710)
SELECT test.error_of($$SELECT contcount.attach_counter('ca_feed', 'regress_ca.events')$$);
-- neither row nor statement (22023), no table (22004)
SELECT test.error_of($$SELECT contcount.attach_counter('ca_feed', 'regress_ca.events', 'column')$$);
SELECT test.error_of($$SELECT contcount.attach_counter('ca_feed', NULL)$$);
-- a counter the table's owner may not feed (42501)
SELECT test.error_of($$SELECT contcount.attach_counter('ca_closed', 'regress_ca.events')$$);
-- a table the caller neither owns nor may create triggers on (42501)
SET ROLE regress_ca_other;
SELECT test.error_of($$SELECT contcount.attach_counter('ca_feed', 'regress_ca.events')$$);
SELECT test.error_of($$SELECT contcount.detach_counter('ca_feed', 'regress_ca.events')$$);
-- the counter's owner may attach only where it may create triggers
SET ROLE regress_ca_analyst;
SELECT test.error_of($$SELECT contcount.attach_counter('ca_feed', 'regress_ca.events')$$);
-- with the TRIGGER privilege, a role may attach to the table, as the table's
-- owner feeds: not a counter the table's owner may not feed
SET ROLE regress_ca_app;
GRANT TRIGGER ON regress_ca.events TO regress_ca_other;
SET ROLE regress_ca_other;
SELECT test.error_of($$SELECT contcount.attach_counter('ca_closed', 'regress_ca.events')$$);
-- nothing was attached by the refusals
RESET ROLE;
SELECT count(*) AS "2" FROM contcount.counter_attachment;

-- detach_counter: by a role that may create triggers on the table; a
-- counter not attached there is 42704.
SET ROLE regress_ca_other;
SELECT contcount.detach_counter('ca_feed', 'regress_ca.events');
SELECT test.error_of($$SELECT contcount.detach_counter('ca_feed', 'regress_ca.events')$$);
SET ROLE regress_ca_app;
INSERT INTO regress_ca.events VALUES (1);
SELECT tgname FROM pg_trigger WHERE tgrelid = 'regress_ca.events'::regclass;
-- the application attaches again; the analyst drops its counter: it has
-- no right on the application's tables, so it locks neither, and the
-- triggers stay, orphans that count nothing and let the inserts through
-- (a warning, once), until the table's owner drops them
SELECT contcount.attach_counter('ca_feed', 'regress_ca.events');
SET ROLE regress_ca_analyst;
SELECT contcount.drop_counter('ca_feed');
SELECT count(*) AS "2 left" FROM pg_trigger
WHERE tgrelid IN ('regress_ca.events'::regclass, 'regress_ca.audit'::regclass);
SET ROLE regress_ca_app;
INSERT INTO regress_ca.events VALUES (1);
INSERT INTO regress_ca.audit VALUES (1);
DROP TRIGGER contcount_ca_feed ON regress_ca.events;
DROP TRIGGER contcount_ca_feed ON regress_ca.audit;
RESET ROLE;
SELECT count(*) AS "0" FROM contcount.counter_attachment;
-- a role that may create triggers on the table (a superuser here) drops
-- the trigger with the counter, the table's lock being free at once
SELECT contcount.create_counter('ca_super', 1, horizon => 100, step => '1 day', ledger => 'attach');
SELECT contcount.grant_counter('ca_super', 'regress_ca_app', feed => true);
SELECT contcount.attach_counter('ca_super', 'regress_ca.events');
SELECT contcount.drop_counter('ca_super');
SELECT count(*) AS "0" FROM pg_trigger WHERE tgrelid = 'regress_ca.events'::regclass;

-- the counter's owner may not detach from a table it has no right on
-- (42501): it stops the feeding without a lock, by taking back the table
-- owner's feed grant; the table's owner then detaches
SET ROLE regress_ca_analyst;
SELECT contcount.create_counter('ca_again', 1, horizon => 100, step => '1 day', ledger => 'attach');
SELECT contcount.grant_counter('ca_again', 'regress_ca_app', feed => true);
SET ROLE regress_ca_app;
SELECT contcount.attach_counter('ca_again', 'regress_ca.audit', 'row');
SET ROLE regress_ca_analyst;
SELECT test.error_of($$SELECT contcount.detach_counter('ca_again', 'regress_ca.audit')$$);
SELECT contcount.grant_counter('ca_again', 'regress_ca_app', feed => false);
SET ROLE regress_ca_app;
INSERT INTO regress_ca.audit VALUES (2);
SELECT contcount.detach_counter('ca_again', 'regress_ca.audit');
SELECT count(*) AS "0" FROM pg_trigger WHERE tgrelid = 'regress_ca.audit'::regclass;
RESET ROLE;
SELECT pending AS "0 fed" FROM contcount.counter_internals('ca_again');
SET ROLE regress_ca_analyst;

-- the view: the ledger that paid, named or chosen by the database's
-- contcount.ledger (setup: tests), and the schedule of counters that have
-- stepped once or not yet
SELECT contcount.create_counter('ca_setting', 1, mechanism => 'hybrid', step => '1 day');
SELECT contcount.tick('ca_setting');
SELECT name, ledger, steps, next_step_at = started_at + (steps + 1) * interval '1 day' AS next_ok,
       last_release_at IS NOT NULL AS released, horizon,
       horizon_ends_at = started_at + horizon * interval '1 day' AS horizon_ok, late_by
FROM contcount.counters WHERE name LIKE 'ca\_%' ORDER BY name;
SELECT contcount.drop_counter('ca_again');
SELECT contcount.drop_counter('ca_closed');
SELECT contcount.drop_counter('ca_setting');
RESET ROLE;

DROP SCHEMA regress_ca CASCADE;
DROP FUNCTION test.ca_pending(text);
REVOKE USAGE ON SCHEMA test FROM regress_ca_analyst, regress_ca_app, regress_ca_other;
SELECT contcount.revoke_ledger('attach', 'regress_ca_analyst');
DROP ROLE regress_ca_analyst, regress_ca_app, regress_ca_other;
