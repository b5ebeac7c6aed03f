-- The extension, and helpers the other tests share.
CREATE EXTENSION contcount;

-- Every release is charged: the tests spend from one large ledger, selected
-- for every later connection to this database.
SELECT contcount.create_ledger('tests', 1000000000);
DO $$ BEGIN
    EXECUTE format('ALTER DATABASE %I SET contcount.ledger = %L', current_database(), 'tests');
END $$;

CREATE SCHEMA test;

-- SQLSTATE and message of a statement's error, or 'no error'.
CREATE FUNCTION test.error_of(statement text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE statement;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- Variance and fourth cumulant of discrete Laplace noise of scale b,
-- written from the formulas, apart from the extension's own code.
CREATE FUNCTION test.dlap_var(b float8) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
    SELECT 2 * exp(-1 / b) / (1 - exp(-1 / b)) ^ 2
$$;

CREATE FUNCTION test.dlap_kappa4(b float8) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
    SELECT 2 * exp(-1 / b) * (1 + 4 * exp(-1 / b) + exp(-2 / b)) / (1 - exp(-1 / b)) ^ 4
$$;

-- PostgreSQL's statistics show every role exact counts: the tests run as a
-- DBA should, with them closed in this database and the other databases
-- closed to PUBLIC (protect_table warns otherwise).
DO $$
DECLARE
    d name;
BEGIN
    FOR d IN SELECT datname FROM pg_database WHERE datallowconn AND datname <> current_database() LOOP
        EXECUTE format('REVOKE CONNECT ON DATABASE %I FROM PUBLIC', d);
    END LOOP;
END $$;
SELECT contcount.lockdown_statistics();
SELECT count(*) AS open_doors FROM contcount.statistics_lockdown();

-- PostgreSQL's defaults again, for the tests that show the doors open:
-- pg_class, and each function and view of the lockdown, to PUBLIC.
CREATE FUNCTION test.unlock_statistics() RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    d record;
BEGIN
    REVOKE SELECT ON pg_catalog.pg_class FROM PUBLIC, pg_read_all_stats;
    GRANT SELECT ON pg_catalog.pg_class TO PUBLIC;
    FOR d IN SELECT kind, door FROM contcount.statistics_doors() WHERE kind IN ('function', 'view') LOOP
        EXECUTE format('REVOKE %s ON %s %s FROM pg_read_all_stats',
                       CASE d.kind WHEN 'function' THEN 'EXECUTE' ELSE 'SELECT' END,
                       CASE d.kind WHEN 'function' THEN 'FUNCTION' ELSE 'TABLE' END, d.door);
        EXECUTE format('GRANT %s ON %s %s TO PUBLIC',
                       CASE d.kind WHEN 'function' THEN 'EXECUTE' ELSE 'SELECT' END,
                       CASE d.kind WHEN 'function' THEN 'FUNCTION' ELSE 'TABLE' END, d.door);
    END LOOP;
END $$;

\dx contcount
