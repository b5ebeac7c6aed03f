-- A change of the ledger a role spends (ALTER ROLE ... SET or RESET
-- contcount.ledger) binds the role's sessions already open, such as a
-- pooled connection, at their next release: a value that came from a role's
-- or database's setting is read again at each charge, as a new connection
-- would take it.  Here the pooled connection is a dblink connection of the
-- analyst, which stays open while the DBA changes the role.

CREATE EXTENSION dblink;
SELECT contcount.create_ledger('rs_old', 10);
SELECT contcount.create_ledger('rs_new', 10);
SELECT contcount.create_ledger('rs_granted', 10);
CREATE ROLE regress_rs_analyst LOGIN;
ALTER ROLE regress_rs_analyst SET contcount.ledger = 'rs_old';
SELECT contcount.grant_ledger('rs_granted', 'regress_rs_analyst');
SELECT dblink_connect('pooled', format('host=%s port=%s dbname=%s user=regress_rs_analyst',
                                       split_part(current_setting('unix_socket_directories'), ',', 1),
                                       current_setting('port'), current_database()));
CREATE FUNCTION test.pooled(statement text) RETURNS text
LANGUAGE sql AS $$
    SELECT r FROM dblink('pooled', format('SELECT test.error_of(%L)', statement)) AS t(r text)
$$;
CREATE FUNCTION test.rs_spent() RETURNS TABLE (name text, spent numeric)
LANGUAGE sql AS $$
    SELECT name, spent FROM contcount.ledgers WHERE name LIKE 'rs\_%' ORDER BY name
$$;
GRANT USAGE ON SCHEMA test TO regress_rs_analyst;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_rs_analyst;

-- the open session releases, charging rs_old
SELECT test.pooled($$SELECT contcount.running_counts(ARRAY[1, 2, 3], 1, mechanism => 'binary')$$);
SELECT * FROM test.rs_spent();
SELECT * FROM dblink('pooled', 'SELECT name FROM contcount.ledgers ORDER BY name') AS t(name text);

-- the DBA moves the role to rs_new: its open session follows at its next
-- release, and sees rs_new, not rs_old, in contcount.ledgers
ALTER ROLE regress_rs_analyst SET contcount.ledger = 'rs_new';
SELECT test.pooled($$SELECT contcount.running_counts(ARRAY[1, 2, 3], 1, mechanism => 'binary')$$);
SELECT * FROM test.rs_spent();
SELECT * FROM dblink('pooled', 'SELECT name FROM contcount.ledgers ORDER BY name') AS t(name text);

-- the DBA cuts the role off: an empty setting selects no ledger (ZB002)
ALTER ROLE regress_rs_analyst SET contcount.ledger = '';
SELECT test.pooled($$SELECT contcount.running_counts(ARRAY[1, 2, 3], 1, mechanism => 'binary')$$);
-- RESET falls back to the database's setting, as for a new connection
ALTER ROLE regress_rs_analyst RESET contcount.ledger;
SELECT test.pooled($$SELECT contcount.running_counts(ARRAY[1, 2, 3], 1, mechanism => 'binary')$$);
SELECT * FROM dblink('pooled', 'SELECT name FROM contcount.ledgers ORDER BY name') AS t(name text);
-- the role's setting in this database comes first
DO $$ BEGIN
    EXECUTE format('ALTER ROLE regress_rs_analyst IN DATABASE %I SET contcount.ledger = %L',
                   current_database(), 'rs_old');
END $$;
SELECT test.pooled($$SELECT contcount.running_counts(ARRAY[1, 2, 3], 1, mechanism => 'binary')$$);
SELECT * FROM test.rs_spent();
DO $$ BEGIN
    EXECUTE format('ALTER ROLE regress_rs_analyst IN DATABASE %I RESET contcount.ledger', current_database());
END $$;

-- a ledger granted to the role and named by its releases: revoke_ledger
-- binds at once
SELECT test.pooled($$SELECT contcount.running_counts(ARRAY[1, 2, 3], 1, ledger => 'rs_granted', mechanism => 'binary')$$);
SELECT contcount.revoke_ledger('rs_granted', 'regress_rs_analyst');
SELECT test.pooled($$SELECT contcount.running_counts(ARRAY[1, 2, 3], 1, ledger => 'rs_granted', mechanism => 'binary')$$);
SELECT * FROM test.rs_spent();

-- a superuser's SET in its own session is left alone
SET contcount.ledger = 'rs_new';
ALTER ROLE CURRENT_USER SET contcount.ledger = 'rs_old';
SELECT count(*) FROM contcount.running_counts(ARRAY[1, 2, 3], 1, mechanism => 'binary');
ALTER ROLE CURRENT_USER RESET contcount.ledger;
RESET contcount.ledger;
SELECT * FROM test.rs_spent();

SELECT dblink_disconnect('pooled');
DROP FUNCTION test.pooled(text), test.rs_spent();
DROP EXTENSION dblink;
DROP OWNED BY regress_rs_analyst;
DROP ROLE regress_rs_analyst;
SELECT contcount.drop_ledger('rs_old');
SELECT contcount.drop_ledger('rs_new');
SELECT contcount.drop_ledger('rs_granted');
